// NVTX ranges as a part's records open and close them: push/pop ranges on a stack per thread and
// domain, closed as they pop; start/end ranges by id, which may end on another thread than the
// one that started them and are matched once the part is complete.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rlscope/trace/records.h"

namespace rlscope::merge {

// A range that has been opened and not yet closed.
struct OpenRange {
  std::int64_t start = 0;
  std::uint32_t tid = 0;
  std::uint64_t domain = 0;
  std::string text;
  std::uint64_t stringHandle = 0;
  std::uint32_t category = 0;
  std::optional<std::int64_t> color;
  std::uint32_t pushIndex = 0;   // push/pop only: the thread's how-many-th push (1-based)
  std::uint8_t payloadType = 0;  // nvtxPayloadType_t
  std::uint64_t payload = 0;
  std::int64_t operationId = 0;  // the operation it will be (OperationStream::open); 0 for phases
};

class NvtxRanges {
 public:
  // A range closed at `end` by thread `endTid`; `unterminated` when its process ended with it
  // still open (closed at the process's end).
  using Close = std::function<void(const OpenRange&, std::int64_t end, std::uint32_t endTid,
                                   trace::NvtxEventType, bool unterminated)>;

  explicit NvtxRanges(Close close) : close_(std::move(close)) {}

  // Numbers the push (OpenRange::pushIndex) as the collector did; returns that number.
  std::uint32_t push(std::uint32_t tid, OpenRange o);
  void pop(std::uint32_t tid, std::uint64_t domain, std::int64_t time);
  void start(std::uint64_t rangeId, OpenRange o);
  void end(std::uint64_t rangeId, std::uint32_t tid, std::int64_t time);

  // What finish() found that did not match.
  struct Leftovers {
    std::uint64_t endsNeverStarted = 0;                      // nvtxRangeEnd of ids never started
    std::uint64_t stillOpen = 0;                             // push/pop ranges open at the end
    std::map<std::uint32_t, std::uint64_t> popsWithoutPush;  // per thread
  };
  // The part is complete and its process ended at `end`: start/end ranges matched, and what is
  // still open closed there.
  Leftovers finish(std::int64_t end);

 private:
  Close close_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<OpenRange>> stacks_;
  std::unordered_map<std::uint32_t, std::uint32_t> pushes_;  // per thread
  std::unordered_map<std::uint64_t, OpenRange> started_;
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::int64_t>> ended_;
  std::map<std::uint32_t, std::uint64_t> popsWithoutPush_;
};

}  // namespace rlscope::merge
