// The keys of the analysis document (`rlscope analyze --json`, docs/analysis.md), each defined
// once: breakdown_output.cpp, distributed/rank_analysis.cpp and predictor/what_if_output.cpp
// write them, report/analysis_document.cpp reads them back, so a key renamed on one side cannot
// silently drop a value on the other. The "gpu" section's keys are in gpu_json.h.
#pragma once

namespace rlscope::analysis::json_keys {

inline constexpr char kAnalysisSchema[] = "rlscope.analysis/1";

// The document's members.
inline constexpr char kSchema[] = "schema";
inline constexpr char kView[] = "view";
inline constexpr char kTrace[] = "trace";
inline constexpr char kCorrected[] = "corrected";
inline constexpr char kTotalUs[] = "total_us";
inline constexpr char kOperations[] = "operations";
inline constexpr char kCorrection[] = "correction";
inline constexpr char kGpu[] = "gpu";
inline constexpr char kPrediction[] = "prediction";
inline constexpr char kRanks[] = "ranks";  // these three with --by rank
inline constexpr char kStragglers[] = "stragglers";
inline constexpr char kCollectives[] = "collectives";

// "resources" of an operation or rank: µs per resource.
namespace resource {
inline constexpr char kCpu[] = "CPU";
inline constexpr char kGpu[] = "GPU";
inline constexpr char kCpuGpu[] = "CPU+GPU";
}  // namespace resource

// One "operations" entry.
namespace operation {
inline constexpr char kName[] = "name";
inline constexpr char kProcess[] = "process";
inline constexpr char kThread[] = "thread";  // --view thread
inline constexpr char kRank[] = "rank";      // processes of a distributed job
inline constexpr char kHost[] = "host";
inline constexpr char kPhase[] = "phase";
inline constexpr char kInstances[] = "instances";
inline constexpr char kTimeUs[] = "time_us";
inline constexpr char kResources[] = "resources";
inline constexpr char kWaitingUs[] = "waiting_us";
inline constexpr char kGpuBoundUs[] = "gpu_bound_us";
inline constexpr char kLaunchedGpuUs[] = "launched_gpu_us";
inline constexpr char kLaunchedGpuActivities[] = "launched_gpu_activities";
inline constexpr char kGpuWaitUs[] = "gpu_wait_us";
inline constexpr char kPythonEvents[] = "python_events";
inline constexpr char kTransitions[] = "transitions";
inline constexpr char kCategories[] = "categories";
}  // namespace operation

// One "categories" entry of an operation.
namespace category {
inline constexpr char kSet[] = "set";
inline constexpr char kTimeUs[] = "time_us";
}  // namespace category

// "correction".
namespace correction {
inline constexpr char kCalibration[] = "calibration";
inline constexpr char kUncorrectedTotalUs[] = "uncorrected_total_us";
inline constexpr char kCorrectedTotalUs[] = "corrected_total_us";
inline constexpr char kRemovedUs[] = "removed_us";
inline constexpr char kBreakdownRemovedUs[] = "breakdown_removed_us";
inline constexpr char kEvents[] = "events";
inline constexpr char kCostPerEventNs[] = "cost_per_event_ns";
inline constexpr char kNotes[] = "notes";
inline constexpr char kUninstrumentedTotalUs[] = "uninstrumented_total_us";
inline constexpr char kUninstrumentedNoisePct[] = "uninstrumented_noise_pct";
inline constexpr char kBiasPct[] = "bias_pct";
inline constexpr char kBiasUncertaintyPct[] = "bias_uncertainty_pct";
inline constexpr char kBiasVerdict[] = "bias_verdict";
}  // namespace correction

// One "ranks" entry; its "collectives" member.
namespace rank {
inline constexpr char kRank[] = "rank";
inline constexpr char kHost[] = "host";
inline constexpr char kPid[] = "pid";
inline constexpr char kPids[] = "pids";
inline constexpr char kTimeUs[] = "time_us";
inline constexpr char kResources[] = "resources";
inline constexpr char kWaitingUs[] = "waiting_us";
inline constexpr char kCollectives[] = "collectives";
namespace collectives {
inline constexpr char kCount[] = "count";
inline constexpr char kTimeUs[] = "time_us";
inline constexpr char kWaitingUs[] = "waiting_us";
inline constexpr char kTransferringUs[] = "transferring_us";
}  // namespace collectives
}  // namespace rank

// One "stragglers" entry; each of its "doing".
namespace straggler {
inline constexpr char kRank[] = "rank";
inline constexpr char kHost[] = "host";
inline constexpr char kCollectivesLast[] = "collectives_last";
inline constexpr char kOthersWaitedUs[] = "others_waited_us";
inline constexpr char kDoing[] = "doing";
namespace doing {
inline constexpr char kOperation[] = "operation";
inline constexpr char kCategory[] = "category";
inline constexpr char kTimeUs[] = "time_us";
}  // namespace doing
}  // namespace straggler

// The document's "collectives" (how the ranks' collectives were matched).
namespace collectives {
inline constexpr char kMatched[] = "matched";
inline constexpr char kSource[] = "source";
inline constexpr char kNotes[] = "notes";
}  // namespace collectives

// "prediction" (`--target`): a document of its own schema inside the analysis.
namespace prediction {
inline constexpr char kPredictionSchema[] = "rlscope.prediction/1";
inline constexpr char kSchema[] = "schema";
inline constexpr char kOrigin[] = "origin";
inline constexpr char kOriginFrom[] = "origin_from";
inline constexpr char kTarget[] = "target";
inline constexpr char kVerdict[] = "verdict";
inline constexpr char kRun[] = "run";
inline constexpr char kGpu[] = "gpu";
inline constexpr char kOperations[] = "operations";
inline constexpr char kKernels[] = "kernels";
inline constexpr char kNotes[] = "notes";
namespace run {
inline constexpr char kOriginUs[] = "origin_us";
inline constexpr char kPredictedUs[] = "predicted_us";
inline constexpr char kPredictedLowUs[] = "predicted_low_us";
inline constexpr char kPredictedHighUs[] = "predicted_high_us";
inline constexpr char kSpeedup[] = "speedup";
inline constexpr char kGpuBoundUs[] = "gpu_bound_us";
inline constexpr char kMaxSpeedup[] = "max_speedup";
inline constexpr char kCpuBound[] = "cpu_bound";
inline constexpr char kModel[] = "model";
inline constexpr char kOperationModelUs[] = "operation_model_us";
inline constexpr char kLongestStreamUs[] = "longest_stream_us";
inline constexpr char kLongestCpuPathUs[] = "longest_cpu_path_us";
inline constexpr char kReplayedCalls[] = "replayed_calls";
inline constexpr char kReplayedWaits[] = "replayed_waits";
}  // namespace run
namespace gpu {
inline constexpr char kOriginUs[] = "origin_us";
inline constexpr char kPredictedUs[] = "predicted_us";
inline constexpr char kExpectedError[] = "expected_error";
inline constexpr char kKernelLaunches[] = "kernel_launches";
inline constexpr char kCannotPredict[] = "cannot_predict";
}  // namespace gpu
namespace operation {
inline constexpr char kProcess[] = "process";
inline constexpr char kName[] = "name";
inline constexpr char kPhase[] = "phase";
inline constexpr char kOriginUs[] = "origin_us";
inline constexpr char kPredictedUs[] = "predicted_us";
inline constexpr char kCpuUs[] = "cpu_us";
inline constexpr char kGpuUs[] = "gpu_us";
inline constexpr char kCpuGpuUs[] = "cpu_gpu_us";
inline constexpr char kGpuWaitUs[] = "gpu_wait_us";
inline constexpr char kIdleUs[] = "idle_us";
inline constexpr char kGpuScale[] = "gpu_scale";
inline constexpr char kExpectedErrorUs[] = "expected_error_us";
}  // namespace operation
namespace kernel {
inline constexpr char kName[] = "name";
inline constexpr char kKind[] = "kind";
inline constexpr char kPrecision[] = "precision";
inline constexpr char kMethod[] = "method";
inline constexpr char kLaunches[] = "launches";
inline constexpr char kCannotPredict[] = "cannot_predict";
inline constexpr char kOriginUs[] = "origin_us";
inline constexpr char kPredictedUs[] = "predicted_us";
inline constexpr char kGamma[] = "gamma";
inline constexpr char kOccupancyOrigin[] = "occupancy_origin";
inline constexpr char kOccupancyTarget[] = "occupancy_target";
inline constexpr char kExpectedError[] = "expected_error";
}  // namespace kernel
}  // namespace prediction

}  // namespace rlscope::analysis::json_keys
