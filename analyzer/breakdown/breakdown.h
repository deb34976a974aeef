// The breakdown of a trace (design.md §4-§5): per process, per operation (all its instances, in
// the phase each started in), time per resource (CPU, GPU, CPU+GPU) and per category set, from
// the overlap engine. GPU work counts where it runs in time (RL-Scope's wall-time view).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

inline constexpr const char* kUnannotatedName = "(unannotated)";

struct CategorySetTime {
  std::vector<std::string> set;  // category names, sorted alphabetically; empty: nothing ran
  trace::TimeNs time = 0;
};

struct OperationBreakdown {
  std::int64_t process = 0;  // pid
  std::string name;          // kUnannotatedName for time outside every operation
  std::string phase;         // empty when outside every phase
  std::uint64_t instances = 0;
  trace::TimeNs time = 0;                      // all of it, idle time inside the operation included
  trace::TimeNs cpu = 0, gpu = 0, cpuGpu = 0;  // CPU only, GPU only, both at once
  std::vector<CategorySetTime> categories;     // non-zero only, longest first
};

struct Breakdown {
  std::vector<OperationBreakdown> operations;  // by process, then longest first
  std::uint64_t events = 0;                    // intervals the overlap engine swept
};

// Reads every process's category intervals, CUDA API calls, GPU activity, operations and phases.
// `progress` (optional) gets one line per process.
Breakdown analyzeTrace(trace::TraceReader& reader,
                       const std::function<void(const std::string&)>& progress = {});

}  // namespace rlscope::analysis
