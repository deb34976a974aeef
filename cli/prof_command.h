// rlscope-prof and `rlscope prof`: one implementation, two entry points.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rlscope/trace/records.h"

namespace rlscope::cli {

inline constexpr int kMaxRepetitions = 100;
// A calibration whose uncertainty (analysis::calibrationUncertaintyPct) is at most this is
// tight: more repetitions would not change the corrected time by more.
inline constexpr double kTightCalibrationPct = 1.0;

struct ProfOptions {
  std::string output;
  std::string job;  // --job NAME: output is a directory; the trace is NAME.HOST.sqlite in it
  // --clock-sync HOST:PORT: serve the job's reference clock there, or measure against it.
  std::string clockSync;
  bool noCudaApi = false;
  bool noGpuActivity = false;
  bool noNvtx = false;
  bool noPython = false;
  bool pythonEventsOnly = false;  // calibration only: InjectionConfig::pythonEventsOnly
  std::string backendModules, simulatorModules, pythonConfig;
  int flushMs = 25;
  double waitDescendantsSeconds = 5;
  bool keepParts = false;
  // Merge the parts only after the command ends, not while it runs (merge::LiveMerge). By
  // default that is chosen only where rlscope-prof may run on one CPU; mergeLive merges while the
  // command runs even then.
  bool mergeAfterExit = false;
  bool mergeLive = false;
  bool quiet = false;
  // --calibrate: measure the per-event overhead costs first (rlscope calibrate) and store them
  // in the trace, so that `rlscope analyze` removes the profiler's overhead.
  bool calibrate = false;
  int repetitions = 3;
  // After `repetitions`, keep repeating (up to kMaxRepetitions) until the calibration is tight
  // or this many seconds of calibration have passed; 0: exactly `repetitions`.
  double calibrationBudgetSeconds = 0;
  // Set by the calibration itself: the costs to store in the trace.
  std::vector<trace::CalibrationRecord> calibration;
};

// What a profiled run measured, for calibration.
struct ProfOutcome {
  std::int64_t elapsedNs = 0;  // the command's wall time, spawn to exit
};

extern const char* const kProfDescription;

// The options about the program rather than what is recorded (Python module lists, flush period,
// descendants), which calibration shares.
void addProgramOptions(CLI::App& cmd, ProfOptions& o);

// Registers the options on `cmd` (an app or subcommand set up as a prefix command, so that
// COMMAND ARGS... stay unparsed).
std::shared_ptr<ProfOptions> addProfOptions(CLI::App& cmd);

// Profiles `command` and returns the exit status rlscope-prof exits with.
int runProf(const ProfOptions& options, std::vector<std::string> command,
            ProfOutcome* outcome = nullptr);

// Parses a command line whose remainder (after `--`) is a program to run, and runs it: one error
// line and status 2 for bad options, status 1 for an exception.
int runPrefixCommand(CLI::App& app, const std::string& name, int argc, char** argv,
                     const std::function<int(std::vector<std::string>)>& run);

// The whole command line of rlscope-prof (`name` is how the user called it: "rlscope-prof" or
// "rlscope prof"); argv[0] is skipped. Returns the exit status.
int profMain(const std::string& name, int argc, char** argv);

}  // namespace rlscope::cli
