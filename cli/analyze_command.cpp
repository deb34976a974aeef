#include <fstream>
#include <iostream>

#include "breakdown.h"
#include "breakdown_output.h"
#include "commands.h"
#include "rlscope/trace/atomic_output.h"

namespace rlscope::cli {

Run addAnalyzeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Break a trace's time down per process and operation: how much of each operation ran on\n"
      "the CPU only, the GPU only or both at once, and in which categories (Python, Backend,\n"
      "Simulator, CUDA API, GPU kernel, ...). Time outside every operation is (unannotated).\n"
      "Times are as recorded (no overhead correction yet).");
  struct Options {
    std::string trace;
    std::string format = "table";
    std::string output;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)")->required();
  cmd->add_option("-f,--format", opts->format,
                  "table for people, json (schema rlscope.analysis/1) or csv for scripts")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("-o,--output", opts->output, "write here instead of standard output");
  return [opts]() {
    trace::TraceReader reader(opts->trace);
    auto b = analysis::analyzeTrace(reader, [](const std::string& line) { progress(line); });
    auto write = [&](std::ostream& out) {
      if (opts->format == "json")
        out << analysis::toJson(b).dump(2) << '\n';
      else if (opts->format == "csv")
        analysis::writeCsv(b, out);
      else
        analysis::writeTable(b, out);
    };
    if (opts->output.empty()) {
      write(std::cout);
    } else {
      trace::AtomicOutput file(opts->output);
      std::ofstream out(file.tempPath());
      write(out);
      out.close();
      if (!out) throw std::runtime_error("cannot write " + opts->output);
      file.commit();
    }
    return 0;
  };
}

}  // namespace rlscope::cli
