// Lines up the clocks of two hosts' traces of one job (`rlscope merge`). Each trace's times are
// its host's CLOCK_MONOTONIC, which means nothing on another host; rlscope_meta's wall-clock
// origin gives a first offset, as good as the hosts' NTP (milliseconds). The job's collectives
// refine it: every rank of a collective has its result at the same moment (NCCL kernels end
// together; a gloo wait returns when the last rank's data arrived), so the median difference of
// the completions of the same collective on a rank of each trace is the offset between them
// (the median of their main cluster: a completion is only ever seen late), kept within what
// causality allows (no rank has a collective's result before every rank entered it). Hosts whose
// rlscope-prof exchanged clock readings while profiling (--clock-sync) have their offset
// without collectives, within the exchanges' round trip; collectives then refine it within that.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/distributed/collectives.h"
#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

struct ClockOffset {
  trace::TimeNs offset = 0;  // add to the other trace's times to put them on the reference's
  // The standard error of the estimate (collectives), or a bound on its error (the clock
  // exchange: the truth is within offset ± this); 0: unknown (wall clock).
  trace::TimeNs uncertainty = 0;
  std::size_t collectives = 0;  // collectives the refinement used; 0: none
  std::string method;           // "same host", "wall clock", "clock exchange", "collectives"
};

// The other trace's offset from its wall-clock origin against the reference's, or nullopt when
// either lacks it (imports). Traces of one host share CLOCK_MONOTONIC: offset 0, exactly.
std::optional<ClockOffset> wallClockOffset(trace::TraceReader& reference,
                                           trace::TraceReader& other);

// The other trace's offset from the clock exchanges their rlscope-prof made (rlscope_meta
// clock_sync: one of them the reference, or both measured against the same one), or nullopt.
// Throws trace::TraceError when a trace's clock_sync is not what rlscope-prof writes.
std::optional<ClockOffset> exchangeOffset(trace::TraceReader& reference, trace::TraceReader& other);

// The collectives of the trace's lowest rank that issued any (collectives.h); empty: none.
std::vector<CollectiveCall> lowestRankCollectives(trace::TraceReader& trace);

// The offset from two such sequences (the reference's, the other trace's), matched by order;
// nullopt when either is empty.
std::optional<ClockOffset> collectiveOffset(const std::vector<CollectiveCall>& reference,
                                            const std::vector<CollectiveCall>& other);
// The same, reading both traces.
std::optional<ClockOffset> collectiveOffset(trace::TraceReader& reference,
                                            trace::TraceReader& other);

}  // namespace rlscope::analysis
