// The predictor (docs/performance.md, issue "Predictor"):
//  - BM_PredictKernel: kernel predictions per second through KernelPredictor::predict (two
//    occupancy computations and the wave / roofline arithmetic each), on launches shaped like
//    the real A100 traces' (elementwise, reductions, GEMMs), to every GPU of the database.
//  - BM_PredictKernelTable: `rlscope predict --kernels` without the file: CSV rows parsed,
//    described (grid, GEMM shape) and predicted, per second (target: >= 10 000 kernels/s).
//  - BM_MemoryBoundAccuracy: the mean error of memory-bound kernels predicted between every two
//    GPUs that have a measurement independent of the database's own figure
//    (bench/predictor/memory_bound_measurements.json): the origin's measured time of a large
//    streaming kernel, predicted to the target, against the target's measured time. Counters:
//    mean_error_pct (the model, achievable bandwidth), spec_error_pct (spec-sheet bandwidth
//    ratios, Habitat's basis), max_error_pct, pairs. The time is that of computing them all.
#include <benchmark/benchmark.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_table.h"
#include "rlscope/predictor/wave_scaling.h"

namespace {

using namespace rlscope::predictor;

struct Shaped {
  KernelLaunch launch;
  KernelTraits traits;
};

std::vector<Shaped> tracelikeLaunches(std::size_t n) {
  std::mt19937 rng(7);
  std::vector<Shaped> out;
  out.reserve(n);
  const int blocks[] = {1, 12, 108, 864, 3025, 5400, 65536, 262144};
  const int sizes[] = {64, 128, 256, 512, 1024};
  const int regs[] = {16, 32, 47, 64, 96, 128, 160, 255};
  const int smem[] = {0, 0, 0, 400, 16384, 32768, 49152};
  for (std::size_t i = 0; i < n; ++i) {
    Shaped s;
    s.launch.blocks = blocks[rng() % 8];
    s.launch.resources = {sizes[rng() % 5], regs[rng() % 8], smem[rng() % 7], 0};
    s.launch.timeNs = 1000 + rng() % 100000;
    if (rng() % 4 == 0) s.traits = {KernelKind::kLibrary, Precision::kTf32};
    out.push_back(s);
  }
  return out;
}

void BM_PredictKernel(benchmark::State& state) {
  const GpuDatabase& db = GpuDatabase::builtIn();
  const GpuSpec& origin = db.get("A100 SXM4 40GB");
  std::vector<KernelPredictor> predictors;
  for (const auto& g : db.gpus()) predictors.emplace_back(origin, g);
  auto launches = tracelikeLaunches(4096);
  std::size_t i = 0, p = 0;
  for (auto _ : state) {
    const Shaped& s = launches[i];
    benchmark::DoNotOptimize(predictors[p].predict(s.launch, s.traits));
    if (++i == launches.size()) {
      i = 0;
      if (++p == predictors.size()) p = 0;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictKernel);

void BM_PredictKernelTable(benchmark::State& state) {
  const GpuDatabase& db = GpuDatabase::builtIn();
  KernelPredictor predictor(db.get("A100 SXM4 40GB"), db.get("L4"));
  std::mt19937 rng(11);
  std::ostringstream table;
  table << "name,grid,block,regs,smem_static,time_us,gemm\n";
  const int kRows = 10000;
  for (int i = 0; i < kRows; ++i) {
    if (i % 2)
      table << "ampere_sgemm_128x64_tn,\"" << 1 + rng() % 64 << "," << 1 + rng() % 16
            << ",1\",128,120,16384," << 5 + rng() % 500 << ",\"1," << 64 * (1 + rng() % 64) << ","
            << 64 * (1 + rng() % 64) << "," << 64 * (1 + rng() % 64) << "\"\n";
    else
      table << "vectorized_elementwise_kernel," << 1 + rng() % 100000 << ",128,16,0,"
            << 2 + rng() % 300 << ",\n";
  }
  const std::string text = table.str();
  for (auto _ : state) {
    std::istringstream in(text);
    std::ostringstream out;
    benchmark::DoNotOptimize(predictKernelTable(in, out, predictor, "bench.csv"));
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_PredictKernelTable)->Unit(benchmark::kMillisecond);

struct Measurement {
  std::string gpu;
  double gbs = 0;
};

std::vector<Measurement> heldOut() {
  std::ifstream in(RLSCOPE_BENCH_MEASUREMENTS);
  if (!in) throw std::runtime_error(std::string("cannot read ") + RLSCOPE_BENCH_MEASUREMENTS);
  auto doc = nlohmann::json::parse(in);
  // One bandwidth per GPU: the mean of its independent measurements.
  std::map<std::string, std::pair<double, int>> sums;
  for (const auto& m : doc.at("measurements")) {
    auto& [sum, n] = sums[m.at("gpu").get<std::string>()];
    sum += m.at("gbs").get<double>();
    ++n;
  }
  std::vector<Measurement> out;
  for (const auto& [gpu, s] : sums) out.push_back({gpu, s.first / s.second});
  return out;
}

void BM_MemoryBoundAccuracy(benchmark::State& state) {
  const GpuDatabase& db = GpuDatabase::builtIn();
  auto measured = heldOut();
  // A large streaming kernel: 1 GB moved by 262144 blocks of 256 threads, many waves anywhere.
  constexpr double kBytes = 1e9;
  KernelLaunch stream{262144, {256, 32, 0, 0}, 0};
  double mean = 0, spec = 0, worst = 0;
  int pairs = 0;
  for (auto _ : state) {
    mean = spec = worst = 0;
    pairs = 0;
    for (const auto& a : measured)
      for (const auto& b : measured) {
        if (a.gpu == b.gpu) continue;
        const GpuSpec& origin = db.get(a.gpu);
        const GpuSpec& target = db.get(b.gpu);
        stream.timeNs = kBytes / a.gbs;  // ns, as GB/s = bytes/ns
        double truth = kBytes / b.gbs;
        double predicted = KernelPredictor(origin, target).predict(stream, {}).timeNs;
        double bySpec = stream.timeNs * origin.memoryBandwidthGBs / target.memoryBandwidthGBs;
        double error = std::abs(predicted - truth) / truth;
        mean += error;
        spec += std::abs(bySpec - truth) / truth;
        worst = std::max(worst, error);
        ++pairs;
      }
    benchmark::DoNotOptimize(mean);
  }
  state.counters["mean_error_pct"] = 100 * mean / pairs;
  state.counters["spec_error_pct"] = 100 * spec / pairs;
  state.counters["max_error_pct"] = 100 * worst;
  state.counters["pairs"] = pairs;
  state.counters["gpus"] = static_cast<double>(measured.size());
}
BENCHMARK(BM_MemoryBoundAccuracy)->Iterations(10);

}  // namespace

BENCHMARK_MAIN();
