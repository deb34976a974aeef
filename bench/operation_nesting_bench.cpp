// OperationNesting::build (rlscope/trace/operation_nesting.h), which every producer of a trace
// runs over all its operations once the input has ended: for rlscope-prof that is after the
// program has exited, so it is part of the user's wait (docs/performance.md, "End to end").
// Shapes: one thread's ranges arriving as they close (post-order, as the merge adds them: the
// C++ sample's 1.76 M operations), and several threads' ranges already in start order (as a
// Kineto trace lists them).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "rlscope/trace/operation_nesting.h"

namespace {

using rlscope::trace::OperationNesting;
using rlscope::trace::OperationRecord;

// Iterations of `width` operations inside one that encloses them, on each of `threads` threads:
// the inner ones first, then their parent, as the merge adds ranges when they close. The C++
// sample: 1.76 M operations on one thread inside the training loop's range, which closes last.
std::vector<OperationRecord> closeOrder(std::int64_t operations, std::int64_t threads,
                                        std::int64_t width) {
  std::vector<OperationRecord> ops;
  ops.reserve(static_cast<std::size_t>(operations));
  std::int64_t t = 0, id = 0;
  while (static_cast<std::int64_t>(ops.size()) + threads * (width + 1) <= operations) {
    for (std::int64_t thread = 1; thread <= threads; ++thread) {
      for (std::int64_t i = 0; i < width; ++i)
        ops.push_back({.id = ++id,
                       .start = t + 10 * i + 1,
                       .end = t + 10 * i + 9,
                       .globalTid = thread,
                       .nameId = 2 + i % 2});
      ops.push_back(
          {.id = ++id, .start = t, .end = t + 10 * width + 1, .globalTid = thread, .nameId = 1});
    }
    t += 10 * width + 2;
  }
  return ops;
}

void BM_NestOperations(benchmark::State& state, bool startOrder) {
  std::int64_t n = state.range(0), threads = state.range(1), width = state.range(2);
  std::vector<OperationRecord> input = closeOrder(n, threads, width);
  if (startOrder) {
    // Already in (thread, start) order, longer first: the sort has nothing to move.
    OperationNesting sorted;
    for (const auto& op : input) sorted.add(op);
    input = sorted.build();
  }
  std::vector<std::int64_t> inputIds;
  for (auto _ : state) {
    state.PauseTiming();
    OperationNesting nesting;
    for (const auto& op : input) nesting.add(op);
    state.ResumeTiming();
    auto ops = nesting.build(&inputIds);
    benchmark::DoNotOptimize(ops.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(input.size()));
}

}  // namespace

// Args: operations, threads, operations per iteration.
BENCHMARK_CAPTURE(BM_NestOperations, close_order, false)
    ->Args({1'760'000, 1, 2})
    ->Args({1'760'000, 1, 350})
    ->Args({1'760'000, 1, 1'759'999})  // the C++ sample: one range around all, added last
    ->Args({1'760'000, 8, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_NestOperations, start_order, true)
    ->Args({1'760'000, 8, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
