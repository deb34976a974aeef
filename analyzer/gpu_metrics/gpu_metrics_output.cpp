#include "rlscope/gpu_metrics/gpu_metrics_output.h"

#include <cstdio>
#include <string>

#include "rlscope/document/gpu_json.h"

namespace rlscope::analysis {

namespace {

namespace key = gpu_json;

double us(double ns) {
  return ns / 1e3;
}

double us(trace::TimeNs ns) {
  return static_cast<double>(ns) / 1e3;
}

std::size_t shown(const std::vector<KernelStats>& kernels, std::size_t topKernels) {
  return topKernels == 0 ? kernels.size() : std::min(topKernels, kernels.size());
}

nlohmann::json kernelsJson(const std::vector<KernelStats>& kernels, std::size_t topKernels) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < shown(kernels, topKernels); ++i) {
    const auto& k = kernels[i];
    out.push_back({{key::kernel::kName, k.name},
                   {key::kernel::kClass, kernelClassName(k.kernelClass)},
                   {key::kernel::kCount, k.count},
                   {key::kernel::kTotalUs, us(k.total)},
                   {key::kernel::kMeanUs, us(k.mean)},
                   {key::kernel::kMinUs, us(k.min)},
                   {key::kernel::kMaxUs, us(k.max)},
                   {key::kernel::kStdUs, us(k.stdDev())}});
  }
  return out;
}

// The times a stream's idle breakdown and the device's total both have.
template <class Idle>
nlohmann::json idleTimesJson(const Idle& i) {
  return {{key::idle::kSpanUs, us(i.span)},
          {key::idle::kBusyUs, us(i.busy)},
          {key::idle::kIdleUs, us(i.idle)},
          {key::idle::kHostWaitUs, us(i.hostWait)},
          {key::idle::kKernelWaitUs, us(i.kernelWait)},
          {key::idle::kOtherUs, us(i.other)}};
}

nlohmann::json idleJson(const IdleBreakdown& idle) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : idle.streams) {
    nlohmann::json stream = idleTimesJson(s);
    stream[key::idle::kProcess] = s.pid;
    stream[key::idle::kDevice] = s.deviceId;
    stream[key::idle::kStream] = s.streamId;
    streams.push_back(std::move(stream));
  }
  nlohmann::json out = idleTimesJson(idle);
  out[key::idle::kStreamIdleUs] = us(idle.streamIdle());
  out[key::idle::kStreams] = std::move(streams);
  return out;
}

nlohmann::json launchJson(const LaunchStats& l) {
  return {{key::launch::kCount, l.count},
          {key::launch::kWithoutApiCall, l.withoutApiCall},
          {key::launch::kNegativeDelays, l.negativeDelays},
          {key::launch::kDelayMeanUs, us(l.delayMean)},
          {key::launch::kDelayP50Us, us(l.delayP50)},
          {key::launch::kDelayP95Us, us(l.delayP95)},
          {key::launch::kDelayMinUs, us(l.delayMin)},
          {key::launch::kDelayMaxUs, us(l.delayMax)},
          {key::launch::kShortKernels, l.shortKernels},
          {key::launch::kShortKernelTimeUs, us(l.shortKernelTime)}};
}

