#include "report_sections.h"

#include <algorithm>
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
      {"Bias (corrected vs uninstrumented)", c.biasPct ? formatPct(*c.biasPct, true) : "n/a"},
      {"Run-to-run noise of the uninstrumented run",
       c.uninstrumentedNoisePct ? formatPct(*c.uninstrumentedNoisePct, false) : "n/a"},
  };
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
      {"cuda_api_interception", "CUDA API interception"},
      {"cupti", "CUPTI"},
  };
  auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

}  // namespace rlscope::report
