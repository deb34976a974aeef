#include "rlscope/breakdown/breakdown.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "rlscope/gpu_metrics/gpu_metrics.h"
#include "rlscope/overlap/overlap.h"
#include "rlscope/trace/galloping_search.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/run_beside.h"
#include "rlscope/trace/scan.h"
#include "rlscope/trace/schema.h"

namespace rlscope::analysis {

namespace {

using trace::Category;
using trace::TimeNs;

std::int64_t processOf(std::int64_t globalId) {
  return trace::pidOfGlobalId(globalId);
}

bool isGpu(std::uint32_t category) {
  return trace::isGpuCategory(static_cast<Category>(category));
}

constexpr auto kWaiting = static_cast<std::uint32_t>(Category::kWaiting);
bool isCpu(std::uint32_t category) {
  return !isGpu(category) && category != kWaiting;
}

// Overhead intervals are categories of their own in the sweep, numbered from here, one per
// source in this order.
constexpr std::uint32_t kOverheadBase = 1000;
const std::array<const char*, 6> kOverheadSources = {
    cost::kAnnotation, cost::kPythonTransition, cost::kCudaApiInterception,
    cost::kCupti,      cost::kPythonEvent,      cost::kPythonInterpreter};
// The overhead sources by their index in kOverheadSources.
enum OverheadSource : std::size_t {
  kAnnotationSource,
  kTransitionSource,
  kInterceptionSource,
  kCuptiSource,
  kPythonEventSource,
  kInterpreterSource,
};
bool isOverhead(std::uint32_t category) {
  return category >= kOverheadBase;
}

struct ApiCall {
  std::int64_t globalTid = 0;
  TimeNs start = 0, end = 0;
  trace::StringId nameId = trace::kNoString;
  std::int64_t correlationId = 0;
};

struct GpuActivity {
  TimeNs start = 0, end = 0;
  std::int64_t correlationId = 0;
};

struct NativeCall {  // a Backend or Simulator interval: one call from Python
  std::int64_t globalTid = 0;
  TimeNs start = 0, end = 0;
  Category category = Category::kBackend;
};

// A CPU interval in which the Python tracker handled events, or that ran Python code.
struct PythonEventSpan {
  std::int64_t globalTid = 0;
  TimeNs start = 0, end = 0;
  std::int64_t events = 0;
  bool python = false;  // the Python category: the interpreter ran under the tracker
};

// Everything of one process the analysis needs.
struct ProcessEvents {
  std::vector<CategoryInterval> categories;
  std::vector<trace::OperationRecord> operations;
  std::vector<trace::PhaseRecord> phases;
  std::vector<ApiCall> apiCalls;
  std::vector<GpuActivity> gpu;
  std::vector<NativeCall> nativeCalls;
  std::vector<PythonEventSpan> pythonEventSpans;
  // CUPTI correlation id -> the operation that launched it, as the collector recorded it.
  std::unordered_map<std::int64_t, std::int64_t> launchedBy;
  std::unordered_set<std::int64_t> classifiedThreads;  // threads with CPU category intervals
  // Imported traces only: each thread's CPU category rows, which may nest (Kineto's
  // python_function around cpu_op), until readEvents flattens them into `categories`.
  std::map<std::int64_t, std::vector<CategoryInterval>> nestedByThread;
};

// How the trace's CPU category rows are to be read.
struct CpuRowsShape {
  // rlscope-prof's merge writes each thread's rows flat (the innermost category that ran);
  // importers keep their source's nesting, which the analysis flattens per thread.
  bool mayNest = false;
  // A PyTorch-profiler trace without `with_stack` has no python_function rows: the time its
  // Python threads spend between operators, inside their operations, is the interpreter's.
  bool inferPython = false;
};

// `sourceFormat`: rlscope_meta.source_format (Breakdown::sourceFormat).
CpuRowsShape cpuRowsShape(std::string_view sourceFormat) {
  return {sourceFormat != "rlscope-prof", sourceFormat == "kineto"};
}

using trace::scan;  // the big tables are read column by column (rlscope/trace/scan.h)

// The groups of the view that one reading thread fills: its own map and its own cache of the
// last group used, shared with no other thread.
class GroupBuilder {
 public:
  explicit GroupBuilder(View view) : view_(view) {}

  // The group of an event: a process, a thread, or the whole run (key 0).
  std::int64_t keyOf(std::int64_t globalId) const {
    switch (view_) {
      case View::kThread:
        return globalId;
      case View::kRun:
        return 0;
      case View::kProcess:
        break;
    }
    return processOf(globalId);
  }

  // Rows of one group come in long runs: the map is looked up only when the group changes
  // (std::map references stay valid as it grows).
  ProcessEvents& group(std::int64_t key) {
    if (key != lastKey_) {
      auto [it, added] = groups.try_emplace(key);
      if (added && groups.size() == 1) reserveFor(it->second);
      last_ = &it->second;
      lastKey_ = key;
    }
    return *last_;
  }

  // Room for the rows of the first group, the one most traces' rows mostly belong to (a
  // single-process run, the whole run's view): reserved up front, its vectors never grow by
  // copying. Untouched capacity is address space, not memory: what the rows do not fill is
  // never resident.
  struct Room {
    std::size_t categories = 0, nativeCalls = 0, pythonEventSpans = 0, apiCalls = 0, gpu = 0,
                operations = 0;
  };
  void reserveFirstGroup(const Room& room) { firstRoom_ = room; }

  // The group's events with the interval added; nullptr for a damaged row (nothing to count).
  ProcessEvents* addInterval(std::int64_t key, TimeNs start, TimeNs end, Category c) {
    if (end < start) return nullptr;
    ProcessEvents& e = group(key);
    e.categories.push_back({start, end, static_cast<std::uint32_t>(c)});
    return &e;
  }

  std::map<std::int64_t, ProcessEvents> groups;

 private:
  void reserveFor(ProcessEvents& e) const {
    e.categories.reserve(firstRoom_.categories);
    e.nativeCalls.reserve(firstRoom_.nativeCalls);
    e.pythonEventSpans.reserve(firstRoom_.pythonEventSpans);
    e.apiCalls.reserve(firstRoom_.apiCalls);
    e.gpu.reserve(firstRoom_.gpu);
    e.operations.reserve(firstRoom_.operations);
  }

