#include "rlscope/gpu_metrics/gpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "rlscope/trace/galloping_search.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/run_beside.h"
#include "rlscope/trace/scan.h"
#include "rlscope/trace/schema.h"

namespace rlscope::analysis {

std::string_view kernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kCompute:
      return "compute";
    case KernelClass::kMemory:
      return "memory";
    case KernelClass::kCommunication:
      return "communication";
  }
  return "compute";
}

KernelClass classifyKernel(std::string_view name) {
  // HTA's COMM rule (hta/common/types.py), with the device-side name newer NCCL releases use.
  bool nccl = name.starts_with("nccl") || name.find("ncclKernel") != std::string_view::npos ||
              name.find("ncclDevKernel") != std::string_view::npos;
  return nccl ? KernelClass::kCommunication : KernelClass::kCompute;
}

std::string_view memcpyName(std::int64_t copyKind) {
  switch (copyKind) {
    case 1:
      return "[CUDA memcpy HtoD]";
    case 2:
      return "[CUDA memcpy DtoH]";
    case 8:
      return "[CUDA memcpy DtoD]";
    case 10:
      return "[CUDA memcpy PtoP]";
    default:
      return "[CUDA memcpy]";
  }
}

void KernelStats::add(trace::TimeNs duration) {
  min = count ? std::min(min, duration) : duration;
  max = count ? std::max(max, duration) : duration;
  ++count;
  total += duration;
  double delta = static_cast<double>(duration) - mean;
  mean += delta / static_cast<double>(count);
  m2 += delta * (static_cast<double>(duration) - mean);
}

