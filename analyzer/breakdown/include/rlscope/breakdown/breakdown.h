// The breakdown of a trace (docs/analysis.md): per process, per operation (all its instances, in
// the phase each started in), time per resource (CPU, GPU, CPU+GPU) and per category set, from
// the overlap engine. GPU work counts two ways: where it runs in time (RL-Scope's wall-time view,
// in the resources and sets) and for the operation that launched it (`launchedGpu`). With a
// calibration, the profiler's own overhead is removed (docs/analysis.md, "Correction").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rlscope/calibration/calibration.h"
#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

class GpuMetricsBuilder;  // rlscope/gpu_metrics/gpu_metrics.h

inline constexpr const char* kUnannotatedName = "(unannotated)";

struct CategorySetTime {
  std::vector<std::string> set;  // category names, sorted alphabetically; empty: nothing ran
  trace::TimeNs time = 0;
};

// Language transitions made inside an operation, counted where each call starts: every Backend
// or Simulator interval is entered once (from Python, or on the return from a Python callback),
// every CUDA API call once (from whichever CPU category was running).
struct TransitionCounts {
  std::uint64_t pythonToBackend = 0;
  std::uint64_t pythonToSimulator = 0;
  std::uint64_t toCudaApi = 0;
};

// Whose time a breakdown row is: a process's (threads and streams unioned, docs/analysis.md), one
// thread's (its CPU time, and the GPU work it launched), or the whole run's (every process
// unioned; rows have process 0).
enum class View { kProcess, kThread, kRun };
const char* viewName(View v);

struct OperationBreakdown {
  std::int64_t process = 0;  // pid; 0 in the whole-run view
  std::int64_t thread = 0;   // OS tid in the thread view (0: GPU work without a launching call)
  std::string name;          // kUnannotatedName for time outside every operation
  std::string phase;         // empty when outside every phase
  std::uint64_t instances = 0;
  trace::TimeNs time = 0;                      // all of it, idle time inside the operation included
  trace::TimeNs cpu = 0, gpu = 0, cpuGpu = 0;  // CPU only, GPU only, both at once
  // Blocked in a waiting call (Category::kWaiting: a sleep, a lock, a pipe) with no CPU or GPU
  // work of the row's threads at the same time. Not CPU time.
  trace::TimeNs waiting = 0;
  std::vector<CategorySetTime> categories;  // non-zero only, longest first
  // GPU time (kernels, memcpys, memsets) launched from inside this operation, wherever it ran.
  trace::TimeNs launchedGpu = 0;
  std::uint64_t launchedGpuActivities = 0;
  // With AnalyzeOptions::predictedGpuNs (the predictor's what-if on another GPU): the launched
  // GPU work with its predicted durations, and the GPU work that ran during the operation's
  // instances (by wall time, nested operations' included) as it ran and as predicted.
  double predictedLaunchedGpu = 0;
  double gpuDuring = 0, predictedGpuDuring = 0;
  // Time the operation's threads spent in CUDA calls that wait for the GPU (synchronizations and
  // synchronous copies, see isGpuWaitCall): CPU time that a faster GPU would shorten.
  trace::TimeNs gpuWait = 0;
  TransitionCounts transitions;
  // The Python tracker's callbacks in the row's own time, and the time of its Python spans (a
  // span's events and time shared by time between the operations it runs across; threads add
  // up); 0 for traces without per-row counts. Calibration fits the interpreter's slowdown to them.
  double pythonEvents = 0;
  double pythonNs = 0;
};