  Room firstRoom_;
  View view_;
  std::int64_t lastKey_ = -1;
  ProcessEvents* last_ = nullptr;
};

// At most how many rows the tables the analysis reads have, without counting them: their largest
// rowids (rows are only ever appended), each bounded by what the file can hold, since a
// stranger's trace may claim any rowid.
struct TableRows {
  std::size_t cpuIntervals = 0, operations = 0, apiCalls = 0, gpu = 0, kernels = 0;
  std::size_t other() const { return operations + apiCalls + gpu; }  // readCudaAndOperations'
};

TableRows tableRows(trace::Database& db) {
  std::error_code ec;
  auto bytes = std::filesystem::file_size(db.path(), ec);
  const std::uintmax_t bound = ec ? 0 : bytes / 8;  // a row takes more than 8 bytes of the file
  auto rows = [&](std::string_view table) -> std::size_t {
    if (!db.hasTable(table)) return 0;
    auto last = db.queryInt("SELECT MAX(rowid) FROM \"" + std::string(table) + "\"").value_or(0);
    return static_cast<std::size_t>(
        std::min(static_cast<std::uintmax_t>(std::max<std::int64_t>(last, 0)), bound));
  };
  return {.cpuIntervals = rows(trace::table::kCpuIntervals),
          .operations = rows(trace::table::kOperations),
          .apiCalls = rows(trace::table::kRuntime) + rows(trace::table::kDriver),
          .gpu = rows(trace::table::kKernel) + rows(trace::table::kMemcpy) +
                 rows(trace::table::kMemset),
          .kernels = rows(trace::table::kKernel)};
}

// Appends `from`'s rows after `to`'s; moved as they are where `to` has none.
template <class Rows>
void appendRows(Rows& to, Rows& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.reserve(to.size() + from.size());
    to.insert(to.end(), from.begin(), from.end());
  }
}

// The CPU category intervals (those of `range`), with the native calls and classified threads
// they give. Rows that may nest are kept per thread (ProcessEvents::nestedByThread) for
// readEvents to flatten.
void readCpuIntervals(trace::Database& db, GroupBuilder& b, bool mayNest,
                      trace::RowidRange range = {}) {
  std::int64_t lastTid = -1;
  // Traces from before the column, and imported ones, have no Python event counts.
  bool events = !mayNest && db.hasColumn(trace::table::kCpuIntervals, "pythonEvents");
  scan(
      db, trace::table::kCpuIntervals,
      events ? "start, end, globalTid, category, pythonEvents" : "start, end, globalTid, category",
      [&](trace::Statement& st) {
        TimeNs start = st.columnInt(0), end = st.columnInt(1);
        std::int64_t tid = st.columnInt(2);
        auto category = static_cast<Category>(st.columnInt(3));
        ProcessEvents* e = nullptr;
        if (!mayNest) {
          e = b.addInterval(b.keyOf(tid), start, end, category);
        } else if (end >= start) {
          e = &b.group(b.keyOf(tid));
          e->nestedByThread[tid].push_back({start, end, static_cast<std::uint32_t>(category)});
        }
        if (!e) return;
        if (tid != lastTid) {  // a set insert per thread run, not per row
          e->classifiedThreads.insert(tid);
          lastTid = tid;
        }
        if (category == Category::kBackend || category == Category::kSimulator)
          e->nativeCalls.push_back({tid, start, end, category});
        if (events) {
          std::int64_t n = st.columnInt(4);
          bool python = category == Category::kPython;
          if (n > 0 || (python && end > start))
            e->pythonEventSpans.push_back({tid, start, end, n, python});
        }
      },
      range);
}

// Appends the tail's rows of each group after the head's (storage order kept).
void appendGroups(std::map<std::int64_t, ProcessEvents>& head, GroupBuilder& tail) {
  for (auto& [key, t] : tail.groups) {
    ProcessEvents& h = head[key];
    appendRows(h.categories, t.categories);
    appendRows(h.gpu, t.gpu);
    appendRows(h.nativeCalls, t.nativeCalls);
    appendRows(h.pythonEventSpans, t.pythonEventSpans);
    h.classifiedThreads.insert(t.classifiedThreads.begin(), t.classifiedThreads.end());
  }
}

// One thread's CPU category rows as what ran at each instant: where rows nest, the innermost
// (the callee: a cpu_op inside a python_function) is what ran, as in rlscope-prof's flat rows.
// A row that outlives its parent is cut at the parent's end. CUDA API rows are kept as they are:
// they overlap the backend call that made them, in every trace.
void flattenThread(std::vector<CategoryInterval>& rows, std::vector<CategoryInterval>& out) {
  constexpr auto kCudaApi = static_cast<std::uint32_t>(Category::kCudaApi);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;  // parents first
  });
  std::vector<CategoryInterval> open;  // the nesting at `at`, innermost last
  TimeNs at = 0;
  auto emit = [&](TimeNs until) {
    if (!open.empty() && until > at) out.push_back({at, until, open.back().category});
    at = std::max(at, until);
  };
  auto closeUntil = [&](TimeNs t) {
    while (!open.empty() && open.back().end <= t) {
      emit(open.back().end);
      open.pop_back();
    }
  };
  for (auto r : rows) {
    if (r.category == kCudaApi) {
      out.push_back(r);
      continue;
    }
    closeUntil(r.start);
    emit(r.start);
    at = std::max(at, r.start);
    if (!open.empty()) r.end = std::min(r.end, open.back().end);
    open.push_back(r);
  }
  closeUntil(std::numeric_limits<TimeNs>::max());
}

// Flattens the rows readCpuIntervals kept per thread into the group's categories. With
// inferPython (a Kineto trace without python_function rows), a thread with operator rows and no
// Python ones runs Python inside its top-level operations wherever no operator runs.
void flattenNestedRows(ProcessEvents& e, const std::vector<trace::OperationRecord>& operations,
                       bool inferPython) {
  constexpr auto kPython = static_cast<std::uint32_t>(Category::kPython);
  for (auto& [tid, rows] : e.nestedByThread) {
    bool hasPython =
        std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.category == kPython; });
    if (inferPython && !hasPython)
      for (const auto& op : operations)
        if (op.globalTid == tid && op.parentId == 0 && op.end > op.start)
          rows.push_back({op.start, op.end, kPython});
    flattenThread(rows, e.categories);
  }
  e.nestedByThread.clear();
}

// What readCudaAndOperations leaves for after the merge.
struct CudaReadState {
  // The thread view puts GPU work under the thread whose API call launched it.
  std::unordered_map<std::int64_t, std::int64_t> launcher;  // run correlation -> globalTid
  // Phases belong to every group of their process, handed out once all groups exist.
  std::vector<trace::PhaseRecord> phases;
};

// A GPU row's group; in the thread view, work without a launching call goes to the process's
// thread 0.
std::int64_t gpuKey(const GroupBuilder& b, View view,
                    const std::unordered_map<std::int64_t, std::int64_t>& launcher,
                    std::int64_t globalPid, std::int64_t correlation) {
  if (view != View::kThread) return b.keyOf(globalPid);
  auto it = launcher.find(correlation);
  return it == launcher.end() ? trace::globalPidOf(processOf(globalPid)) : it->second;
}

using GpuTable = GpuMetricsBuilder::Table;

Category categoryOf(GpuTable table) {
  switch (table) {
    case GpuTable::kMemcpy:
      return Category::kGpuMemcpy;
    case GpuTable::kMemset:
      return Category::kGpuMemset;
    case GpuTable::kKernel:
      break;
  }
  return Category::kGpuKernel;
}

// The rows of one GPU table (those of `range`), handed to `gpu` too where there is one.
// `launcher`: the thread view's launching threads, complete (the API calls are read before).
void readGpuTable(trace::Database& db, GpuTable table, View view, GroupBuilder& b,
                  const std::unordered_map<std::int64_t, std::int64_t>& launcher,
                  GpuMetricsBuilder* gpu, trace::RowidRange range = {}) {
  const Category category = categoryOf(table);
  // The GPU metrics' columns start with the four read here.
  scan(
      db, GpuMetricsBuilder::tableName(table),
      gpu ? GpuMetricsBuilder::columns(table) : "start, end, globalPid, correlationId",
      [&](trace::Statement& st) {
        TimeNs start = st.columnInt(0), end = st.columnInt(1);
        std::int64_t pid = st.columnInt(2);
        std::int64_t correlation = runCorrelation(pid, st.columnInt(3));
        if (auto* e =
                b.addInterval(gpuKey(b, view, launcher, pid, correlation), start, end, category))
          e->gpu.push_back({start, end, correlation});
        if (gpu) gpu->addRow(table, st);
      },
      range);
}

