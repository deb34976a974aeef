#include <chrono>
#include <iostream>

#include "commands.h"
#include "rlscope/import/importer.h"

namespace rlscope::cli {

Run addImportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import",
      "Convert another profiler's trace into an rlscope trace.\n"
      "Reads PyTorch profiler / Kineto JSON (.json or .json.gz) and Nsight Systems SQLite\n"
      "exports (`nsys export --type sqlite`); the format is detected from the content.\n"
      "The output appears only when the import succeeded; the input is never modified.");
  struct Options {
    std::string input;
    std::string output;
    double maxGiB = 16;
    bool quiet = false;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("FILE", opts->input, "Kineto JSON (.json/.json.gz) or nsys SQLite export")
      ->required();
  cmd->add_option("-o,--output", opts->output, "Trace file to write (SQLite, replaced if present)")
      ->required();
  cmd->add_option("--max-input-gib", opts->maxGiB,
                  "Refuse inputs larger than this after decompression")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("-q,--quiet", opts->quiet, "Print nothing on success");
  return [opts]() {
    auto t0 = std::chrono::steady_clock::now();
    import::ImportOptions options;
    options.maxInputBytes = static_cast<std::uint64_t>(opts->maxGiB * double(1ull << 30));
    options.progress = progress;
    auto stats = import::importFile(opts->input, opts->output, options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& w : stats.warnings) std::cerr << "rlscope: warning: " << w << '\n';
    if (!opts->quiet) {
      std::cout << "imported " << stats.events << " events (" << stats.format << ") from "
                << opts->input << " into " << opts->output << " in " << elapsedText(seconds)
                << "\n";
      for (const auto& [table, rows] : stats.rowsPerTable) {
        if (rows) std::cout << "  " << table << ": " << rows << '\n';
      }
    }
    return 0;
  };
}

}  // namespace rlscope::cli
