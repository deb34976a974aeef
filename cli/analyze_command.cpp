#include <fstream>
#include <iostream>

#include "breakdown_output.h"
#include "commands.h"
#include "gpu_metrics_output.h"
#include "html_report.h"
#include "rlscope/trace/atomic_output.h"
#include "trace_analysis.h"
#include "what_if_output.h"

namespace rlscope::cli {

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
      "uninstrumented run (the bias). docs/analysis.md explains every number.");
  struct Options {
    std::string trace;
    std::string format = "table";
    std::string output;
    TraceAnalysisOptions analysis;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)")->required();
  cmd->add_option("-f,--format", opts->format,
                  "table for people, json (schema rlscope.analysis/1) or csv for scripts, html "
                  "for a self-contained report")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv", "html"}));
  cmd->add_option("-o,--output", opts->output, "write here instead of standard output");
  addTraceAnalysisOptions(*cmd, opts->analysis);
  return [opts]() {
    TraceAnalysis a = analyzeTraceFile(opts->trace, opts->analysis);
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