// Everything but the CPU intervals and the external correlations: CUDA API calls, GPU activity
// (of the kernel table, the rows of `kernels`), operations and phases. `gpu`, where there is one,
// gets the API calls and GPU rows; `gpuAfterKernels`, those of the tables after the kernels'.
CudaReadState readCudaAndOperations(trace::TraceReader& reader, View view, GroupBuilder& b,
                                    const TableRows& rows, trace::RowidRange kernels,
                                    GpuMetricsBuilder* gpu, GpuMetricsBuilder* gpuAfterKernels) {
  CudaReadState out;
  auto& launcher = out.launcher;
  // The CPU reader's categories join these where these are more (readEvents).
  b.reserveFirstGroup({.categories = rows.apiCalls + rows.gpu + rows.cpuIntervals,
                       .apiCalls = rows.apiCalls,
                       .gpu = rows.gpu,
                       .operations = rows.operations});
  for (auto table : {trace::table::kRuntime, trace::table::kDriver})
    scan(reader.db(), table, "start, end, globalTid, nameId, correlationId",
         [&](trace::Statement& st) {
           TimeNs start = st.columnInt(0), end = st.columnInt(1);
           std::int64_t tid = st.columnInt(2);
           if (gpu) gpu->addApiCall(tid, st.columnInt(4), start, end);
           std::int64_t correlation = runCorrelation(tid, st.columnInt(4));
           if (auto* e = b.addInterval(b.keyOf(tid), start, end, Category::kCudaApi)) {
             e->apiCalls.push_back({tid, start, end, st.columnInt(3), correlation});
             if (view == View::kThread && correlation) launcher.emplace(correlation, tid);
           }
         });
  for (auto table : GpuMetricsBuilder::kTables)
    if (table == GpuTable::kKernel)
      readGpuTable(reader.db(), table, view, b, launcher, gpu, kernels);
    else
      readGpuTable(reader.db(), table, view, b, launcher, gpuAfterKernels);
  // Operations can be as many as launches (one around each): their columns but `source` and
  // `args`, which the analysis does not use. Phases are few; the for-each API fills their records.
  scan(reader.db(), trace::table::kOperations, trace::TraceReader::kOperationTimingColumns,
       [&](trace::Statement& st) {
         trace::OperationRecord r;
         trace::TraceReader::readOperationTiming(st, r);
         if (r.end >= r.start) b.group(b.keyOf(r.globalTid)).operations.push_back(std::move(r));
       });
  trace::EventFilter all;
  all.storageOrder = true;
  reader.forEachPhase(all, [&](const trace::PhaseRecord& r) {
    if (r.end >= r.start) out.phases.push_back(r);
  });
  return out;
}

// Below this many rows, a table is read as fast on one connection as in two parts.
constexpr std::size_t kSplitTableAbove = 500'000;

// The rows of `table` from the one `count` rows before its end, by rowid.
trace::RowidRange lastRows(trace::Database& db, std::string_view table, std::size_t count) {
  std::string from = " FROM \"" + std::string(table) + "\"";
  std::int64_t first = db.queryInt("SELECT MIN(rowid)" + from).value_or(0);
  std::int64_t last = db.queryInt("SELECT MAX(rowid)" + from).value_or(0);
  return {.from = std::max(first, last - static_cast<std::int64_t>(count) + 1)};
}

// The rows of a range's complement that come before it.
trace::RowidRange before(const trace::RowidRange& r) {
  return r.all() ? trace::RowidRange{} : trace::RowidRange{.to = r.from};
}

// The events of each group of the view: a process, a thread (GPU work goes to the thread that
// launched it), or the whole run (key 0). Process keys are pids, thread keys globalTids. `gpu`,
// where there is one, is handed the rows of the CUDA API and GPU tables too.
//
// Reading rows from SQLite is most of the analysis's time, so it uses two cores: a second thread
// reads the CPU intervals on a connection of its own (opened with the same read-only, defensive
// settings as the reader's), while this one reads everything else on the reader's. Where one side
// has most of the rows, the other thread reads the end of its biggest table too: the CPU
// intervals' end here, or the kernels' end there (not in the thread view, where a kernel's group
// is the thread that launched it, known once this thread has read the API calls). Each thread
// fills its own GroupBuilder (and GPU metrics); nothing is shared between them until the join.
// The merge then gives each group the rows a sequential read would (the big vectors in another
// order where copying less: the order of intervals changes nothing in the sweep).
std::map<std::int64_t, ProcessEvents> readEvents(trace::TraceReader& reader, View view,
                                                 std::string_view sourceFormat,
                                                 GpuMetricsBuilder* gpu) {
  GroupBuilder cpu(view), cpuTail(view), kernelTail(view);
  std::optional<GpuMetricsBuilder> gpuKernelTail, gpuAfterKernels;
  std::exception_ptr cpuError;
  const CpuRowsShape shape = cpuRowsShape(sourceFormat);
  trace::RowidRange cpuTailRange, kernelTailRange;
  const TableRows tables = tableRows(reader.db());
  const std::size_t rows = tables.cpuIntervals, other = tables.other();
  // The two threads' shares in the time a CPU interval takes to read: a GPU row also handed to the
  // GPU metrics (eight columns, accumulated twice) takes about 1.5 times as long (perf on the
  // bench's shapes).
  const std::size_t otherCost = other + (gpu ? tables.gpu / 2 : 0);
  const std::size_t kernelCost = gpu ? 3 : 2;  // halves
  if (!shape.mayNest) {
    // The first group's categories also take the other reader's (CUDA API calls, GPU work) and
    // one Native interval per operation later (reserveAddedIntervals).
    cpu.reserveFirstGroup(
        {.categories = rows + other, .nativeCalls = rows, .pythonEventSpans = rows});
    if (rows > kSplitTableAbove && rows > otherCost) {
      std::size_t tailRows = (rows - otherCost) / 2;
      cpuTailRange = lastRows(reader.db(), trace::table::kCpuIntervals, tailRows);
      cpuTail.reserveFirstGroup(
          {.categories = tailRows, .nativeCalls = tailRows, .pythonEventSpans = tailRows});
    }
  }
  if (view != View::kThread && tables.kernels > kSplitTableAbove &&
      otherCost > rows + kSplitTableAbove / 10) {
    std::size_t tailRows = std::min((otherCost - rows) / kernelCost, tables.kernels);
    kernelTailRange = lastRows(reader.db(), trace::table::kKernel, tailRows);
    kernelTail.reserveFirstGroup({.categories = tailRows, .gpu = tailRows});
    if (gpu) {
      gpuKernelTail.emplace(gpu->options());
      gpuKernelTail->reserve(0, tailRows);
      gpuAfterKernels.emplace(gpu->options());
    }
  }
  if (gpu) gpu->reserve(tables.apiCalls, tables.gpu);
  auto readCpu = [&, head = before(cpuTailRange), path = reader.db().path()] {
    try {
      trace::Database db(path, trace::Database::Mode::kReadOnlyUntrusted);
      readCpuIntervals(db, cpu, shape.mayNest, head);
      if (!kernelTailRange.all())
        readGpuTable(db, GpuTable::kKernel, view, kernelTail, {},
                     gpuKernelTail ? &*gpuKernelTail : nullptr, kernelTailRange);
    } catch (...) {
      cpuError = std::current_exception();
    }
  };
  // No thread to be had: this one reads the CPU intervals after its own tables.
  std::future<void> cpuReader = trace::runBeside(readCpu);
  GroupBuilder rest(view);
  CudaReadState state;
  std::exception_ptr restError;
  try {
    state = readCudaAndOperations(reader, view, rest, tables, before(kernelTailRange), gpu,
                                  gpuAfterKernels ? &*gpuAfterKernels : gpu);
    if (!cpuTailRange.all()) readCpuIntervals(reader.db(), cpuTail, false, cpuTailRange);
  } catch (...) {
    restError = std::current_exception();
  }
  cpuReader.get();
  // The error a sequential read would have met first.
  if (cpuError) std::rethrow_exception(cpuError);
  if (restError) std::rethrow_exception(restError);
  if (!cpuTailRange.all()) appendGroups(cpu.groups, cpuTail);
  if (gpuKernelTail) gpu->append(std::move(*gpuKernelTail));
  if (gpuAfterKernels) gpu->append(std::move(*gpuAfterKernels));

  std::map<std::int64_t, ProcessEvents> groups = std::move(rest.groups);
  for (auto& [key, c] : cpu.groups) {
    ProcessEvents& e = groups[key];
    flattenNestedRows(c, e.operations, shape.inferPython);
    // The fewer rows copied after the more: their order changes nothing in the sweep.
    if (e.categories.size() > c.categories.size()) {
      appendRows(e.categories, c.categories);
    } else {
      appendRows(c.categories, e.categories);
      e.categories = std::move(c.categories);
    }
    e.nativeCalls = std::move(c.nativeCalls);
    e.pythonEventSpans = std::move(c.pythonEventSpans);
    e.classifiedThreads = std::move(c.classifiedThreads);
  }
  // After the CPU intervals were put first: the kernels' tail is copied once.
  if (!kernelTailRange.all()) appendGroups(groups, kernelTail);
  // Phases belong to a process: each of its groups (all its threads, in the thread view).
  for (auto& [key, e] : groups)
    for (const auto& p : state.phases)
      if (view == View::kRun ||
          processOf(p.globalPid) == (view == View::kThread ? processOf(key) : key))
        e.phases.push_back(p);
  // External correlations last, as ever: a group they alone create gets no phases.
  for (const auto& x : reader.externalCorrelations()) {
    std::int64_t correlation = runCorrelation(x.globalPid, x.correlationId);
    groups[gpuKey(rest, view, state.launcher, x.globalPid, correlation)].launchedBy[correlation] =
        x.externalId;
  }
  return groups;
}

