// rlscope calibrate, and the calibration step of rlscope-prof --calibrate: runs the command in
// each configuration of analysis::calibrationConfigs() (reference/rlscope-method.md §2.2), with
// repetitions, and computes the profiler's cost per recorded event.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prof_command.h"
#include "rlscope/calibration/calibration.h"

namespace rlscope::cli {

// Runs the calibration of `command` with `base`'s program options and writes the calibration
// file to `output` (atomically). `say` gets progress lines; notes and errors go to stderr after
// `who` (the command the user ran). Prints one error line and returns nothing when a run fails.
std::optional<analysis::Calibration> calibrateCommand(
    const ProfOptions& base, std::vector<std::string> command, const std::filesystem::path& output,
    std::string_view who, const std::function<void(const std::string&)>& say);

// The whole command line of `rlscope calibrate` (argv[0] is skipped). Returns the exit status.
int calibrateMain(const std::string& name, int argc, char** argv);

}  // namespace rlscope::cli
