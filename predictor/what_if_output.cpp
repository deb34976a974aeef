#include "what_if_output.h"

#include <cstdio>
#include <string>

namespace rlscope::predictor {
namespace {

double us(double ns) {
  return ns / 1e3;
}

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Long kernel names cut to fit a column, keeping their start.
std::string fit(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

nlohmann::json kernelJson(const KernelGroupPrediction& k) {
  return {{"name", k.name},
          {"kind", kernelKindName(k.traits.kind)},
          {"precision", precisionName(k.traits.precision)},
          {"method", methodName(k.method)},
          {"launches", k.launches},
          {"cannot_predict", k.cannotPredict},
          {"origin_us", us(k.originNs)},
          {"predicted_us", us(k.predictedNs)},
          {"gamma", k.gamma},
          {"occupancy_origin", k.occupancyOrigin},
          {"occupancy_target", k.occupancyTarget},
          {"expected_error", k.expectedError}};
}

nlohmann::json operationJson(const OperationPrediction& o) {
  return {{"process", o.process},
          {"name", o.name},
          {"phase", o.phase},
          {"origin_us", us(o.originNs)},
          {"predicted_us", us(o.predictedNs)},
          {"cpu_us", us(o.cpuNs)},
          {"gpu_us", us(o.gpuNs)},
          {"cpu_gpu_us", us(o.cpuGpuNs)},
          {"gpu_wait_us", us(o.gpuWaitNs)},
          {"idle_us", us(o.idleNs)},
          {"gpu_scale", o.gpuScale},
          {"expected_error_us", us(o.expectedErrorNs)}};
}

}  // namespace

nlohmann::json toJson(const RunPrediction& p) {
  nlohmann::json kernels = nlohmann::json::array(), ops = nlohmann::json::array();
  for (const auto& k : p.kernels) kernels.push_back(kernelJson(k));
  for (const auto& o : p.operations) ops.push_back(operationJson(o));
  return {{"schema", "rlscope.prediction/1"},
          {"origin", p.origin},
          {"origin_from", p.originFrom},
          {"target", p.target},
          {"verdict", p.verdict()},
          {"run",
           {{"origin_us", us(p.originNs)},
            {"predicted_us", us(p.predictedNs)},
            {"predicted_low_us", us(p.predictedLowNs)},
            {"predicted_high_us", us(p.predictedHighNs)},
            {"speedup", p.speedup()},
            {"gpu_bound_us", us(p.gpuBoundNs)},
            {"max_speedup", p.maxSpeedup()},
            {"cpu_bound", p.cpuBound},
            {"model", p.replay.replayed ? "replay" : "operations"},
            {"operation_model_us", us(p.operationModelNs)},
            {"longest_stream_us", us(p.replay.longestStreamNs)},
            {"longest_cpu_path_us", us(p.replay.longestCpuPathNs)},
            {"replayed_calls", p.replay.calls},
            {"replayed_waits", p.replay.waits}}},
          {"gpu",
           {{"origin_us", us(p.gpuOriginNs)},
            {"predicted_us", us(p.gpuPredictedNs)},
            {"expected_error", p.gpuExpectedError()},
            {"kernel_launches", p.kernelLaunches},
            {"cannot_predict", p.cannotPredict}}},
          {"operations", ops},
          {"kernels", kernels},
          {"notes", p.notes}};
}

void writeTable(const RunPrediction& p, std::size_t topKernels, std::ostream& out) {
  out << "prediction: " << p.origin << " (from " << p.originFrom << ") -> " << p.target << "\n"
      << p.verdict() << "\n\n";
  out << format(
      "run: %.3f ms -> %.3f ms (%.2fx; expected %.3f .. %.3f ms); GPU work %.3f ms -> %.3f ms "
      "(± %.0f %%) over %llu kernel launches\n",
      p.originNs / 1e6, p.predictedNs / 1e6, p.speedup(), p.predictedLowNs / 1e6,
      p.predictedHighNs / 1e6, p.gpuOriginNs / 1e6, p.gpuPredictedNs / 1e6,
      100 * p.gpuExpectedError(), static_cast<unsigned long long>(p.kernelLaunches));
  if (p.replay.replayed)
    out << format(
        "replayed: %llu CUDA calls (%llu waited for the GPU); bounds kept: longest stream %.3f "
        "ms, longest CPU path %.3f ms; the operations' sum would say %.3f ms\n",
        static_cast<unsigned long long>(p.replay.calls),
        static_cast<unsigned long long>(p.replay.waits), p.replay.longestStreamNs / 1e6,
        p.replay.longestCpuPathNs / 1e6, p.operationModelNs / 1e6);

  out << "\n"
      << format("%-12s %-32s %-10s %11s %11s %9s %11s %11s %8s\n", "process", "operation", "phase",
                "ms", "predicted", "±", "GPU-only", "CPU+GPU", "GPU x");
  for (const auto& o : p.operations)
    out << format("%-12lld %-32s %-10s %11.3f %11.3f %9.3f %11.3f %11.3f %8.3f\n",
                  static_cast<long long>(o.process), fit(o.name, 32).c_str(),
                  fit(o.phase, 10).c_str(), o.originNs / 1e6, o.predictedNs / 1e6,
                  o.expectedErrorNs / 1e6, o.gpuNs / 1e6, o.cpuGpuNs / 1e6, o.gpuScale);

  if (!p.kernels.empty()) {
    out << "\n"
        << format("%-60s %8s %11s %11s %5s %-26s %5s %7s\n", "kernel (top by origin time)",
                  "launches", "ms", "predicted", "±", "method", "gamma", "occ o/t");
    for (std::size_t i = 0; i < p.kernels.size() && i < topKernels; ++i) {
      const auto& k = p.kernels[i];
      // Occupancy matters to wave scaling only.
      std::string occupancy = k.occupancyTarget ? std::to_string(k.occupancyOrigin) + "/" +
                                                      std::to_string(k.occupancyTarget)
                                                : "-";
      std::string error =
          k.expectedError > 0 ? format("%.0f%%", 100 * k.expectedError) : std::string("?");
      out << format("%-60s %8llu %11.3f %11.3f %5s %-26s %5.2f %7s\n", fit(k.name, 60).c_str(),
                    static_cast<unsigned long long>(k.launches), k.originNs / 1e6,
                    k.predictedNs / 1e6, error.c_str(), methodName(k.method), k.gamma,
                    occupancy.c_str());
    }
  }
  out << "\nGPU x: predicted / origin time of the GPU work the operation launched. CPU-only and "
         "idle time stay;\nGPU-only time and waits in synchronizing calls scale; other CPU+GPU "
         "time becomes the longer of\nthe two. ±: expected error (ms; kernels: mean error of their "
         "method where measured, ?:\nkept as recorded, not modelled) (docs/predictor.md).\n";
  for (const auto& n : p.notes) out << "note: " << n << "\n";
}

nlohmann::json devicesToJson(const GpuDatabase& db) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& g : db.gpus()) {
    nlohmann::json sources = nlohmann::json::object();
    for (const auto& [field, id] : g.sources) {
      auto it = db.sources().find(id);
      sources[field] = {{"id", id}, {"citation", it == db.sources().end() ? "" : it->second}};
    }
    list.push_back({{"name", g.name},
                    {"aliases", g.aliases},
                    {"architecture", g.architecture},
                    {"compute_capability", g.computeCapabilityText()},
                    {"sm_count", g.smCount},
                    {"base_clock_mhz", g.baseClockMhz},
                    {"boost_clock_mhz", g.boostClockMhz},
                    {"memory_gb", g.memoryGB},
                    {"memory_bandwidth_gbs", g.memoryBandwidthGBs},
                    {"achievable_bandwidth_gbs", g.achievableBandwidthGBs},
                    {"fp32_tflops", g.fp32Tflops},
                    {"tf32_tflops", g.tf32Tflops},
                    {"fp16_tflops", g.fp16Tflops},
                    {"bf16_tflops", g.bf16Tflops},
                    {"registers_per_sm", g.registersPerSm},
                    {"registers_per_block", g.registersPerBlock},
                    {"shared_memory_per_sm", g.sharedMemPerSm},
                    {"shared_memory_per_block", g.sharedMemPerBlock},
                    {"shared_memory_per_block_optin", g.sharedMemPerBlockOptin},
                    {"max_threads_per_sm", g.maxThreadsPerSm},
                    {"max_threads_per_block", g.maxThreadsPerBlock},
                    {"max_blocks_per_sm", g.maxBlocksPerSm},
                    {"warp_size", g.warpSize},
                    {"l2_cache_bytes", g.l2CacheBytes},
                    {"sources", sources},
                    {"notes", g.notes}});
  }
  return list;
}