// The phase an instant falls in (the latest one started at or before it that is still open).
class PhaseLookup {
 public:
  PhaseLookup(std::vector<trace::PhaseRecord> phases, trace::TraceReader& reader)
      : phases_(std::move(phases)) {
    std::sort(phases_.begin(), phases_.end(),
              [](const auto& a, const auto& b) { return a.start < b.start; });
    for (const auto& p : phases_) names_.emplace_back(reader.string(p.nameId));
  }

  // The phase open at `t` (the one started last), as an index for name(); -1 for none.
  std::ptrdiff_t at(TimeNs t) const {
    auto it = std::upper_bound(phases_.begin(), phases_.end(), t,
                               [](TimeNs v, const auto& p) { return v < p.start; });
    while (it != phases_.begin()) {
      --it;
      if (t < it->end || it->start == it->end) return it - phases_.begin();
    }
    return -1;
  }
  const std::string& name(std::ptrdiff_t phase) const {
    static const std::string kNone;
    return phase < 0 ? kNone : names_[static_cast<std::size_t>(phase)];
  }

 private:
  std::vector<trace::PhaseRecord> phases_;
  std::vector<std::string> names_;
};

// The innermost operation open on a thread at an instant: the one that made a call made there.
// `ops` sorted by start (parents first on ties).
class ThreadOperations {
 public:
  explicit ThreadOperations(const std::vector<trace::OperationRecord>& ops)
      : ops_(ops), parent_(ops.size(), -1) {
    indexOfId_.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      indexOfId_[ops[i].id] = i;
      byThread_[ops[i].globalTid].ops.push_back(i);
    }
    // Parents as indexes, so that the walk below hashes nothing. A parent listed at or after
    // its child cannot contain it: a stranger's trace may say so (even in a cycle), and the
    // walk must end.
    for (std::size_t i = 0; i < ops.size(); ++i) {
      auto parent = ops[i].parentId ? indexOfId_.find(ops[i].parentId) : indexOfId_.end();
      if (parent != indexOfId_.end() && parent->second < i)
        parent_[i] = static_cast<std::ptrdiff_t>(parent->second);
    }
  }

  // The index into ops of the innermost operation open on `tid` at `t`, or -1.
  std::ptrdiff_t innermostAt(std::int64_t tid, TimeNs t) {
    // Calls come thread by thread: the last thread is looked up once.
    if (!thread_ || tid != threadTid_) {
      auto thread = byThread_.find(tid);
      threadTid_ = tid;
      thread_ = thread == byThread_.end() ? &none_ : &thread->second;
    }
    std::size_t started = startedBy(*thread_, t);
    if (started == 0) return -1;
    // The last one started; if it ended already, one of its ancestors may still be open.
    auto i = static_cast<std::ptrdiff_t>(thread_->ops[started - 1]);
    while (i >= 0) {
      const auto& op = ops_[static_cast<std::size_t>(i)];
      if (op.start <= t && t < op.end) return i;
      i = parent_[static_cast<std::size_t>(i)];
    }
    return -1;
  }

  std::ptrdiff_t indexOfId(std::int64_t id) const {
    auto it = indexOfId_.find(id);
    return it == indexOfId_.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
  }

 private:
  // A thread's operations in start order, and where its last lookup ended.
  struct Thread {
    std::vector<std::size_t> ops;
    std::size_t hint = 0;
  };

  // How many of the thread's operations started at or before `t`, from where its last lookup
  // ended: a thread's calls come in time order.
  std::size_t startedBy(Thread& thread, TimeNs t) const {
    const auto& list = thread.ops;
    thread.hint = trace::gallopingPartitionPoint(
        list.size(), thread.hint, [&](std::size_t k) { return ops_[list[k]].start <= t; });
    return thread.hint;
  }

  const std::vector<trace::OperationRecord>& ops_;
  std::vector<std::ptrdiff_t> parent_;  // index of each op's parent, -1 for none
  std::unordered_map<std::int64_t, std::size_t> indexOfId_;
  std::unordered_map<std::int64_t, Thread> byThread_;
  Thread none_;                 // of a thread without operations
  std::int64_t threadTid_ = 0;  // the thread of the last lookup
  Thread* thread_ = nullptr;
};

std::vector<std::string> namesOf(const std::vector<std::uint32_t>& set) {
  std::vector<std::string> names;
  for (std::uint32_t c : set) names.emplace_back(trace::categoryName(static_cast<Category>(c)));
  std::sort(names.begin(), names.end());
  return names;
}

// Which overhead sources apply to this trace, and their cost per event.
struct OverheadCosts {
  std::array<double, kOverheadSources.size()> perEvent{};  // all but CUPTI's, which is per API
  std::array<bool, kOverheadSources.size()> on{};
  const Calibration* calibration = nullptr;
  double cuptiNs(std::string_view api) const {
    return on[kCuptiSource] ? calibration->costNs(cost::kCupti, api) : 0;
  }
};

// Each thread's operation boundaries (starts and ends), sorted: a Python span that runs across
// them (entering an operation is no transition) is shared out between the operations it meets.
// `hint`: where the thread's last lookup ended (its spans come in time order).
struct Boundaries {
  std::vector<TimeNs> times;
  std::size_t hint = 0;
};
using ThreadBoundaries = std::unordered_map<std::int64_t, Boundaries>;
ThreadBoundaries operationBoundaries(const std::vector<trace::OperationRecord>& ops) {
  ThreadBoundaries boundaries;
  for (const auto& op : ops) {
    auto& b = boundaries[op.globalTid].times;
    b.push_back(op.start);
    b.push_back(op.end);
  }
  for (auto& [tid, b] : boundaries) std::sort(b.times.begin(), b.times.end());
  return boundaries;
}

// Calls share(from, fraction) for each part of `s` between its thread's operation boundaries, in
// order: where the part starts and its share of the span's length (the shares add up to 1).
template <class Share>
void splitAtBoundaries(const PythonEventSpan& s, ThreadBoundaries& boundaries, Share&& share) {
  TimeNs from = s.start;
  double rest = 1;
  auto it = boundaries.find(s.globalTid);
  if (it != boundaries.end() && s.end > s.start) {
    // Not a structured binding: Clang before 16 cannot capture one in the lambda.
    Boundaries& thread = it->second;
    const std::vector<TimeNs>& b = thread.times;
    thread.hint = trace::gallopingPartitionPoint(b.size(), thread.hint,
                                                 [&](std::size_t k) { return b[k] <= s.start; });
    auto length = static_cast<double>(s.end - s.start);
    for (auto cut = b.begin() + static_cast<std::ptrdiff_t>(thread.hint);
         cut != b.end() && *cut < s.end; ++cut) {
      if (*cut == from) continue;
      double part = static_cast<double>(*cut - from) / length;
      share(from, part);
      rest -= part;
      from = *cut;
    }
  }
  share(from, rest);
}

