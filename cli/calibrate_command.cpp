#include "calibrate_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

#include "commands.h"
#include "rlscope/breakdown/breakdown.h"
#include "rlscope/launch/launch.h"
#include "rlscope/trace/reader.h"

namespace rlscope::cli {

namespace fs = std::filesystem;

namespace {

const char* const kCalibrateDescription =
    "Measure what profiling COMMAND costs per recorded event, so that `rlscope analyze\n"
    "--calibration CAL.json TRACE` can remove the profiler's overhead from a trace of it. Runs\n"
    "COMMAND uninstrumented and under rlscope-prof with one more feature on at a time\n"
    "(collector, annotations, Python tracking, and with a usable GPU CUDA API calls and GPU\n"
    "activity), --repetitions times each, and takes each cost as the difference in wall time\n"
    "divided by the events recorded (CUPTI: the difference in mean API call time, per API).\n"
    "COMMAND must do the same work on every run (fixed seeds and step counts). The file format\n"
    "is in docs/calibration.md.\n\n"
    "  rlscope calibrate -o cal.json -- python train.py --steps 2000\n";

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Why the CUDA configurations cannot run here, or empty.
std::string gpuUnusableReason() {
  if (!fs::exists(launch::libraryDirectory() / "librlscope_cupti.so"))
    return "rlscope was built without CUDA";
  return launch::probeGpu();
}

// One run of the plain command; the wall time from spawn to exit.
std::optional<double> runUninstrumented(const std::string& path,
                                        const std::vector<std::string>& command,
                                        const ProfOptions& base, std::string_view who) {
  auto started = std::chrono::steady_clock::now();
  launch::ExitStatus status = launch::runAndWait(
      path, command,
      launch::plainEnvironment(launch::pythonPackageDirectory(launch::libraryDirectory())));
  auto elapsed = std::chrono::steady_clock::now() - started;
  launch::waitForDescendants(
      std::chrono::milliseconds(static_cast<long>(base.waitDescendantsSeconds * 1000)), [] {});
  if (status.code != 0) {
    std::cerr << who << ": error: " << command[0] << " exited with status " << status.code
              << " when run without rlscope; calibration needs a command that succeeds\n";
    return std::nullopt;
  }
  return std::chrono::duration<double, std::nano>(elapsed).count();
}

// The configurations whose rows the interpreter's slowdown is fitted to (interpreterSlowdown).
bool needsRows(const analysis::CalibrationConfig& config) {
  std::string_view name = config.name;
  return name == "annotations" || name == "python_events" || name == "python";
}

// Per operation name, over the processes that have operations (another process's time is not
// the operations' and would blur them), the run's own time, Python time and Python events; and
// every process's Python time.
void addRows(trace::TraceReader& reader, analysis::EventCounts& events) {
  analysis::Breakdown b = analysis::analyzeTrace(reader);
  std::set<std::int64_t> annotated;
  for (const auto& o : b.operations)
    if (o.name != analysis::kUnannotatedName) annotated.insert(o.process);
  double pythonNs = 0;
  for (const auto& o : b.operations) {
    pythonNs += o.pythonNs;
    if (!annotated.contains(o.process)) continue;
    auto& row = events.rows[o.name];
    row.timeNs += static_cast<double>(o.time);
    row.pythonNs += o.pythonNs;
    row.pythonEvents += o.pythonEvents;
  }
  events.pythonNs = std::llround(pythonNs);
}

// One run under rlscope-prof with the configuration's features; its wall time and event counts.
std::optional<analysis::RunMeasurement> runProfiled(const analysis::CalibrationConfig& config,
                                                    const std::vector<std::string>& command,
                                                    const ProfOptions& base,
                                                    const fs::path& scratch, std::string_view who) {
  ProfOptions o = base;
  o.quiet = true;
  o.calibrate = false;
  o.keepParts = false;
  o.calibration.clear();
  o.job.clear();        // the calibration's own scratch traces, not the job's
  o.clockSync.clear();  // the job's clock is measured by the profiled run
  o.noNvtx = !config.nvtx;
  o.noPython = !config.python;
  o.pythonEventsOnly = config.python && !config.pythonTransitions;
  o.noCudaApi = !config.cudaApi;
  o.noGpuActivity = !config.gpuActivity;
  o.output = (scratch / (std::string(config.name) + ".sqlite")).string();
  ProfOutcome outcome;
  int status = runProf(o, command, &outcome);
  if (status != 0) {
    std::cerr << who << ": error: " << command[0] << " exited with status " << status << " in the "
              << config.name << " configuration; calibration needs a command that succeeds\n";
    return std::nullopt;
  }
  analysis::RunMeasurement m;
  m.config = config.name;
  m.elapsedNs = static_cast<double>(outcome.elapsedNs);
  {
    trace::TraceReader reader(o.output);
    m.events = analysis::countEvents(reader);
    if (needsRows(config)) addRows(reader, m.events);
  }
  fs::remove(o.output);
  return m;
}

// A configuration whose first run recorded none of the events it prices is not run again.
std::string nothingToPrice(const analysis::CalibrationConfig& config,
                           const analysis::RunMeasurement& m) {
  std::string name = config.name;
  if (name == "python_events" && m.events.pythonEvents == 0)
    return "the Python tracker saw no events (Python cost not calibrated)";
  if (name == "python" && m.events.transitions == 0)
    return "no Python <-> native transitions were tracked (Python cost not calibrated)";
  if (name == "cuda_api" && m.events.apiCalls() == 0)
    return "the command made no CUDA API calls (CUDA costs not calibrated)";
  return {};
}

// What one fully profiled run of repetition `rep` records: the most of each event kind over that
// repetition's configurations (each configuration records a subset of the events).
analysis::EventCounts eventsOf(const std::vector<analysis::RunMeasurement>& runs, int rep) {
  analysis::EventCounts most;
  for (const auto& r : runs) {
    if (r.repetition != rep) continue;
    most.processes = std::max(most.processes, r.events.processes);
    most.operations = std::max(most.operations, r.events.operations);
    most.transitions = std::max(most.transitions, r.events.transitions);
    most.pythonEvents = std::max(most.pythonEvents, r.events.pythonEvents);
    most.pythonNs = std::max(most.pythonNs, r.events.pythonNs);
    if (r.events.apiCalls() > most.apiCalls()) most.apis = r.events.apis;
  }
  return most;
}

// After repetition `rep` of a calibration with a time budget: whether to stop, because the
// calibration is tight or another repetition would overrun the budget (said in one line).
bool enoughRepetitions(const std::vector<analysis::RunMeasurement>& runs, int rep,
                       double secondsAfterNext, double budgetSeconds,
                       const std::function<void(const std::string&)>& say) {
  double uncertainty =
      analysis::calibrationUncertaintyPct(analysis::computeCalibration(runs), eventsOf(runs, rep));
  char line[192];
  // Two runs' spread is itself too uncertain to call anything tight.
  if (uncertainty <= kTightCalibrationPct && rep + 1 >= 3) {
    std::snprintf(line, sizeof line,
                  "calibration tight after %d repetitions (uncertainty %.2f %% of the run)",
                  rep + 1, uncertainty);
  } else if (secondsAfterNext > budgetSeconds || rep + 1 == kMaxRepetitions) {
    std::snprintf(line, sizeof line,
                  "calibration budget spent after %d repetitions (uncertainty %.2f %% of the run; "
                  "tight is %.0f %%)",
                  rep + 1, uncertainty, kTightCalibrationPct);
  } else {
    return false;
  }
  say(line);
  return true;
}

void printCosts(const analysis::Calibration& cal,
                const std::function<void(const std::string&)>& say) {
  char line[256];
  const auto& t0 = cal.uninstrumentedNs;
  std::snprintf(line, sizeof line,
                "uninstrumented run: median %.3f s ± %.3f, one run varies by %.1f %% (n = %lld)",
                t0.median / 1e9, t0.uncertainty() / 1e9,
                t0.median > 0 ? 100 * t0.spread / t0.median : 0.0, static_cast<long long>(t0.n));
  say(line);
  for (const auto& c : cal.costs) {
    std::snprintf(line, sizeof line, "  %-22s %-24s %12.1f ns ± %.1f (median of %lld)",
                  c.source.c_str(), c.name.c_str(), c.ns.median, c.ns.uncertainty(),
                  static_cast<long long>(c.ns.n));
    say(line);
  }
}

}  // namespace

std::optional<analysis::Calibration> calibrateCommand(
    const ProfOptions& base, std::vector<std::string> command, const fs::path& output,
    std::string_view who, const std::function<void(const std::string&)>& say) {
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::cerr << "rlscope calibrate: error: no COMMAND to calibrate (usage: rlscope calibrate -o "
                 "CAL.json -- COMMAND [ARGS...])\n";
    return std::nullopt;
  }
  auto resolved = launch::resolveCommand(command[0]);
  if (resolved.exitCode != 0) {
    std::cerr << who << ": error: " << resolved.error << '\n';
    return std::nullopt;
  }
  fs::path outDir = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  std::string scratchTemplate = (outDir / ".rlscope-calibration-XXXXXX").string();
  if (!fs::is_directory(outDir) || !::mkdtemp(scratchTemplate.data())) {
    std::cerr << "rlscope calibrate: error: cannot create a directory in " << outDir.string()
              << '\n';
    return std::nullopt;
  }
  fs::path scratch = scratchTemplate;
  struct RemoveScratch {
    fs::path dir;
    ~RemoveScratch() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};

