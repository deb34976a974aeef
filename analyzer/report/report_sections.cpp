#include "report_sections.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "report_text.h"

namespace rlscope::report {

namespace {

std::string withShare(const std::optional<double>& us, const std::optional<double>& whole,
                      const char* of) {
  if (!us) return "n/a";
  std::string out = formatDuration(*us);
  if (whole && *whole > 0) out += " (" + formatPercent(*us, *whole) + " of " + of + ")";
  return out;
}

std::string originLabel(const PredictionSection& p) {
  std::string out = p.origin.empty() ? std::string("n/a") : p.origin;
  if (p.originFrom == "trace")
    out += " (from the trace)";
  else if (p.originFrom == "--origin")
    out += " (given by --origin)";
  else if (!p.originFrom.empty())
    out += " (from " + p.originFrom + ")";
  return out + " → " + (p.target.empty() ? std::string("n/a") : p.target);
}

std::string beforeAfter(const std::optional<double>& originUs,
                        const std::optional<double>& predictedUs) {
  return formatDuration(originUs) + " → " + formatDuration(predictedUs);
}

std::string runLine(const PredictionSection& p) {
  std::string out = beforeAfter(p.originUs, p.predictedUs);
  double speedup = p.speedup.value_or(
      p.originUs && p.predictedUs && *p.predictedUs > 0 ? *p.originUs / *p.predictedUs : 0);
  if (speedup > 0) out += " (" + formatSpeedup(speedup) + ")";
  if (p.predictedLowUs && p.predictedHighUs)
    out += ", expected " + formatDuration(*p.predictedLowUs) + " to " +
           formatDuration(*p.predictedHighUs);
  return out;
}

std::string gpuWorkLine(const PredictionSection& p) {
  std::string out = beforeAfter(p.gpuOriginUs, p.gpuPredictedUs);
  if (p.gpuExpectedError && *p.gpuExpectedError > 0)
    out += " (± " + formatPercent(*p.gpuExpectedError, 1) + ")";
  if (p.kernelLaunches) out += " over " + formatCount(*p.kernelLaunches) + " kernel launches";
  if (p.cannotPredict && *p.cannotPredict > 0)
    out += " (" + formatCount(*p.cannotPredict) + " cannot be predicted: kept at origin time)";
  return out;
}

std::string gpuBoundLine(const PredictionSection& p) {
  if (!p.gpuBoundUs) return "n/a";
  std::string out = formatDuration(*p.gpuBoundUs);
  if (p.originUs && *p.originUs > 0) out += " (" + formatPercent(*p.gpuBoundUs, *p.originUs) + ")";
  if (p.cpuBound) out += ": CPU-bound";
  return out;
}

// max_speedup is 0 when nothing of the run is CPU-only: no finite bound.
std::string upperBoundLine(const PredictionSection& p) {
  if (!p.maxSpeedup) return "n/a";
  if (*p.maxSpeedup <= 0)
    return p.gpuBoundUs && *p.gpuBoundUs > 0 ? "no bound: the whole run waits on the GPU"
                                             : std::string("n/a");
  return "at most " + formatSpeedup(*p.maxSpeedup);
}

}  // namespace

OperationColumns operationColumns(const Analysis& analysis) {
  OperationColumns c;
  for (const auto& op : analysis.operations) {
    c.phase = c.phase || !op.phase.empty();
    c.instances = c.instances || op.instances.has_value();
    c.launchedGpu = c.launchedGpu || op.launchedGpuUs.has_value();
  }
  return c;
}

std::string gpuMissingReason(const Analysis& analysis) {
  if (!analysis.gpu) return "the analysis has no GPU metrics (made without them, or an old trace)";
  if (!analysis.gpu->available) return "no GPU activity in this trace (a CPU-only run)";
  return {};
}

std::vector<const Kernel*> topKernels(const GpuSection& gpu, std::size_t limit) {
  std::vector<const Kernel*> out;
  for (const auto& k : gpu.kernels) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(), [](const Kernel* a, const Kernel* b) {
    if (a->totalUs.has_value() != b->totalUs.has_value()) return a->totalUs.has_value();
    return a->totalUs.value_or(0) > b->totalUs.value_or(0);
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

double kernelTimeUs(const GpuSection& gpu) {
  double total = 0;
  for (const auto& k : gpu.kernels) total += k.totalUs.value_or(0);
  return total;
}

std::vector<Item> idleItems(const GpuIdle& idle) {
  std::optional<double> streamIdle;
  if (idle.hostWaitUs || idle.kernelWaitUs || idle.otherUs)
    streamIdle =
        idle.hostWaitUs.value_or(0) + idle.kernelWaitUs.value_or(0) + idle.otherUs.value_or(0);
  return {
      {"GPU span (first to last activity)", formatDuration(idle.spanUs)},
      {"Busy", withShare(idle.busyUs, idle.spanUs, "span")},
      {"Idle", withShare(idle.idleUs, idle.spanUs, "span")},
      {"Stream idle: host wait", withShare(idle.hostWaitUs, streamIdle, "stream idle")},
      {"Stream idle: kernel wait", withShare(idle.kernelWaitUs, streamIdle, "stream idle")},
      {"Stream idle: other", withShare(idle.otherUs, streamIdle, "stream idle")},
  };
}

std::vector<Item> launchItems(const LaunchStats& launch) {
  std::string shortKernels = formatCount(launch.shortKernels);
  if (launch.shortKernels && launch.shortKernelTimeUs)
    shortKernels += " (" + formatDuration(*launch.shortKernelTimeUs) + " of GPU time)";
  return {
      {"Launches", formatCount(launch.count)},
      {"Launch delay mean", formatDuration(launch.delayMeanUs)},
      {"Launch delay p50", formatDuration(launch.delayP50Us)},
      {"Launch delay p95", formatDuration(launch.delayP95Us)},
      {"Launch delay max", formatDuration(launch.delayMaxUs)},
      {"Short kernels", shortKernels},
  };
}

std::string biasText(const Correction& c) {
  if (!c.biasPct) return "n/a";
  std::string text = formatPct(*c.biasPct, true);
  if (c.biasVerdict == "too_noisy_to_tell")
    return text + (c.biasUncertaintyPct ? " ± " + formatPct(*c.biasUncertaintyPct) : "") +
           " (too noisy to tell)";
  if (!c.biasUncertaintyPct) return text + " (uncertainty unknown)";
  return text + " ± " + formatPct(*c.biasUncertaintyPct);
}

std::vector<Item> correctionItems(const Correction& c) {
  std::string removed = "n/a";
  if (c.uncorrectedTotalUs && c.correctedTotalUs)
    removed = formatDuration(*c.uncorrectedTotalUs - *c.correctedTotalUs) + " (" +
              formatPercent(*c.uncorrectedTotalUs - *c.correctedTotalUs, *c.uncorrectedTotalUs) +
              ")";
  return {
      {"Calibration", c.calibration.empty() ? std::string("n/a") : c.calibration},
      {"Uncorrected total", formatDuration(c.uncorrectedTotalUs)},
      {"Corrected total", formatDuration(c.correctedTotalUs)},
      {"Removed", removed},
      {"Uninstrumented run", formatDuration(c.uninstrumentedTotalUs)},
      {"Bias (corrected vs uninstrumented)", c.biasPct ? biasText(c) : "n/a"},
      {"Run-to-run noise of the uninstrumented run",
       c.uninstrumentedNoisePct ? formatPct(*c.uninstrumentedNoisePct, false) : "n/a"},
  };
}

std::string predictionTitle(const PredictionSection& p) {
  return p.target.empty() ? "Prediction" : "Prediction on " + p.target;
}

std::string predictionMissingReason(const PredictionSection& p) {
  if (p.schema != kPredictionSchema)
    return "the prediction's schema \"" + p.schema + "\" is not " + kPredictionSchema +
           " (made by another rlscope version)";
  return {};
}

std::vector<Item> predictionItems(const PredictionSection& p) {
  return {
      {"Origin → target", originLabel(p)},
      {"Run (origin → predicted)", runLine(p)},
      {"GPU work (origin → predicted)", gpuWorkLine(p)},
      {"Run time waiting on the GPU", gpuBoundLine(p)},
      {"With an infinitely fast GPU", upperBoundLine(p)},
  };
}

std::string predictedWithError(const std::optional<double>& predictedUs,
                               const std::optional<double>& errorUs) {
  std::string out = formatDuration(predictedUs);
  if (predictedUs && errorUs && *errorUs > 0) out += " ± " + formatDuration(*errorUs);
  return out;
}

std::string predictedWithErrorFraction(const std::optional<double>& predictedUs,
                                       const std::optional<double>& error) {
  std::string out = formatDuration(predictedUs);
  if (predictedUs && error && *error > 0) out += " ± " + formatPercent(*error, 1);
  return out;
}

std::vector<const PredictedOperation*> topPredictedOperations(const PredictionSection& p,
                                                              std::size_t limit) {
  std::vector<const PredictedOperation*> out;
  for (const auto& o : p.operations) out.push_back(&o);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return a->originUs > b->originUs; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<const PredictedKernel*> topPredictedKernels(const PredictionSection& p,
                                                        std::size_t limit) {
  std::vector<const PredictedKernel*> out;
  for (const auto& k : p.kernels) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    if (a->originUs.has_value() != b->originUs.has_value()) return a->originUs.has_value();
    return a->originUs.value_or(0) > b->originUs.value_or(0);
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string predictedOperationTitle(const PredictionSection& p, const PredictedOperation& op) {
  std::string out = op.name;
  if (!op.phase.empty()) out += " [" + op.phase + "]";
  bool severalProcesses = std::any_of(p.operations.begin(), p.operations.end(),
                                      [&](const auto& o) { return o.process != op.process; });
  if (severalProcesses) out += " · process " + std::to_string(op.process);
  return out;
}

std::string formatSpeedup(double speedup) {
  if (!(speedup > 0)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2fx %s", speedup >= 1 ? speedup : 1 / speedup,
                speedup >= 1 ? "faster" : "slower");
  return buf;
}

std::string formatChange(double originUs, double predictedUs) {
  if (!(originUs > 0)) return "n/a";
  double pct = 100 * (predictedUs - originUs) / originUs;
  // What rounds to 0.0% is no change: neither "+0.0%" nor "-0.0%".
  return std::abs(pct) < 0.05 ? formatPct(0) : formatPct(pct, true);
}

std::string formatFactor(const std::optional<double>& factor) {
  if (!factor) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *factor);
  return buf;
}

std::string formatGamma(const std::optional<double>& gamma) {
  if (!gamma) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *gamma);
  return buf;
}

std::vector<std::string> transitionNames(const Analysis& analysis) {
  std::set<std::string> names;
  for (const auto& op : analysis.operations)
    for (const auto& [name, count] : op.transitions) names.insert(name);
  return {names.begin(), names.end()};
}

std::string operationTitle(const Analysis& analysis, const Operation& op) {
  std::string out = op.name;
  if (!op.phase.empty()) out += " [" + op.phase + "]";
  if (processesOf(analysis).size() > 1) out += " · process " + std::to_string(op.process);
  return out;
}

std::string overheadSourceName(const std::string& key) {
  static const std::map<std::string, std::string> names = {
      {"annotation", "Annotations"},
      {"python_transition", "Python↔native interception"},
      {"python_event", "Python tracker callbacks"},
      {"cuda_api_interception", "CUDA API interception"},
      {"cupti", "CUPTI"},
  };
  auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

std::vector<std::string> rankHeaders() {
  return {"Rank",
          "Host",
          "Time",
          "Collectives",
          "In them",
          "Waiting for the last rank",
          "Transfer",
          "Entered last",
          "Others waited for it",
          "Meanwhile it ran"};
}

std::vector<std::string> rankCells(const RankRow& r) {
  std::string doing;
  if (!r.doing.empty()) {
    const auto& top = r.doing.front();
    doing = top.operation + " / " + top.category + " " + formatDuration(top.timeUs);
  }
  return {
      std::to_string(r.rank),           r.host,
      formatDuration(r.timeUs),         std::to_string(static_cast<long long>(r.collectives)),
      formatDuration(r.collectivesUs),  formatDuration(r.waitingForOthersUs),
      formatDuration(r.transferringUs), std::to_string(static_cast<long long>(r.collectivesLast)),
      formatDuration(r.othersWaitedUs), doing};
}

std::string rankTitle(const RankRow& r) {
  return "rank " + std::to_string(r.rank) + (r.host.empty() ? std::string() : " on " + r.host);
}

}  // namespace rlscope::report