// Python tracking's cost, per thread: δ before each native call and δ after it returns (each call
// is two transitions); in each span, the tracker's events there × their price, and in each Python
// span the interpreter's slowdown under the tracker (its fraction of the span's length). A span's
// cost is shared by its parts between the thread's operation boundaries, in proportion to their
// length, each part's from its start. Where pieces meet (transitions closer than their cost),
// they are laid end to end: the profiler spent all of that time, and a union would remove it once.
void addPythonOverhead(ProcessEvents& e, const OverheadCosts& costs, ThreadBoundaries& boundaries) {
  struct Piece {
    std::int64_t globalTid;
    TimeNs start;
    double length;
    OverheadSource source;
  };
  std::vector<Piece> pieces;
  if (costs.on[kTransitionSource]) {
    double delta = costs.perEvent[kTransitionSource];
    for (const auto& c : e.nativeCalls) {
      pieces.push_back(
          {c.globalTid, c.start - static_cast<TimeNs>(delta + 0.5), delta, kTransitionSource});
      pieces.push_back({c.globalTid, c.end, delta, kTransitionSource});
    }
  }
  double perEvent = costs.on[kPythonEventSource] ? costs.perEvent[kPythonEventSource] : 0;
  double slowdown = costs.on[kInterpreterSource] ? costs.perEvent[kInterpreterSource] : 0;
  if (perEvent > 0 || slowdown > 0)
    for (const auto& s : e.pythonEventSpans) {
      double events = static_cast<double>(s.events) * perEvent;
      double interpreter = s.python ? slowdown * static_cast<double>(s.end - s.start) : 0;
      splitAtBoundaries(s, boundaries, [&](TimeNs from, double part) {
        if (events > 0) pieces.push_back({s.globalTid, from, events * part, kPythonEventSource});
        if (interpreter > 0)
          pieces.push_back({s.globalTid, from, interpreter * part, kInterpreterSource});
      });
    }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return std::tie(a.globalTid, a.start) < std::tie(b.globalTid, b.start);
  });
  std::int64_t tid = 0;
  TimeNs free = std::numeric_limits<TimeNs>::min();  // where the thread's last piece ended
  for (const auto& p : pieces) {
    if (p.globalTid != tid) free = std::numeric_limits<TimeNs>::min();
    tid = p.globalTid;
    auto ns = static_cast<TimeNs>(p.length + 0.5);
    if (ns <= 0) continue;
    TimeNs start = std::max(p.start, free);
    e.categories.push_back(
        {start, start + ns, kOverheadBase + static_cast<std::uint32_t>(p.source)});
    free = start + ns;
  }
}

// Overhead intervals at the anchors of docs/analysis.md ("Correction"): each costs the CPU time
// under it. Annotation: the operation's first δ. Python: addPythonOverhead. CUDA API
// interception: δ after the call. CUPTI: the call's first δ(API name).
void addOverheadIntervals(ProcessEvents& e, const OverheadCosts& costs,
                          ThreadBoundaries& boundaries, trace::TraceReader& reader) {
  auto add = [&](TimeNs start, double length, OverheadSource source) {
    auto ns = static_cast<TimeNs>(length + 0.5);
    if (ns > 0)
      e.categories.push_back(
          {start, start + ns, kOverheadBase + static_cast<std::uint32_t>(source)});
  };
  if (costs.on[kAnnotationSource])
    for (const auto& op : e.operations)
      add(op.start, costs.perEvent[kAnnotationSource], kAnnotationSource);
  addPythonOverhead(e, costs, boundaries);
  std::unordered_map<trace::StringId, double> cupti;
  for (const auto& call : e.apiCalls) {
    if (costs.on[kInterceptionSource])
      add(call.end, costs.perEvent[kInterceptionSource], kInterceptionSource);
    if (costs.on[kCuptiSource]) {
      auto [it, added] = cupti.try_emplace(call.nameId, 0.0);
      if (added) it->second = costs.cuptiNs(reader.string(call.nameId));
      add(call.start, it->second, kCuptiSource);
    }
  }
}

// A thread whose CPU time nothing classified (a native program, Python without tracking) runs
// the application's own code while inside its operations: Native time, as for an annotated
// native scope. Outside operations it stays unknown, as a gap.
void addNativeTime(ProcessEvents& e) {
  for (const auto& op : e.operations)
    if (op.parentId == 0 && !e.classifiedThreads.contains(op.globalTid))
      e.categories.push_back({op.start, op.end, static_cast<std::uint32_t>(Category::kNative)});
}

// Makes room for the intervals addNativeTime and addOverheadIntervals add. A vector that has it
// already (the first group's, reserved before reading) is left as it is: its spare capacity was
// never touched, so it holds no memory. Otherwise exactly what is needed: the category intervals
// are most of the analysis's memory, and the spare capacity that growing left from reading (up
// to as much again) would be held through the overlap sweep.
void reserveAddedIntervals(ProcessEvents& e, const OverheadCosts* costs) {
  std::size_t added = e.operations.size();  // at most one Native interval per operation
  if (costs)
    added +=
        (costs->on[kAnnotationSource] ? e.operations.size() : 0) +
        (costs->on[kTransitionSource] ? 2 * e.nativeCalls.size() : 0) +
        (costs->on[kPythonEventSource] ? e.pythonEventSpans.size() + 2 * e.operations.size() : 0) +
        (costs->on[kInterpreterSource] ? e.pythonEventSpans.size() + 2 * e.operations.size() : 0) +
        ((costs->on[kInterceptionSource] ? 1 : 0) + (costs->on[kCuptiSource] ? 1 : 0)) *
            e.apiCalls.size();
  std::size_t needed = e.categories.size() + added;
  if (e.categories.capacity() >= needed) return;
  std::vector<CategoryInterval> exact;
  exact.reserve(needed);
  exact.insert(exact.end(), e.categories.begin(), e.categories.end());
  e.categories.swap(exact);
}

// A GPU activity's duration on the predictor's target GPU, else its own.
double predictedDuration(const AnalyzeOptions& options, const GpuActivity& g) {
  if (options.predictedGpuNs) {
    auto it = options.predictedGpuNs->find(g.correlationId);
    if (it != options.predictedGpuNs->end()) return it->second;
  }
  return static_cast<double>(g.end - g.start);
}

// For the predictor: per operation, the GPU work that ran during its instances, as it ran and
// with its predicted durations (each activity weighted by the part of it inside the instance).
// Activities sorted by start with a running maximum of their ends find each instance's overlaps
// by binary search, whatever the nesting.
void addGpuDuring(const AnalyzeOptions& options, const std::vector<GpuActivity>& gpu,
                  const std::vector<OperationSpan>& spans, std::vector<OperationBreakdown>& rows) {
  std::vector<GpuActivity> sorted(gpu);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  std::vector<TimeNs> maxEnd(sorted.size());
  std::vector<double> factor(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    maxEnd[i] = std::max(i ? maxEnd[i - 1] : sorted[i].end, sorted[i].end);
    TimeNs duration = sorted[i].end - sorted[i].start;
    factor[i] = duration > 0 ? predictedDuration(options, sorted[i]) / duration : 1;
  }
  for (const auto& span : spans) {
    // The first activity that may still run at span.start: the running maximum passes it.
    auto first = std::upper_bound(maxEnd.begin(), maxEnd.end(), span.start) - maxEnd.begin();
    auto& row = rows[span.operation];
    for (auto i = static_cast<std::size_t>(first); i < sorted.size(); ++i) {
      if (sorted[i].start >= span.end) break;
      TimeNs inside = std::min(sorted[i].end, span.end) - std::max(sorted[i].start, span.start);
      if (inside <= 0) continue;
      row.gpuDuring += static_cast<double>(inside);
      row.predictedGpuDuring += static_cast<double>(inside) * factor[i];
    }
  }
}

// Whether each API name (by string id) waits for the GPU, looked up once per name.
class GpuWaitNames {
 public:
  explicit GpuWaitNames(trace::TraceReader& reader) : reader_(reader) {}
  bool operator()(trace::StringId id) {
    auto [it, added] = known_.try_emplace(id, false);
    if (added) it->second = isGpuWaitCall(reader_.string(id));
    return it->second;
  }

