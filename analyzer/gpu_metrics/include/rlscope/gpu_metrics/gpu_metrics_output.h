// The GPU metrics as JSON (for scripts and reports) and as a table (for people); times in µs.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>

#include "rlscope/gpu_metrics/gpu_metrics.h"

namespace rlscope::analysis {

// The whole trace's metrics:
// {"available": bool,
//  "kernels": [{"name", "class", "count", "total_us", "mean_us", "min_us", "max_us", "std_us"}],
//  "classes": {"compute", "memory", "communication"},
//  "idle": {"span_us", "busy_us", "idle_us", "host_wait_us", "kernel_wait_us", "other_us",
//           "stream_idle_us", "streams": [{"process", "device", "stream", "span_us", "busy_us",
//           "idle_us", "host_wait_us", "kernel_wait_us", "other_us"}]},
//  "launch": {"count", "without_api_call", "negative_delays", "delay_mean_us", "delay_p50_us",
//             "delay_p95_us", "delay_min_us", "delay_max_us", "short_kernels",
//             "short_kernel_time_us", "kernels_only": {the same keys, kernel rows only}}}
// `kernels` holds the `topKernels` longest (all of them for 0); `classes` covers every kernel.
nlohmann::json gpuMetricsToJson(const GpuMetrics& m, std::size_t topKernels = 20);

// Aligned columns: the top kernels, class totals, idle time (overall and per stream), launches.
void writeGpuMetricsTable(const GpuMetrics& m, std::ostream& out, std::size_t topKernels = 20);

}  // namespace rlscope::analysis