// printf-style formatting into a std::string, for the table's aligned columns.
template <typename... Args>
std::string formatted(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string percent(trace::TimeNs part, trace::TimeNs whole) {
  return formatted("%.1f%%",
                   whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
}

// Long template-heavy names keep their start and end, which tell kernels apart.
std::string shortened(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  std::size_t head = (width - 3) * 2 / 3, tail = width - 3 - head;
  return name.substr(0, head) + "..." + name.substr(name.size() - tail);
}

void writeKernels(const GpuSummary& s, std::ostream& out, std::size_t topKernels) {
  out << "GPU kernels (" << shown(s.kernels, topKernels) << " of " << s.kernels.size()
      << " names, longest total first)\n";
  out << formatted("  %-60s %-13s %9s %12s %7s %10s %10s %10s %10s\n", "kernel", "class", "count",
                   "total us", "share", "mean us", "min us", "max us", "std us");
  trace::TimeNs all = s.classes.sum();
  for (std::size_t i = 0; i < shown(s.kernels, topKernels); ++i) {
    const auto& k = s.kernels[i];
    out << formatted(
        "  %-60s %-13s %9llu %12.1f %7s %10.2f %10.2f %10.2f %10.2f\n",
        shortened(k.name, 60).c_str(), std::string(kernelClassName(k.kernelClass)).c_str(),
        static_cast<unsigned long long>(k.count), us(k.total), percent(k.total, all).c_str(),
        us(k.mean), us(k.min), us(k.max), us(k.stdDev()));
  }
  out << "\nGPU time by class\n";
  for (auto c : {KernelClass::kCompute, KernelClass::kMemory, KernelClass::kCommunication}) {
    ClassTotals totals = s.classes;
    out << formatted("  %-13s %12.1f us %7s\n", std::string(kernelClassName(c)).c_str(),
                     us(totals[c]), percent(totals[c], all).c_str());
  }
}

void writeIdle(const IdleBreakdown& idle, std::ostream& out) {
  out << "\nGPU idle time (device level: span - union of all streams)\n";
  out << formatted("  %-12s %12.1f us\n", "span", us(idle.span));
  out << formatted("  %-12s %12.1f us %7s\n", "busy", us(idle.busy),
                   percent(idle.busy, idle.span).c_str());
  out << formatted("  %-12s %12.1f us %7s\n", "idle", us(idle.idle),
                   percent(idle.idle, idle.span).c_str());
  out << "\nStream idle time (gaps between a stream's activities, by the activity ending them)\n";
  out << formatted("  %8s %6s %8s %12s %12s %12s %12s %12s\n", "process", "device", "stream",
                   "span us", "idle us", "host wait", "kernel wait", "other");
  for (const auto& s : idle.streams)
    out << formatted("  %8lld %6lld %8lld %12.1f %12.1f %12.1f %12.1f %12.1f\n",
                     static_cast<long long>(s.pid), static_cast<long long>(s.deviceId),
                     static_cast<long long>(s.streamId), us(s.span), us(s.idle), us(s.hostWait),
                     us(s.kernelWait), us(s.other));
  out << formatted("  %-24s %12s %12.1f %12.1f %12.1f %12.1f\n", "all streams", "",
                   us(idle.streamIdle()), us(idle.hostWait), us(idle.kernelWait), us(idle.other));
}

void writeLaunch(const char* title, const LaunchStats& l, std::ostream& out) {
  out << "\n" << title << " (delay = GPU start - end of the launching CUDA API call)\n";
  out << formatted("  %-22s %llu (%llu without an API call, %llu negative delays)\n", "launches",
                   static_cast<unsigned long long>(l.count),
                   static_cast<unsigned long long>(l.withoutApiCall),
                   static_cast<unsigned long long>(l.negativeDelays));
  out << formatted("  %-22s mean %.2f  p50 %.2f  p95 %.2f  max %.2f us\n", "launch delay",
                   us(l.delayMean), us(l.delayP50), us(l.delayP95), us(l.delayMax));
  out << formatted("  %-22s %llu, %.1f us on the GPU (ran shorter than their launch call)\n",
                   "short kernels", static_cast<unsigned long long>(l.shortKernels),
                   us(l.shortKernelTime));
}

}  // namespace

nlohmann::json gpuMetricsToJson(const GpuMetrics& m, std::size_t topKernels) {
  const GpuSummary& s = m.total;
  nlohmann::json launch = launchJson(s.launch);
  launch[key::kKernelsOnly] = launchJson(s.kernelLaunch);
  return {{key::kAvailable, m.available()},
          {key::kKernels, kernelsJson(s.kernels, topKernels)},
          {key::kClasses,
           {{key::kernel_class::kCompute, us(s.classes.compute)},
            {key::kernel_class::kMemory, us(s.classes.memory)},
            {key::kernel_class::kCommunication, us(s.classes.communication)}}},
          {key::kIdle, idleJson(s.idle)},
          {key::kLaunch, launch}};
}

void writeGpuMetricsTable(const GpuMetrics& m, std::ostream& out, std::size_t topKernels) {
  if (!m.available()) {
    out << "No GPU activity in this trace (no kernel, memcpy or memset rows).\n";
    return;
  }
  writeKernels(m.total, out, topKernels);
  writeIdle(m.total.idle, out);
  writeLaunch("Launches of kernels, memcpys and memsets", m.total.launch, out);
  writeLaunch("Launches of kernels only", m.total.kernelLaunch, out);
  out << "\nIdle categories follow Holistic Trace Analysis: host wait = the CPU launched the next\n"
         "activity only after the stream went idle; kernel wait = a gap under the threshold\n"
         "(launch overhead); other = the rest (synchronization, events). Times of all processes\n"
         "are summed.\n";
}

}  // namespace rlscope::analysis
