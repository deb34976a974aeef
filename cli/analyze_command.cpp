#include <algorithm>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "commands.h"
#include "fleet_analysis.h"
#include "python_tool.h"
#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/gpu_metrics/gpu_metrics_output.h"
#include "rlscope/predictor/what_if_output.h"
#include "rlscope/report/html_report.h"
#include "rlscope/trace/atomic_output.h"
#include "trace_analysis.h"

namespace rlscope::cli {

namespace {

struct AnalyzeCommandOptions {
  std::vector<std::string> inputs;
  std::string format = "table";
  std::string output;
  TraceAnalysisOptions analysis;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string ray;
  std::size_t topOperations = 20;
};

// Several traces, a directory or analysis documents: analysed here or on Ray, then combined.
int analyzeMany(const AnalyzeCommandOptions& opts) {
  if (opts.format == "html")
    throw std::runtime_error(
        "--format html reports on one trace; several combine as table, "
        "json or csv");
  if (opts.analysis.view != "process")
    throw std::runtime_error("several traces are combined per process: leave out --view");
  if (!opts.analysis.predictTarget.empty())
    throw std::runtime_error("--target predicts one trace: run rlscope predict on each");
  if (!opts.ray.empty()) {
    std::vector<std::string> args = {
        "--ray",    opts.ray,    "--rlscope",        selfExecutable(),
        "--format", opts.format, "--top-operations", std::to_string(opts.topOperations)};
    if (!opts.output.empty()) args.insert(args.end(), {"--output", opts.output});
    args.insert(args.end(), opts.inputs.begin(), opts.inputs.end());
    auto perTrace = analysisArguments(opts.analysis);
    if (!perTrace.empty()) {
      args.emplace_back("--");
      args.insert(args.end(), perTrace.begin(), perTrace.end());
    }
    return runPythonTool("fleet", args);
  }
  auto inputs = fleetInputs(opts.inputs);
  report::Fleet fleet = analyzeFleet(inputs, opts.analysis, opts.jobs);
  auto sayErrors = [&] {
    for (const auto& t : fleet.traces)
      if (!t.error.empty()) std::cerr << "rlscope: error: " << t.trace << ": " << t.error << '\n';
  };
  if (fleet.failed == fleet.traces.size()) {  // nothing to combine: the errors alone
    sayErrors();
    return 1;
  }
  writeOutput(opts.output, [&](std::ostream& out) {
    if (opts.format == "json")
      out << report::fleetToJson(fleet).dump(2) << '\n';
    else if (opts.format == "csv")
      report::writeFleetCsv(fleet, out);
    else
      report::writeFleetTable(fleet, out, opts.topOperations);
  });
  sayErrors();
  return fleet.failed ? 1 : 0;
}

}  // namespace

Run addAnalyzeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Break a trace's time down per process and operation: how much of each operation ran on\n"
      "the CPU only, the GPU only or both at once, and in which categories (Python, Backend,\n"
      "Simulator, CUDA API, GPU kernel, ...), how much GPU time each launched, and its language\n"
      "transitions; then the GPU metrics (top kernels, idle time, launch delays). Time outside\n"
      "every operation is (unannotated).\n"
      "With a calibration (`rlscope calibrate`, or one stored by `rlscope-prof --calibrate`),\n"
      "the profiler's own overhead is removed and the corrected run time is compared with the\n"
      "uninstrumented run (the bias). docs/analysis.md explains every number.\n"
      "Given a directory or several traces (a job's ranks, a fleet of runs), it analyses each\n"
      "on its own, --jobs at a time or as Ray tasks on a cluster (--ray), and combines them:\n"
      "every process side by side and every operation across them, slowest named\n"
      "(docs/fleet.md). Analysis documents (*.json of `-f json`) combine the same way.");
  auto opts = std::make_shared<AnalyzeCommandOptions>();
  cmd->add_option("TRACE", opts->inputs,
                  "rlscope trace (SQLite); or several, directories of them (*.sqlite), or "
                  "analysis documents (*.json) to combine")
      ->required();
  cmd->add_option("-f,--format", opts->format,
                  "table for people, json (schema rlscope.analysis/1; rlscope.fleet/1 for "
                  "several traces) or csv for scripts, html for a self-contained report (one "
                  "trace)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv", "html"}));
  cmd->add_option("-o,--output", opts->output, "write here instead of standard output");
  addTraceAnalysisOptions(*cmd, opts->analysis);
  cmd->add_option("-j,--jobs", opts->jobs,
                  "several traces: how many are analysed at once (each holds its trace's "
                  "events in memory); default: one per CPU")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ray", opts->ray,
                  "several traces: analyse each as a Ray task on the node where it lies, on the "
                  "cluster at ADDRESS (host:port of its head, ray://..., auto, or local to start "
                  "one here); needs Ray in the Python that runs python -m rlscope.fleet "
                  "($RLSCOPE_PYTHON, else python3)");
  cmd->add_option("--top-operations", opts->topOperations,
                  "several traces: operations listed, longest in total first")
      ->capture_default_str();
  return [opts]() {
    if (isFleet(opts->inputs) || !opts->ray.empty()) return analyzeMany(*opts);
    TraceAnalysis a = analyzeTraceFile(opts->inputs.front(), opts->analysis);
    auto write = [&](std::ostream& out) {
      if (opts->format == "json") {
        out << a.document.dump(2) << '\n';
      } else if (opts->format == "csv") {
        analysis::writeCsv(a.breakdown, out);
      } else if (opts->format == "html") {
        out << report::renderHtml(a.document);
      } else {
        if (a.ranks) {
          analysis::writeRanksTable(*a.ranks, out);
          out << '\n';
        }
        analysis::writeTable(a.breakdown, out);
        if (a.gpu.available()) {
          out << '\n';
          analysis::writeGpuMetricsTable(a.gpu, out, opts->analysis.topKernels);
        }
        if (a.prediction) {
          out << '\n';
          predictor::writeTable(*a.prediction, opts->analysis.topKernels, out);
        }
      }
    };
    writeOutput(opts->output, write);
    return 0;
  };
}

}  // namespace rlscope::cli