void writeDevicesTable(const GpuDatabase& db, std::ostream& out) {
  out << format("%-22s %-10s %4s %5s %6s %8s %8s %7s %7s %7s %7s %6s %6s\n", "name", "arch", "cc",
                "SMs", "boost", "mem GB/s", "achieved", "FP32", "TF32", "FP16", "BF16", "smem/SM",
                "L2 MB");
  for (const auto& g : db.gpus())
    out << format("%-22s %-10s %4s %5d %6.0f %8.0f %8.0f %7.1f %7.1f %7.1f %7.1f %6d %6.1f\n",
                  fit(g.name, 22).c_str(), fit(g.architecture, 10).c_str(),
                  g.computeCapabilityText().c_str(), g.smCount, g.boostClockMhz,
                  g.memoryBandwidthGBs, g.achievableBandwidthGBs, g.fp32Tflops, g.tf32Tflops,
                  g.fp16Tflops, g.bf16Tflops, g.sharedMemPerSm / 1024,
                  static_cast<double>(g.l2CacheBytes) / (1 << 20));
  out << "\nboost: MHz; FP32..BF16: dense TFLOP/s (tensor cores for TF32/FP16/BF16, 0: none); "
         "achieved: measured\nstreaming bandwidth the predictor uses. Sources per value: "
         "`rlscope devices --format json`.\n";
}

}  // namespace rlscope::predictor
