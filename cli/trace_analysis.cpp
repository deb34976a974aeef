#include "trace_analysis.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "commands.h"
#include "gpu_database_option.h"
#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/document/analysis_json.h"
#include "rlscope/gpu_metrics/gpu_metrics_output.h"
#include "rlscope/predictor/what_if_output.h"

namespace rlscope::cli {

TraceAnalysis analyzeTraceFile(const std::string& trace, const TraceAnalysisOptions& options) {
  if (options.by == "rank" && options.view != "process")
    throw std::runtime_error("--by rank compares the ranks in the process view: leave out --view");
  trace::TraceReader reader(trace);
  analysis::AnalyzeOptions analyze;
  analyze.view = options.view == "thread" ? analysis::View::kThread
                 : options.view == "run"  ? analysis::View::kRun
                                          : analysis::View::kProcess;
  auto say = [&options](const std::string& line) {
    if (options.progress) progress(line);
  };
  analyze.progress = say;
  std::optional<analysis::Calibration> calibration;
  if (!options.noCorrection) {
    if (!options.calibrationFile.empty()) {
      calibration = analysis::readCalibrationFile(options.calibrationFile);
      analyze.calibrationOrigin = options.calibrationFile;
    } else if (auto rows = reader.calibration(); !rows.empty()) {
      calibration = analysis::calibrationFromRecords(rows);
      analyze.calibrationOrigin = "stored in the trace";
    }
  }
  if (calibration) analyze.calibration = &*calibration;
  TraceAnalysis a;
  // The GPU metrics are handed the CUDA API and GPU rows as the breakdown reads them: each table
  // is read once.
  analysis::GpuMetricsBuilder gpu(
      {.kernelWaitThreshold = std::llround(options.kernelWaitThresholdUs * 1000.0)});
  analyze.gpuMetrics = &gpu;
  a.breakdown = analysis::analyzeTrace(reader, analyze);
  say("GPU metrics");
  a.gpu = gpu.finish(reader);
  a.document = analysis::toJson(a.breakdown);
  a.document[analysis::json_keys::kTrace] = trace;
  a.document[analysis::json_keys::kGpu] = analysis::gpuMetricsToJson(a.gpu, options.topKernels);
  if (options.by == "rank") {
    say("comparing the ranks");
    a.ranks = analysis::analyzeRanks(reader, a.breakdown);
    a.document.update(analysis::ranksToJson(*a.ranks));
  }
  if (!options.predictTarget.empty()) {
    say("predicting the run on " + options.predictTarget);
    predictor::GpuDatabase db = loadGpuDatabase(options.gpuDatabase);
    predictor::PredictOptions predict;
    if (!options.predictOrigin.empty()) predict.origin = &db.get(options.predictOrigin);
    a.prediction = predictor::predictRun(reader, db, db.get(options.predictTarget), predict);
    a.document[analysis::json_keys::kPrediction] = predictor::toJson(*a.prediction);
  }
  return a;
}

void addTraceAnalysisOptions(CLI::App& cmd, TraceAnalysisOptions& options) {
  cmd.add_option("--calibration", options.calibrationFile,
                 "remove the profiler's overhead with this calibration file (rlscope "
                 "calibrate); default: the calibration stored in the trace, if any");
  cmd.add_flag("--no-correction", options.noCorrection,
               "times as recorded, even when the trace holds a calibration");
  cmd.add_option("--top-kernels", options.topKernels, "kernels listed, longest total first")
      ->capture_default_str();
  cmd.add_option("--kernel-wait-threshold-us", options.kernelWaitThresholdUs,
                 "a gap between two activities of a stream shorter than this, whose work was "
                 "already launched, is kernel wait (launch overhead); longer ones are other idle "
                 "time (HTA's consecutive_kernel_delay)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--view", options.view,
                 "whose time each row is: process (threads and streams unioned), thread (its CPU "
                 "time and the GPU work it launched), or run (every process unioned)")
      ->capture_default_str()
      ->check(CLI::IsMember({"process", "thread", "run"}));
  cmd.add_option("--target", options.predictTarget,
                 "add the predictor's what-if on this GPU (`rlscope devices`; the same as "
                 "`rlscope predict`, docs/predictor.md)");
  cmd.add_option("--origin", options.predictOrigin,
                 "with --target: the GPU the trace ran on, when its properties do not say");
  cmd.add_option("--by", options.by,
                 "rank: also the ranks of a distributed job side by side (time, collectives, "
                 "waiting for the last rank) and the stragglers (who entered each collective "
                 "last, what it did meanwhile)")
      ->capture_default_str()
      ->check(CLI::IsMember({"operation", "rank"}));
  addGpuDatabaseOption(cmd, options.gpuDatabase);
}

std::vector<std::string> analysisArguments(const TraceAnalysisOptions& options) {
  const TraceAnalysisOptions defaults;
  std::vector<std::string> args;
  auto add = [&](const char* flag, const std::string& value, const std::string& fallback) {
    if (value != fallback) args.insert(args.end(), {flag, value});
  };
  add("--calibration", options.calibrationFile, defaults.calibrationFile);
  if (options.noCorrection) args.emplace_back("--no-correction");
  add("--top-kernels", std::to_string(options.topKernels), std::to_string(defaults.topKernels));
  if (options.kernelWaitThresholdUs != defaults.kernelWaitThresholdUs) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", options.kernelWaitThresholdUs);
    args.insert(args.end(), {"--kernel-wait-threshold-us", text});
  }
  add("--view", options.view, defaults.view);
  add("--target", options.predictTarget, defaults.predictTarget);
  add("--origin", options.predictOrigin, defaults.predictOrigin);
  add("--by", options.by, defaults.by);
  add("--gpu-database", options.gpuDatabase, defaults.gpuDatabase);
  return args;
}

}  // namespace rlscope::cli
