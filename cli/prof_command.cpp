#include "prof_command.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "calibrate_command.h"
#include "commands.h"
#include "python_config.h"
#include "rlscope/clock_sync/clock_sync_session.h"
#include "rlscope/launch/launch.h"
#include "rlscope/merge/live_merge.h"
#include "rlscope/merge/part_merger.h"
#include "rlscope/part/format.h"
#include "rlscope/trace/version.h"

namespace rlscope::cli {

namespace fs = std::filesystem;

const char* const kProfDescription =
    "Run COMMAND under the rlscope collector and write one trace (SQLite) of everything it\n"
    "and its child processes did: NVTX and rlscope operations, Python / Backend / Simulator\n"
    "time of Python processes, CUDA API calls, GPU kernels, memcpys and memsets (when a GPU is\n"
    "usable), processes and threads. Exits with COMMAND's exit status (128+N when it was\n"
    "killed by signal N).\n\n"
    "  rlscope-prof -- ./train --steps 1000\n"
    "  rlscope-prof -o run.sqlite -- python train.py\n";

void addProgramOptions(CLI::App& cmd, ProfOptions& o) {
  cmd.add_option("--backend-modules", o.backendModules,
                 "comma-separated Python modules whose native code counts as Backend, besides "
                 "torch, tensorflow, jax, jaxlib and numpy");
  cmd.add_option("--simulator-modules", o.simulatorModules,
                 "comma-separated Python modules whose native code counts as Simulator, besides "
                 "mujoco, pybullet, Box2D and ale_py");
  cmd.add_option("--python-config", o.pythonConfig,
                 "JSON file: {\"backend_modules\": [...], \"simulator_modules\": [...], "
                 "\"replace_defaults\": false}")
      ->check(CLI::ExistingFile);
  cmd.add_option("--flush-ms", o.flushMs,
                 "how often each process writes its buffers to disk; a process that is killed "
                 "loses at most this much")
      ->capture_default_str()
      ->check(CLI::Range(1, 60000));
  cmd.add_option("--wait-descendants", o.waitDescendantsSeconds,
                 "after COMMAND ends, wait up to this many seconds for processes it left running "
                 "(a multiprocessing forkserver, a resource tracker) so that their traces are "
                 "complete")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
}

std::shared_ptr<ProfOptions> addProfOptions(CLI::App& cmd) {
  auto o = std::make_shared<ProfOptions>();
  cmd.add_option("-o,--output", o->output,
                 "trace to write (default: rlscope-COMMAND-YYYYmmdd-HHMMSS.sqlite in the current "
                 "directory); replaced only when the new trace is complete. With --job: the "
                 "directory to write NAME.HOST.sqlite in (default: the current directory)");
  cmd.add_option("--job", o->job,
                 "profile one host's part of a distributed job NAME: the trace is "
                 "NAME.HOST.sqlite in the -o directory, so that every node's rlscope-prof can "
                 "write into one shared directory for `rlscope merge DIR/NAME.*.sqlite`")
      ->check([](const std::string& name) {
        bool ok = !name.empty() && name.find('/') == std::string::npos;
        return ok ? std::string() : std::string("a job name is a non-empty file name");
      });
  cmd.add_option("--clock-sync", o->clockSync,
                 "HOST:PORT (UDP), the same on every node of a job, one node's address (as "
                 "torchrun's --master-addr): the rlscope-prof on that node serves the job's "
                 "reference clock there, every other one measures its clock against it while its "
                 "run goes on (NTP's exchange, a burst every 5 s), so that `rlscope merge` puts "
                 "every host's events on one clock to within the network's round trip, "
                 "collectives or not")
      ->type_name("HOST:PORT")
      ->check([](const std::string& text) {
        try {
          clock_sync::parseEndpoint(text);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      });
  cmd.add_flag("--no-cuda-api", o->noCudaApi, "do not record CUDA runtime/driver API calls");
  cmd.add_flag("--no-gpu-activity", o->noGpuActivity,
               "do not record GPU kernels, memcpys, memsets and synchronization");
  cmd.add_flag("--no-nvtx", o->noNvtx, "do not record NVTX ranges and rlscope annotations");
  cmd.add_flag("--no-python", o->noPython,
               "do not track Python / Backend / Simulator time in Python processes");
  addProgramOptions(cmd, *o);
  cmd.add_flag("--keep-parts", o->keepParts,
               "keep the per-process part files next to the trace (for debugging rlscope)");
  auto* afterExit = cmd.add_flag(
      "--merge-after-exit", o->mergeAfterExit,
      "turn the processes' part files into the trace only after COMMAND ends, instead of while "
      "it runs at a lower priority: the trace then takes longer to be ready, but no CPU goes to "
      "it while COMMAND runs (the default where rlscope-prof may use only one CPU)");
  cmd.add_flag("--merge-live", o->mergeLive,
               "merge while COMMAND runs even where rlscope-prof may use only one CPU (taskset "
               "-c N): the trace is ready sooner, but the merge takes that CPU from COMMAND")
      ->excludes(afterExit);
  cmd.add_flag("-q,--quiet", o->quiet, "print only warnings and errors");
  cmd.add_flag("--calibrate", o->calibrate,
               "first measure what profiling costs per recorded event (the runs of `rlscope "
               "calibrate`, written to TRACE.calibration.json), then profile and store those "
               "costs in the trace: `rlscope analyze` then removes the profiler's overhead");
  cmd.add_option("--repetitions", o->repetitions,
                 "with --calibrate: runs of each calibration configuration (at least)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxRepetitions));
  cmd.add_option("--calibration-budget", o->calibrationBudgetSeconds,
                 "with --calibrate: after --repetitions, keep repeating until the calibration "
                 "is tight (its uncertainty at most 1 % of the run) or this many seconds of "
                 "calibration have passed; 0 repeats exactly --repetitions times")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  return o;
}

namespace {

void say(const ProfOptions& o, const std::string& line) {
  if (!o.quiet) std::cerr << "rlscope-prof: " << line << '\n';
}
void warnLine(const std::string& line) {
  std::cerr << "rlscope-prof: warning: " << line << '\n';
}

std::string defaultOutput(const std::string& command) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return "rlscope-" + fs::path(command).filename().string() + "-" + stamp + ".sqlite";
}

// --job NAME -o DIR: DIR/NAME.HOST.sqlite, one file per node in a shared directory.
fs::path jobOutput(const std::string& dir, const std::string& job) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "host");
  return (dir.empty() ? fs::path(".") : fs::path(dir)) / (job + "." + host + ".sqlite");
}

std::string describeExit(const launch::ExitStatus& s) {
  if (s.signal) {
    const char* name = sigabbrev_np(s.signal);
    return std::string("was killed by signal ") + std::to_string(s.signal) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with status " + std::to_string(s.code);
}

std::string plural(std::uint64_t n, const std::string& word) {
  if (n == 1) return "1 " + word;
  return std::to_string(n) + " " + word + (word.back() == 's' ? "es" : "s");
}

// What the collector is told (rlscope/launch/launch.h): the libraries, the features the
// options leave on, the Python module lists. Empty, or why the run cannot start.
std::string injectionConfig(const ProfOptions& o, launch::InjectionConfig& config) {
  fs::path libDir = launch::libraryDirectory();
  config.collectorLibrary = libDir / "librlscope_collector.so";
  if (!fs::exists(config.collectorLibrary))
    return "collector library not found at " + config.collectorLibrary.string() +
           " (set RLSCOPE_LIB_DIR)";
  if (fs::path cupti = libDir / "librlscope_cupti.so"; fs::exists(cupti))
    config.cudaLibrary = cupti;
  config.features = 0;
  if (!o.noNvtx) config.features |= part::kFeatureNvtx;
  if (!o.noCudaApi) config.features |= part::kFeatureCudaApi;
  if (!o.noGpuActivity) config.features |= part::kFeatureGpuActivity;
  config.flushMs = o.flushMs;
  // The package is importable in every run (its annotations are recorded with --no-python
  // too); the tracking is the feature.
  config.pythonDirectory = launch::pythonPackageDirectory(libDir);
  if (o.noPython) return {};
  if (!config.pythonDirectory.empty()) config.features |= part::kFeaturePython;
  PythonModules modules;
  try {
    if (!o.pythonConfig.empty()) readPythonConfig(o.pythonConfig, modules);
    addModuleList(o.backendModules, modules.backend);
    addModuleList(o.simulatorModules, modules.simulator);
  } catch (const std::exception& e) {
    return e.what();
  }
  config.backendModules = modules.backend;
  config.simulatorModules = modules.simulator;
  config.replaceDefaultModules = modules.replaceDefaults;
  config.pythonEventsOnly = o.pythonEventsOnly;
  return {};
}

// What the merge writes besides the parts: the command, the job, the calibration, and why GPU
// activity cannot be recorded on this machine (said now, before the run).
merge::MergeOptions mergeOptionsFor(const ProfOptions& o, const launch::InjectionConfig& config,
                                    const std::vector<std::string>& command) {
  merge::MergeOptions mergeOptions;
  mergeOptions.features = config.features;
  mergeOptions.job = o.job;
  mergeOptions.calibration = o.calibration;
  for (const auto& a : command)
    mergeOptions.commandLine += (mergeOptions.commandLine.empty() ? "" : " ") + a;
  if (config.features & (part::kFeatureCudaApi | part::kFeatureGpuActivity)) {
    mergeOptions.gpuUnavailableReason =
        config.cudaLibrary.empty() ? "rlscope was built without CUDA (RLSCOPE_WITH_CUDA=OFF)"
                                   : launch::probeGpu();
    if (!mergeOptions.gpuUnavailableReason.empty())
      warnLine("GPU activity unavailable: " + mergeOptions.gpuUnavailableReason +
               "; recording CPU activity only");
  }
  return mergeOptions;
}

// --clock-sync's session (nullptr without the option): serving the job's reference clock, or
// measuring this host's against it. Throws std::exception with the error line's text.
std::unique_ptr<clock_sync::ClockSyncSession> startClockSync(const ProfOptions& o) {
  if (o.clockSync.empty()) return nullptr;
  auto clock = std::make_unique<clock_sync::ClockSyncSession>(o.clockSync);
  say(o, clock->serves() ? "serving the job's reference clock on " + clock->endpoint().text()
                         : "measuring this host's clock against " + clock->endpoint().text());
  return clock;
}

// What the session learnt, said in one line: a warning when the reference never answered.
trace::ClockSync finishClockSync(const ProfOptions& o, clock_sync::ClockSyncSession& clock) {
  trace::ClockSync sync = clock.finish();
  if (sync.role == trace::ClockSync::Role::kMeasured && sync.bursts.empty())
    warnLine(clock_sync::describe(sync));
  else
    say(o, clock_sync::describe(sync));
  return sync;
}

// The one-line summary of the trace, after the merge's warnings.
void printSummary(const ProfOptions& o, const fs::path& output, double seconds, double ready,
                  const merge::MergeReport& report) {
  for (const auto& w : report.warnings) warnLine(w);
  auto rows = [&](const char* table) {
    auto it = report.rowsPerTable.find(table);
    return it == report.rowsPerTable.end() ? std::uint64_t{0} : it->second;
  };
  say(o, "trace written to " + output.string() + " (" + elapsedText(seconds) + " run, ready " +
             elapsedText(ready) + " after it; " +
             plural(static_cast<std::uint64_t>(report.processes), "process") + ", " +
             plural(static_cast<std::uint64_t>(report.threads), "thread") + ", " +
             plural(rows("rlscope_operations"), "operation") + ", " +
             plural(rows("CUPTI_ACTIVITY_KIND_KERNEL"), "kernel") + ", " +
             plural(rows("CUPTI_ACTIVITY_KIND_RUNTIME") + rows("CUPTI_ACTIVITY_KIND_DRIVER"),
                    "CUDA API call") +
             "; GPU activity " + report.gpuActivity + ")");
}

// The CPUs this process may run on (its affinity, as taskset sets it); the command inherits them.
int usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 2;  // unknown: do not assume one
  return CPU_COUNT(&set);
}

}  // namespace

