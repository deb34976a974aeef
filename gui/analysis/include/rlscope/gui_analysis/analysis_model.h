// The analysis panel's model (issue #7 item 5), with no Qt: the analyzer's breakdown of a trace
// for the whole run, a time range or one operation, turned into what the panel draws: per
// operation the time on the CPU only, on both, on the GPU only, by category (RL-Scope's stacked
// bars), a category table, the overhead correction when the trace holds a calibration, and the
// predictor's what-if on another GPU. It opens its own read-only TraceReader, so it can run on a
// worker thread while the GUI thread reads the same trace on another connection.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/gui_model/duration_text.h"
#include "rlscope/trace/records.h"

namespace rlscope::gui {

// What the panel analyzes.
struct AnalysisScope {
  enum class Kind { kWholeRun, kRange, kOperation };
  Kind kind = Kind::kWholeRun;
  trace::TimeNs start = 0, end = 0;  // kRange: [start, end), ns on the trace's clock
  std::int64_t operationId = 0;      // kOperation: rlscope_operations.id (a timeline item's rowId)
  std::string operationName;         // kOperation without an id: every instance of this name

  static AnalysisScope wholeRun() { return {}; }
  static AnalysisScope range(trace::TimeNs start, trace::TimeNs end);
  static AnalysisScope operation(std::int64_t id);
  static AnalysisScope operationNamed(std::string name);
  bool operator==(const AnalysisScope&) const = default;
};

// Whose time a bar segment is (docs/analysis.md): CPU only, CPU and GPU at once, GPU only, or
// nothing running inside the operation.
// Waiting: a thread blocked in a waiting call (a sleep, a lock, a pipe) and nothing else running.
enum class Resource { kCpu, kCpuGpu, kGpu, kWaiting, kIdle };
const char* resourceName(Resource r);  // "CPU", "CPU+GPU", "GPU", "waiting", "idle"

// One segment of an operation's bar. Each instant of the breakdown goes to one category, the
// innermost layer running then (Python calls the backend or simulator, which calls CUDA): CUDA
// API, then Backend, Simulator, Native, Python; on the GPU a kernel, then memcpy, then memset.
// CPU+GPU time is the CPU's category (the GPU's part is the resource).
struct BarSegment {
  Resource resource = Resource::kCpu;
  std::optional<trace::Category> category;  // none for idle time
  trace::TimeNs time = 0;
};

struct OperationRow {
  std::int64_t process = 0;  // pid
  std::string name, phase;
  std::uint64_t instances = 0;
  bool nested = false;  // operation scope: a descendant of the selected operation
  trace::TimeNs time = 0, cpu = 0, cpuGpu = 0, gpu = 0, waiting = 0, idle = 0;
  trace::TimeNs launchedGpu = 0;  // GPU work launched from inside it, wherever it ran
  // CPU, then CPU+GPU, then GPU, then idle; within each, in the categories' order (Python,
  // Backend, ..., GPU memset). Their times add up to `time`.
  std::vector<BarSegment> segments;

  // RL-Scope's "true GPU-bound" share: GPU and CPU+GPU time over all of it.
  double gpuBoundShare() const;
};

// A row of the category table: the bar segments of every row of the scope, summed.
struct CategoryRow {
  std::optional<trace::Category> category;  // none: idle
  std::string name;                         // "Python", ..., "idle"
  Resource resource = Resource::kCpu;
  trace::TimeNs time = 0;
  double percent = 0;  // of the scope's breakdown time (AnalysisResult::totals.time)
};

struct ResourceTotals {
  trace::TimeNs time = 0, cpu = 0, cpuGpu = 0, gpu = 0, waiting = 0, idle = 0;
  double gpuBoundShare() const;
};

struct CorrectionSummary {
  bool corrected = false;
  std::string calibrationOrigin;  // "stored in the trace" when corrected
  // The profiler's own CPU time the breakdown no longer holds, and the wall time before and after
  // the correction (docs/analysis.md, "Correction"), over what the analyzer swept: the run, the
  // range, the operation's span (by id), the whole run for an operation by name.
  double overheadRemovedNs = 0;
  double uncorrectedTotalNs = 0, correctedTotalNs = 0;
  std::optional<double> biasPct;  // whole run only, when the calibration has a plain run
  std::string bias;  // with biasPct: "bias +2.1 % ± 3.0 % (within ±5 %)" or too noisy to tell
  std::vector<std::string> notes;  // sources not applied, and why
};

struct WhatIfOperation {
  std::int64_t process = 0;
  std::string name, phase;
  double originNs = 0, predictedNs = 0;
  double gpuScale = 1;  // predicted / origin time of its GPU work
};

// The predictor's what-if for the whole run (rlscope/predictor/what_if.h), whatever the scope: it
// predicts every GPU activity of the trace.
struct WhatIf {
  std::string target, origin;
  double originNs = 0, predictedNs = 0;
  double gpuOriginNs = 0, gpuPredictedNs = 0;
  double gpuBoundNs = 0;
  double speedup = 0, maxSpeedup = 0;
  bool cpuBound = false;
  std::string verdict;
  std::vector<WhatIfOperation> operations;  // per process, longest first
  std::vector<std::string> notes;
};

// A rank of a distributed job side by side with the others (`rlscope analyze --by rank`,
// docs/analysis.md): the whole run's, shown when the trace has two ranks or more.
struct RankRow {
  std::int64_t rank = 0;
  std::string host;
  trace::TimeNs time = 0;
  std::uint64_t collectives = 0;
  trace::TimeNs waitingForOthers = 0, transferring = 0;  // in its collectives
  std::uint64_t collectivesLast = 0;                     // it entered last: the straggler
  trace::TimeNs othersWaited = 0;
  std::string doing;  // its longest activity while the others waited: "simulate / Python"
};

struct AnalysisRequest {
  std::string tracePath;
  AnalysisScope scope;
  std::string whatIfGpu;  // a GPU of the database (whatIfGpus()); empty: no what-if
  bool correct = true;    // use the calibration stored in the trace, when it holds one
};

struct AnalysisResult {
  std::string tracePath;
  AnalysisScope scope;
  std::string error;  // non-empty: the analysis failed (or was cancelled); nothing else is set
  bool cancelled = false;