// What overhead correction did (present only in a corrected breakdown).
struct Correction {
  std::string calibrationOrigin;  // the calibration file, or "trace"
  struct Source {
    std::int64_t events = 0;
    double costNs = 0;              // per event (mean; for cupti, the events' weighted mean)
    double removedNs = 0;           // events × cost: what the corrected total loses
    trace::TimeNs breakdownNs = 0;  // CPU time the breakdown lost under this source's intervals
  };
  std::map<std::string, Source> sources;  // by cost::k* name, only those applied
  std::vector<std::string> notes;         // sources not applied, and why
  double uncorrectedTotalNs = 0;          // the profiled command's wall time
  double correctedTotalNs = 0;
  double uninstrumentedNs = 0;  // 0 when the calibration has no uninstrumented run
  // The uninstrumented runs' robust spread relative to their median, in %: how much one run of
  // the command varies, the profiled run included. 0 with a single run.
  double uninstrumentedNoisePct = 0;
  std::optional<double> biasPct;
  // The bias's standard uncertainty, in %: one run's noise, the uncertainty of the
  // uninstrumented median and that of the overhead removed (each source's events × its cost's
  // standard error), combined. Infinity when the calibration had a single repetition.
  std::optional<double> biasUncertaintyPct;
  // What the bias says, against the ±kBiasTargetPct target (docs/calibration.md); absent when
  // the uncertainty is unknown.
  enum class Verdict { kWithinTarget, kOutsideTarget, kTooNoisy };
  std::optional<Verdict> verdict;
};

// The target of the corrected run time against the uninstrumented one, in % either way; a bias
// whose uncertainty is larger cannot be judged ("too noisy to tell").
inline constexpr double kBiasTargetPct = 5.0;
const char* verdictName(Correction::Verdict v);

// A span of the trace's clock, [start, end) ns.
struct TimeWindow {
  trace::TimeNs start = 0, end = 0;
};

struct Breakdown {
  View view = View::kProcess;
  std::vector<OperationBreakdown> operations;  // by process (or thread), then longest first
  std::uint64_t events = 0;                    // intervals the overlap engine swept
  trace::TimeNs totalNs = 0;  // the command's wall time (rlscope-prof), else the trace's span
  std::optional<Correction> correction;
  std::optional<TimeWindow> window;  // AnalyzeOptions::window when it applied
  // Who recorded the trace (rlscope_meta.source_format): "rlscope-prof", "kineto", "nsys".
  // Only rlscope-prof's traces can have their profiler's overhead removed.
  std::string sourceFormat = "rlscope-prof";
  // Who each process is (host, rank), by pid as OperationBreakdown::process has it.
  std::map<std::int64_t, trace::ProcessIdentityRecord> identities;
  bool severalHosts = false;  // the processes ran on more than one host
};

struct AnalyzeOptions {
  View view = View::kProcess;
  // Remove the profiler's overhead with these costs (nullptr: as recorded).
  const Calibration* calibration = nullptr;
  std::string calibrationOrigin;
  std::function<void(const std::string&)> progress;  // one line per process
  // Durations of GPU activities (kernels, copies, memsets) on another GPU, by runCorrelation:
  // fills OperationBreakdown::predictedLaunchedGpu and the gpuDuring pair. Activities not in it
  // keep their duration.
  const std::unordered_map<std::int64_t, double>* predictedGpuNs = nullptr;
  // Only the time inside this window counts (the GUI's selected range): every interval the sweep
  // sees is clipped to it, and what is counted where a call starts (transitions, GPU waits,
  // launches with their whole GPU work) counts the calls that start inside it. totalNs is the
  // window's overlap with the trace; a correction counts the events that start inside it and
  // leaves out the once-per-process cost and the bias, which belong to the whole run. A window
  // that holds the trace's whole time span is the whole run, and is ignored.
  std::optional<TimeWindow> window;
  // Also handed the rows of the CUDA API and GPU tables as they are read (the GPU metrics that
  // `rlscope analyze` prints with the breakdown), so that those tables are read once. Finish it
  // after analyzeTrace returns.
  GpuMetricsBuilder* gpuMetrics = nullptr;
};

// A CUPTI correlation id made unique across the processes of a run (CUPTI's are unique per
// process only); 0 stays "none".
std::int64_t runCorrelation(std::int64_t globalPidOrTid, std::int64_t correlation);

// Whether a CUDA API call of this name blocks its thread until the GPU catches up: the
// synchronizations (device, context, stream, event) and the synchronous copies.
bool isGpuWaitCall(std::string_view apiName);

// Reads every process's category intervals, CUDA API calls, GPU activity, operations and phases.
// Throws std::runtime_error when asked to correct a trace rlscope-prof did not record.
Breakdown analyzeTrace(trace::TraceReader& reader, const AnalyzeOptions& options = {});

}  // namespace rlscope::analysis
