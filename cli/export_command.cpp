#include <iostream>

#include "chrome_exporter.h"
#include "commands.h"

namespace rlscope::cli {

Run addExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export",
      "Write a trace in another format.\n"
      "chrome: Chrome Trace Event JSON (Kineto conventions) that Perfetto UI\n"
      "(ui.perfetto.dev) and chrome://tracing open, and `rlscope import` reads back.");
  struct Options {
    std::string trace;
    std::string output;
    std::string format = "chrome";
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)")->required();
  cmd->add_option("-o,--output", opts->output, "File to write")->required();
  cmd->add_option("-f,--format", opts->format, "Output format")
      ->capture_default_str()
      ->check(CLI::IsMember({"chrome"}));
  return [opts]() {
    trace::TraceReader reader(opts->trace);
    auto stats = exporter::exportChrome(reader, opts->output);
    std::cout << "exported " << stats.events << " events and " << stats.flows << " flows to "
              << opts->output << '\n';
    return 0;
  };
}

}  // namespace rlscope::cli
