#include "rlscope/gui_analysis/analysis_model.h"

#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/distributed/rank_analysis.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/calibration/calibration.h"
#include "rlscope/distributed/rank_analysis.h"
#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/what_if.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"

namespace rlscope::gui {

namespace {

using trace::Category;
using trace::TimeNs;

// The innermost layer first: Python calls the backend or the simulator, which call CUDA; a
// kernel outranks the copies and memsets running beside it.
int innermostRank(Category c) {
  static constexpr std::array<Category, trace::kCategoryCount> kOrder = {
      Category::kCudaApi,   Category::kBackend,   Category::kSimulator,
      Category::kNative,    Category::kPython,    Category::kWaiting,
      Category::kGpuKernel, Category::kGpuMemcpy, Category::kGpuMemset};
  return static_cast<int>(std::find(kOrder.begin(), kOrder.end(), c) - kOrder.begin());
}

// A category set of the breakdown as one bar segment's resource and category.
BarSegment segmentOf(const analysis::CategorySetTime& set) {
  BarSegment s{.resource = Resource::kIdle, .time = set.time};
  std::optional<Category> cpu, gpu;
  for (const auto& name : set.set) {
    auto c = trace::categoryFromName(name);
    if (!c) continue;
    auto& slot = trace::isGpuCategory(*c) ? gpu : cpu;
    if (!slot || innermostRank(*c) < innermostRank(*slot)) slot = c;
  }
  // The analyzer leaves Waiting in a set only when nothing else ran (analysis::analyzeTrace).
  if (cpu == Category::kWaiting)
    s.resource = Resource::kWaiting;
  else if (cpu && gpu)
    s.resource = Resource::kCpuGpu;
  else if (cpu)
    s.resource = Resource::kCpu;
  else if (gpu)
    s.resource = Resource::kGpu;
  s.category = cpu ? cpu : gpu;
  return s;
}

// Segments in drawing order: by resource, then by category (idle, with none, last).
using SegmentKey = std::pair<int, int>;
SegmentKey keyOf(const BarSegment& s) {
  return {static_cast<int>(s.resource), s.category ? static_cast<int>(*s.category) : 0};
}

OperationRow rowOf(const analysis::OperationBreakdown& o) {
  OperationRow row{.process = o.process,
                   .name = o.name,
                   .phase = o.phase,
                   .instances = o.instances,
                   .time = o.time,
                   .cpu = o.cpu,
                   .cpuGpu = o.cpuGpu,
                   .gpu = o.gpu,
                   .waiting = o.waiting,
                   .idle = std::max<TimeNs>(0, o.time - o.cpu - o.cpuGpu - o.gpu - o.waiting),
                   .launchedGpu = o.launchedGpu};
  std::map<SegmentKey, BarSegment> segments;
  for (const auto& set : o.categories) {
    BarSegment s = segmentOf(set);
    auto [it, added] = segments.try_emplace(keyOf(s), s);
    if (!added) it->second.time += s.time;
  }
  for (auto& [key, s] : segments)
    if (s.time > 0) row.segments.push_back(s);
  return row;
}

// The category table: every row's segments summed, longest first.
std::vector<CategoryRow> categoryTable(const std::vector<OperationRow>& rows, TimeNs total) {
  std::map<SegmentKey, CategoryRow> sums;
  for (const auto& row : rows)
    for (const auto& s : row.segments) {
      auto& c = sums[keyOf(s)];
      c.category = s.category;
      c.resource = s.resource;
      c.name = s.category ? std::string(trace::categoryName(*s.category)) : "idle";
      c.time += s.time;
    }
  std::vector<CategoryRow> table;
  for (auto& [key, c] : sums) {
    c.percent = total > 0 ? 100.0 * static_cast<double>(c.time) / static_cast<double>(total) : 0;
    table.push_back(std::move(c));
  }
  std::stable_sort(table.begin(), table.end(),
                   [](const auto& a, const auto& b) { return a.time > b.time; });
  return table;
}

ResourceTotals totalsOf(const std::vector<OperationRow>& rows) {
  ResourceTotals t;
  for (const auto& r : rows) {
    t.time += r.time;
    t.cpu += r.cpu;
    t.cpuGpu += r.cpuGpu;
    t.gpu += r.gpu;
    t.waiting += r.waiting;
    t.idle += r.idle;
  }
  return t;
}

double share(TimeNs part, TimeNs whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// The analyzer's progress lines to the caller, who may cancel at each.
std::function<void(const std::string&)> reporter(const AnalysisProgress& progress) {
  if (!progress) return {};
  return [progress](const std::string& line) {
    if (!progress(line)) throw AnalysisCancelled();
  };
}

struct SelectedOperation {
  std::string name;
  std::int64_t pid = 0;
  TimeNs start = 0, end = 0;
  std::set<std::string> descendantNames;
};

// The operation of the scope, by id, with the names of the operations nested in it (by parent
// id, on any thread).
SelectedOperation selectedOperation(trace::TraceReader& reader, std::int64_t id) {
  SelectedOperation op;
  {
    auto st = reader.db().prepare("SELECT start, end, globalTid, nameId FROM " +
                                  std::string(trace::table::kOperations) + " WHERE id = ?");
    st.bind(1, id);
    if (!st.step())
      throw std::runtime_error("no operation with id " + std::to_string(id) + " in this trace");
    op.start = st.columnInt(0);
    op.end = std::max(st.columnInt(1), op.start);
    op.pid = trace::pidOfGlobalId(st.columnInt(2));
    op.name = std::string(reader.string(st.columnInt(3)));
  }
  // Descendants lie inside its span; children may be listed before their parent, so build the
  // tree first.
  std::unordered_map<std::int64_t, std::vector<std::pair<std::int64_t, trace::StringId>>> children;
  trace::EventFilter inside;
  inside.windowStart = op.start;
  inside.windowEnd = op.end;
  inside.storageOrder = true;
  reader.forEachOperation(inside, [&](const trace::OperationRecord& r) {
    if (r.parentId && r.id != id) children[r.parentId].emplace_back(r.id, r.nameId);
  });
  std::vector<std::int64_t> todo{id};
  std::set<std::int64_t> seen{id};
  while (!todo.empty()) {
    auto parent = todo.back();
    todo.pop_back();
    auto it = children.find(parent);
    if (it == children.end()) continue;
    for (auto [child, nameId] : it->second)
      if (seen.insert(child).second) {
        op.descendantNames.emplace(reader.string(nameId));
        todo.push_back(child);
      }
  }
  op.descendantNames.erase(op.name);
  return op;
}

// The correction as the panel shows it.
CorrectionSummary correctionOf(const analysis::Breakdown& b) {
  CorrectionSummary s;
  if (!b.correction) return s;
  const auto& c = *b.correction;
  s.corrected = true;
  s.calibrationOrigin = c.calibrationOrigin;
  for (const auto& [name, source] : c.sources)
    s.overheadRemovedNs += static_cast<double>(source.breakdownNs);
  s.uncorrectedTotalNs = c.uncorrectedTotalNs;
  s.correctedTotalNs = c.correctedTotalNs;
  s.biasPct = c.biasPct;
  s.bias = analysis::biasLine(c);
  s.notes = c.notes;
  return s;
}

void sortLongestFirst(std::vector<OperationRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.nested, b.time) < std::tie(b.nested, a.time);  // selected first, then time
  });
}

