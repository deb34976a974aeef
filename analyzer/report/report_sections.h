// What the sections of a report say, apart from markup: which optional columns a table needs,
// why a GPU section is missing, the top kernels, the label/value lines of the idle, launch and
// correction sections. The HTML and Markdown renderers share it, so both say the same thing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

inline constexpr std::size_t kTopKernels = 20;
// Operations in the prediction's chart and table: enough to show where the time goes without
// a long tail of operations the target barely changes.
inline constexpr std::size_t kTopPredictedOperations = 10;

inline constexpr const char* kPercentNote =
    "Percentages are of the process's traced time: the sum of its operations, \"(unannotated)\" "
    "(time outside every operation) included, so they add up to 100%.";
inline constexpr const char* kGpuBoundNote =
    "GPU-bound: time when a kernel or copy actually runs (GPU only + CPU+GPU).";
inline constexpr const char* kIdleNote =
    "Stream idle time is summed over streams and split by what ends each gap: a late launch from "
    "the host (host wait), a short gap between back-to-back kernels (kernel wait), or anything "
    "else (other).";
inline constexpr const char* kLaunchNote =
    "Launch delay: GPU start of an activity minus the end of the CUDA API call that launched it. "
    "Short kernels ran on the GPU for less time than their launch took on the CPU.";
inline constexpr const char* kBiasNote =
    "Bias: corrected total against the measured time of the uninstrumented run; near 0% means "
    "the correction removed the profiler's overhead and nothing else.";

inline constexpr const char* kPredictionNote =
    "GPU x: predicted / origin time of the GPU work the operation launched. CPU-only and idle "
    "time stay; GPU-only time and the CPU's waits in synchronizing calls scale; time when both "
    "were busy becomes the longer of the CPU part and the scaled GPU part.";
inline constexpr const char* kPredictorPointer =
    "How each kernel is predicted (wave scaling, roofline gamma: 0 compute-bound .. 1 "
    "memory-bound, peak throughput): docs/predictor.md.";

struct OperationColumns {
  bool phase = false, instances = false, launchedGpu = false;
};
// Optional columns appear only when some operation has the value.
OperationColumns operationColumns(const Analysis& analysis);

// Empty when the document has usable GPU metrics; otherwise why not, for "not available: ...".
std::string gpuMissingReason(const Analysis& analysis);
// Longest total first; kernels without a total last.
std::vector<const Kernel*> topKernels(const GpuSection& gpu, std::size_t limit = kTopKernels);
double kernelTimeUs(const GpuSection& gpu);

struct Item {
  std::string label, value;
};
std::vector<Item> idleItems(const GpuIdle& idle);
std::vector<Item> launchItems(const LaunchStats& launch);
// "+2.1 % ± 3.0 %", "+61.9 % ± 40.0 % (too noisy to tell)", or "n/a".
std::string biasText(const Correction& correction);
std::vector<Item> correctionItems(const Correction& correction);

// "Prediction on T4".
std::string predictionTitle(const PredictionSection& prediction);
// Empty when the prediction can be shown; otherwise why not, for "not available: ...".
std::string predictionMissingReason(const PredictionSection& prediction);
// Origin and target, the run, its GPU work, the share that waits on the GPU and the bound an
// infinitely fast GPU gives.
std::vector<Item> predictionItems(const PredictionSection& prediction);
// Longest origin time first, over all processes.
std::vector<const PredictedOperation*> topPredictedOperations(
    const PredictionSection& prediction, std::size_t limit = kTopPredictedOperations);
std::vector<const PredictedKernel*> topPredictedKernels(const PredictionSection& prediction,
                                                        std::size_t limit = kTopKernels);
// "inference [training]", with " · process 123" when the prediction has several processes.
std::string predictedOperationTitle(const PredictionSection& prediction,
                                    const PredictedOperation& op);
// A ratio of times: "1.62x faster", "1.61x slower" (the verdict's way); "n/a" when not positive.
std::string formatSpeedup(double speedup);
// predicted against origin in percent of origin: "-35.0%", "+12.0%", "0.0%"; "n/a" without an
// origin.
std::string formatChange(double originUs, double predictedUs);
// A scale factor as it is: "0.41x"; "n/a" when absent.
std::string formatFactor(const std::optional<double>& factor);
// A kernel's roofline gamma: "0.42"; "n/a" when absent.
std::string formatGamma(const std::optional<double>& gamma);
// A predicted time with its expected error beside it: "12.3 ms ± 1.20 ms", "12.3 ms ± 54 %"
// (a fraction), or the time alone when the document has no error for it.
std::string predictedWithError(const std::optional<double>& predictedUs,
                               const std::optional<double>& errorUs);
std::string predictedWithErrorFraction(const std::optional<double>& predictedUs,
                                       const std::optional<double>& error);

// Transition names over all operations, sorted.
std::vector<std::string> transitionNames(const Analysis& analysis);
// "inference [training]", with " · process 123" when the document has several processes.
std::string operationTitle(const Analysis& analysis, const Operation& op);
// "cupti" -> "CUPTI"; unknown keys as they are.
std::string overheadSourceName(const std::string& key);

inline constexpr const char* kRanksNote =
    "Per collective, the rank that entered it last held the others back: their time in it until "
    "then is waiting, the rest is transfer. \"Meanwhile it ran\": the straggler's innermost "
    "operation and CPU category while the others waited, its longest.";
// The ranks' table of `--by rank`: its headers, and a rank's cells as text.
std::vector<std::string> rankHeaders();
std::vector<std::string> rankCells(const RankRow& rank);
// "rank 1 on node3"
std::string rankTitle(const RankRow& rank);

}  // namespace rlscope::report
