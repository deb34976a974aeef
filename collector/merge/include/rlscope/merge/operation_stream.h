// Operations written as they close, while the run runs, instead of all held for nesting at its
// end (docs/performance.md, "End to end"). Ids are handed out as ranges open, so a range's id is
// known to the ranges inside it before it closes. On a thread whose open ranges are all push/pop
// ranges of one NVTX domain (rlscope's annotations, the common case) they close innermost first,
// so when a range closes the ranges still open are its ancestors: its parent is the innermost of
// them and its depth their number, final at once. Where other ranges mix in (another domain's
// push/pop ranges, which may close out of order with ours, or start/end ranges), the thread's
// operations are held until none of its ranges is open and then nested by containment
// (trace::OperationNesting), as every producer nests them.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rlscope/merge/part_key.h"
#include "rlscope/trace/records.h"

namespace rlscope::merge {

class OperationStream {
 public:
  using Write = std::function<void(const trace::OperationRecord&)>;
  // A thread of one part: partKey(Part::serial, tid).
  using ThreadKey = std::uint64_t;
  // What kind of range opened: push/pop ranges of one domain nest among themselves.
  struct Kind {
    std::uint64_t domain = 0;
    bool pushPop = true;
    bool operator==(const Kind&) const = default;
  };

  // `keepForLaunches`: keep each operation's times and parent (40 bytes) for innermostAt().
  OperationStream(Write write, bool keepForLaunches)
      : write_(std::move(write)), keep_(keepForLaunches) {}

  // A range that will be an operation opened on `thread`: its id.
  std::int64_t open(ThreadKey thread, Kind kind);
  // The range `op.id` closed: op has its times, thread and name; parentId and depth are set here,
  // and it is written now or once the thread's ranges have all closed.
  void close(ThreadKey thread, trace::OperationRecord op);
  // The range `id` closed without being an operation (its domain turned out to be a phase's).
  void cancel(ThreadKey thread, std::int64_t id);

  // The innermost range open on the thread that will be an operation, or 0.
  std::int64_t innermostOpen(ThreadKey thread) const;

  std::uint64_t held() const { return held_; }

  // After every range closed: the innermost operation open on globalTid at t, or 0. Needs
  // keepForLaunches.
  std::int64_t innermostAt(std::int64_t globalTid, std::int64_t t);

 private:
  struct Open {
    std::int64_t id;
    Kind kind;
  };
  struct Thread {
    std::vector<Open> open;  // in the order they opened
    bool mixed = false;      // ranges of other kinds were open together: hold, then nest
    std::vector<trace::OperationRecord> held;
  };
  struct Kept {
    std::int64_t globalTid, start, end, id, parentId;
  };
  // Removes `id` from the thread's open ranges; once none is open, its held operations are
  // nested and written.
  void closed(Thread& t, std::int64_t id);
  void emit(const trace::OperationRecord& op);

  Write write_;
  bool keep_;
  std::int64_t nextId_ = 0;
  std::uint64_t held_ = 0;  // operations held now, over all threads
  std::unordered_map<ThreadKey, Thread> threads_;
  std::vector<Kept> kept_;
  bool keptSorted_ = false;
  std::unordered_map<std::int64_t, std::size_t> keptIndex_;  // id -> index into kept_
};

}  // namespace rlscope::merge