// The ranks side by side, for a trace of a distributed job (two ranked processes or more).
void addRanks(trace::TraceReader& reader, const analysis::Breakdown& b, AnalysisResult& out) {
  std::size_t ranked = 0;
  for (const auto& [pid, id] : b.identities) ranked += id.rank.has_value();
  if (ranked < 2) return;
  analysis::RankAnalysis ranks = analysis::analyzeRanks(reader, b);
  if (ranks.ranks.size() < 2) return;
  for (const auto& r : ranks.ranks) {
    RankRow row{.rank = r.rank,
                .host = r.host,
                .time = r.time,
                .collectives = r.collectives,
                .waitingForOthers = r.waitingForOthers,
                .transferring = r.transferring,
                .collectivesLast = r.collectivesLast,
                .othersWaited = r.othersWaited};
    if (!r.doing.empty()) row.doing = r.doing.front().operation + " / " + r.doing.front().category;
    out.ranks.push_back(std::move(row));
  }
  out.rankNotes = ranks.notes;
}

void analyzeInto(const AnalysisRequest& request, const AnalysisProgress& progress,
                 AnalysisResult& out) {
  trace::TraceReader reader(request.tracePath);
  if (auto span = reader.timeSpan()) {
    out.traceStart = span->start;
    out.traceEnd = span->end;
  }
  out.severalProcesses = reader.processes().size() > 1;

  analysis::AnalyzeOptions options;
  options.progress = reporter(progress);
  std::optional<analysis::Calibration> calibration;
  if (request.correct) {
    // As `rlscope analyze` does (cli/trace_analysis.cpp): the calibration stored in the trace.
    // Only rlscope-prof traces have overhead to remove; another holding one is left as it is.
    if (auto rows = reader.calibration(); !rows.empty()) {
      if (reader.metaValue(trace::meta::kFeatures)) {
        calibration = analysis::calibrationFromRecords(rows);
        options.calibration = &*calibration;
        options.calibrationOrigin = "stored in the trace";
      } else {
        out.correction.notes.push_back(
            "the trace holds a calibration but rlscope-prof did not record it: not corrected");
      }
    }
  }

  const AnalysisScope& scope = request.scope;
  std::optional<SelectedOperation> selected;
  if (scope.kind == AnalysisScope::Kind::kRange) {
    options.window = analysis::TimeWindow{scope.start, std::max(scope.end, scope.start)};
  } else if (scope.kind == AnalysisScope::Kind::kOperation && scope.operationId != 0) {
    selected = selectedOperation(reader, scope.operationId);
    options.window = analysis::TimeWindow{selected->start, selected->end};
    out.operationName = selected->name;
  } else if (scope.kind == AnalysisScope::Kind::kOperation) {
    out.operationName = scope.operationName;
  }

  if (progress && !progress("reading the trace")) throw AnalysisCancelled();
  analysis::Breakdown b = analysis::analyzeTrace(reader, options);
  out.events = b.events;
  out.scopeNs = b.totalNs;
  auto correction = correctionOf(b);
  correction.notes.insert(correction.notes.begin(), out.correction.notes.begin(),
                          out.correction.notes.end());
  out.correction = std::move(correction);

  if (selected) {
    // The operation and what nests in it; the rest of its span went to operations of other
    // threads that started later.
    for (const auto& o : b.operations) {
      if (o.process != selected->pid) continue;
      bool self = o.name == selected->name;
      if (self || selected->descendantNames.contains(o.name)) {
        out.operations.push_back(rowOf(o));
        out.operations.back().nested = !self;
      } else {
        out.concurrentNs += o.time;
      }
    }
    out.scopeNs = selected->end - selected->start;
  } else if (scope.kind == AnalysisScope::Kind::kOperation) {
    // By name: the analyzer's rows of that name, every instance in each phase and process.
    for (const auto& o : b.operations)
      if (o.name == scope.operationName) out.operations.push_back(rowOf(o));
    if (out.operations.empty())
      throw std::runtime_error("no operation named '" + scope.operationName + "' in this trace");
    out.scopeNs = 0;
    for (const auto& r : out.operations) out.scopeNs += r.time;
  } else {
    for (const auto& o : b.operations) out.operations.push_back(rowOf(o));
    if (scope.kind == AnalysisScope::Kind::kWholeRun) addRanks(reader, b, out);
  }
  sortLongestFirst(out.operations);
  out.totals = totalsOf(out.operations);
  out.categories = categoryTable(out.operations, out.totals.time);
}

}  // namespace

