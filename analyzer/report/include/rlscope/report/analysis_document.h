// The analysis document of `rlscope analyze --format json` (schema rlscope.analysis/1), read
// once into plain structs so that every renderer sees the same values and never has to ask
// nlohmann::json whether an optional key is there. Required keys missing or of the wrong type
// make parseAnalysis throw one clear line; optional ones become empty std::optionals.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/document/analysis_json.h"

namespace rlscope::report {

inline constexpr const char* kAnalysisSchema = analysis::json_keys::kAnalysisSchema;
inline constexpr const char* kUnannotated = "(unannotated)";
inline constexpr const char* kPredictionSchema = analysis::json_keys::prediction::kPredictionSchema;

// Where a category set's time ran: only CPU categories, both kinds, only GPU categories, or
// nothing at all (the empty set: idle time inside an operation).
enum class Resource { Cpu, CpuGpu, Gpu, Idle };

struct CategorySetTime {
  std::vector<std::string> set;  // sorted alphabetically
  double timeUs = 0;
};

struct Operation {
  std::string name;
  std::int64_t process = 0;
  std::string host;                  // the process's host; empty when the document has none
  std::optional<std::int64_t> rank;  // the process's rank in a distributed job
  std::string phase;                 // empty when the document has none
  std::optional<std::int64_t> instances;
  double timeUs = 0;
  double cpuUs = 0, cpuGpuUs = 0, gpuUs = 0;  // CPU only, both at once, GPU only
  double waitingUs = 0;                       // blocked, with nothing else running
  double gpuBoundUs = 0;                      // "gpu_bound_us", else GPU + CPU+GPU
  std::optional<double> launchedGpuUs;
  std::vector<CategorySetTime> categories;
  std::map<std::string, double> transitions;  // empty when absent
};

struct Kernel {
  std::string name;
  std::string kernelClass;  // empty when absent
  std::optional<double> count, totalUs, meanUs, minUs, maxUs, stdUs;
};

struct GpuIdle {
  std::optional<double> spanUs, busyUs, idleUs, hostWaitUs, kernelWaitUs, otherUs;
};

struct LaunchStats {
  std::optional<double> count, delayMeanUs, delayP50Us, delayP95Us, delayMaxUs, shortKernels,
      shortKernelTimeUs;
};

struct GpuSection {
  bool available = false;
  std::vector<Kernel> kernels;            // as in the document (the analyzer sorts them)
  std::map<std::string, double> classes;  // kernel class -> µs; empty when absent
  std::optional<GpuIdle> idle;
  std::optional<LaunchStats> launch;
};

struct Correction {
  std::string calibration;  // empty when absent
  std::optional<double> uncorrectedTotalUs, correctedTotalUs, uninstrumentedTotalUs, biasPct;
  std::optional<double> uninstrumentedNoisePct;  // run-to-run variation of the plain command
  std::optional<double> biasUncertaintyPct;      // absent when it cannot be told
  std::string biasVerdict;  // "within_target", "outside_target", "too_noisy_to_tell" or empty
  std::map<std::string, double> removedUs;  // overhead source -> µs; empty when absent
};

// The predictor's what-if of `--target GPU` (schema rlscope.prediction/1, docs/predictor.md):
// the run and every operation and kernel name on the origin GPU and predicted on the target.
struct PredictedOperation {
  std::string name;
  std::int64_t process = 0;
  std::string phase;  // empty when the document has none
  double originUs = 0, predictedUs = 0;
  std::optional<double> gpuScale;         // predicted / origin time of the GPU work it launched
  std::optional<double> expectedErrorUs;  // the prediction's expected error
};

struct PredictedKernel {
  std::string name;
  std::string method;  // how it was predicted ("wave-scaled (roofline)", "kept", ...)
  std::optional<double> launches, cannotPredict, originUs, predictedUs, gamma;
  std::optional<double> expectedError;  // of its method, a fraction; 0: kept, not modelled
};

struct PredictionSection {
  std::string schema;                      // kPredictionSchema; another one is not read further
  std::string origin, originFrom, target;  // originFrom: "trace" or "--origin"
  std::string verdict;
  std::optional<double> originUs, predictedUs, speedup;
  std::optional<double> predictedLowUs, predictedHighUs;  // the expected range
  std::optional<double> gpuBoundUs, maxSpeedup;  // maxSpeedup 0: the whole run waits on the GPU
  bool cpuBound = false;
  std::optional<double> gpuOriginUs, gpuPredictedUs, kernelLaunches, cannotPredict;
  std::optional<double> gpuExpectedError;      // a fraction
  std::vector<PredictedOperation> operations;  // as in the document
  std::vector<PredictedKernel> kernels;        // as in the document (longest origin time first)
  std::vector<std::string> notes;
};

// `analyze --by rank` (docs/analysis.md, "Ranks side by side").
struct StragglerActivity {
  std::string operation, category;
  double timeUs = 0;
};

struct RankRow {
  std::int64_t rank = 0;
  std::string host;                 // empty when absent
  std::optional<std::int64_t> pid;  // the rank's process
  double timeUs = 0;
  double collectivesUs = 0, waitingForOthersUs = 0, transferringUs = 0;
  double collectives = 0, collectivesLast = 0, othersWaitedUs = 0;
  std::vector<StragglerActivity> doing;  // as in the document (longest first)
};

struct RanksSection {
  std::vector<RankRow> ranks;  // as in the document (by rank)
  double matched = 0;
  std::string source;  // empty when none was found
  std::vector<std::string> notes;
};

struct Analysis {
  std::string trace;  // empty when absent
  bool corrected = false;
  std::optional<double> totalUs;
  std::vector<Operation> operations;  // in document order
  std::optional<GpuSection> gpu;
  std::optional<Correction> correction;
  std::optional<PredictionSection> prediction;  // only with `--target`
  std::optional<RanksSection> ranks;            // only with `--by rank`
};

// Throws std::runtime_error (one line) for a document that is not rlscope.analysis/1 or lacks a
// required key (schema, operations, and per operation name, process, time_us, resources,
// categories).
Analysis parseAnalysis(const nlohmann::json& document);

Resource resourceOf(const std::vector<std::string>& set);
bool isGpuCategory(const std::string& category);
// "Backend+GPU kernel"; "(idle)" for the empty set.
std::string setLabel(const std::vector<std::string>& set);
// The category sets the operations ran in (the empty set, idle time, left out), in the order
// every report lists them: by resource (CPU, CPU+GPU, GPU), then fewer categories first, then
// by the categories' order (Python, Backend, Simulator, CUDA API, Native, GPU kernel, ...).
std::vector<std::vector<std::string>> categorySetsOf(const Analysis& analysis);
// Processes in order of first appearance.
std::vector<std::int64_t> processesOf(const Analysis& analysis);
// Sum of time_us of the process's operations: its traced time, since "(unannotated)" covers the
// rest. The denominator of every per-operation percentage.
double processTimeUs(const Analysis& analysis, std::int64_t process);
// The process's operations, longest first, "(unannotated)" last.
std::vector<const Operation*> operationsOf(const Analysis& analysis, std::int64_t process);
// The "All operations" row of the operation tables: time, CPU, CPU+GPU, GPU, waiting and
// GPU-bound time summed.
Operation totalOf(const std::vector<const Operation*>& operations);

}  // namespace rlscope::report
