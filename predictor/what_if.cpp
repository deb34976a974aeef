#include "rlscope/predictor/what_if.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/predictor/replay.h"
#include "rlscope/trace/schema.h"

namespace rlscope::predictor {
namespace {

using analysis::Breakdown;
using analysis::OperationBreakdown;

inline constexpr std::int64_t kCopyDeviceToDevice = 8;  // ENUM_CUDA_MEMCPY_OPER

// A kernel launch's identity for the predictor: a prediction is proportional to the origin
// time, so launches alike in all of this share one factor.
struct LaunchKey {
  std::int64_t device = 0;
  trace::StringId name = trace::kNoString;
  std::int64_t blocks = 0;
  KernelResources r;
  bool operator==(const LaunchKey& o) const {
    return device == o.device && name == o.name && blocks == o.blocks &&
           r.blockSize == o.r.blockSize && r.registersPerThread == o.r.registersPerThread &&
           r.staticSharedMemory == o.r.staticSharedMemory &&
           r.dynamicSharedMemory == o.r.dynamicSharedMemory;
  }
};
struct LaunchKeyHash {
  std::size_t operator()(const LaunchKey& k) const {
    std::size_t h = std::hash<std::int64_t>()(k.blocks);
    for (std::int64_t v :
         {k.device, static_cast<std::int64_t>(k.name), std::int64_t{k.r.blockSize},
          std::int64_t{k.r.registersPerThread}, std::int64_t{k.r.staticSharedMemory},
          std::int64_t{k.r.dynamicSharedMemory}})
      h = h * 1000003u ^ std::hash<std::int64_t>()(v);
    return h;
  }
};

struct Factor {
  double factor = 1;            // predicted / origin
  KernelPrediction prediction;  // of a 1 ns launch: the method, gamma, occupancy and waves
};

// The origin GPU of each device of the trace, and a predictor per device.
class DevicePredictors {
 public:
  DevicePredictors(trace::TraceReader& reader, const GpuDatabase& db, const GpuSpec& target,
                   const PredictOptions& options, RunPrediction& out) {
    // Its kernel models, wave scaling and GPU database are NVIDIA's: an AMD run's kernels (HIP,
    // 64-wide wavefronts, compute units) would be predicted as if they were CUDA kernels.
    if (auto vendor = reader.metaValue(trace::meta::kGpuVendor); vendor && *vendor != "NVIDIA")
      throw std::runtime_error(
          "cannot predict: the predictor covers NVIDIA GPUs only, and this "
          "trace ran on " +
          *vendor + " GPUs");
    if (options.origin) {
      fallback_ = std::make_unique<KernelPredictor>(*options.origin, target);
      out.origin = options.origin->name;
      out.originFrom = "--origin";
      return;
    }
    auto gpus = reader.gpus();
    if (gpus.empty())
      throw std::runtime_error(
          "cannot predict: the trace records no GPU properties, so the GPU it ran on is unknown "
          "(give it with --origin NAME)");
    std::vector<std::string> names;
    for (const auto& gpu : gpus) {
      const GpuSpec& spec = matchTraceGpu(db, gpu);
      byDevice_.emplace(gpu.id, std::make_unique<KernelPredictor>(spec, target));
      if (std::find(names.begin(), names.end(), spec.name) == names.end())
        names.push_back(spec.name);
    }
    // A device the properties leave out ran on the trace's one GPU model, if it has only one.
    if (names.size() == 1) fallback_ = std::make_unique<KernelPredictor>(db.get(names[0]), target);
    for (const auto& n : names) out.origin += (out.origin.empty() ? "" : ", ") + n;
    out.originFrom = "trace";
  }

  const KernelPredictor& of(std::int64_t device) const {
    if (auto it = byDevice_.find(device); it != byDevice_.end()) return *it->second;
    if (fallback_) return *fallback_;
    throw std::runtime_error("cannot predict: GPU activity on device " + std::to_string(device) +
                             ", whose properties the trace does not record (give --origin NAME)");
  }

 private:
  std::map<std::int64_t, std::unique_ptr<KernelPredictor>> byDevice_;
  std::unique_ptr<KernelPredictor> fallback_;
};

std::int64_t product(std::int64_t a, std::int64_t b, std::int64_t c) {
  return std::max<std::int64_t>(a, 1) * std::max<std::int64_t>(b, 1) * std::max<std::int64_t>(c, 1);
}

int clampInt(std::int64_t v) {
  return static_cast<int>(std::clamp<std::int64_t>(v, 0, 1 << 30));
}

// Every kernel, copy and memset of a trace predicted, one at a time: each one's predicted
// duration by run correlation id (for the breakdown to add up per operation), and the kernel
// groups and GPU totals of the prediction.
class ActivityPredictions {
 public:
  ActivityPredictions(trace::TraceReader& reader, const DevicePredictors& predictors,
                      RunPrediction& out)
      : reader_(reader), predictors_(predictors), out_(out) {}