void KernelStats::merge(const KernelStats& other) {
  if (other.count == 0) return;
  if (count == 0) {
    std::tie(count, total, min, max, mean, m2) =
        std::tie(other.count, other.total, other.min, other.max, other.mean, other.m2);
    return;
  }
  // Chan et al.'s pairwise combination of two Welford accumulators.
  double n1 = static_cast<double>(count), n2 = static_cast<double>(other.count);
  double delta = other.mean - mean;
  mean += delta * n2 / (n1 + n2);
  m2 += other.m2 + delta * delta * n1 * n2 / (n1 + n2);
  count += other.count;
  total += other.total;
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

double KernelStats::stdDev() const {
  return count < 2 ? 0.0 : std::sqrt(std::max(0.0, m2 / static_cast<double>(count - 1)));
}

trace::TimeNs& ClassTotals::operator[](KernelClass c) {
  switch (c) {
    case KernelClass::kMemory:
      return memory;
    case KernelClass::kCommunication:
      return communication;
    case KernelClass::kCompute:
      break;
  }
  return compute;
}

namespace {

using trace::TimeNs;

// --- The launch join: (pid, correlation id) -> the CUDA API call's CPU interval ----------------

struct ApiSpan {
  TimeNs start = 0;
  TimeNs end = 0;
};

// The API calls sorted by (pid, correlation id), looked up in the activities' storage order,
// where correlation ids mostly grow, so each lookup gallops from the last hit instead of hashing
// into a table of millions: 32 bytes per call, and a lookup is usually a step or two (1.85 M
// calls: 1.2-1.5 s with an unordered_map, under a third of that now).
class LaunchIndex {
 public:
  void add(std::int64_t pid, std::int64_t correlationId, ApiSpan span) {
    calls_.push_back({pid, correlationId, span, static_cast<std::uint32_t>(calls_.size())});
  }

  void reserve(std::size_t calls) { calls_.reserve(calls); }

  void append(LaunchIndex&& later) {
    for (Call c : later.calls_) add(c.pid, c.correlationId, c.span);
    later = {};
  }

  // Sorts by key; where several calls share one, the first added stays (callers add runtime
  // calls before driver calls: the runtime call is the one the application made).
  void finish() {
    auto before = [](const Call& a, const Call& b) {
      return std::tie(a.pid, a.correlationId, a.order) < std::tie(b.pid, b.correlationId, b.order);
    };
    if (!std::is_sorted(calls_.begin(), calls_.end(), before))
      std::sort(calls_.begin(), calls_.end(), before);
    calls_.erase(std::unique(calls_.begin(), calls_.end(),
                             [](const Call& a, const Call& b) {
                               return a.pid == b.pid && a.correlationId == b.correlationId;
                             }),
                 calls_.end());
    calls_.shrink_to_fit();
  }

  // `hint`: the previous answer of the caller's sequence of lookups (0 to start).
  const ApiSpan* find(std::int64_t pid, std::int64_t correlationId, std::size_t& hint) const {
    const std::pair target{pid, correlationId};
    hint = trace::gallopingPartitionPoint(calls_.size(), hint, [&](std::size_t i) {
      return std::pair{calls_[i].pid, calls_[i].correlationId} < target;
    });
    auto it = calls_.begin() + static_cast<std::ptrdiff_t>(hint);
    if (it == calls_.end() || it->pid != pid || it->correlationId != correlationId) return nullptr;
    return &it->span;
  }

 private:
  struct Call {
    std::int64_t pid = 0;
    std::int64_t correlationId = 0;
    ApiSpan span;
    std::uint32_t order = 0;  // order of add(): the first of equal keys wins
  };
  std::vector<Call> calls_;
};

// --- Per-process accumulation while the GPU tables stream by -----------------------------------

// What the join and the idle analysis keep of one activity as it streams by (32 bytes); the rest
// of the row is consumed. `lane` indexes the process's (device, stream) pairs.
struct Activity {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t correlationId = 0;
  std::uint32_t lane = 0;
  bool kernel = false;
};

// What the idle analysis keeps of an activity once joined (24 bytes).
struct JoinedActivity {
  static constexpr TimeNs kNotLaunched = std::numeric_limits<TimeNs>::min();
  TimeNs start = 0;
  TimeNs end = 0;
  TimeNs launchStart = kNotLaunched;  // CPU start of the launching API call, if one was found
  bool launched() const { return launchStart != kNotLaunched; }
};

struct Lane {
  std::int64_t deviceId = 0;
  std::int64_t streamId = 0;
  auto operator<=>(const Lane&) const = default;
};

// Launch counts and short kernels; the delays, for their statistics at the end.
struct LaunchAccumulator {
  LaunchStats stats;
  std::vector<TimeNs> delays;

  void add(TimeNs start, TimeNs end, const ApiSpan* api) {
    if (!api) {
      ++stats.withoutApiCall;
      return;
    }
    ++stats.count;
    delays.push_back(start - api->end);
    if (end - start < api->end - api->start) {
      ++stats.shortKernels;
      stats.shortKernelTime += end - start;
    }
  }

  // Takes the launches of activities that came after these.
  void append(LaunchAccumulator&& later) {
    stats.count += later.stats.count;
    stats.withoutApiCall += later.stats.withoutApiCall;
    stats.shortKernels += later.stats.shortKernels;
    stats.shortKernelTime += later.stats.shortKernelTime;
    delays.insert(delays.end(), later.delays.begin(), later.delays.end());
    later = {};
  }
};

// The launch join of a run of activities in storage order: its place in the sorted calls and its
// counts. Parts of a process's activities are joined at once, each with its own.
struct LaunchJoin {
  const LaunchIndex* launches = nullptr;
  std::int64_t pid = 0;
  bool countKernels = true;  // false where every activity is a kernel: `launch` says it all
  LaunchAccumulator launch, kernelLaunch;
  std::size_t hint = 0;

  JoinedActivity operator()(const Activity& a) {
    const ApiSpan* api = a.correlationId ? launches->find(pid, a.correlationId, hint) : nullptr;
    launch.add(a.start, a.end, api);
    if (countKernels && a.kernel) kernelLaunch.add(a.start, a.end, api);
    return {a.start, a.end, api ? api->start : JoinedActivity::kNotLaunched};
  }
};

// A kernel's names as the trace gives them: the demangled one, or the short one where that is
// empty. Resolved at the end: per row, hashing two integers, not a long name.
struct KernelNameIds {
  trace::StringId demangled = trace::kNoString, shortName = trace::kNoString;
  bool operator==(const KernelNameIds&) const = default;
};
struct KernelNameIdsHash {
  std::size_t operator()(const KernelNameIds& k) const {
    return std::hash<std::int64_t>()(k.demangled * 0x9E3779B97F4A7C15LL ^ k.shortName);
  }
};

struct ProcessAccumulator {
  std::vector<Activity> activities;
  std::uint64_t kernels = 0;  // of the activities
  std::vector<Lane> lanes;
  std::map<Lane, std::uint32_t> laneIndex;
  std::unordered_map<KernelNameIds, KernelStats, KernelNameIdsHash> kernelsByNameIds;
  std::map<std::string_view, KernelStats> memoryByName;  // memcpy kinds and memset: a handful
  LaunchAccumulator launch;                              // kernels, memcpys and memsets
  LaunchAccumulator kernelLaunch;                        // kernels only

  std::uint32_t laneOf(const Lane& lane) {
    auto [it, added] = laneIndex.emplace(lane, static_cast<std::uint32_t>(lanes.size()));
    if (added) lanes.push_back(lane);
    return it->second;
  }

  // Takes the rows of the same process read after these.
  void append(ProcessAccumulator&& later) {
    std::vector<std::uint32_t> lane(later.lanes.size());
    for (std::size_t l = 0; l < lane.size(); ++l) lane[l] = laneOf(later.lanes[l]);
    for (Activity& a : later.activities) a.lane = lane[a.lane];
    if (activities.empty())
      activities = std::move(later.activities);
    else
      activities.insert(activities.end(), later.activities.begin(), later.activities.end());
    kernels += later.kernels;
    for (const auto& [ids, stats] : later.kernelsByNameIds) kernelsByNameIds[ids].merge(stats);
    for (const auto& [name, stats] : later.memoryByName) memoryByName[name].merge(stats);
    later = {};
  }

  // Whether every activity is a kernel: then the kernel launches are the launches, and only
  // `launch` counts them.
  bool onlyKernels() const { return kernels == activities.size(); }
};

using Accumulators = std::map<std::int64_t, ProcessAccumulator>;

// --- Kernel breakdown ---------------------------------------------------------------------------

void sortLongestFirst(std::vector<KernelStats>& kernels) {
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return std::tie(b.total, a.name) < std::tie(a.total, b.name);
  });
}

