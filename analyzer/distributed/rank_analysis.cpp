#include "rlscope/distributed/rank_analysis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/distributed/collectives.h"
#include "rlscope/document/analysis_json.h"
#include "rlscope/trace/global_id.h"

namespace rlscope::analysis {

namespace {

using trace::TimeNs;

constexpr std::size_t kActivitiesKept = 10;
constexpr const char* kNoCpuActivity = "no CPU activity";

struct RankProcesses {
  std::int64_t rank = 0;
  std::string host;
  std::vector<std::int64_t> globalPids;
  std::int64_t main = 0;        // globalPid of the process that issued the collectives
  std::int64_t mainThread = 0;  // its main thread (tid = its OS pid)
  std::vector<CollectiveCall> collectives;
};

// Ranked processes grouped by rank; each rank's process is the one that issued the most
// collectives, else the one whose parent has another rank (or none): the one the launcher
// started, not the workers it forked, which inherit its variables.
std::vector<RankProcesses> rankProcesses(trace::TraceReader& reader) {
  // Parents by (host, OS pid): a merged job's hosts may reuse pids, and its processes keep their
  // OS pids in rlscope_processes.pid while their globalPids were renumbered.
  auto identities = reader.processIdentities();
  std::map<std::int64_t, std::string> hostOf;
  for (const auto& id : identities) hostOf[id.globalPid] = id.host;
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> byOsPid;
  std::map<std::int64_t, std::int64_t> osPidOf;
  auto processes = reader.processes();
  for (const auto& p : processes) {
    byOsPid[{hostOf[p.globalPid], p.pid}] = p.globalPid;
    osPidOf[p.globalPid] = p.pid;
  }
  std::map<std::int64_t, std::int64_t> parentOf;  // globalPid -> parent's globalPid (0: none)
  for (const auto& p : processes) {
    auto it = byOsPid.find({hostOf[p.globalPid], p.parentPid});
    parentOf[p.globalPid] = p.parentPid > 0 && it != byOsPid.end() ? it->second : 0;
  }
  std::map<std::int64_t, RankProcesses> byRank;
  for (const auto& id : identities) {
    if (!id.rank) continue;
    auto& r = byRank[*id.rank];
    r.rank = *id.rank;
    if (r.host.empty()) r.host = id.host;
    r.globalPids.push_back(id.globalPid);
  }
  std::vector<RankProcesses> out;
  for (auto& [rank, r] : byRank) {
    std::set<std::int64_t> ofRank(r.globalPids.begin(), r.globalPids.end());
    std::tuple<std::size_t, bool, std::int64_t> best{0, false, 0};
    for (std::int64_t gp : r.globalPids) {
      auto calls = findCollectives(reader, gp);
      bool root = !ofRank.count(parentOf[gp]);
      // Most collectives, then the root, then the lowest pid.
      std::tuple<std::size_t, bool, std::int64_t> key{calls.size(), root, -gp};
      if (r.main == 0 || key > best) {
        best = key;
        r.main = gp;
        auto os = osPidOf.find(gp);
        r.mainThread = trace::globalTidOf(
            trace::pidOfGlobalId(gp), os != osPidOf.end() ? os->second : trace::pidOfGlobalId(gp));
        r.collectives = std::move(calls);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Kinds agree, or one of them is a kernel that does not say its kind.
bool sameKind(const CollectiveCall& a, const CollectiveCall& b) {
  return a.kind == b.kind || a.kind == "nccl" || b.kind == "nccl";
}

// The number of collectives that every rank issued in the same order; notes where they part.
std::size_t matchableCount(const std::vector<RankProcesses>& ranks,
                           std::vector<std::string>& notes) {
  std::size_t n = ranks.front().collectives.size();
  for (const auto& r : ranks) n = std::min(n, r.collectives.size());
  for (const auto& r : ranks) {
    if (r.collectives.size() != ranks.front().collectives.size()) {
      notes.push_back("the ranks issued different numbers of collectives (rank " +
                      std::to_string(ranks.front().rank) + ": " +
                      std::to_string(ranks.front().collectives.size()) + ", rank " +
                      std::to_string(r.rank) + ": " + std::to_string(r.collectives.size()) +
                      "): the first " + std::to_string(n) + " are matched");
      break;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    for (const auto& r : ranks) {
      if (sameKind(r.collectives[k], ranks.front().collectives[k])) continue;
      notes.push_back("collective " + std::to_string(k + 1) + " is " + r.collectives[k].kind +
                      " on rank " + std::to_string(r.rank) + " but " +
                      ranks.front().collectives[k].kind + " on rank " +
                      std::to_string(ranks.front().rank) +
                      " (collectives of process subgroups are not told apart yet): the first " +
                      std::to_string(k) + " are matched");
      return k;
    }
  }
  return n;
}

// What the thread did over [start, end): time by (innermost operation, innermost CPU category).
class ActivitySweep {
 public:
  ActivitySweep(trace::TraceReader& reader, std::int64_t globalTid, TimeNs start, TimeNs end)
      : reader_(reader), start_(start), end_(end) {
    trace::EventFilter f{.globalTid = globalTid, .windowStart = start, .windowEnd = end};
    reader.forEachOperation(f, [&](const trace::OperationRecord& o) {
      add(o.start, o.end, Item{.isOperation = true, .depth = o.depth, .nameId = o.nameId});
    });
    reader.forEachCpuInterval(f, [&](const trace::CpuIntervalRecord& c) {
      add(c.start, c.end, Item{.category = c.category});
    });
  }

  void addTo(std::map<std::pair<std::string, std::string>, TimeNs>& time) {
    std::sort(edges_.begin(), edges_.end());
    // Innermost first from rbegin: operations by depth, CPU intervals by start then shortest.
    std::set<std::tuple<int, TimeNs, std::size_t>> ops;
    std::set<std::tuple<TimeNs, TimeNs, std::size_t>> cpu;
    TimeNs at = start_;
    std::size_t i = 0;
    while (at < end_) {
      for (; i < edges_.size() && edges_[i].time <= at; ++i) apply(edges_[i], ops, cpu);
      TimeNs next = i < edges_.size() ? std::min(edges_[i].time, end_) : end_;
      if (next > at) {
        std::string op =
            ops.empty() ? kUnannotatedName
                        : std::string(reader_.string(items_[std::get<2>(*ops.rbegin())].nameId));
        std::string category =
            cpu.empty()
                ? kNoCpuActivity
                : std::string(trace::categoryName(items_[std::get<2>(*cpu.rbegin())].category));
        time[{op, category}] += next - at;
      }
      at = next;
    }
  }

 private:
  struct Item {
    bool isOperation = false;
    int depth = 0;
    trace::StringId nameId = trace::kNoString;
    trace::Category category = trace::Category::kNative;
    TimeNs start = 0, end = 0;
  };
  struct Edge {
    TimeNs time;
    bool opens;
    std::size_t item;
    bool operator<(const Edge& o) const {
      return std::tie(time, opens, item) < std::tie(o.time, o.opens, o.item);  // closes first
    }
  };

  void add(TimeNs s, TimeNs e, Item item) {
    s = std::max(s, start_);
    e = std::min(e, end_);
    if (e <= s) return;
    item.start = s;
    item.end = e;
    edges_.push_back({s, true, items_.size()});
    edges_.push_back({e, false, items_.size()});
    items_.push_back(item);
  }

  void apply(const Edge& edge, std::set<std::tuple<int, TimeNs, std::size_t>>& ops,
             std::set<std::tuple<TimeNs, TimeNs, std::size_t>>& cpu) {
    const Item& it = items_[edge.item];
    if (it.isOperation) {
      std::tuple<int, TimeNs, std::size_t> key{it.depth, it.start, edge.item};
      edge.opens ? (void)ops.insert(key) : (void)ops.erase(key);
    } else {
      std::tuple<TimeNs, TimeNs, std::size_t> key{it.start, -it.end, edge.item};
      edge.opens ? (void)cpu.insert(key) : (void)cpu.erase(key);
    }
  }

  trace::TraceReader& reader_;
  TimeNs start_, end_;
  std::vector<Item> items_;
  std::vector<Edge> edges_;
};

void addBreakdownTotals(const Breakdown& b, RankSummary& s) {
  for (const auto& o : b.operations) {
    if (o.process != s.pid) continue;
    s.time += o.time;
    s.cpu += o.cpu;
    s.gpu += o.gpu;
    s.cpuGpu += o.cpuGpu;
    s.waiting += o.waiting;
  }
}

}  // namespace

RankAnalysis analyzeRanks(trace::TraceReader& reader, const Breakdown& breakdown) {
  RankAnalysis a;
  auto ranks = rankProcesses(reader);
  std::set<std::string> hosts;
  std::set<bool> sources;
  for (const auto& r : ranks) {
    RankSummary s;
    s.rank = r.rank;
    s.host = r.host;
    s.pid = trace::pidOfGlobalId(r.main);
    for (auto gp : r.globalPids) s.pids.push_back(trace::pidOfGlobalId(gp));
    addBreakdownTotals(breakdown, s);
    a.ranks.push_back(std::move(s));
    if (!r.host.empty()) hosts.insert(r.host);
    for (const auto& c : r.collectives) sources.insert(c.gpu);
  }
  a.hosts = hosts.size();
  a.source = sources.size() == 2 ? "NCCL kernels and c10d calls"
             : sources.empty()   ? ""
             : *sources.begin()  ? "NCCL kernels"
                                 : "c10d calls";
  if (ranks.size() < 2) {
    a.notes.push_back(ranks.empty() ? "no process of the trace has a rank"
                                    : "one rank only: nothing to compare it with");
    return a;
  }
  if (a.source.empty()) {
    a.notes.push_back("no collectives found (NCCL kernels, or torch.distributed calls)");
    return a;
  }

  a.matched = matchableCount(ranks, a.notes);
  std::vector<std::map<std::pair<std::string, std::string>, TimeNs>> doing(ranks.size());
  for (std::size_t k = 0; k < a.matched; ++k) {
    std::size_t last = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      if (ranks[r].collectives[k].entry > ranks[last].collectives[k].entry) last = r;
    }
    const TimeNs lastEntry = ranks[last].collectives[k].entry;
    TimeNs firstEntry = lastEntry;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto& c = ranks[r].collectives[k];
      TimeNs in = std::max<TimeNs>(0, c.completion - c.entry);
      TimeNs waited = std::clamp<TimeNs>(std::min(lastEntry, c.completion) - c.entry, 0, in);
      auto& s = a.ranks[r];
      ++s.collectives;
      s.inCollectives += in;
      s.waitingForOthers += waited;
      s.transferring += in - waited;
      if (r != last) {
        a.ranks[last].othersWaited += waited;
        firstEntry = std::min(firstEntry, c.entry);
      }
    }
    ++a.ranks[last].collectivesLast;
    if (firstEntry < lastEntry) {
      const auto& c = ranks[last].collectives[k];
      std::int64_t thread = c.globalTid ? c.globalTid : ranks[last].mainThread;
      ActivitySweep(reader, thread, firstEntry, lastEntry).addTo(doing[last]);
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto& list = a.ranks[r].doing;
    for (const auto& [key, time] : doing[r]) list.push_back({key.first, key.second, time});
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
      return std::tie(y.time, x.operation, x.category) < std::tie(x.time, y.operation, y.category);
    });
    if (list.size() > kActivitiesKept) list.resize(kActivitiesKept);
  }
  return a;
}

namespace {

double micros(TimeNs ns) {
  return static_cast<double>(ns) / 1000.0;
}
double millis(TimeNs ns) {
  return static_cast<double>(ns) / 1e6;
}
double percentOf(TimeNs part, TimeNs whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

nlohmann::json ranksToJson(const RankAnalysis& a) {
  namespace rank = json_keys::rank;
  namespace straggler = json_keys::straggler;
  nlohmann::json ranks = nlohmann::json::array();
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& r : a.ranks) {
    nlohmann::json host = r.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.host);
    ranks.push_back({{rank::kRank, r.rank},
                     {rank::kHost, host},
                     {rank::kPid, r.pid},
                     {rank::kPids, r.pids},
                     {rank::kTimeUs, micros(r.time)},
                     {rank::kResources, resourcesToJson(r.cpu, r.gpu, r.cpuGpu)},
                     {rank::kWaitingUs, micros(r.waiting)},
                     {rank::kCollectives,
                      {{rank::collectives::kCount, r.collectives},
                       {rank::collectives::kTimeUs, micros(r.inCollectives)},
                       {rank::collectives::kWaitingUs, micros(r.waitingForOthers)},
                       {rank::collectives::kTransferringUs, micros(r.transferring)}}}});
    nlohmann::json doing = nlohmann::json::array();
    for (const auto& d : r.doing) {
      doing.push_back({{straggler::doing::kOperation, d.operation},
                       {straggler::doing::kCategory, d.category},
                       {straggler::doing::kTimeUs, micros(d.time)}});
    }
    stragglers.push_back({{straggler::kRank, r.rank},
                          {straggler::kHost, host},
                          {straggler::kCollectivesLast, r.collectivesLast},
                          {straggler::kOthersWaitedUs, micros(r.othersWaited)},
                          {straggler::kDoing, doing}});
  }
  namespace collectives = json_keys::collectives;
  return {{json_keys::kRanks, ranks},
          {json_keys::kStragglers, stragglers},
          {json_keys::kCollectives,
           {{collectives::kMatched, a.matched},
            {collectives::kSource,
             a.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.source)},
            {collectives::kNotes, a.notes}}}};
}

void writeRanksTable(const RankAnalysis& a, std::ostream& out) {
  char line[256];
  out << "ranks (" << a.ranks.size();
  if (a.hosts) out << " on " << a.hosts << (a.hosts == 1 ? " host" : " hosts");
  if (a.matched) out << "; " << a.matched << " collectives matched, from " << a.source;
  out << ")\n";
  for (const auto& n : a.notes) out << "  note: " << n << "\n";
  if (a.ranks.empty()) return;
  std::snprintf(line, sizeof line, "  %4s  %-12s %8s %10s %6s %6s %8s %8s %11s %10s %10s %10s\n",
                "rank", "host", "pid", "time ms", "CPU", "GPU", "CPU+GPU", "waiting", "collectives",
                "in them ms", "waiting ms", "transfer ms");
  out << line;
  for (const auto& r : a.ranks) {
    std::snprintf(line, sizeof line,
                  "  %4lld  %-12.12s %8lld %10.3f %5.1f%% %5.1f%% %7.1f%% %7.1f%% %11llu %10.3f "
                  "%10.3f %10.3f\n",
                  static_cast<long long>(r.rank), r.host.c_str(), static_cast<long long>(r.pid),
                  millis(r.time), percentOf(r.cpu, r.time), percentOf(r.gpu, r.time),
                  percentOf(r.cpuGpu, r.time), percentOf(r.waiting, r.time),
                  static_cast<unsigned long long>(r.collectives), millis(r.inCollectives),
                  millis(r.waitingForOthers), millis(r.transferring));
    out << line;
  }
  if (!a.matched) return;
  out << "\nstragglers (the rank that entered each collective last, and what it did while the "
         "others waited)\n";
  bool any = false;
  for (const auto& r : a.ranks) {
    if (!r.collectivesLast) continue;
    any = true;
    std::snprintf(line, sizeof line,
                  "  rank %lld%s%s: last into %llu of %llu collectives; the others waited %.3f ms "
                  "for it\n",
                  static_cast<long long>(r.rank), r.host.empty() ? "" : " on ", r.host.c_str(),
                  static_cast<unsigned long long>(r.collectivesLast),
                  static_cast<unsigned long long>(a.matched), millis(r.othersWaited));
    out << line;
    for (const auto& d : r.doing) {
      std::snprintf(line, sizeof line, "    %-32.32s %-16s %10.3f ms\n", d.operation.c_str(),
                    d.category.c_str(), millis(d.time));
      out << line;
    }
  }
  if (!any) out << "  none\n";
}

}  // namespace rlscope::analysis