int runProf(const ProfOptions& options, std::vector<std::string> command, ProfOutcome* outcome) {
  // CLI11 leaves the `--` that separates our options from the command's.
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::cerr << "rlscope-prof: error: no COMMAND to profile (usage: rlscope-prof [OPTIONS] -- "
                 "COMMAND [ARGS...]; see --help)\n";
    return 2;
  }
  auto resolved = launch::resolveCommand(command[0]);
  if (resolved.exitCode != 0) {
    std::cerr << "rlscope-prof: error: " << resolved.error << '\n';
    return resolved.exitCode;
  }

  fs::path output = options.output.empty() ? defaultOutput(command[0]) : options.output;
  if (!options.job.empty()) output = jobOutput(options.output, options.job);
  fs::path outDir = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  if (!fs::is_directory(outDir)) {
    std::cerr << "rlscope-prof: error: output directory " << outDir.string() << " does not exist\n";
    return 2;
  }
  ProfOptions o = options;
  if (o.calibrate) {
    fs::path file = output.string() + ".calibration.json";
    say(o, "calibrating: " + std::to_string(o.repetitions) +
               " runs of each configuration, then the profiled run");
    auto cal = calibrateCommand(o, command, file, "rlscope-prof",
                                [&](const std::string& l) { say(o, l); });
    if (!cal) return 1;
    o.calibration = analysis::calibrationRecords(*cal);
    say(o, "calibration written to " + file.string() + "; profiling");
  }

  launch::InjectionConfig config;
  if (std::string error = injectionConfig(o, config); !error.empty()) {
    std::cerr << "rlscope-prof: error: " << error << '\n';
    return 2;
  }

  // Started before the command, so that the first burst of exchanges is done as it starts;
  // a bad endpoint is said before anything else.
  std::unique_ptr<clock_sync::ClockSyncSession> clock;
  try {
    clock = startClockSync(o);
  } catch (const std::exception& e) {
    std::cerr << "rlscope-prof: error: --clock-sync: " << e.what() << '\n';
    return 2;
  }

  merge::MergeOptions mergeOptions = mergeOptionsFor(o, config, command);

  std::string partTemplate = (outDir / ".rlscope-parts-XXXXXX").string();
  if (!::mkdtemp(partTemplate.data())) {
    std::cerr << "rlscope-prof: error: cannot create a directory in " << outDir.string() << ": "
              << std::strerror(errno) << '\n';
    return 2;
  }
  config.partDir = fs::absolute(partTemplate);

  std::vector<std::string> notes;
  auto env = launch::injectedEnvironment(config, notes);
  for (const auto& n : notes) warnLine(n);

  // The parts become the trace while the command runs (unless --merge-after-exit), so that
  // only its last moments are left when it ends. On one CPU that could only take the command's
  // time (SB3 PPO pinned to one CPU: its run 11.7-12.0 s with the merge after it, 14-21 s with
  // the merge beside it), and calibration, which pins itself, would measure the merge as overhead.
  bool mergeAfterExit = o.mergeAfterExit;
  if (!mergeAfterExit && !o.mergeLive && usableCpus() <= 1) {
    mergeAfterExit = true;
    say(o, "one CPU to run on: the trace is merged after " + command[0] +
               " ends (--merge-live to merge while it runs)");
  }
  std::unique_ptr<merge::LiveMerge> live;
  try {
    if (!mergeAfterExit)
      // The merge looks at the parts as often as they are flushed: what is left when the
      // command ends is then its last flush or two.
      live = std::make_unique<merge::LiveMerge>(
          config.partDir, output, mergeOptions,
          merge::LiveMerge::Options{.interval = std::chrono::milliseconds(o.flushMs)});
  } catch (const std::exception& e) {
    fs::remove_all(config.partDir);
    std::cerr << "rlscope-prof: error: cannot write the trace: " << e.what() << '\n';
    return 1;
  }

  launch::ExitStatus status;
  auto started = std::chrono::steady_clock::now();
  try {
    status = launch::runAndWait(resolved.path, command, env);
  } catch (const std::exception& e) {
    live.reset();
    fs::remove_all(config.partDir);
    std::cerr << "rlscope-prof: error: " << e.what() << '\n';
    return 126;
  }
  auto ended = std::chrono::steady_clock::now();
  auto elapsed = ended - started;
  double seconds = std::chrono::duration<double>(elapsed).count();
  mergeOptions.commandElapsedNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  if (outcome) outcome->elapsedNs = mergeOptions.commandElapsedNs;
  if (status.code != 0) say(o, command[0] + " " + describeExit(status));
  auto grace = std::chrono::milliseconds(static_cast<long>(o.waitDescendantsSeconds * 1000));
  bool allEnded = launch::waitForDescendants(grace, [&] {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g s", o.waitDescendantsSeconds);
    say(o, std::string("waiting up to ") + limit + " for processes " + command[0] +
               " left running (--wait-descendants)");
  });
  if (!allEnded)
    warnLine("processes " + command[0] + " started are still running; their traces end here");

  if (clock) mergeOptions.clockSync = finishClockSync(o, *clock);
  mergeOptions.progress = [&](const std::string& line) { say(o, line); };
  try {
    auto report = live ? live->finish([&](merge::MergeOptions& m) {
      m.commandElapsedNs = mergeOptions.commandElapsedNs;
      m.clockSync = mergeOptions.clockSync;
      m.progress = mergeOptions.progress;
    })
                       : merge::mergeParts(config.partDir, output, mergeOptions);
    double ready = std::chrono::duration<double>(std::chrono::steady_clock::now() - ended).count();
    printSummary(o, output, seconds, ready, report);
  } catch (const std::exception& e) {
    std::cerr << "rlscope-prof: error: could not write the trace: " << e.what()
              << " (the raw parts are kept in " << config.partDir.string() << ")\n";
    return status.code != 0 ? status.code : 1;
  }
  if (o.keepParts)
    say(o, "part files kept in " + config.partDir.string());
  else
    fs::remove_all(config.partDir);
  return status.code;
}

