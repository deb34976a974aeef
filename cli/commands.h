// Each subcommand registers its options on the CLI11 app and returns the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace rlscope::cli {

using Run = std::function<int()>;

Run addImportCommand(CLI::App& app);
Run addExportCommand(CLI::App& app);
Run addInfoCommand(CLI::App& app);
Run addAnalyzeCommand(CLI::App& app);

// Progress lines go to stderr, only when stderr is a terminal or RLSCOPE_PROGRESS=1.
void progress(std::string_view line);

}  // namespace rlscope::cli
