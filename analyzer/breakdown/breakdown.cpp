#include "breakdown.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "overlap.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/records.h"

namespace rlscope::analysis {

namespace {

using trace::Category;

std::int64_t processOf(std::int64_t globalId) {
  return trace::pidOfGlobalId(globalId);
}

bool isGpu(std::uint32_t category) {
  return category >= static_cast<std::uint32_t>(Category::kGpuKernel);
}

// Everything of one process the overlap needs.
struct ProcessEvents {
  std::vector<CategoryInterval> categories;
  std::vector<trace::OperationRecord> operations;
  std::vector<trace::PhaseRecord> phases;
};

std::map<std::int64_t, ProcessEvents> readEvents(trace::TraceReader& reader) {
  std::map<std::int64_t, ProcessEvents> byProcess;
  trace::EventFilter all;
  all.storageOrder = true;
  auto addInterval = [&](std::int64_t globalId, trace::TimeNs start, trace::TimeNs end,
                         Category c) {
    if (end < start) return;  // a damaged row: nothing to count
    byProcess[processOf(globalId)].categories.push_back(
        {start, end, static_cast<std::uint32_t>(c)});
  };
  reader.forEachCpuInterval(all, [&](const trace::CpuIntervalRecord& r) {
    addInterval(r.globalTid, r.start, r.end, r.category);
  });
  for (auto kind : {trace::ApiKind::kRuntime, trace::ApiKind::kDriver})
    reader.forEachApiCall(kind, all, [&](const trace::ApiCallRecord& r) {
      addInterval(r.globalTid, r.start, r.end, Category::kCudaApi);
    });
  reader.forEachKernel(all, [&](const trace::KernelRecord& r) {
    addInterval(r.globalPid, r.start, r.end, Category::kGpuKernel);
  });
  reader.forEachMemcpy(all, [&](const trace::MemcpyRecord& r) {
    addInterval(r.globalPid, r.start, r.end, Category::kGpuMemcpy);
  });
  reader.forEachMemset(all, [&](const trace::MemsetRecord& r) {
    addInterval(r.globalPid, r.start, r.end, Category::kGpuMemset);
  });
  reader.forEachOperation(all, [&](const trace::OperationRecord& r) {
    if (r.end >= r.start) byProcess[processOf(r.globalTid)].operations.push_back(r);
  });
  reader.forEachPhase(all, [&](const trace::PhaseRecord& r) {
    if (r.end >= r.start) byProcess[processOf(r.globalPid)].phases.push_back(r);
  });
  return byProcess;
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

  const std::string& at(trace::TimeNs t) const {
    static const std::string kNone;
    auto it = std::upper_bound(phases_.begin(), phases_.end(), t,
                               [](trace::TimeNs v, const auto& p) { return v < p.start; });
    while (it != phases_.begin()) {
      --it;
      if (t < it->end || it->start == it->end) return names_[it - phases_.begin()];
    }
    return kNone;
  }

 private:
  std::vector<trace::PhaseRecord> phases_;
  std::vector<std::string> names_;
};

std::vector<std::string> namesOf(const std::vector<std::uint32_t>& set) {
  std::vector<std::string> names;
  for (std::uint32_t c : set) names.emplace_back(trace::categoryName(static_cast<Category>(c)));
  std::sort(names.begin(), names.end());
  return names;
}

void analyzeProcess(std::int64_t pid, ProcessEvents& events, trace::TraceReader& reader,
                    Breakdown& out) {
  // Operations listed parents first where they start together (the engine's rule).
  auto& ops = events.operations;
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.depth) < std::tie(b.start, b.depth);
  });
  PhaseLookup phases(std::move(events.phases), reader);
  // Each instance's (name, phase) key -> the engine's operation index; 0 is unannotated.
  std::map<std::pair<std::string, std::string>, std::uint32_t> keyIndex;
  std::vector<std::pair<std::string, std::string>> keys{{kUnannotatedName, ""}};
  std::vector<std::uint64_t> instances{0};
  std::vector<OperationSpan> spans;
  spans.reserve(ops.size());
  for (const auto& op : ops) {
    std::pair<std::string, std::string> key{std::string(reader.string(op.nameId)),
                                            phases.at(op.start)};
    auto [it, added] = keyIndex.emplace(key, static_cast<std::uint32_t>(keys.size()));
    if (added) {
      keys.push_back(key);
      instances.push_back(0);
    }
    ++instances[it->second];
    spans.push_back({op.start, op.end, it->second});
  }
  OverlapResult r = computeOverlap(events.categories, spans);
  out.events += events.categories.size() + spans.size();

  std::vector<OperationBreakdown> rows(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    rows[i].process = pid;
    rows[i].name = keys[i].first;
    rows[i].phase = keys[i].second;
    rows[i].instances = instances[i];
  }
  for (const auto& c : r.cells) {
    OperationBreakdown& row = rows[c.operation];
    const auto& set = r.sets[c.set];
    bool cpu = std::any_of(set.begin(), set.end(), [](auto k) { return !isGpu(k); });
    bool gpu = std::any_of(set.begin(), set.end(), isGpu);
    row.time += c.time;
    if (cpu && gpu)
      row.cpuGpu += c.time;
    else if (cpu)
      row.cpu += c.time;
    else if (gpu)
      row.gpu += c.time;
    row.categories.push_back({namesOf(set), c.time});
  }
  for (auto& row : rows) {
    if (row.time == 0) continue;
    std::sort(row.categories.begin(), row.categories.end(),
              [](const auto& a, const auto& b) { return a.time > b.time; });
    out.operations.push_back(std::move(row));
  }
}

}  // namespace

Breakdown analyzeTrace(trace::TraceReader& reader,
                       const std::function<void(const std::string&)>& progress) {
  Breakdown out;
  auto byProcess = readEvents(reader);
  for (auto& [pid, events] : byProcess) {
    if (progress)
      progress("analyzing process " + std::to_string(pid) + " (" +
               std::to_string(events.categories.size() + events.operations.size()) + " intervals)");
    std::size_t first = out.operations.size();
    analyzeProcess(pid, events, reader, out);
    std::sort(out.operations.begin() + static_cast<std::ptrdiff_t>(first), out.operations.end(),
              [](const auto& a, const auto& b) { return a.time > b.time; });
  }
  return out;
}

}  // namespace rlscope::analysis
