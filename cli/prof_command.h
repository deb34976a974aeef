// rlscope-prof and `rlscope prof`: one implementation, two entry points.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace rlscope::cli {

struct ProfOptions {
  std::string output;
  bool noCudaApi = false;
  bool noGpuActivity = false;
  bool noNvtx = false;
  bool noPython = false;
  std::string backendModules, simulatorModules, pythonConfig;
  int flushMs = 100;
  double waitDescendantsSeconds = 5;
  bool keepParts = false;
  bool quiet = false;
};

extern const char* const kProfDescription;

// Registers the options on `cmd` (an app or subcommand set up as a prefix command, so that
// COMMAND ARGS... stay unparsed).
std::shared_ptr<ProfOptions> addProfOptions(CLI::App& cmd);

// Profiles `command` and returns the exit status rlscope-prof exits with.
int runProf(const ProfOptions& options, std::vector<std::string> command);

// The whole command line of rlscope-prof (`name` is how the user called it: "rlscope-prof" or
// "rlscope prof"); argv[0] is skipped. Returns the exit status.
int profMain(const std::string& name, int argc, char** argv);

}  // namespace rlscope::cli
