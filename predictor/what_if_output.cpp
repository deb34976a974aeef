#include "rlscope/predictor/what_if_output.h"

#include <cstdio>
#include <string>

#include "rlscope/document/analysis_json.h"

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
  namespace key = analysis::json_keys::prediction;
  return {{key::kernel::kName, k.name},
          {key::kernel::kKind, kernelKindName(k.traits.kind)},
          {key::kernel::kPrecision, precisionName(k.traits.precision)},
          {key::kernel::kMethod, methodName(k.method)},
          {key::kernel::kLaunches, k.launches},
          {key::kernel::kCannotPredict, k.cannotPredict},
          {key::kernel::kOriginUs, us(k.originNs)},
          {key::kernel::kPredictedUs, us(k.predictedNs)},
          {key::kernel::kGamma, k.gamma},
          {key::kernel::kOccupancyOrigin, k.occupancyOrigin},
          {key::kernel::kOccupancyTarget, k.occupancyTarget},
          {key::kernel::kExpectedError, k.expectedError}};
}

nlohmann::json operationJson(const OperationPrediction& o) {
  namespace key = analysis::json_keys::prediction;
  return {{key::operation::kProcess, o.process},
          {key::operation::kName, o.name},
          {key::operation::kPhase, o.phase},
          {key::operation::kOriginUs, us(o.originNs)},
          {key::operation::kPredictedUs, us(o.predictedNs)},
          {key::operation::kCpuUs, us(o.cpuNs)},
          {key::operation::kGpuUs, us(o.gpuNs)},
          {key::operation::kCpuGpuUs, us(o.cpuGpuNs)},
          {key::operation::kGpuWaitUs, us(o.gpuWaitNs)},
          {key::operation::kIdleUs, us(o.idleNs)},
          {key::operation::kGpuScale, o.gpuScale},
          {key::operation::kExpectedErrorUs, us(o.expectedErrorNs)}};
}

}  // namespace

nlohmann::json toJson(const RunPrediction& p) {
  namespace key = analysis::json_keys::prediction;
  nlohmann::json kernels = nlohmann::json::array(), ops = nlohmann::json::array();
  for (const auto& k : p.kernels) kernels.push_back(kernelJson(k));
  for (const auto& o : p.operations) ops.push_back(operationJson(o));
  return {{key::kSchema, key::kPredictionSchema},
          {key::kOrigin, p.origin},
          {key::kOriginFrom, p.originFrom},
          {key::kTarget, p.target},
          {key::kVerdict, p.verdict()},
          {key::kRun,
           {{key::run::kOriginUs, us(p.originNs)},
            {key::run::kPredictedUs, us(p.predictedNs)},
            {key::run::kPredictedLowUs, us(p.predictedLowNs)},
            {key::run::kPredictedHighUs, us(p.predictedHighNs)},
            {key::run::kSpeedup, p.speedup()},
            {key::run::kGpuBoundUs, us(p.gpuBoundNs)},
            {key::run::kMaxSpeedup, p.maxSpeedup()},
            {key::run::kCpuBound, p.cpuBound},
            {key::run::kModel, p.replay.replayed ? "replay" : "operations"},
            {key::run::kOperationModelUs, us(p.operationModelNs)},
            {key::run::kLongestStreamUs, us(p.replay.longestStreamNs)},
            {key::run::kLongestCpuPathUs, us(p.replay.longestCpuPathNs)},
            {key::run::kReplayedCalls, p.replay.calls},
            {key::run::kReplayedWaits, p.replay.waits}}},
          {key::kGpu,
           {{key::gpu::kOriginUs, us(p.gpuOriginNs)},
            {key::gpu::kPredictedUs, us(p.gpuPredictedNs)},
            {key::gpu::kExpectedError, p.gpuExpectedError()},
            {key::gpu::kKernelLaunches, p.kernelLaunches},
            {key::gpu::kCannotPredict, p.cannotPredict}}},
          {key::kOperations, ops},
          {key::kKernels, kernels},
          {key::kNotes, p.notes}};
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
