// Synthetic rlscope-prof traces of the shapes real traces have, for the analysis benchmarks:
// many threads, many streams, deep nesting, many short operations, long runs of kernels, and
// CPU-only programs. Every shape is one process whose threads run steps of nested operations;
// the innermost ones alternate Python intervals with Backend calls that launch GPU work (a CUDA
// call nested in the Backend interval, then its kernels on a stream, queued behind the stream's
// earlier work) or, without GPU, Simulator intervals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace rlscope::bench {

struct TraceShape {
  const char* name;
  int threads = 1;           // threads of CPU work, running at once, each with its operations
  int streams = 2;           // GPU streams the launches go to, in turn; 0: no GPU work
  int depth = 2;             // levels of operations in a step (1: the step alone)
  int children = 3;          // operations inside each operation above the innermost level
  int launchesPerOp = 10;    // Python + Backend call pairs in each innermost operation
  int kernelsPerLaunch = 1;  // kernels each call queues (a run of kernels: a graph, a fused op)
};

// The shapes of the analysis bench (docs/performance.md lists them).
const std::vector<TraceShape>& traceShapes();

// Writes a trace of `shape` with about `events` rows at `path`; returns the number of rows.
std::int64_t writeShapedTrace(const std::filesystem::path& path, const TraceShape& shape,
                              std::int64_t events);

}  // namespace rlscope::bench