// Stats keyed by name, merged where two entries share one (two name ids may read the same once
// demangled names fall back to short ones; processes share kernel names).
class KernelTable {
 public:
  void add(const KernelStats& s) {
    auto [it, added] = byName_.try_emplace(s.name, s);
    if (!added) it->second.merge(s);
  }

  std::vector<KernelStats> sorted() const {
    std::vector<KernelStats> out;
    out.reserve(byName_.size());
    for (const auto& [name, s] : byName_) out.push_back(s);
    sortLongestFirst(out);
    return out;
  }

 private:
  std::unordered_map<std::string, KernelStats> byName_;
};

std::vector<KernelStats> kernelBreakdown(trace::TraceReader& reader, const ProcessAccumulator& p) {
  KernelTable table;
  for (const auto& [ids, stats] : p.kernelsByNameIds) {
    KernelStats s = stats;
    s.name = reader.string(ids.demangled);
    if (s.name.empty()) s.name = reader.string(ids.shortName);
    if (s.name.empty()) s.name = kUnnamedKernel;
    s.kernelClass = classifyKernel(s.name);
    table.add(s);
  }
  for (const auto& [name, stats] : p.memoryByName) {
    KernelStats s = stats;
    s.name = name;
    s.kernelClass = KernelClass::kMemory;
    table.add(s);
  }
  return table.sorted();
}

ClassTotals classTotals(const std::vector<KernelStats>& kernels) {
  ClassTotals totals;
  for (const auto& k : kernels) totals[k.kernelClass] += k.total;
  return totals;
}

