// The keys of the analysis document's "gpu" section (docs/gpu-metrics.md), each defined once:
// gpu_metrics_output.cpp writes them, report/analysis_document.cpp reads them back, and a key
// renamed on one side cannot silently drop a metric on the other. The other sections' keys are in
// analysis_json.h.
#pragma once

namespace rlscope::analysis::gpu_json {

inline constexpr char kAvailable[] = "available";
inline constexpr char kKernels[] = "kernels";
inline constexpr char kClasses[] = "classes";
inline constexpr char kIdle[] = "idle";
inline constexpr char kLaunch[] = "launch";
inline constexpr char kKernelsOnly[] = "kernels_only";  // in "launch": kernels alone

// One "kernels" entry.
namespace kernel {
inline constexpr char kName[] = "name";
inline constexpr char kClass[] = "class";
inline constexpr char kCount[] = "count";
inline constexpr char kTotalUs[] = "total_us";
inline constexpr char kMeanUs[] = "mean_us";
inline constexpr char kMinUs[] = "min_us";
inline constexpr char kMaxUs[] = "max_us";
inline constexpr char kStdUs[] = "std_us";
}  // namespace kernel

// "classes": µs per kernel class.
namespace kernel_class {
inline constexpr char kCompute[] = "compute";
inline constexpr char kMemory[] = "memory";
inline constexpr char kCommunication[] = "communication";
}  // namespace kernel_class

// "idle", and each of its "streams" (which add where the stream is).
namespace idle {
inline constexpr char kSpanUs[] = "span_us";
inline constexpr char kBusyUs[] = "busy_us";
inline constexpr char kIdleUs[] = "idle_us";
inline constexpr char kHostWaitUs[] = "host_wait_us";
inline constexpr char kKernelWaitUs[] = "kernel_wait_us";
inline constexpr char kOtherUs[] = "other_us";
inline constexpr char kStreamIdleUs[] = "stream_idle_us";
inline constexpr char kStreams[] = "streams";
inline constexpr char kProcess[] = "process";
inline constexpr char kDevice[] = "device";
inline constexpr char kStream[] = "stream";
}  // namespace idle

// "launch" and "launch"."kernels_only".
namespace launch {
inline constexpr char kCount[] = "count";
inline constexpr char kWithoutApiCall[] = "without_api_call";
inline constexpr char kNegativeDelays[] = "negative_delays";
inline constexpr char kDelayMeanUs[] = "delay_mean_us";
inline constexpr char kDelayP50Us[] = "delay_p50_us";
inline constexpr char kDelayP95Us[] = "delay_p95_us";
inline constexpr char kDelayMinUs[] = "delay_min_us";
inline constexpr char kDelayMaxUs[] = "delay_max_us";
inline constexpr char kShortKernels[] = "short_kernels";
inline constexpr char kShortKernelTimeUs[] = "short_kernel_time_us";
}  // namespace launch

}  // namespace rlscope::analysis::gpu_json