 private:
  trace::TraceReader& reader_;
  std::unordered_map<trace::StringId, bool> known_;
};

// AnalyzeOptions::window. An interval meets the window when they overlap, an instant when it lies
// inside; a call counts where it starts.
bool meets(const TimeWindow& w, TimeNs start, TimeNs end) {
  return start < w.end && (end > w.start || (start == end && start >= w.start));
}
bool startsIn(const TimeWindow* w, TimeNs t) {
  return !w || (w->start <= t && t < w->end);
}

// The sweep's input cut to the window: what does not meet it dropped, the rest clipped. Order is
// kept, so runs in start order stay so for the engine.
template <class Interval>
void clipToWindow(const TimeWindow& w, std::vector<Interval>& intervals) {
  std::erase_if(intervals, [&](const Interval& i) { return !meets(w, i.start, i.end); });
  for (auto& i : intervals) {
    i.start = std::max(i.start, w.start);
    i.end = std::min(i.end, w.end);
  }
}

// A launch made outside the window (launchKey below): its GPU work is not counted.
constexpr std::uint32_t kLaunchedOutside = ~std::uint32_t{0};

// What the analysis of every group (process, thread or run) shares.
struct AnalysisContext {
  trace::TraceReader& reader;
  const AnalyzeOptions& options;
  const OverheadCosts* costs;  // null: no overhead correction
  const TimeWindow* window;    // null: the whole run
};

// Below this many intervals the sweep runs in the calling thread: a thread costs more than it
// saves.
constexpr std::size_t kSweepBesideAbove = 100'000;

// The overlap sweep of a group, started beside the calling thread, which attributes launches and
// transitions to operations meanwhile: the two read the same inputs and write nothing the other
// reads, and after reading the trace they are most of the analysis, on one core otherwise.
std::future<OverlapResult> sweepBeside(const std::vector<CategoryInterval>& categories,
                                       const std::vector<OperationSpan>& operations) {
  return trace::runBeside(
      [&categories, &operations] { return computeOverlap(categories, operations); },
      categories.size() > kSweepBesideAbove);
}

// One group's events swept into its rows of `out`.
void analyzeGroup(std::int64_t pid, std::int64_t tid, ProcessEvents& events,
                  const AnalysisContext& context, Breakdown& out) {
  trace::TraceReader& reader = context.reader;
  const AnalyzeOptions& options = context.options;
  const OverheadCosts* costs = context.costs;
  const TimeWindow* window = context.window;
  reserveAddedIntervals(events, costs);
  addNativeTime(events);
  // Operations listed parents first where they start together (the engine's rule).
  auto& ops = events.operations;
  auto parentsFirst = [](const auto& a, const auto& b) {
    return std::tie(a.start, a.depth) < std::tie(b.start, b.depth);
  };
  if (!std::is_sorted(ops.begin(), ops.end(), parentsFirst))
    std::sort(ops.begin(), ops.end(), parentsFirst);
  PhaseLookup phases(std::move(events.phases), reader);
  // Each instance's (name, phase) key -> the engine's operation index; 0 is unannotated.
  std::map<std::pair<std::string, std::string>, std::uint32_t> keyIndex;
  // The same key by (name id, phase instance), so that the strings are compared once per pair
  // and not once per instance (millions, in traces with an operation around every launch).
  struct IdHash {
    std::size_t operator()(const std::pair<trace::StringId, std::ptrdiff_t>& k) const {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.first) * 1'000'003u +
                                        static_cast<std::uint64_t>(k.second));
    }
  };
  std::unordered_map<std::pair<trace::StringId, std::ptrdiff_t>, std::uint32_t, IdHash> idIndex;
  std::vector<std::pair<std::string, std::string>> keys{{kUnannotatedName, ""}};
  std::vector<std::uint64_t> instances{0};
  std::vector<OperationSpan> spans;
  spans.reserve(ops.size());
  for (const auto& op : ops) {
    std::ptrdiff_t phase = phases.at(op.start);
    auto [byId, newPair] = idIndex.try_emplace({op.nameId, phase}, 0);
    if (newPair) {
      std::pair<std::string, std::string> key{std::string(reader.string(op.nameId)),
                                              phases.name(phase)};
      auto [it, added] = keyIndex.emplace(key, static_cast<std::uint32_t>(keys.size()));
      if (added) {
        keys.push_back(std::move(key));
        instances.push_back(0);
      }
      byId->second = it->second;
    }
    if (!window || meets(*window, op.start, op.end)) ++instances[byId->second];
    spans.push_back({op.start, op.end, byId->second});
  }
  // The operation boundaries that Python spans are split at: before the sweep where the
  // correction adds intervals from them, else beside it.
  ThreadBoundaries boundaries;
  const bool splitSpans = !events.pythonEventSpans.empty();
  if (splitSpans && costs) boundaries = operationBoundaries(ops);
  if (costs) addOverheadIntervals(events, *costs, boundaries, reader);
  // Overhead and Native intervals come from the whole events, then everything is clipped: an
  // operation that started before the window keeps its name, phase and overhead anchors. `spans`
  // stays whole and aligned with `ops` for the lookups below.
  std::vector<OperationSpan> clipped;
  if (window) {
    clipped = spans;
    clipToWindow(*window, clipped);
    clipToWindow(*window, events.categories);
  }
  const std::vector<OperationSpan>& swept = window ? clipped : spans;
  auto overlap = sweepBeside(events.categories, swept);
  out.events += events.categories.size() + swept.size();
  if (splitSpans && !costs) boundaries = operationBoundaries(ops);

  std::vector<OperationBreakdown> rows(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    rows[i].process = pid;
    rows[i].thread = tid;
    rows[i].name = keys[i].first;
    rows[i].phase = keys[i].second;
    rows[i].instances = instances[i];
  }

  // Launches and transitions belong to the innermost operation open on the calling thread.
  ThreadOperations threadOps(ops);
  auto keyAt = [&](std::int64_t globalTid, TimeNs t) -> std::uint32_t {
    auto i = threadOps.innermostAt(globalTid, t);
    return i < 0 ? kUnannotated : spans[static_cast<std::size_t>(i)].operation;
  };
  std::unordered_map<std::int64_t, std::uint32_t> launchKey;  // correlation id -> key
  GpuWaitNames waits(reader);
  for (const auto& call : events.apiCalls) {
    if (!startsIn(window, call.start)) {
      if (call.correlationId) launchKey.emplace(call.correlationId, kLaunchedOutside);
      continue;
    }
    std::uint32_t key = keyAt(call.globalTid, call.start);
    ++rows[key].transitions.toCudaApi;
    if (waits(call.nameId))
      rows[key].gpuWait += (window ? std::min(call.end, window->end) : call.end) - call.start;
    if (call.correlationId) launchKey.emplace(call.correlationId, key);
  }
  for (const auto& [correlation, opId] : events.launchedBy)
    if (auto i = threadOps.indexOfId(opId); i >= 0) {
      auto [it, added] =
          launchKey.try_emplace(correlation, spans[static_cast<std::size_t>(i)].operation);
      if (!added && it->second != kLaunchedOutside)
        it->second = spans[static_cast<std::size_t>(i)].operation;
    }
  for (const auto& g : events.gpu) {
    auto it = launchKey.find(g.correlationId);
    // In a window: the work of the launches made inside it (or, with no launch recorded, the
    // work that starts inside it), whole.
    if (window &&
        (it != launchKey.end() ? it->second == kLaunchedOutside : !startsIn(window, g.start)))
      continue;
    auto& row = rows[it == launchKey.end() ? kUnannotated : it->second];
    row.launchedGpu += g.end - g.start;
    ++row.launchedGpuActivities;
    row.predictedLaunchedGpu += predictedDuration(options, g);
  }
  if (options.predictedGpuNs) addGpuDuring(options, events.gpu, swept, rows);
  for (const auto& c : events.nativeCalls) {
    if (!startsIn(window, c.start)) continue;
    auto& t = rows[keyAt(c.globalTid, c.start)].transitions;
    ++(c.category == Category::kBackend ? t.pythonToBackend : t.pythonToSimulator);
  }
  for (const auto& s : events.pythonEventSpans)
    splitAtBoundaries(s, boundaries, [&](TimeNs from, double part) {
      if (!startsIn(window, from)) return;
      auto& row = rows[keyAt(s.globalTid, from)];
      row.pythonEvents += part * static_cast<double>(s.events);
      if (s.python) row.pythonNs += part * static_cast<double>(s.end - s.start);
    });

  OverlapResult r = overlap.get();
  for (const auto& c : r.cells) {
    OperationBreakdown& row = rows[c.operation];
    std::vector<std::uint32_t> set = r.sets[c.set];
    auto overhead = std::find_if(set.begin(), set.end(), isOverhead);
    if (overhead != set.end()) {
      // Profiler time: the CPU categories under it were the profiler's, not the program's.
      std::uint32_t source = *overhead - kOverheadBase;
      bool nobodys = c.operation == kUnannotated &&
                     std::all_of(set.begin(), set.end(), [](auto k) { return isOverhead(k); });
      std::erase_if(set, [](auto k) { return !isGpu(k); });
      if (set.empty()) {
        if (!nobodys) out.correction->sources[kOverheadSources[source]].breakdownNs += c.time;
        continue;
      }
    }
    bool cpu = std::any_of(set.begin(), set.end(), isCpu);
    bool gpu = std::any_of(set.begin(), set.end(), isGpu);
    // A thread that waits uses no resource: while another thread or the GPU works, that work is
    // what the instant is; with nothing else, the instant is waiting time.
    if (cpu || gpu) std::erase(set, kWaiting);
    row.time += c.time;
    if (cpu && gpu)
      row.cpuGpu += c.time;
    else if (cpu)
      row.cpu += c.time;
    else if (gpu)
      row.gpu += c.time;
    else if (!set.empty())
      row.waiting += c.time;
    auto names = namesOf(set);
    auto same = std::find_if(row.categories.begin(), row.categories.end(),
                             [&](const auto& s) { return s.set == names; });
    if (same != row.categories.end())
      same->time += c.time;  // a set that only differed by overhead
    else
      row.categories.push_back({std::move(names), c.time});
  }
  for (auto& row : rows) {
    if (row.time == 0 && row.launchedGpu == 0) continue;
    std::sort(row.categories.begin(), row.categories.end(),
              [](const auto& a, const auto& b) { return a.time > b.time; });
    out.operations.push_back(std::move(row));
  }
}