// --- Idle time ----------------------------------------------------------------------------------

// The union of intervals visited in start order: its span, its covered length, and the gap each
// new interval opens after everything before it.
class UnionWalk {
 public:
  // Returns the gap before [start, end), 0 when it overlaps or touches what came before.
  TimeNs add(TimeNs start, TimeNs end) {
    if (!started_) {
      started_ = true;
      first_ = start;
      end_ = end;
      busy_ = end - start;
      return 0;
    }
    TimeNs gap = std::max<TimeNs>(0, start - end_);
    busy_ += std::max<TimeNs>(0, end - std::max(start, end_));
    end_ = std::max(end_, end);
    return gap;
  }
  TimeNs end() const { return end_; }
  TimeNs span() const { return started_ ? end_ - first_ : 0; }
  TimeNs busy() const { return busy_; }

 private:
  bool started_ = false;
  TimeNs first_ = 0, end_ = 0, busy_ = 0;
};

// HTA's rule for the gap before activity `a` on its stream, which was last busy until `prevEnd`.
void classifyGap(const JoinedActivity& a, TimeNs prevEnd, TimeNs gap,
                 const GpuMetricsOptions& options, StreamIdle& s) {
  if (a.launched() && a.launchStart > prevEnd)
    s.hostWait += gap;  // the CPU had not yet asked for it: the GPU starved
  else if (gap < options.kernelWaitThreshold)
    s.kernelWait += gap;  // back-to-back launch overhead
  else
    s.other += gap;  // synchronization, events, waits on other streams
}

// A process's activities joined to their launches and grouped by lane (device and stream), each
// lane's in start order. Rows come in storage order, where a stream's work is nearly always in
// start order already: a counting sort by lane keeps that order and only a lane that is not sorted
// gets sorted, instead of sorting every row (a third of the GPU metrics' time on kernel-heavy
// traces). The join happens as the rows are placed: one pass over them, in two halves at once on
// big processes (each half's rows land after the previous half's in every lane, so the order is
// one pass's; each half joins with its own LaunchJoin, appended in order after).
class LaneRuns {
 public:
  // Takes the activities: they are freed once grouped, not kept beside their copy. `join`'s
  // counts are those of every activity afterwards.
  LaneRuns(std::vector<Activity> activities, std::size_t laneCount, LaunchJoin& join,
           std::size_t inHalvesAbove) {
    const std::size_t n = activities.size();
    const std::size_t halves = n > inHalvesAbove ? 2 : 1;
    const std::span<const Activity> all(activities);
    std::vector<std::span<const Activity>> half;
    for (std::size_t h = 0; h < halves; ++h)
      half.push_back(all.subspan(n * h / halves, n * (h + 1) / halves - n * h / halves));
    // next[h][l]: where half h places its next activity of lane l.
    std::vector<std::vector<std::size_t>> next(halves, std::vector<std::size_t>(laneCount, 0));
    for (std::size_t h = 0; h < halves; ++h)
      for (const Activity& a : half[h]) ++next[h][a.lane];
    begin_.assign(laneCount + 1, 0);
    for (std::size_t l = 0; l < laneCount; ++l) {
      std::size_t at = begin_[l];
      for (std::size_t h = 0; h < halves; ++h) {
        std::size_t count = next[h][l];
        next[h][l] = at;
        at += count;
      }
      begin_[l + 1] = at;
    }
    sorted_.resize(n);
    std::vector<LaunchJoin> joins(halves, join);
    auto place = [&](std::size_t h) {
      auto& at = next[h];
      for (const Activity& a : half[h]) sorted_[at[a.lane]++] = joins[h](a);
    };
    std::vector<std::future<void>> besides;
    for (std::size_t h = 1; h < halves; ++h)
      besides.push_back(trace::runBeside([&, h] { place(h); }));
    place(0);
    for (auto& f : besides) f.get();
    join = std::move(joins[0]);
    for (std::size_t h = 1; h < halves; ++h) {
      join.launch.append(std::move(joins[h].launch));
      join.kernelLaunch.append(std::move(joins[h].kernelLaunch));
    }
    activities = std::vector<Activity>();  // released now, before the lanes are sorted
    auto byStart = [](const JoinedActivity& a, const JoinedActivity& b) {
      return a.start < b.start;
    };
    for (std::uint32_t l = 0; l < lanes(); ++l) {
      auto run = this->run(l);
      if (!std::is_sorted(run.begin(), run.end(), byStart))
        std::stable_sort(run.begin(), run.end(), byStart);
    }
  }

