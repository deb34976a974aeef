#include "gpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/records.h"
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

struct LaunchKey {
  std::int64_t pid = 0;
  std::int64_t correlationId = 0;
  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  std::size_t operator()(const LaunchKey& k) const {
    auto mixed = static_cast<std::uint64_t>(k.correlationId) * 0x9E3779B97F4A7C15ull ^
                 static_cast<std::uint64_t>(k.pid);
    return std::hash<std::uint64_t>{}(mixed);
  }
};

struct ApiSpan {
  TimeNs start = 0;
  TimeNs end = 0;
};

using LaunchMap = std::unordered_map<LaunchKey, ApiSpan, LaunchKeyHash>;

LaunchMap readLaunches(trace::TraceReader& reader) {
  LaunchMap launches;
  launches.reserve(static_cast<std::size_t>(reader.rowCount(trace::table::kRuntime) +
                                            reader.rowCount(trace::table::kDriver)));
  trace::EventFilter all;
  all.storageOrder = true;
  // Runtime first: should a driver call carry the same id, the runtime call is the one the
  // application made (emplace keeps the first).
  for (auto kind : {trace::ApiKind::kRuntime, trace::ApiKind::kDriver})
    reader.forEachApiCall(kind, all, [&](const trace::ApiCallRecord& r) {
      if (r.correlationId == 0 || r.end < r.start) return;
      launches.emplace(LaunchKey{trace::pidOfGlobalId(r.globalTid), r.correlationId},
                       ApiSpan{r.start, r.end});
    });
  return launches;
}

// --- Per-process accumulation while the GPU tables stream by -----------------------------------

// What the idle analysis keeps of one activity (32 bytes): the rest of the row is consumed as it
// streams by. `lane` indexes the process's (device, stream) pairs.
struct Activity {
  TimeNs start = 0;
  TimeNs end = 0;
  TimeNs launchStart = 0;  // CPU start of the launching API call, when `launched`
  std::uint32_t lane = 0;
  bool launched = false;
};

struct Lane {
  std::int64_t deviceId = 0;
  std::int64_t streamId = 0;
};

// Launch counts and short kernels as rows stream by; the delays, for their statistics at the end.
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
};

enum class ActivityKind { kKernel, kMemory };

struct ProcessAccumulator {
  std::vector<Activity> activities;
  std::vector<Lane> lanes;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> laneIndex;
  std::unordered_map<trace::StringId, KernelStats> kernelsByNameId;
  std::map<std::string_view, KernelStats> memoryByName;  // memcpy kinds and memset: a handful
  LaunchAccumulator launch;                              // kernels, memcpys and memsets
  LaunchAccumulator kernelLaunch;                        // kernels only

  std::uint32_t laneOf(std::int64_t deviceId, std::int64_t streamId) {
    auto [it, added] =
        laneIndex.emplace(std::pair{deviceId, streamId}, static_cast<std::uint32_t>(lanes.size()));
    if (added) lanes.push_back({deviceId, streamId});
    return it->second;
  }

  // One kernel, memcpy or memset: its launch join and its compact row.
  void addActivity(const LaunchMap& launches, ActivityKind kind, std::int64_t pid, TimeNs start,
                   TimeNs end, std::int64_t deviceId, std::int64_t streamId,
                   std::int64_t correlationId) {
    auto it = correlationId ? launches.find({pid, correlationId}) : launches.end();
    const ApiSpan* api = it == launches.end() ? nullptr : &it->second;
    launch.add(start, end, api);
    if (kind == ActivityKind::kKernel) kernelLaunch.add(start, end, api);
    activities.push_back(
        {start, end, api ? api->start : 0, laneOf(deviceId, streamId), api != nullptr});
  }
};

using Accumulators = std::map<std::int64_t, ProcessAccumulator>;