  trace::TimeNs traceStart = 0, traceEnd = 0;  // the trace's time span, for labels
  // The scope's wall time: the run's (command wall time, else the trace's span), the range's
  // overlap with the trace, or the operation's (all its instances, by name).
  trace::TimeNs scopeNs = 0;
  std::string operationName;  // operation scope: the selected operation's name
  bool severalProcesses = false;
  std::vector<OperationRow> operations;  // longest first (operation scope: the selected first)
  std::vector<CategoryRow> categories;   // longest first
  ResourceTotals totals;                 // over `operations`
  // Operation scope, by id: time inside the operation's span that operations of other threads
  // of its process owned (they started later, so the analyzer gives it to them).
  trace::TimeNs concurrentNs = 0;
  CorrectionSummary correction;
  std::optional<WhatIf> whatIf;
  std::vector<RankRow> ranks;          // whole run of a trace with two ranks or more, by rank
  std::vector<std::string> rankNotes;  // why collectives were not (all) matched
  // Why there is no what-if (no GPU properties in the trace, an unknown GPU): the breakdown stands.
  std::string whatIfError;
  std::uint64_t events = 0;  // intervals the analyzer swept
  double seconds = 0;        // wall time of this analysis

  bool ok() const { return error.empty(); }
};

// Progress: one line of what is being done. Returning false cancels: the analysis stops at the
// next point the analyzer reports (each process) and the result says `cancelled`.
using AnalysisProgress = std::function<bool(const std::string& line)>;

// The breakdown of the scope and, with a what-if GPU, the what-if. Never throws: a missing file,
// a file that is not an rlscope trace, an unknown operation or a cancel come back in `error`.
AnalysisResult analyze(const AnalysisRequest& request, const AnalysisProgress& progress = {});

// The two halves of analyze(), for a caller that keeps the what-if between scopes (it is the
// whole run's). analyzeScope ignores request.whatIfGpu. predictWhatIf throws std::exception with
// one line (and AnalysisCancelled).
AnalysisResult analyzeScope(const AnalysisRequest& request, const AnalysisProgress& progress = {});
WhatIf predictWhatIf(const std::string& tracePath, const std::string& gpu,
                     const AnalysisProgress& progress = {});
// The what-if of request.whatIfGpu into `result` (whatIf, or whatIfError when it cannot be
// made). False when cancelled: `result` is then the cancelled result.
bool addWhatIf(const AnalysisRequest& request, const AnalysisProgress& progress,
               AnalysisResult& result);

struct AnalysisCancelled : std::exception {
  const char* what() const noexcept override { return "analysis cancelled"; }
};

// The GPUs of the predictor's built-in database, in its order: the what-if picker's entries.
std::vector<std::string> whatIfGpus();

// The panel's header: "Whole run", "Range 12.3 ms – 45.6 ms (33.3 ms)" (from `origin`, the
// trace's start), "Operation: inference".
std::string scopeLabel(const AnalysisScope& scope, trace::TimeNs origin,
                       const std::string& operationName = {});

}  // namespace rlscope::gui