  std::uint32_t lanes() const { return static_cast<std::uint32_t>(begin_.size() - 1); }
  std::span<JoinedActivity> run(std::uint32_t lane) {
    return {sorted_.data() + begin_[lane], sorted_.data() + begin_[lane + 1]};
  }

 private:
  std::vector<std::size_t> begin_;  // lane l's activities are [begin_[l], begin_[l + 1])
  std::vector<JoinedActivity> sorted_;
};

StreamIdle streamIdle(std::int64_t pid, const Lane& lane, std::span<const JoinedActivity> run,
                      const GpuMetricsOptions& options) {
  StreamIdle s{.pid = pid, .deviceId = lane.deviceId, .streamId = lane.streamId};
  UnionWalk walk;
  for (const JoinedActivity& a : run) {
    TimeNs prevEnd = walk.end();
    TimeNs gap = walk.add(a.start, a.end);
    if (gap > 0) classifyGap(a, prevEnd, gap, options, s);
    ++s.activities;
  }
  s.span = walk.span();
  s.busy = walk.busy();
  s.idle = s.span - s.busy;
  return s;
}

// The union of a device's lanes, walked in start order by merging the lanes' sorted runs.
DeviceIdle deviceIdle(std::int64_t pid, std::int64_t deviceId,
                      const std::vector<std::span<const JoinedActivity>>& runs) {
  using Head = std::pair<TimeNs, std::size_t>;  // (start of the run's next activity, run)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<std::size_t> at(runs.size(), 0);
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!runs[r].empty()) heads.push({runs[r][0].start, r});
  UnionWalk walk;
  while (!heads.empty()) {
    std::size_t r = heads.top().second;
    heads.pop();
    // Take this run's activities while they start before every other run's next one.
    TimeNs limit = heads.empty() ? std::numeric_limits<TimeNs>::max() : heads.top().first;
    const auto& run = runs[r];
    std::size_t i = at[r];
    do {
      walk.add(run[i].start, run[i].end);
      ++i;
    } while (i < run.size() && run[i].start <= limit);
    at[r] = i;
    if (i < run.size()) heads.push({run[i].start, r});
  }
  return {pid, deviceId, walk.span(), walk.busy(), walk.span() - walk.busy()};
}

void addUp(IdleBreakdown& total, const IdleBreakdown& part) {
  total.span += part.span;
  total.busy += part.busy;
  total.idle += part.idle;
  total.hostWait += part.hostWait;
  total.kernelWait += part.kernelWait;
  total.other += part.other;
  total.devices.insert(total.devices.end(), part.devices.begin(), part.devices.end());
  total.streams.insert(total.streams.end(), part.streams.begin(), part.streams.end());
}

