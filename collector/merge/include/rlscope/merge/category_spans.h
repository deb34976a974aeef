// The CPU categories the Python hooks push and pop on each thread (Python, Backend, Simulator,
// Waiting: part::RecordType::kCategoryPush...), flattened into spans as they are read: each
// thread's spans never overlap, and each is the category that really ran (the innermost), so the
// analyzer's sweep needs no nesting rules for rlscope_cpu_intervals.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "rlscope/part/format.h"
#include "rlscope/trace/records.h"

namespace rlscope::merge {

class CategorySpans {
 public:
  // What one thread ran from start to end, with the Python events counted in it.
  struct Span {
    std::uint32_t tid = 0;
    std::uint32_t category = 0;  // the collector's (categoryOf)
    std::uint64_t name = 0;      // a kCategoryName handle, 0 for none
    std::int64_t start = 0, end = 0;
    std::uint64_t pythonEvents = 0;
  };

  explicit CategorySpans(std::function<void(const Span&)> write) : write_(std::move(write)) {}

  void push(std::uint32_t tid, const part::CategoryPush& c);
  // `events`: the Python events since the thread's previous push or pop, which happened in the
  // span the pop ends.
  void pop(std::uint32_t tid, std::int64_t time, std::uint64_t events);
  // A thread that ended stops running what its stack says.
  void threadEnded(std::uint32_t tid, std::int64_t time);
  // The image ended at `end`: what each thread ran then (its base Python frame, at least).
  void finish(std::int64_t end);

  // Pushes and pops that moved between Python and native code (the collector's own wait spans
  // are not transitions).
  std::uint64_t transitions() const { return transitions_; }
  std::uint64_t unmatchedPops() const { return unmatchedPops_; }

 private:
  // A category open on a thread's stack: what runs since `since` unless something pushed above
  // it runs.
  struct Frame {
    std::uint32_t category = 0;
    std::uint64_t name = 0;
    std::int64_t since = 0;
    bool transition = true;
    std::uint64_t events = 0;  // Python events counted for its next span (an empty one had some)
  };
  void close(std::uint32_t tid, Frame& f, std::int64_t end, std::uint64_t events = 0);
  void closeStack(std::uint32_t tid, std::vector<Frame>& stack, std::int64_t end);

  std::function<void(const Span&)> write_;
  std::map<std::uint32_t, std::vector<Frame>> stacks_;  // per thread
  std::uint64_t transitions_ = 0;
  std::uint64_t unmatchedPops_ = 0;
};

// The trace's category for the collector's: 0 (RLSCOPE_CATEGORY_WAITING) is a blocked thread,
// 1-3 Python, Backend, Simulator; anything else native code.
trace::Category categoryOf(std::uint32_t collectorCategory);

}  // namespace rlscope::merge
