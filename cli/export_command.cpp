#include <iostream>
#include <stdexcept>

#include "commands.h"
#include "python_tool.h"
#include "rlscope/export/chrome_exporter.h"

namespace rlscope::cli {

Run addExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export",
      "Write a trace in another format.\n"
      "chrome: Chrome Trace Event JSON (Kineto conventions) that Perfetto UI\n"
      "(ui.perfetto.dev) and chrome://tracing open, and `rlscope import` reads back.\n"
      "parquet: every table of one or many traces (or directories of them) as Parquet files in\n"
      "the directory -o, partitioned by job, host and rank, for DuckDB, Spark or Trino\n"
      "(docs/fleet.md); needs pyarrow in the Python that runs python -m\n"
      "rlscope.parquet_export ($RLSCOPE_PYTHON, else python3).");
  struct Options {
    std::vector<std::string> traces;
    std::string output;
    std::string format = "chrome";
    unsigned jobs = 0;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->traces,
                  "rlscope trace (SQLite); for parquet, several or directories of them")
      ->required();
  cmd->add_option("-o,--output", opts->output, "file to write; for parquet, a directory")
      ->required();
  cmd->add_option("-f,--format", opts->format, "chrome or parquet")
      ->capture_default_str()
      ->check(CLI::IsMember({"chrome", "parquet"}));
  cmd->add_option("-j,--jobs", opts->jobs,
                  "parquet: traces exported at once (default: one per CPU)")
      ->check(CLI::PositiveNumber);
  return [opts]() {
    if (opts->format == "parquet") {
      std::vector<std::string> args = {"--output", opts->output};
      if (opts->jobs) args.insert(args.end(), {"--jobs", std::to_string(opts->jobs)});
      args.insert(args.end(), opts->traces.begin(), opts->traces.end());
      return runPythonTool("parquet_export", args);
    }
    if (opts->traces.size() != 1)
      throw std::runtime_error("--format chrome exports one trace; several go to --format parquet");
    trace::TraceReader reader(opts->traces.front());
    auto stats = exporter::exportChrome(reader, opts->output);
    std::cout << "exported " << stats.events << " events and " << stats.flows << " flows to "
              << opts->output << '\n';
    return 0;
  };
}

}  // namespace rlscope::cli
