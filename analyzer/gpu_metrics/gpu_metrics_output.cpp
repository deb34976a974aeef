#include "gpu_metrics_output.h"

#include <cstdio>
#include <string>

namespace rlscope::analysis {

namespace {

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
    out.push_back({{"name", k.name},
                   {"class", kernelClassName(k.kernelClass)},
                   {"count", k.count},
                   {"total_us", us(k.total)},
                   {"mean_us", us(k.mean)},
                   {"min_us", us(k.min)},
                   {"max_us", us(k.max)},
                   {"std_us", us(k.stdDev())}});
  }
  return out;
}

nlohmann::json idleJson(const IdleBreakdown& idle) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : idle.streams)
    streams.push_back({{"process", s.pid},
                       {"device", s.deviceId},
                       {"stream", s.streamId},
                       {"span_us", us(s.span)},
                       {"busy_us", us(s.busy)},
                       {"idle_us", us(s.idle)},
                       {"host_wait_us", us(s.hostWait)},
                       {"kernel_wait_us", us(s.kernelWait)},
                       {"other_us", us(s.other)}});
  return {{"span_us", us(idle.span)},
          {"busy_us", us(idle.busy)},
          {"idle_us", us(idle.idle)},
          {"host_wait_us", us(idle.hostWait)},
          {"kernel_wait_us", us(idle.kernelWait)},
          {"other_us", us(idle.other)},
          {"stream_idle_us", us(idle.streamIdle())},
          {"streams", streams}};
}

nlohmann::json launchJson(const LaunchStats& l) {
  return {{"count", l.count},
          {"without_api_call", l.withoutApiCall},
          {"negative_delays", l.negativeDelays},
          {"delay_mean_us", us(l.delayMean)},
          {"delay_p50_us", us(l.delayP50)},
          {"delay_p95_us", us(l.delayP95)},
          {"delay_min_us", us(l.delayMin)},
          {"delay_max_us", us(l.delayMax)},
          {"short_kernels", l.shortKernels},
          {"short_kernel_time_us", us(l.shortKernelTime)}};
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
  launch["kernels_only"] = launchJson(s.kernelLaunch);
  return {{"available", m.available()},
          {"kernels", kernelsJson(s.kernels, topKernels)},
          {"classes",
           {{"compute", us(s.classes.compute)},
            {"memory", us(s.classes.memory)},
            {"communication", us(s.classes.communication)}}},
          {"idle", idleJson(s.idle)},
          {"launch", launch}};
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