  void addKernel(const trace::KernelRecord& r) {
    trace::StringId nameId = r.demangledName != trace::kNoString ? r.demangledName : r.shortName;
    const Factor& f = factorOf(r, nameId);
    double origin = static_cast<double>(r.end - r.start);
    double predicted = origin * f.factor;
    record({r.globalPid, r.deviceId, r.streamId, r.correlationId, r.start, r.end, predicted,
            expectedError(f.prediction)});
    addToGroup(nameId, origin, predicted, f.prediction);
    ++out_.kernelLaunches;
  }

  // Copies within a GPU and memsets stream through DRAM; copies to and from the host or another
  // GPU are set by the interconnect, which the database does not model: they keep their time.
  void addCopy(GpuActivity a, bool onDevice) {
    double origin = static_cast<double>(a.end - a.start);
    a.predictedNs = onDevice ? predictors_.of(a.device).predictDeviceCopyNs(origin) : origin;
    // A device copy scales with bandwidth, as a memory-bound kernel does; other copies are kept.
    a.expectedError = onDevice ? expectedError({.method = Method::kWaveScaledMemoryBound}) : 0;
    record(a);
  }

  // The kernel groups into the prediction, longest first, with notes.
  void finish() {
    for (auto& [id, g] : groups_) {
      out_.cannotPredict += g.cannotPredict;
      out_.kernels.push_back(std::move(g));
    }
    std::sort(out_.kernels.begin(), out_.kernels.end(),
              [](const auto& a, const auto& b) { return a.originNs > b.originNs; });
    if (uncorrelated_)
      out_.notes.push_back(std::to_string(uncorrelated_) +
                           " GPU activities have no correlation id: operations count them at "
                           "their origin time (the run's GPU totals include their prediction)");
    if (out_.cannotPredict)
      out_.notes.push_back(std::to_string(out_.cannotPredict) +
                           " kernel launches cannot be predicted (see the kernels marked so) and "
                           "keep their origin time");
  }

  // Predicted durations by run correlation id, for the breakdown to add up per operation.
  std::unordered_map<std::int64_t, double>& byCorrelation() { return byCorrelation_; }
  std::vector<GpuActivity>& activities() { return activities_; }

 private:
  // Launches alike share one prediction (it is proportional to the origin time).
  const Factor& factorOf(const trace::KernelRecord& r, trace::StringId nameId) {
    LaunchKey key{r.deviceId, nameId, product(r.gridX, r.gridY, r.gridZ), {}};
    key.r.blockSize = clampInt(product(r.blockX, r.blockY, r.blockZ));
    if (r.gridX == 0 || r.blockX == 0) key.blocks = key.r.blockSize = 0;  // not recorded
    key.r.registersPerThread = clampInt(r.registersPerThread);
    key.r.staticSharedMemory = clampInt(r.staticSharedMemory);
    key.r.dynamicSharedMemory = clampInt(r.dynamicSharedMemory);
    auto [f, added] = factors_.try_emplace(key);
    if (added) {
      KernelLaunch unit{key.blocks, key.r, 1.0};
      f->second.prediction = predictors_.of(r.deviceId).predict(unit, traitsOf(nameId));
      f->second.factor = f->second.prediction.timeNs;
    }
    return f->second;
  }

  const KernelTraits& traitsOf(trace::StringId nameId) {
    auto [t, added] = traits_.try_emplace(nameId);
    if (added) t->second = classifyKernel(reader_.string(nameId));
    return t->second;
  }

  // A group's method, gamma and occupancies are those of its longest launch.
  void addToGroup(trace::StringId nameId, double origin, double predicted,
                  const KernelPrediction& p) {
    auto& g = groups_[nameId];
    if (g.launches == 0) {
      g.name = std::string(reader_.string(nameId));
      if (g.name.empty()) g.name = "(unnamed kernel)";
      g.traits = traitsOf(nameId);
    }
    ++g.launches;
    g.originNs += origin;
    g.predictedNs += predicted;
    if (p.method == Method::kCannotPredict) ++g.cannotPredict;
    if (double& longest = longest_[nameId]; origin >= longest) {
      longest = origin;
      g.method = p.method;
      g.gamma = p.gamma;
      g.occupancyOrigin = p.occupancyOrigin;
      g.occupancyTarget = p.occupancyTarget;
      g.expectedError = expectedError(p);
    }
  }