int runPrefixCommand(CLI::App& app, const std::string& name, int argc, char** argv,
                     const std::function<int(std::vector<std::string>)>& run) {
  app.set_version_flag("--version", name + " " + trace::kRlscopeVersion);
  app.prefix_command();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << name << ": error: " << e.what() << " (see `" << name << " --help`)\n";
    return 2;
  }
  // prefix_command() makes the first argument it does not know the command's: a mistyped
  // option would be run as a program ("--bogus: command not found"). Only `--` or a word that
  // is not an option starts the command.
  auto command = app.remaining();
  if (!command.empty() && command.front() != "--" && command.front().starts_with("-")) {
    std::cerr << name << ": error: unknown option " << command.front() << " (see `" << name
              << " --help`; the command to profile goes after `--`)\n";
    return 2;
  }
  try {
    return run(std::move(command));
  } catch (const std::exception& e) {
    std::cerr << name << ": error: " << e.what() << '\n';
    return 1;
  }
}

int profMain(const std::string& name, int argc, char** argv) {
  CLI::App app{name + ": " + kProfDescription, name};
  auto opts = addProfOptions(app);
  return runPrefixCommand(app, name, argc, argv, [&](std::vector<std::string> command) {
    return runProf(*opts, command);
  });
}

}  // namespace rlscope::cli
