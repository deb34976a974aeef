// The run replayed on the target (docs/predictor.md, "The run"): the trace's own dependency graph
// — each thread's CUDA calls in order with its CPU time between them unchanged, launches feeding
// their kernels, copies and memsets, stream order, and the waits of synchronizing calls — played
// again with predicted GPU durations, as Daydream (ATC'20) does for what-if questions. The
// replayed run is never shorter than any stream's serial work nor than any thread's own path.
#pragma once

#include <cstdint>
#include <vector>

#include "rlscope/trace/reader.h"

namespace rlscope::predictor {

// One kernel, copy or memset of the trace with its duration on the target.
struct GpuActivity {
  std::int64_t globalPid = 0, device = 0, stream = 0, correlation = 0;
  trace::TimeNs start = 0, end = 0;
  double predictedNs = 0;
  double expectedError = 0;  // of its prediction, a fraction (expectedError in wave_scaling.h)
};

struct ReplayResult {
  bool replayed = false;   // false: the trace has no CUDA calls to replay from
  double originNs = 0;     // first event to last, as recorded
  double predictedNs = 0;  // the same span, replayed
  // Replayed with every GPU duration at the low and at the high end of its expected error.
  double predictedLowNs = 0, predictedHighNs = 0;
  // The bounds a replay keeps: the most predicted GPU work one stream runs, one after another,
  // and the longest time one thread spends outside its waits for the GPU.
  double longestStreamNs = 0;
  double longestCpuPathNs = 0;
  std::uint64_t calls = 0, waits = 0;  // CUDA calls replayed, of them synchronizing
  std::uint64_t unlaunched = 0;        // GPU activities no recorded call launched (kept in place)
};

ReplayResult replayRun(trace::TraceReader& reader, std::vector<GpuActivity> activities);

}  // namespace rlscope::predictor
