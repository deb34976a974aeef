// The overlap engine's throughput (docs/performance.md: >= 10 M events/s single-threaded): a
// synthetic RL-shaped process: operations per iteration (inference, simulation, backpropagation
// nested in a training loop), Python / Backend / Simulator slices alternating inside them on the
// CPU, and kernels on two streams overlapping the CPU work.
//
// The category intervals listed three ways: BM_Overlap in start order (one thread's trace: read
// as they are), BM_OverlapPerCategory one category after the other (five runs in start order:
// merged), BM_OverlapShuffled in random order (sorted, the engine's slow path). Counters: events;
// peak_rss_MiB = how far the process's peak resident set rose above its resident set before the
// call (freed memory handed back and the peak reset through /proc/self/clear_refs first, where
// the kernel allows it): the engine's own memory, the input being resident already.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rlscope/overlap/overlap.h"
#include "support/process_memory.h"

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
  // Reserved up front so that growing the vectors does not leave a peak above the input's size.
  s.categories.reserve(events + 100);
  s.operations.reserve(events / 30 + 10);
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

// Category intervals grouped by category, each category's in start order.
Synthetic perCategory(Synthetic s) {
  std::stable_sort(s.categories.begin(), s.categories.end(),
                   [](const auto& x, const auto& y) { return x.category < y.category; });
  return s;
}

// Category intervals in random order (operations keep theirs: their listing order is meaningful).
Synthetic shuffled(Synthetic s) {
  std::shuffle(s.categories.begin(), s.categories.end(), std::mt19937_64(7));
  return s;
}

void runOverlap(benchmark::State& state, const Synthetic& s,
                rlscope::analysis::OverlapOptions options = {}) {
  std::size_t events = s.categories.size() + s.operations.size();
  double peakKiB = 0;
  for (auto _ : state) {
    state.PauseTiming();
    malloc_trim(0);  // else memory freed by the last iteration hides this one's peak
    rlscope::bench::resetPeakRss();
    const double rssBefore = rlscope::bench::procStatusKiB("VmRSS");
    state.ResumeTiming();
    auto r = rlscope::analysis::computeOverlap(s.categories, s.operations, options);
    benchmark::DoNotOptimize(r.cells.data());
    state.PauseTiming();
    peakKiB = std::max(peakKiB, rlscope::bench::procStatusKiB("VmHWM") - rssBefore);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
  state.counters["events"] = static_cast<double>(events);
  state.counters["peak_rss_MiB"] = peakKiB / 1024.0;
}

void BM_Overlap(benchmark::State& state) {
  runOverlap(state, makeTrace(static_cast<std::size_t>(state.range(0))));
}
BENCHMARK(BM_Overlap)->Arg(100'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same in one sweep, the engine's single-thread speed (the default sweeps slices of time at
// once above a million intervals, one per hardware thread).
void BM_OverlapOneThread(benchmark::State& state) {
  runOverlap(state, makeTrace(static_cast<std::size_t>(state.range(0))), {.parts = 1});
}
BENCHMARK(BM_OverlapOneThread)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OverlapPerCategory(benchmark::State& state) {
  runOverlap(state, perCategory(makeTrace(static_cast<std::size_t>(state.range(0)))));
}
BENCHMARK(BM_OverlapPerCategory)
    ->Arg(100'000)
    ->Arg(10'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OverlapShuffled(benchmark::State& state) {
  runOverlap(state, shuffled(makeTrace(static_cast<std::size_t>(state.range(0)))));
}
BENCHMARK(BM_OverlapShuffled)
    ->Arg(100'000)
    ->Arg(10'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