void readActivities(trace::TraceReader& reader, const LaunchMap& launches, Accumulators& out) {
  trace::EventFilter all;
  all.storageOrder = true;
  reader.forEachKernel(all, [&](const trace::KernelRecord& r) {
    if (r.end < r.start) return;  // a damaged row: nothing to count
    std::int64_t pid = trace::pidOfGlobalId(r.globalPid);
    auto& p = out[pid];
    // Keyed by the string id: hashing an integer per row, not a long demangled name.
    trace::StringId nameId = reader.string(r.demangledName).empty() ? r.shortName : r.demangledName;
    p.kernelsByNameId[nameId].add(r.end - r.start);
    p.addActivity(launches, ActivityKind::kKernel, pid, r.start, r.end, r.deviceId, r.streamId,
                  r.correlationId);
  });
  reader.forEachMemcpy(all, [&](const trace::MemcpyRecord& r) {
    if (r.end < r.start) return;
    std::int64_t pid = trace::pidOfGlobalId(r.globalPid);
    auto& p = out[pid];
    p.memoryByName[memcpyName(r.copyKind)].add(r.end - r.start);
    p.addActivity(launches, ActivityKind::kMemory, pid, r.start, r.end, r.deviceId, r.streamId,
                  r.correlationId);
  });
  reader.forEachMemset(all, [&](const trace::MemsetRecord& r) {
    if (r.end < r.start) return;
    std::int64_t pid = trace::pidOfGlobalId(r.globalPid);
    auto& p = out[pid];
    p.memoryByName[kMemsetName].add(r.end - r.start);
    p.addActivity(launches, ActivityKind::kMemory, pid, r.start, r.end, r.deviceId, r.streamId,
                  r.correlationId);
  });
}

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
  for (const auto& [nameId, stats] : p.kernelsByNameId) {
    KernelStats s = stats;
    s.name = reader.string(nameId);
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
void classifyGap(const Activity& a, TimeNs prevEnd, TimeNs gap, const GpuMetricsOptions& options,
                 StreamIdle& s) {
  if (a.launched && a.launchStart > prevEnd)
    s.hostWait += gap;  // the CPU had not yet asked for it: the GPU starved
  else if (gap < options.kernelWaitThreshold)
    s.kernelWait += gap;  // back-to-back launch overhead
  else
    s.other += gap;  // synchronization, events, waits on other streams
}

std::vector<StreamIdle> streamIdle(std::int64_t pid, const ProcessAccumulator& p,
                                   std::vector<Activity>& acts, const GpuMetricsOptions& options) {
  std::sort(acts.begin(), acts.end(), [](const auto& a, const auto& b) {
    return std::tie(a.lane, a.start) < std::tie(b.lane, b.start);
  });
  std::vector<StreamIdle> out;
  for (std::size_t i = 0; i < acts.size();) {
    std::uint32_t lane = acts[i].lane;
    StreamIdle s{
        .pid = pid, .deviceId = p.lanes[lane].deviceId, .streamId = p.lanes[lane].streamId};
    UnionWalk walk;
    for (; i < acts.size() && acts[i].lane == lane; ++i) {
      TimeNs prevEnd = walk.end();
      TimeNs gap = walk.add(acts[i].start, acts[i].end);
      if (gap > 0) classifyGap(acts[i], prevEnd, gap, options, s);
      ++s.activities;
    }
    s.span = walk.span();
    s.busy = walk.busy();
    s.idle = s.span - s.busy;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.deviceId, a.streamId) < std::tie(b.deviceId, b.streamId);
  });
  return out;
}

std::vector<DeviceIdle> deviceIdle(std::int64_t pid, const ProcessAccumulator& p,
                                   std::vector<Activity>& acts) {
  auto device = [&](const Activity& a) { return p.lanes[a.lane].deviceId; };
  std::sort(acts.begin(), acts.end(), [&](const auto& a, const auto& b) {
    return std::pair(device(a), a.start) < std::pair(device(b), b.start);
  });
  std::vector<DeviceIdle> out;
  for (std::size_t i = 0; i < acts.size();) {
    std::int64_t id = device(acts[i]);
    UnionWalk walk;
    for (; i < acts.size() && device(acts[i]) == id; ++i) walk.add(acts[i].start, acts[i].end);
    out.push_back({pid, id, walk.span(), walk.busy(), walk.span() - walk.busy()});
  }
  return out;
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

IdleBreakdown idleBreakdown(std::int64_t pid, ProcessAccumulator& p,
                            const GpuMetricsOptions& options) {
  IdleBreakdown idle;
  idle.streams = streamIdle(pid, p, p.activities, options);
  idle.devices = deviceIdle(pid, p, p.activities);
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
// by selection rather than a full sort. Reorders `v`.
double quantile(std::vector<TimeNs>& v, double q) {
  double position = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(position);
  auto at = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin(), at, v.end());
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
  s.delayP95 = quantile(delays, 0.95);
}

void addUpCounts(LaunchStats& total, const LaunchStats& part) {
  total.count += part.count;
  total.withoutApiCall += part.withoutApiCall;
  total.shortKernels += part.shortKernels;
  total.shortKernelTime += part.shortKernelTime;
}

// A process's launch statistics, its counts added to the whole trace's and its delays pooled there.
LaunchStats finish(LaunchAccumulator& process, LaunchAccumulator& total) {
  LaunchStats s = process.stats;
  summarizeDelays(process.delays, s);
  addUpCounts(total.stats, s);
  total.delays.insert(total.delays.end(), process.delays.begin(), process.delays.end());
  return s;
}

}  // namespace

GpuMetrics computeGpuMetrics(trace::TraceReader& reader, const GpuMetricsOptions& options) {
  Accumulators byProcess;
  {
    LaunchMap launches = readLaunches(reader);
    readActivities(reader, launches, byProcess);
  }  // the join is done: free the API calls before the per-process work

  GpuMetrics out;
  KernelTable allKernels;
  LaunchAccumulator allLaunches, allKernelLaunches;
  for (auto& [pid, p] : byProcess) {
    ProcessGpuMetrics m{.pid = pid};
    GpuSummary& s = m.metrics;
    s.activities = p.activities.size();
    s.kernels = kernelBreakdown(reader, p);
    s.classes = classTotals(s.kernels);
    s.idle = idleBreakdown(pid, p, options);
    s.launch = finish(p.launch, allLaunches);
    s.kernelLaunch = finish(p.kernelLaunch, allKernelLaunches);

    out.total.activities += s.activities;
    for (const auto& k : s.kernels) allKernels.add(k);
    addUp(out.total.idle, s.idle);
    p = ProcessAccumulator{};  // release this process's rows before the next one's work
    out.processes.push_back(std::move(m));
  }
  out.total.kernels = allKernels.sorted();
  out.total.classes = classTotals(out.total.kernels);
  out.total.launch = allLaunches.stats;
  summarizeDelays(allLaunches.delays, out.total.launch);
  out.total.kernelLaunch = allKernelLaunches.stats;
  summarizeDelays(allKernelLaunches.delays, out.total.kernelLaunch);
  return out;
}

}  // namespace rlscope::analysis
