// Each subcommand registers its options on the CLI11 app and returns the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace rlscope::cli {

using Run = std::function<int()>;

Run addImportCommand(CLI::App& app);
Run addExportCommand(CLI::App& app);
Run addInfoCommand(CLI::App& app);
Run addAnalyzeCommand(CLI::App& app);
Run addMergeCommand(CLI::App& app);
Run addReportCommand(CLI::App& app);
Run addDevicesCommand(CLI::App& app);
Run addOccupancyCommand(CLI::App& app);
Run addPredictCommand(CLI::App& app);

// Progress lines go to stderr, only when stderr is a terminal or RLSCOPE_PROGRESS=1.
void progress(std::string_view line);

// A duration for people: "22.4 ms" under a second ("0.02 s" says nothing), else "3.14 s".
std::string elapsedText(double seconds);

// Runs `write` on standard output for an empty path, else on a file that replaces `path` only
// once it is completely written. Throws with one line when it cannot be written.
void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace rlscope::cli