  void record(const GpuActivity& a) {
    if (a.correlation)
      byCorrelation_[analysis::runCorrelation(a.globalPid, a.correlation)] = a.predictedNs;
    else
      ++uncorrelated_;
    out_.gpuOriginNs += static_cast<double>(a.end - a.start);
    out_.gpuPredictedNs += a.predictedNs;
    out_.gpuExpectedErrorNs += a.predictedNs * a.expectedError;
    activities_.push_back(a);
  }

  trace::TraceReader& reader_;
  const DevicePredictors& predictors_;
  RunPrediction& out_;
  std::unordered_map<std::int64_t, double> byCorrelation_;
  std::vector<GpuActivity> activities_;
  std::unordered_map<LaunchKey, Factor, LaunchKeyHash> factors_;
  std::unordered_map<trace::StringId, KernelTraits> traits_;
  std::unordered_map<trace::StringId, KernelGroupPrediction> groups_;
  std::unordered_map<trace::StringId, double> longest_;
  std::uint64_t uncorrelated_ = 0;
};

// A copy or memset as the replay and the totals see it, before its prediction.
template <class Record>
GpuActivity copyActivity(const Record& r) {
  return {r.globalPid, r.deviceId, r.streamId, r.correlationId, r.start, r.end};
}

void predictActivities(trace::TraceReader& reader, ActivityPredictions& predictions) {
  trace::EventFilter all;
  all.storageOrder = true;
  reader.forEachKernel(all, [&](const trace::KernelRecord& r) { predictions.addKernel(r); });
  reader.forEachMemcpy(all, [&](const trace::MemcpyRecord& r) {
    predictions.addCopy(copyActivity(r), r.copyKind == kCopyDeviceToDevice);
  });
  reader.forEachMemset(
      all, [&](const trace::MemsetRecord& r) { predictions.addCopy(copyActivity(r), true); });
  predictions.finish();
}

// One operation on the target: CPU-only and idle time stay; GPU-only time and the CPU's waits
// for the GPU scale with the GPU work that ran during it; time when the CPU was busy while the
// GPU ran becomes the longer of the two. The scale is that of the work running during the
// operation (its GPU and CPU+GPU times are wall-time quantities too), else of the work it
// launched, else the run's.
OperationPrediction predictOperation(const OperationBreakdown& o, double runScale,
                                     double gpuError) {
  OperationPrediction p;
  p.process = o.process;
  p.name = o.name;
  p.phase = o.phase;
  p.originNs = static_cast<double>(o.time);
  p.cpuNs = static_cast<double>(o.cpu);
  p.gpuNs = static_cast<double>(o.gpu);
  p.cpuGpuNs = static_cast<double>(o.cpuGpu);
  p.idleNs = std::max(0.0, p.originNs - p.cpuNs - p.gpuNs - p.cpuGpuNs);
  p.gpuWaitNs = std::min(static_cast<double>(o.gpuWait), p.cpuGpuNs);
  p.gpuScale = o.gpuDuring > 0     ? o.predictedGpuDuring / o.gpuDuring
               : o.launchedGpu > 0 ? o.predictedLaunchedGpu / static_cast<double>(o.launchedGpu)
                                   : runScale;
  double busy = p.cpuGpuNs - p.gpuWaitNs;
  p.predictedNs =
      p.cpuNs + p.idleNs + (p.gpuNs + p.gpuWaitNs) * p.gpuScale + std::max(busy, busy * p.gpuScale);
  p.expectedErrorNs = gpuError * (p.predictedNs - p.cpuNs - p.idleNs);
  return p;
}

}  // namespace

std::string RunPrediction::verdict() const {
  if (kernelLaunches == 0 && gpuOriginNs == 0)
    return "The run did no GPU work: a different GPU changes nothing.";
  double share = originNs > 0 ? 100.0 * gpuBoundNs / originNs : 0;
  double x = speedup();
  char line[512];
  // A slower target stretches even a CPU-bound run: time the CPU and GPU overlapped becomes
  // GPU-bound there. Say that before anything about CPU-boundness.
  if (x < 1 && predictedNs - originNs > 0.005 * originNs) {
    std::snprintf(line, sizeof line,
                  "On %s the run is predicted %.2fx slower: its GPU work takes %.2fx as long, "
                  "and %.1f %% of the run waits on the GPU already.",
                  target.c_str(), 1 / x, gpuOriginNs > 0 ? gpuPredictedNs / gpuOriginNs : 1.0,
                  share);
    return line;
  }
  if (cpuBound) {
    std::snprintf(line, sizeof line,
                  "CPU-bound: only %.1f %% of the run waits on the GPU, so no GPU can make it "
                  "more than %.2fx faster; speed up the CPU side instead.",
                  share, maxSpeedup());
    return line;
  }
  std::snprintf(line, sizeof line,
                "On %s the run is predicted %.2fx faster (%.1f %% of it waits on the GPU; an "
                "infinitely fast GPU would make it %.2fx faster).",
                target.c_str(), x, share, maxSpeedup());
  return line;
}

const GpuSpec& matchTraceGpu(const GpuDatabase& db, const trace::GpuInfoRecord& gpu) {
  if (const GpuSpec* byName = db.find(gpu.name)) return *byName;
  // Board names ("NVIDIA A100-PG509-200") and renamed SKUs: the same chip and SM count, and of
  // those the memory size nearest the device's.
  const GpuSpec* best = nullptr;
  double bestDistance = 0;
  for (const auto& spec : db.gpus()) {
    if (spec.ccMajor != gpu.computeMajor || spec.ccMinor != gpu.computeMinor ||
        spec.smCount != gpu.smCount)
      continue;
    double distance = std::abs(spec.memoryGB * 1e9 - static_cast<double>(gpu.totalMemory));
    if (!best || distance < bestDistance) {
      best = &spec;
      bestDistance = distance;
    }
  }
  if (best) return *best;
  throw std::runtime_error("cannot predict: the trace's GPU '" + gpu.name + "' (compute " +
                           std::to_string(gpu.computeMajor) + "." +
                           std::to_string(gpu.computeMinor) + ", " + std::to_string(gpu.smCount) +
                           " SMs) is not in the GPU database; give --origin NAME or add it "
                           "with --gpu-database FILE");
}

RunPrediction predictRun(trace::TraceReader& reader, const GpuDatabase& db, const GpuSpec& target,
                         const PredictOptions& options) {
  RunPrediction out;
  out.target = target.name;
  DevicePredictors predictors(reader, db, target, options, out);
  if (options.progress) options.progress("predicting GPU activity on " + target.name);
  ActivityPredictions activities(reader, predictors, out);
  predictActivities(reader, activities);
  double runScale = out.gpuOriginNs > 0 ? out.gpuPredictedNs / out.gpuOriginNs : 1;

  analysis::AnalyzeOptions analyze;
  analyze.predictedGpuNs = &activities.byCorrelation();
  analyze.progress = options.progress;
  Breakdown perProcess = analysis::analyzeTrace(reader, analyze);
  for (const auto& o : perProcess.operations)
    out.operations.push_back(predictOperation(o, runScale, out.gpuExpectedError()));

  // The run: its operations unioned over processes (one process: the same rows). Time no row
  // covers stays as it is.
  Breakdown run;
  bool severalProcesses = reader.processes().size() > 1;
  if (severalProcesses) {
    analyze.view = analysis::View::kRun;
    run = analysis::analyzeTrace(reader, analyze);
  }
  const Breakdown& whole = severalProcesses ? run : perProcess;
  out.originNs = static_cast<double>(whole.totalNs);
  out.operationModelNs = out.originNs;
  double operationModelErrorNs = 0;
  for (const auto& o : whole.operations) {
    OperationPrediction p = predictOperation(o, runScale, out.gpuExpectedError());
    out.operationModelNs += p.predictedNs - p.originNs;
    operationModelErrorNs += p.expectedErrorNs;
    out.gpuBoundNs += p.gpuNs + p.gpuWaitNs;
  }
  out.cpuBound = out.gpuBoundNs < kCpuBoundShare * out.originNs;

  // The run itself: the trace replayed with the predicted durations, where it has the CUDA calls
  // to replay from; else the operation model's sum.
  if (options.progress) options.progress("replaying the run");
  out.replay = replayRun(reader, std::move(activities.activities()));
  double fromReplay = out.originNs - out.replay.originNs;  // the two spans' starts differ
  out.predictedNs =
      out.replay.replayed ? fromReplay + out.replay.predictedNs : out.operationModelNs;
  out.predictedLowNs = out.replay.replayed ? fromReplay + out.replay.predictedLowNs
                                           : out.operationModelNs - operationModelErrorNs;
  out.predictedHighNs = out.replay.replayed ? fromReplay + out.replay.predictedHighNs
                                            : out.operationModelNs + operationModelErrorNs;
  if (!out.replay.replayed)
    out.notes.push_back(
        "the trace records no CUDA calls to replay: the run is the sum of its operations' "
        "predictions");
  else if (out.replay.unlaunched)
    out.notes.push_back(std::to_string(out.replay.unlaunched) +
                        " GPU activities have no recorded launching call: replayed at their "
                        "recorded start");
  return out;
}

}  // namespace rlscope::predictor
