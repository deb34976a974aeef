#include <iostream>

#include "commands.h"
#include "rlscope/summary/trace_summary.h"

namespace rlscope::cli {

Run addInfoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "info",
      "Summarise a trace: processes and threads, GPUs and streams, event counts per table,\n"
      "time span, and which features (CUDA API, kernels, NVTX, operations, CPU categories,\n"
      "calibration) it holds.");
  struct Options {
    std::string trace;
    std::string format = "text";
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)")->required();
  cmd->add_option("-f,--format", opts->format, "text for people, json for scripts")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  return [opts]() {
    trace::TraceReader reader(opts->trace);
    auto s = summary::summarize(reader, opts->trace);
    if (opts->format == "json") {
      std::cout << summary::toJson(s).dump(2) << '\n';
    } else {
      summary::printText(s, std::cout);
    }
    return 0;
  };
}

}  // namespace rlscope::cli