// Joins the process's activities to their launches (counting them in p.launch and
// p.kernelLaunch) and consumes them: p.activities is empty afterwards.
IdleBreakdown idleBreakdown(std::int64_t pid, ProcessAccumulator& p, const LaunchIndex& launches,
                            const GpuMetricsOptions& options) {
  IdleBreakdown idle;
  LaunchJoin join{.launches = &launches, .pid = pid, .countKernels = !p.onlyKernels()};
  LaneRuns byLane(std::exchange(p.activities, {}), p.lanes.size(), join, options.joinInHalvesAbove);
  p.launch = std::move(join.launch);
  p.kernelLaunch = std::move(join.kernelLaunch);
  // Lanes by device and stream: the order the streams are listed in, and each device's runs.
  std::vector<std::uint32_t> order(byLane.lanes());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(p.lanes[a].deviceId, p.lanes[a].streamId) <
           std::tie(p.lanes[b].deviceId, p.lanes[b].streamId);
  });
  std::vector<std::span<const JoinedActivity>> deviceRuns;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Lane& lane = p.lanes[order[i]];
    auto run = byLane.run(order[i]);
    idle.streams.push_back(streamIdle(pid, lane, run, options));
    deviceRuns.emplace_back(run);
    if (i + 1 == order.size() || p.lanes[order[i + 1]].deviceId != lane.deviceId) {
      idle.devices.push_back(deviceIdle(pid, lane.deviceId, deviceRuns));
      deviceRuns.clear();
    }
  }
  for (const auto& d : idle.devices) {
    idle.span += d.span;
    idle.busy += d.busy;
    idle.idle += d.idle;
  }
  for (const auto& s : idle.streams) {
    idle.hostWait += s.hostWait;
    idle.kernelWait += s.kernelWait;
    idle.other += s.other;
  }
  return idle;
}

// --- Launch delays ------------------------------------------------------------------------------

// The q-quantile with linear interpolation between closest ranks (numpy's and pandas' default),
// by selection rather than a full sort. Reorders `v`. Selects among v[from...] only: the caller
// knows that nothing before `from` is above anything after it (a previous selection there).
double quantile(std::vector<TimeNs>& v, double q, std::size_t from = 0) {
  double position = q * static_cast<double>(v.size() - 1);
  auto lo = std::max(static_cast<std::size_t>(position), from);
  auto at = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), at, v.end());
  double low = static_cast<double>(*at);
  double fraction = position - static_cast<double>(lo);
  if (fraction == 0 || lo + 1 >= v.size()) return low;
  double high = static_cast<double>(*std::min_element(at + 1, v.end()));
  return low + fraction * (high - low);
}

void summarizeDelays(std::vector<TimeNs>& delays, LaunchStats& s) {
  if (delays.empty()) return;
  auto [lo, hi] = std::minmax_element(delays.begin(), delays.end());
  s.delayMin = *lo;
  s.delayMax = *hi;
  long double sum = 0;
  s.negativeDelays = 0;
  for (TimeNs d : delays) {
    sum += static_cast<long double>(d);
    if (d < 0) ++s.negativeDelays;
  }
  s.delayMean = static_cast<double>(sum / static_cast<long double>(delays.size()));
  s.delayP50 = quantile(delays, 0.50);
  // The median's selection left everything from its position on at least as large.
  s.delayP95 = quantile(delays, 0.95, static_cast<std::size_t>(0.50 * double(delays.size() - 1)));
}

// Copies the delay statistics of `from`, whose delays are the same.
void copyDelays(const LaunchStats& from, LaunchStats& to) {
  to.negativeDelays = from.negativeDelays;
  to.delayMean = from.delayMean;
  to.delayP50 = from.delayP50;
  to.delayP95 = from.delayP95;
  to.delayMin = from.delayMin;
  to.delayMax = from.delayMax;
}

void addUpCounts(LaunchStats& total, const LaunchStats& part) {
  total.count += part.count;
  total.withoutApiCall += part.withoutApiCall;
  total.shortKernels += part.shortKernels;
  total.shortKernelTime += part.shortKernelTime;
}

// A process's launch statistics, its counts added to the whole trace's and, where there are other
// processes, its delays pooled there. `same`: statistics of the same delays, summarized already
// (kernel launches as many as the launches).
LaunchStats finishLaunches(LaunchAccumulator& process, LaunchAccumulator& total, bool pool,
                           const LaunchStats* same = nullptr) {
  LaunchStats s = process.stats;
  if (same)
    copyDelays(*same, s);
  else
    summarizeDelays(process.delays, s);
  addUpCounts(total.stats, s);
  if (pool) total.delays.insert(total.delays.end(), process.delays.begin(), process.delays.end());
  return s;
}

