// One trace from the traces of a job's hosts (`rlscope merge`): every host's rows on the first
// trace's clock (clock_alignment.h), processes and GPUs kept apart, and what was done recorded in
// rlscope_meta.merged_traces.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rlscope/distributed/clock_alignment.h"

namespace rlscope::analysis {

struct JobMergeOptions {
  // rlscope-prof --clock-sync's measurements, where the traces have them.
  bool useClockExchange = true;
  // Refine by the job's collectives. Both off: the wall-clock origins alone.
  bool alignByCollectives = true;
  std::function<void(const std::string&)> progress;
};

struct MergedTrace {
  std::filesystem::path file;
  std::string host;
  ClockOffset clock;  // the first trace's: method "reference"
  std::uint64_t rows = 0;
  std::size_t pidsRemapped = 0;   // processes whose pid an earlier trace had
  std::int64_t deviceOffset = 0;  // added to its GPUs' ids
};

struct JobMergeReport {
  std::vector<MergedTrace> traces;
  std::uint64_t rows = 0;
};

// Throws trace::TraceError (one line) for an input that cannot be read, an output that is one
// of the inputs, or a trace that cannot be aligned (no wall-clock origin, no collectives).
JobMergeReport mergeJob(const std::vector<std::filesystem::path>& inputs,
                        const std::filesystem::path& output, const JobMergeOptions& options = {});

}  // namespace rlscope::analysis
