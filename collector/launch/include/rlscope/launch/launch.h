// What rlscope-prof does around the profiled program: find the command, prepare the environment
// that injects the collector, run it with signals passed on, and probe for a usable GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rlscope::launch {

// The executable COMMAND names, found as execvp would. exitCode is 0 when found, else 127 (no such
// command) or 126 (found but not executable), with `error` saying which.
struct ResolvedCommand {
  std::string path;
  int exitCode = 0;
  std::string error;
};
ResolvedCommand resolveCommand(const std::string& command);

struct InjectionConfig {
  std::filesystem::path partDir;
  std::filesystem::path collectorLibrary;  // librlscope_collector.so: LD_PRELOAD, NVTX injection
  std::filesystem::path cudaLibrary;       // librlscope_cupti.so, or empty when not built
  std::uint32_t features = 0;              // part::FeatureBits
  int flushMs = 25;
  // The rlscope Python package (build/python), put first on PYTHONPATH; empty when not built.
  std::filesystem::path pythonDirectory;
  // Modules whose native code is Backend / Simulator time, besides the package's defaults (or
  // instead of them with replaceDefaultModules).
  std::vector<std::string> backendModules, simulatorModules;
  bool replaceDefaultModules = false;
  // Calibration's python_events configuration: the Python tracker runs and counts its events but
  // records no transitions (RLSCOPE_PYTHON_TRACKING=events).
  bool pythonEventsOnly = false;
};

// The environment of the profiled program: the current one plus the injection variables. Notes
// for the user (an NVTX tool already set that is replaced, ...) go to `notes`.
std::vector<std::string> injectedEnvironment(const InjectionConfig& config,
                                             std::vector<std::string>& notes);

// The environment of an uninstrumented run of the same command: the current one, with the rlscope
// Python package (when built) first on PYTHONPATH, so that a script that imports `rlscope` runs
// as it does under rlscope-prof (the package is inert there: no collector, no tracking).
std::vector<std::string> plainEnvironment(const std::filesystem::path& pythonDirectory);

// The rlscope Python package beside the library directory (build/python, or the install's
// python/), or empty when it was not built.
std::filesystem::path pythonPackageDirectory(const std::filesystem::path& libraryDirectory);

// How the program ended.
struct ExitStatus {
  int code = 0;    // the shell's convention: the exit status, or 128 + signal
  int signal = 0;  // != 0 when killed by a signal
};

// Starts `path` with argv and env and waits for it. SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to
// rlscope-prof by kill(1) are passed on to the program; the terminal's Ctrl-C reaches the program
// directly (same process group) and rlscope-prof waits for it to end. Throws std::runtime_error
// when the program cannot be started.
ExitStatus runAndWait(const std::string& path, const std::vector<std::string>& argv,
                      const std::vector<std::string>& env);

// After the program ended: waits up to `grace` for the processes it left running, which runAndWait
// made ours (Linux child subreaper: orphaned descendants are re-parented to rlscope-prof).
// onWaiting is called once if some are still running after a moment. True when none is left.
bool waitForDescendants(std::chrono::milliseconds grace, const std::function<void()>& onWaiting);

// Empty when a CUDA driver with at least one GPU is usable here; otherwise why not, in words
// ("no CUDA driver: libcuda.so.1 cannot be loaded").
std::string probeGpu();

// The directory holding librlscope_collector.so: $RLSCOPE_LIB_DIR, or ../lib beside the running
// executable (the build and install layouts).
std::filesystem::path libraryDirectory();

}  // namespace rlscope::launch