// The features rlscope-prof recorded with (meta "features"); throws for a trace it did not
// record, which has no profiler overhead to remove.
nlohmann::json recordedFeatures(trace::TraceReader& reader) {
  auto f = reader.metaValue(trace::meta::kFeatures);
  nlohmann::json features = f ? nlohmann::json::parse(*f, nullptr, false) : nlohmann::json();
  if (!features.is_object())
    throw std::runtime_error(
        "this trace was not recorded by rlscope-prof (it has no feature list), so it has no "
        "profiler overhead to correct; analyze it without a calibration");
  return features;
}

// Decides which sources apply (those calibrated whose feature was on) and starts the record.
OverheadCosts overheadCosts(trace::TraceReader& reader, const AnalyzeOptions& options,
                            Correction& correction) {
  auto features = recordedFeatures(reader);
  const Calibration& cal = *options.calibration;
  OverheadCosts costs;
  costs.calibration = &cal;
  const std::array<const char*, kOverheadSources.size()> feature = {
      "nvtx", "python", "cuda_api", "gpu_activity", "python", "python"};
  bool gpuUnavailable =
      reader.metaValue(trace::meta::kGpuActivity).value_or("").starts_with("unavailable");
  bool hasTransitions = reader.metaValue(trace::meta::kPythonTransitions).value_or("0") != "0";
  for (std::size_t i = 0; i < kOverheadSources.size(); ++i) {
    const char* source = kOverheadSources[i];
    bool calibrated = i == kCuptiSource
                          ? std::any_of(cal.costs.begin(), cal.costs.end(),
                                        [](const Cost& c) { return c.source == cost::kCupti; })
                          : cal.find(source) != nullptr;
    bool recorded = features.value(feature[i], false);
    if (!recorded) {
      if (calibrated)
        correction.notes.push_back(std::string(source) + ": not applied, " + feature[i] +
                                   " was not recorded in this trace");
      continue;
    }
    if (!calibrated) {
      // Calibrations before the interpreter's slowdown was measured price Python per event only.
      if (i == kInterpreterSource) continue;
      // Only worth saying where such events are in the trace: CUDA costs on a machine without
      // a GPU are not calibrated, and a CPU-only trace has nothing to pay them; a native
      // program has no Python transitions.
      bool python = i == kTransitionSource || i == kPythonEventSource;
      bool cuda = i == kInterceptionSource || i == kCuptiSource;
      if (i == kAnnotationSource || (python && hasTransitions) || (cuda && !gpuUnavailable))
        correction.notes.push_back(std::string(source) +
                                   ": not calibrated, so its overhead stays in the times");
      continue;
    }
    costs.on[i] = true;
    if (i != kCuptiSource) costs.perEvent[i] = cal.costNs(source);
    correction.sources[source];  // listed even when no event needs it
  }
  return costs;
}

