// The overlap engine's throughput (design.md §6: >= 10 M events/s single-threaded): a synthetic
// RL-shaped process: operations per iteration (inference, simulation, backpropagation nested in
// a training loop), Python / Backend / Simulator slices alternating inside them on the CPU, and
// kernels on two streams overlapping the CPU work.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "overlap.h"

namespace {

using rlscope::analysis::CategoryInterval;
using rlscope::analysis::OperationSpan;
using rlscope::analysis::TimeNs;

struct Synthetic {
  std::vector<CategoryInterval> categories;
  std::vector<OperationSpan> operations;
};

// About `events` intervals in all: 3 % operations, the rest category intervals.
Synthetic makeTrace(std::size_t events) {
  Synthetic s;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<TimeNs> slice(200, 3000), kernel(1000, 20000);
  TimeNs t = 0;
  std::uint32_t op = 0;
  while (s.categories.size() + s.operations.size() < events) {
    TimeNs iteration = t;
    for (std::uint32_t phase = 0; phase < 3; ++phase) {
      TimeNs begin = t;
      for (int i = 0; i < 10; ++i) {
        // Python, then Backend or Simulator, on the CPU; a kernel on stream 6 or 7.
        TimeNs p = slice(rng), n = slice(rng);
        s.categories.push_back({t, t + p, 1});
        s.categories.push_back({t + p, t + p + n, phase == 1 ? 3u : 2u});
        if (phase != 1) s.categories.push_back({t + p, t + p + kernel(rng), 6u + (i & 1)});
        t += p + n;
      }
      s.operations.push_back({begin, t, ++op});
    }
    s.operations.push_back({iteration, t, ++op});
  }
  return s;
}

void BM_Overlap(benchmark::State& state) {
  Synthetic s = makeTrace(static_cast<std::size_t>(state.range(0)));
  std::size_t events = s.categories.size() + s.operations.size();
  for (auto _ : state) {
    auto r = rlscope::analysis::computeOverlap(s.categories, s.operations);
    benchmark::DoNotOptimize(r.cells.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_Overlap)->Arg(100'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
