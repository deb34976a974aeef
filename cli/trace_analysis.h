// One analysis of a trace file as `rlscope analyze` and `rlscope report` do it: the breakdown
// (corrected when a calibration is given or stored in the trace), the GPU metrics, and the
// analysis document (JSON, schema rlscope.analysis/1) that reports are rendered from.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/distributed/rank_analysis.h"
#include "rlscope/gpu_metrics/gpu_metrics.h"
#include "rlscope/predictor/what_if.h"

namespace rlscope::cli {

struct TraceAnalysisOptions {
  std::string calibrationFile;  // empty: the trace's own calibration, if any
  bool noCorrection = false;
  std::size_t topKernels = 20;
  std::string view = "process";  // process | thread | run
  std::string predictTarget;     // a GPU of the database: add the predictor's what-if
  std::string predictOrigin;     // the trace's GPU when its properties do not say
  std::string gpuDatabase;       // a user's GPU database file added to the built-in one
  double kernelWaitThresholdUs = analysis::kDefaultKernelWaitThreshold / 1000.0;
  std::string by = "operation";  // rank: add the ranks side by side, collectives, stragglers
  bool progress = true;          // progress lines (commands.h); off for traces analysed at once
};

struct TraceAnalysis {
  analysis::Breakdown breakdown;
  analysis::GpuMetrics gpu;
  std::optional<predictor::RunPrediction> prediction;  // with --target
  std::optional<analysis::RankAnalysis> ranks;         // with --by rank
  nlohmann::json document;
};

TraceAnalysis analyzeTraceFile(const std::string& trace, const TraceAnalysisOptions& options);

// The options above on a subcommand.
void addTraceAnalysisOptions(CLI::App& cmd, TraceAnalysisOptions& options);

// The command-line arguments that give `options` (those that differ from the defaults), for an
// `rlscope analyze` run elsewhere (rlscope.fleet's Ray tasks).
std::vector<std::string> analysisArguments(const TraceAnalysisOptions& options);

}  // namespace rlscope::cli