bool sameDelays(const LaunchAccumulator& a, const LaunchAccumulator& b) {
  return a.stats.count == b.stats.count && a.stats.withoutApiCall == b.stats.withoutApiCall;
}

}  // namespace

// --- The builder --------------------------------------------------------------------------------

// The processes' rows, looked up only when the process changes: rows of one process come in long
// runs.
struct GpuMetricsBuilder::Rows {
  LaunchIndex launches;
  Accumulators processes;
  std::int64_t lastPid = 0;
  ProcessAccumulator* last = nullptr;

  // What summarize() leaves for finish(): everything but the kernels' names, and the kernels of
  // each of `metrics.processes`.
  struct Summary {
    GpuMetrics metrics;
    std::vector<ProcessAccumulator> kernels;
  };
  std::optional<Summary> summary;

  ProcessAccumulator& process(std::int64_t pid) {
    if (!last || pid != lastPid) {
      auto [it, added] = processes.try_emplace(pid);
      // Most traces' GPU rows are one process's: room for them all, never grown by copying
      // (capacity the rows do not fill is address space, not memory).
      if (added && processes.size() == 1) it->second.activities.reserve(firstProcessRows);
      last = &it->second;
      lastPid = pid;
    }
    return *last;
  }

  std::size_t firstProcessRows = 0;
};

std::string_view GpuMetricsBuilder::tableName(Table table) {
  switch (table) {
    case Table::kMemcpy:
      return trace::table::kMemcpy;
    case Table::kMemset:
      return trace::table::kMemset;
    case Table::kKernel:
      break;
  }
  return trace::table::kKernel;
}

std::string GpuMetricsBuilder::columns(Table table) {
  std::string columns = "start, end, globalPid, correlationId, deviceId, streamId";
  if (table == Table::kKernel) columns += ", demangledName, shortName";
  if (table == Table::kMemcpy) columns += ", copyKind";
  return columns;
}

GpuMetricsBuilder::GpuMetricsBuilder(GpuMetricsOptions options)
    : options_(options), rows_(std::make_unique<Rows>()) {}
GpuMetricsBuilder::~GpuMetricsBuilder() = default;
GpuMetricsBuilder::GpuMetricsBuilder(GpuMetricsBuilder&&) noexcept = default;
GpuMetricsBuilder& GpuMetricsBuilder::operator=(GpuMetricsBuilder&&) noexcept = default;

void GpuMetricsBuilder::reserve(std::size_t apiCalls, std::size_t gpuRows) {
  rows_->launches.reserve(apiCalls);
  rows_->firstProcessRows = gpuRows;
}

void GpuMetricsBuilder::addApiCall(std::int64_t globalTid, std::int64_t correlationId, TimeNs start,
                                   TimeNs end) {
  if (correlationId == 0 || end < start) return;
  rows_->launches.add(trace::pidOfGlobalId(globalTid), correlationId, {start, end});
}

void GpuMetricsBuilder::addRow(Table table, trace::Statement& row) {
  TimeNs start = row.columnInt(0), end = row.columnInt(1);
  if (end < start) return;  // a damaged row: nothing to count
  ProcessAccumulator& p = rows_->process(trace::pidOfGlobalId(row.columnInt(2)));
  const bool kernel = table == Table::kKernel;
  KernelStats& stats =
      kernel ? p.kernelsByNameIds[{row.columnInt(6), row.columnInt(7)}]
             : p.memoryByName[table == Table::kMemcpy ? memcpyName(row.columnInt(6)) : kMemsetName];
  stats.add(end - start);
  p.kernels += kernel;
  p.activities.push_back({.start = start,
                          .end = end,
                          .correlationId = row.columnInt(3),
                          .lane = p.laneOf({row.columnInt(4), row.columnInt(5)}),
                          .kernel = kernel});
}