// The whole-run correction: events × cost per source, off the command's wall time, and the
// bias against the uninstrumented run. In a window: the events that start inside it (the Python
// transitions, which the trace only counts, in proportion to the native calls that do), without
// the once-per-process cost and the bias, which are the whole run's.
void correctTotal(trace::TraceReader& reader, const OverheadCosts& costs,
                  const std::map<std::int64_t, ProcessEvents>& groups, const TimeWindow* window,
                  Breakdown& out) {
  Correction& c = *out.correction;
  const Calibration& cal = *costs.calibration;
  auto set = [&](const char* source, std::int64_t events, double removed) {
    auto& s = c.sources[source];
    s.events = events;
    s.removedNs = removed;
    s.costNs = events ? removed / static_cast<double>(events) : 0;
  };
  if (cal.find(cost::kProcess)) {
    if (window) {
      c.notes.push_back(std::string(cost::kProcess) +
                        ": not applied, the collector's start and end belong to the whole run");
    } else {
      auto processes = reader.rowCount(trace::table::kProcesses);
      set(cost::kProcess, processes, static_cast<double>(processes) * cal.costNs(cost::kProcess));
    }
  }
  std::int64_t ops = 0, calls = 0, nativeCalls = 0, nativeInside = 0, eventsInside = 0;
  double pythonNs = 0;  // the Python spans' time (in the window)
  bool cudaCosts = costs.on[kInterceptionSource] || costs.on[kCuptiSource];
  std::unordered_map<trace::StringId, std::int64_t> callsByName;  // with CUDA costs to remove
  for (const auto& [key, e] : groups) {
    if (!window)
      ops += static_cast<std::int64_t>(e.operations.size());
    else
      for (const auto& op : e.operations) ops += startsIn(window, op.start) ? 1 : 0;
    for (const auto& call : e.apiCalls) {
      if (!startsIn(window, call.start)) continue;
      ++calls;
      if (cudaCosts) ++callsByName[call.nameId];
    }
    if (costs.on[kInterpreterSource])
      for (const auto& s : e.pythonEventSpans)
        if (s.python)
          pythonNs +=
              static_cast<double>(window ? std::max<TimeNs>(0, std::min(s.end, window->end) -
                                                                   std::max(s.start, window->start))
                                         : s.end - s.start);
    if (!window) continue;
    nativeCalls += static_cast<std::int64_t>(e.nativeCalls.size());
    for (const auto& n : e.nativeCalls) nativeInside += startsIn(window, n.start) ? 1 : 0;
    for (const auto& s : e.pythonEventSpans)
      eventsInside += startsIn(window, s.start) ? s.events : 0;
  }
  // The events correction removes a cost for, as the calibration counts them: their variance.
  EventCounts removed;
  for (const auto& [nameId, n] : callsByName)
    removed.apis[std::string(reader.string(nameId))].calls += n;
  double cupti = 0;
  if (costs.on[kCuptiSource])
    for (const auto& [name, api] : removed.apis)
      cupti += static_cast<double>(api.calls) * costs.cuptiNs(name);
  if (costs.on[kAnnotationSource]) {
    set(cost::kAnnotation, ops, static_cast<double>(ops) * costs.perEvent[kAnnotationSource]);
    removed.operations = ops;
  }
  if (costs.on[kPythonEventSource]) {
    // The whole run's count includes the events after each thread's last transition, which no
    // span carries; a window has the spans' that start in it.
    auto t = reader.metaValue(trace::meta::kPythonEvents);
    std::int64_t n = window ? eventsInside : t ? std::stoll(*t) : 0;
    set(cost::kPythonEvent, n, static_cast<double>(n) * costs.perEvent[kPythonEventSource]);
    removed.pythonEvents = n;
  }
  if (costs.on[kInterpreterSource]) {
    // Its "events" are the Python spans' nanoseconds; its cost, the slowdown's share of them.
    set(cost::kPythonInterpreter, std::llround(pythonNs),
        pythonNs * costs.perEvent[kInterpreterSource]);
    removed.pythonNs = pythonNs;
  }
  if (costs.on[kTransitionSource]) {
    auto t = reader.metaValue(trace::meta::kPythonTransitions);
    std::int64_t n = t ? std::stoll(*t) : 0;
    if (window)
      n = nativeCalls ? std::llround(static_cast<double>(n) * static_cast<double>(nativeInside) /
                                     static_cast<double>(nativeCalls))
                      : 0;
    set(cost::kPythonTransition, n, static_cast<double>(n) * costs.perEvent[kTransitionSource]);
    removed.transitions = n;
  }
  if (costs.on[kInterceptionSource])
    set(cost::kCudaApiInterception, calls,
        static_cast<double>(calls) * costs.perEvent[kInterceptionSource]);
  if (costs.on[kCuptiSource]) set(cost::kCupti, calls, cupti);
  c.uncorrectedTotalNs = static_cast<double>(out.totalNs);
  c.correctedTotalNs = c.uncorrectedTotalNs;
  for (const auto& [name, s] : c.sources) c.correctedTotalNs -= s.removedNs;
  if (window) return;  // the uninstrumented run, and so the bias, are the whole run's
  if (c.sources.contains(cost::kProcess)) removed.processes = c.sources[cost::kProcess].events;
  const Statistic& t0 = cal.uninstrumentedNs;
  c.uninstrumentedNs = t0.median;
  if (c.uninstrumentedNs <= 0) return;
  c.uninstrumentedNoisePct = 100.0 * t0.spread / c.uninstrumentedNs;
  c.biasPct = 100.0 * (c.correctedTotalNs - c.uninstrumentedNs) / c.uninstrumentedNs;
  // One profiled run varies as much as one uninstrumented run does (t0.spread); the median it
  // is compared with, and the costs, have their own standard errors.
  double removedVariance = removedVarianceNs2(cal, removed);
  if (t0.n < 2 || std::isinf(removedVariance)) {  // no spread known: the bias cannot be judged
    c.biasUncertaintyPct = std::numeric_limits<double>::infinity();
    return;
  }
  double variance = t0.spread * t0.spread + t0.uncertainty() * t0.uncertainty() + removedVariance;
  c.biasUncertaintyPct = 100.0 * std::sqrt(variance) / c.uninstrumentedNs;
  c.verdict = *c.biasUncertaintyPct > kBiasTargetPct   ? Correction::Verdict::kTooNoisy
              : std::abs(*c.biasPct) <= kBiasTargetPct ? Correction::Verdict::kWithinTarget
                                                       : Correction::Verdict::kOutsideTarget;
}

TimeNs totalOf(trace::TraceReader& reader) {
  if (auto e = reader.metaValue(trace::meta::kCommandElapsedNs)) return std::stoll(*e);
  auto span = reader.timeSpan();
  return span ? span->end - span->start : 0;
}

}  // namespace

std::int64_t runCorrelation(std::int64_t globalPidOrTid, std::int64_t correlation) {
  return correlation ? (processOf(globalPidOrTid) << 32) | (correlation & 0xffffffff) : 0;
}

const char* verdictName(Correction::Verdict v) {
  switch (v) {
    case Correction::Verdict::kWithinTarget:
      return "within_target";
    case Correction::Verdict::kOutsideTarget:
      return "outside_target";
    case Correction::Verdict::kTooNoisy:
      break;
  }
  return "too_noisy_to_tell";
}

bool isGpuWaitCall(std::string_view name) {
  if (name.find("Synchronize") != std::string_view::npos) return true;
  // cudaMemcpy, cudaMemcpy2D, cuMemcpyDtoH_v2 ...: synchronous; their *Async forms are not.
  bool copy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
  return copy && name.find("Async") == std::string_view::npos;
}

const char* viewName(View v) {
  switch (v) {
    case View::kThread:
      return "thread";
    case View::kRun:
      return "run";
    case View::kProcess:
      break;
  }
  return "process";
}

Breakdown analyzeTrace(trace::TraceReader& reader, const AnalyzeOptions& options) {
  Breakdown out;
  out.totalNs = totalOf(reader);
  out.sourceFormat = reader.metaValue(trace::meta::kSourceFormat).value_or("rlscope-prof");
  auto identities = reader.processIdentities();
  out.severalHosts = trace::hostsOf(identities).size() > 1;
  for (auto& id : identities) out.identities[trace::pidOfGlobalId(id.globalPid)] = std::move(id);
  if (options.window) {
    TimeWindow w = *options.window;
    w.end = std::max(w.end, w.start);  // an inverted window is an empty one
    auto span = reader.timeSpan();
    if (!span || w.start > span->start || w.end < span->end) {
      out.window = w;
      out.totalNs =
          span ? std::max<TimeNs>(0, std::min(w.end, span->end) - std::max(w.start, span->start))
               : 0;
    }
  }
  const TimeWindow* window = out.window ? &*out.window : nullptr;
  std::optional<OverheadCosts> costs;
  if (options.calibration) {
    out.correction.emplace();
    out.correction->calibrationOrigin = options.calibrationOrigin;
    costs = overheadCosts(reader, options, *out.correction);
  }
  out.view = options.view;
  auto groups = readEvents(reader, options.view, out.sourceFormat, options.gpuMetrics);
  // Every GPU row is in: the GPU metrics are summed up beside the breakdown's sweeps.
  std::future<void> gpuSummary;
  if (options.gpuMetrics)
    gpuSummary = trace::runBeside([gpu = options.gpuMetrics] { gpu->summarize(); });
  if (costs) correctTotal(reader, *costs, groups, window, out);
  const AnalysisContext context{reader, options, costs ? &*costs : nullptr, window};
  for (auto& [key, events] : groups) {
    // The group's process and thread: a pid, a globalTid, or the whole run.
    std::int64_t pid = options.view == View::kThread ? processOf(key) : key;
    std::int64_t tid = options.view == View::kThread ? trace::tidOfGlobalId(key) : 0;
    if (options.progress)
      options.progress((options.view == View::kRun ? std::string("analyzing the whole run")
                        : options.view == View::kThread
                            ? "analyzing thread " + std::to_string(pid) + "/" + std::to_string(tid)
                            : "analyzing process " + std::to_string(pid)) +
                       " (" + std::to_string(events.categories.size() + events.operations.size()) +
                       " intervals)");
    std::size_t first = out.operations.size();
    analyzeGroup(pid, tid, events, context, out);
    std::sort(out.operations.begin() + static_cast<std::ptrdiff_t>(first), out.operations.end(),
              [](const auto& a, const auto& b) { return a.time > b.time; });
  }
  if (gpuSummary.valid()) gpuSummary.get();
  return out;
}

}  // namespace rlscope::analysis