AnalysisScope AnalysisScope::range(trace::TimeNs start, trace::TimeNs end) {
  AnalysisScope s;
  s.kind = Kind::kRange;
  s.start = std::min(start, end);
  s.end = std::max(start, end);
  return s;
}

AnalysisScope AnalysisScope::operation(std::int64_t id) {
  AnalysisScope s;
  s.kind = Kind::kOperation;
  s.operationId = id;
  return s;
}

AnalysisScope AnalysisScope::operationNamed(std::string name) {
  AnalysisScope s;
  s.kind = Kind::kOperation;
  s.operationName = std::move(name);
  return s;
}

const char* resourceName(Resource r) {
  switch (r) {
    case Resource::kCpu:
      return "CPU";
    case Resource::kCpuGpu:
      return "CPU+GPU";
    case Resource::kGpu:
      return "GPU";
    case Resource::kWaiting:
      return "waiting";
    case Resource::kIdle:
      break;
  }
  return "idle";
}

double OperationRow::gpuBoundShare() const {
  return share(gpu + cpuGpu, time);
}

double ResourceTotals::gpuBoundShare() const {
  return share(gpu + cpuGpu, time);
}

AnalysisResult analyzeScope(const AnalysisRequest& request, const AnalysisProgress& progress) {
  auto started = std::chrono::steady_clock::now();
  AnalysisResult out;
  out.tracePath = request.tracePath;
  out.scope = request.scope;
  try {
    analyzeInto(request, progress, out);
  } catch (const AnalysisCancelled& e) {
    out = {.tracePath = request.tracePath, .scope = request.scope, .error = e.what()};
    out.cancelled = true;
  } catch (const std::exception& e) {
    out = {.tracePath = request.tracePath, .scope = request.scope, .error = e.what()};
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

WhatIf predictWhatIf(const std::string& tracePath, const std::string& gpu,
                     const AnalysisProgress& progress) {
  const auto& db = predictor::GpuDatabase::builtIn();
  const auto& target = db.get(gpu);
  trace::TraceReader reader(tracePath);
  predictor::PredictOptions options;
  options.progress = reporter(progress);
  predictor::RunPrediction p = predictor::predictRun(reader, db, target, options);
  WhatIf w{.target = p.target,
           .origin = p.origin,
           .originNs = p.originNs,
           .predictedNs = p.predictedNs,
           .gpuOriginNs = p.gpuOriginNs,
           .gpuPredictedNs = p.gpuPredictedNs,
           .gpuBoundNs = p.gpuBoundNs,
           .speedup = p.speedup(),
           .maxSpeedup = p.maxSpeedup(),
           .cpuBound = p.cpuBound,
           .verdict = p.verdict(),
           .notes = p.notes};
  for (const auto& o : p.operations)
    w.operations.push_back({.process = o.process,
                            .name = o.name,
                            .phase = o.phase,
                            .originNs = o.originNs,
                            .predictedNs = o.predictedNs,
                            .gpuScale = o.gpuScale});
  return w;
}

bool addWhatIf(const AnalysisRequest& request, const AnalysisProgress& progress,
               AnalysisResult& result) {
  try {
    result.whatIf = predictWhatIf(request.tracePath, request.whatIfGpu, progress);
  } catch (const AnalysisCancelled& e) {
    result = {.tracePath = request.tracePath, .scope = request.scope, .error = e.what()};
    result.cancelled = true;
    return false;
  } catch (const std::exception& e) {
    result.whatIfError = e.what();
  }
  return true;
}

AnalysisResult analyze(const AnalysisRequest& request, const AnalysisProgress& progress) {
  AnalysisResult out = analyzeScope(request, progress);
  if (!out.ok() || request.whatIfGpu.empty()) return out;
  auto started = std::chrono::steady_clock::now();
  if (!addWhatIf(request, progress, out)) return out;
  out.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

std::vector<std::string> whatIfGpus() {
  std::vector<std::string> names;
  for (const auto& gpu : predictor::GpuDatabase::builtIn().gpus()) names.push_back(gpu.name);
  return names;
}

std::string scopeLabel(const AnalysisScope& scope, trace::TimeNs origin,
                       const std::string& operationName) {
  switch (scope.kind) {
    case AnalysisScope::Kind::kRange:
      return "Range " + durationText(static_cast<double>(scope.start - origin)) + " – " +
             durationText(static_cast<double>(scope.end - origin)) + " (" +
             durationText(static_cast<double>(scope.end - scope.start)) + ")";
    case AnalysisScope::Kind::kOperation: {
      const std::string& name = operationName.empty() ? scope.operationName : operationName;
      if (!name.empty()) return "Operation: " + name;
      return "Operation #" + std::to_string(scope.operationId);
    }
    case AnalysisScope::Kind::kWholeRun:
      break;
  }
  return "Whole run";
}

}  // namespace rlscope::gui