void GpuMetricsBuilder::append(GpuMetricsBuilder&& later) {
  rows_->launches.append(std::move(later.rows_->launches));
  for (auto& [pid, p] : later.rows_->processes) rows_->processes[pid].append(std::move(p));
  later.rows_ = std::make_unique<Rows>();
  rows_->last = nullptr;
}

void GpuMetricsBuilder::summarize() {
  if (rows_->summary) return;
  Accumulators byProcess = std::move(rows_->processes);
  LaunchIndex launches = std::move(rows_->launches);
  rows_ = std::make_unique<Rows>();
  launches.finish();

  Rows::Summary& out = rows_->summary.emplace();
  LaunchAccumulator allLaunches, allKernelLaunches;
  // With one process, the whole trace's delays are its own: not copied and selected again.
  const bool pool = byProcess.size() > 1;
  for (auto& [pid, p] : byProcess) {
    ProcessGpuMetrics m{.pid = pid};
    GpuSummary& s = m.metrics;
    s.activities = p.activities.size();
    const bool onlyKernels = p.onlyKernels();
    s.idle = idleBreakdown(pid, p, launches, options_);
    s.launch = finishLaunches(p.launch, allLaunches, pool);
    // Kernel launches are a subset of launches: as many means the same. Where every activity is
    // a kernel, the join counted them once, in p.launch.
    LaunchAccumulator& kernels = onlyKernels ? p.launch : p.kernelLaunch;
    s.kernelLaunch = finishLaunches(kernels, allKernelLaunches, pool,
                                    sameDelays(kernels, p.launch) ? &s.launch : nullptr);
    out.metrics.total.activities += s.activities;
    addUp(out.metrics.total.idle, s.idle);
    out.metrics.processes.push_back(std::move(m));
    // This process's rows released before the next one's work; its kernels named by finish().
    out.kernels.push_back({.kernelsByNameIds = std::move(p.kernelsByNameIds),
                           .memoryByName = std::move(p.memoryByName)});
    p = ProcessAccumulator{};
  }
  GpuSummary& total = out.metrics.total;
  total.launch = allLaunches.stats;
  total.kernelLaunch = allKernelLaunches.stats;
  if (pool) {
    summarizeDelays(allLaunches.delays, total.launch);
    summarizeDelays(allKernelLaunches.delays, total.kernelLaunch);
  } else if (!out.metrics.processes.empty()) {
    copyDelays(out.metrics.processes.front().metrics.launch, total.launch);
    copyDelays(out.metrics.processes.front().metrics.kernelLaunch, total.kernelLaunch);
  }
}

GpuMetrics GpuMetricsBuilder::finish(trace::TraceReader& reader) {
  summarize();
  Rows::Summary summary = std::move(*rows_->summary);
  rows_ = std::make_unique<Rows>();
  GpuMetrics out = std::move(summary.metrics);
  KernelTable allKernels;
  for (std::size_t i = 0; i < out.processes.size(); ++i) {
    GpuSummary& s = out.processes[i].metrics;
    s.kernels = kernelBreakdown(reader, summary.kernels[i]);
    s.classes = classTotals(s.kernels);
    for (const auto& k : s.kernels) allKernels.add(k);
  }
  out.total.kernels = allKernels.sorted();
  out.total.classes = classTotals(out.total.kernels);
  return out;
}

GpuMetrics computeGpuMetrics(trace::TraceReader& reader, const GpuMetricsOptions& options) {
  GpuMetricsBuilder builder(options);
  for (auto table : {trace::table::kRuntime, trace::table::kDriver})
    trace::scan(
        reader.db(), table, "globalTid, correlationId, start, end", [&](trace::Statement& st) {
          builder.addApiCall(st.columnInt(0), st.columnInt(1), st.columnInt(2), st.columnInt(3));
        });
  for (auto table : GpuMetricsBuilder::kTables)
    trace::scan(reader.db(), GpuMetricsBuilder::tableName(table), GpuMetricsBuilder::columns(table),
                [&](trace::Statement& st) { builder.addRow(table, st); });
  return builder.finish(reader);
}

}  // namespace rlscope::analysis
