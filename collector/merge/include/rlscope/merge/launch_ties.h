// Each CUDA launch tied to the operation that made it (rlscope_external_correlation), as the run
// is merged rather than at its end. The collector pushes part::operationIdOf(tid, pushIndex) as
// CUPTI's external correlation id while a push/pop range is open; CUPTI reports it in a record of
// its own, before or after the launch's API call record. A launch is tied as soon as both records
// and the push have been read, and then forgotten, so that memory does not grow with the
// launches. Launches without one (none of our ranges was open, or its push was never read) are
// tied at the end to the innermost operation open on their thread when the call began.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rlscope/merge/part_key.h"
#include "rlscope/trace/records.h"

namespace rlscope::merge {

class LaunchTies {
 public:
  struct Launch {
    std::uint64_t part;  // Part::serial
    std::int64_t globalPid, globalTid, start;
    std::uint32_t correlationId;
  };
  using Write = std::function<void(const trace::ExternalCorrelationRecord&)>;
  // The innermost operation open on a thread at an instant, or 0 (OperationStream::innermostAt).
  using InnermostAt = std::function<std::int64_t(std::int64_t globalTid, std::int64_t t)>;

  explicit LaunchTies(Write write) : write_(std::move(write)) {}

  // The part's thread `tid` pushed its `pushIndex`-th range: launches made while it is the
  // innermost push belong to operation `id` (0: to none).
  void pushed(std::uint64_t part, std::uint32_t tid, std::uint32_t pushIndex, std::int64_t id);
  // A launch's API call.
  void launched(const Launch& l);
  // CUPTI's external correlation of the part's launch `correlationId`: the collector's
  // part::operationIdOf(tid, pushIndex).
  void correlated(std::uint64_t part, std::uint32_t correlationId, std::uint64_t externalId);
  // Every record is read: what is still waiting is tied by time.
  void finish(const InnermostAt& innermostAt);

  // Launches and external correlations read but not tied yet.
  std::size_t waiting() const { return launches_.size() + externals_.size(); }

 private:
  // The operation the collector's external id names: kUnknown while its push has not been read,
  // kNone for a push that belongs to no operation.
  static constexpr std::int64_t kUnknown = 0, kNone = -1;
  std::int64_t operationOf(std::uint64_t part, std::uint64_t externalId) const;
  // Writes the tie once the push is known; false while it is not.
  bool tie(const Launch& l, std::uint64_t externalId);
  void write(const Launch& l, std::int64_t operationId);

  Write write_;
  // Per part and thread (partKey), the operation of each push by its pushIndex
  // (kUnknown, kNone or an id): 8 bytes a range, where a map of the pushed ids cost 50.
  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> idsOfPushes_;
  // Keyed by partKey(part, correlationId).
  std::unordered_map<std::uint64_t, Launch> launches_;          // without their correlation yet
  std::unordered_map<std::uint64_t, std::uint64_t> externals_;  // without their launch yet
  std::vector<std::pair<Launch, std::uint64_t>> unresolved_;    // both read, push not (yet)
};

}  // namespace rlscope::merge