  std::vector<const analysis::CalibrationConfig*> configs;
  std::vector<std::string> skipped;
  std::string noGpu = gpuUnusableReason();
  for (const auto& c : analysis::calibrationConfigs()) {
    if (c.needsGpu && !noGpu.empty()) continue;
    configs.push_back(&c);
  }
  if (!noGpu.empty()) skipped.push_back("CUDA costs not calibrated: " + noGpu);

  std::vector<analysis::RunMeasurement> runs;
  auto runOne = [&](const analysis::CalibrationConfig& config,
                    int rep) -> std::optional<analysis::RunMeasurement> {
    analysis::RunMeasurement m;
    if (config.profiled) {
      auto r = runProfiled(config, command, base, scratch, who);
      if (!r) return std::nullopt;
      m = *r;
    } else {
      auto elapsed = runUninstrumented(resolved.path, command, base, who);
      if (!elapsed) return std::nullopt;
      m.config = config.name;
      m.elapsedNs = *elapsed;
    }
    m.repetition = rep;
    return m;
  };
  auto started = std::chrono::steady_clock::now();
  auto secondsSince = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  bool budgeted = base.calibrationBudgetSeconds > 0;
  int total = base.repetitions * static_cast<int>(configs.size()), done = 0;
  for (int rep = 0; rep < kMaxRepetitions; ++rep) {
    auto repetitionStarted = std::chrono::steady_clock::now();
    // Every configuration once per repetition, each in another position than in the last one
    // (the order turns by one), so that slow drift of the machine, and whatever the run before
    // leaves in caches, spreads over all of them alike.
    std::size_t count = configs.size();
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t i = rep == 0 ? k : (k + static_cast<std::size_t>(rep)) % count;
      const auto& config = *configs[i];
      auto m = runOne(config, rep);
      if (!m) return std::nullopt;
      char line[192];
      if (rep < base.repetitions)
        std::snprintf(line, sizeof line, "[%d/%d] repetition %d of %d, %s: %.3f s", ++done, total,
                      rep + 1, base.repetitions, config.name, m->elapsedNs / 1e9);
      else
        std::snprintf(line, sizeof line, "[%d] repetition %d (until tight or %.0f s), %s: %.3f s",
                      ++done, rep + 1, base.calibrationBudgetSeconds, config.name,
                      m->elapsedNs / 1e9);
      say(line);
      runs.push_back(std::move(*m));
      if (rep > 0) continue;
      if (auto why = nothingToPrice(config, runs.back()); !why.empty()) {
        skipped.push_back(why);
        // The configurations compared with this one price nothing either.
        std::erase_if(configs, [&](const auto* c) {
          return c != &config && std::string_view(c->baseline) == config.name;
        });
        configs.erase(configs.begin() + static_cast<std::ptrdiff_t>(i));
        total = done + (base.repetitions - 1) * static_cast<int>(configs.size()) +
                static_cast<int>(configs.size() - i);
        count = configs.size();
        --k;
      }
    }
    if (rep + 1 < base.repetitions) continue;
    if (!budgeted) break;
    // Another repetition takes about as long as this one did.
    double secondsAfterNext = secondsSince(started) + secondsSince(repetitionStarted);
    if (enoughRepetitions(runs, rep, secondsAfterNext, base.calibrationBudgetSeconds, say)) break;
  }

  analysis::Calibration cal = analysis::computeCalibration(runs);
  cal.command = joined(command);
  cal.warnings.insert(cal.warnings.begin(), skipped.begin(), skipped.end());
  printCosts(cal, say);
  for (const auto& w : cal.warnings) std::cerr << who << ": note: " << w << '\n';

  writeOutput(output.string(),
              [&](std::ostream& out) { out << analysis::calibrationToJson(cal).dump(2) << '\n'; });
  return cal;
}

int calibrateMain(const std::string& name, int argc, char** argv) {
  CLI::App app{name + ": " + kCalibrateDescription, name};
  ProfOptions o;
  std::string output;
  app.add_option("-o,--output", output, "calibration file to write (JSON)")->required();
  app.add_option("--repetitions", o.repetitions, "runs of each configuration (at least)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxRepetitions));
  app.add_option("--budget", o.calibrationBudgetSeconds,
                 "after --repetitions, keep repeating until the calibration is tight (its "
                 "uncertainty at most 1 % of the run) or this many seconds have passed; 0 "
                 "repeats exactly --repetitions times")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  addProgramOptions(app, o);
  app.add_flag("-q,--quiet", o.quiet, "print only warnings and errors");
  return runPrefixCommand(app, name, argc, argv, [&](std::vector<std::string> command) {
    auto say = [&](const std::string& line) {
      if (!o.quiet) std::cerr << "rlscope calibrate: " << line << '\n';
    };
    auto cal = calibrateCommand(o, std::move(command), output, name, say);
    if (!cal) return 1;
    say("calibration written to " + output);
    return 0;
  });
}

}  // namespace rlscope::cli
