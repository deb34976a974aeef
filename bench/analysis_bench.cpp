// The whole analysis (docs/performance.md: overlap + breakdown >= 10 M events/s single-threaded; a
// 10 M-event trace analysed in < 5 s and < 1 GiB): analyzeTrace end to end, opening the trace
// included, on a synthetic rlscope-prof trace shaped like an RL training run. One Python process;
// its main thread runs "step" operations holding "inference", "simulation" and "backprop", with
// Python / Backend / Simulator intervals alternating on the CPU, CUDA launches from the Backend
// calls and their kernels on two streams; a worker thread prefetches (its own operation, Python and
// Backend intervals); phases "warmup" and "training".
//
// Each trace is written once per size, outside the timed loop, into a temporary directory that is
// removed at exit. Counters: `events` (rows read), items_per_second (events / s), `peak_rss_MiB`
// (the process's peak resident memory during the analysis: the kernel's high-water mark, reset
// before each analysis where /proc/self/clear_refs allows it, else only the growth of the
// high-water mark, which misses memory the trace writer had already touched), `rss_before_MiB`.
// For clean peak figures run one size at a time:
//   bench_analysis --benchmark_filter='BM_Analyze/10000000'
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/calibration/calibration.h"
#include "rlscope/gpu_metrics/gpu_metrics.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/process_memory.h"
#include "support/shaped_trace.h"

namespace {

namespace fs = std::filesystem;
using rlscope::analysis::AnalyzeOptions;
using rlscope::analysis::Calibration;
using rlscope::trace::Category;
using rlscope::trace::TimeNs;

constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kMain = rlscope::trace::globalTidOf(kPid, 4242);
constexpr std::int64_t kWorker = rlscope::trace::globalTidOf(kPid, 4243);

// The temporary directory of the traces, removed when the program exits.
class TraceCache {
 public:
  ~TraceCache() {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  // The trace of about `events` rows, written on first use.
  const fs::path& trace(std::int64_t events) {
    auto it = traces_.find(events);
    if (it != traces_.end()) return it->second.path;
    if (dir_.empty()) {
      dir_ = fs::temp_directory_path() / ("rlscope_analysis_bench." + std::to_string(::getpid()));
      fs::create_directories(dir_);
    }
    Written w;
    w.path = dir_ / ("rl_" + std::to_string(events) + ".sqlite");
    w.rows = write(w.path, events);
    return traces_.emplace(events, std::move(w)).first->second.path;
  }
  std::int64_t rows(std::int64_t events) const { return traces_.at(events).rows; }

 private:
  struct Written {
    fs::path path;
    std::int64_t rows = 0;
  };

  // Writes the trace; returns the number of event rows (the analysis reads each once).
  static std::int64_t write(const fs::path& path, std::int64_t events) {
    namespace trace = rlscope::trace;
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    w.setMeta(trace::meta::kFeatures,
              R"({"nvtx": true, "python": true, "cuda_api": true, "gpu_activity": true})");
    w.setMeta(trace::meta::kGpuActivity, "recorded");
    w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
    w.addThread({kMain, trace::globalPidOf(kPid), 4242, "MainThread"});
    w.addThread({kWorker, trace::globalPidOf(kPid), 4243, "prefetch"});

    const trace::StringId step = w.intern("step"), inference = w.intern("inference"),
                          simulation = w.intern("simulation"), backprop = w.intern("backprop"),
                          prefetch = w.intern("prefetch"), launch = w.intern("cudaLaunchKernel"),
                          memcpyAsync = w.intern("cudaMemcpyAsync");
    const trace::StringId kernels[] = {w.intern("sgemm_128x64_nn"), w.intern("relu_kernel"),
                                       w.intern("reduce_kernel"), w.intern("adam_update")};
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<TimeNs> slice(200, 3000), api(3000, 8000), gpu(1000, 20000);

    std::int64_t rows = 0, opId = 0, correlation = 0, transitions = 0;
    auto cpu = [&](TimeNs s, TimeNs e, Category c, std::int64_t tid) {
      w.addCpuInterval({.start = s, .end = e, .globalTid = tid, .category = c});
      ++rows;
      if (c != Category::kPython) transitions += 2;
    };
    // An operation row; ids are given out when operations start, rows written when they end
    // (as the collector does: children before their parent).
    auto op = [&](std::int64_t id, TimeNs s, TimeNs e, trace::StringId name, std::int64_t parent,
                  int depth, std::int64_t tid) {
      w.addOperation({.id = id,
                      .start = s,
                      .end = e,
                      .globalTid = tid,
                      .nameId = name,
                      .parentId = parent,
                      .depth = depth});
      ++rows;
    };
    // A Backend call from Python at `t` that launches one kernel (or copy kernel) on a stream;
    // returns the end of the call.
    auto backendLaunch = [&](TimeNs t, int i) {
      TimeNs n = slice(rng), a = api(rng);
      TimeNs apiStart = t + n / 2, apiEnd = apiStart + a;
      cpu(t, apiEnd + n / 2, Category::kBackend, kMain);
      trace::ApiCallRecord call;
      call.start = apiStart;
      call.end = apiEnd;
      call.globalTid = kMain;
      call.correlationId = ++correlation;
      call.nameId = i % 8 == 7 ? memcpyAsync : launch;
      w.addApiCall(trace::ApiKind::kRuntime, call);
      trace::KernelRecord k;
      k.start = apiEnd - a / 4;  // the GPU starts before the launch call returns
      k.end = k.start + gpu(rng);
      k.deviceId = 0;
      k.streamId = 7 + (i & 1);
      k.correlationId = correlation;
      k.globalPid = trace::globalPidOf(kPid);
      k.shortName = k.demangledName = k.mangledName = kernels[i & 3];
      w.addKernel(k);
      rows += 2;
      return apiEnd + n / 2;
    };

    TimeNs t = 1'000'000;
    const TimeNs start = t;
    TimeNs warmupEnd = start;
    for (int iteration = 0; rows < events; ++iteration) {
      // The step and its three parts: inference, simulation, backprop.
      TimeNs stepStart = t;
      std::int64_t stepId = ++opId;
      for (int p = 0; p < 3; ++p) {
        std::int64_t partId = ++opId;
        TimeNs partStart = t;
        for (int i = 0; i < 10; ++i) {
          TimeNs py = slice(rng);
          cpu(t, t + py, Category::kPython, kMain);
          t += py;
          if (p == 1) {
            TimeNs s = slice(rng);
            cpu(t, t + s, Category::kSimulator, kMain);
            t += s;
          } else {
            t = backendLaunch(t, i);
          }
        }
        op(partId, partStart, t,
           p == 0   ? inference
           : p == 1 ? simulation
                    : backprop,
           stepId, 1, kMain);
      }
      TimeNs py = slice(rng);
      cpu(t, t + py, Category::kPython, kMain);
      t += py;
      op(stepId, stepStart, t, step, 0, 0, kMain);
      // The worker prefetches the next batch during the step.
      TimeNs ws = stepStart + slice(rng);
      TimeNs b = slice(rng) * 4;
      op(++opId, ws, ws + 2 * b, prefetch, 0, 0, kWorker);
      cpu(ws, ws + b, Category::kPython, kWorker);
      cpu(ws + b, ws + 2 * b, Category::kBackend, kWorker);
      if (iteration == 100) {
        w.addPhase({start, t, trace::globalPidOf(kPid), w.intern("warmup")});
        warmupEnd = t;
      }
    }
    w.addPhase({warmupEnd, t, trace::globalPidOf(kPid), w.intern("training")});
    rows += 2;
    w.setMeta(trace::meta::kCommandElapsedNs, std::to_string(t - start + 500'000'000));
    w.setMeta(trace::meta::kPythonTransitions, std::to_string(transitions));
    w.commit();
    return rows;
  }

  fs::path dir_;
  std::map<std::int64_t, Written> traces_;
};

TraceCache& cache() {
  static TraceCache c;
  return c;
}

// Costs of the order rlscope calibrate measures on a desktop.
Calibration calibration() {
  namespace cost = rlscope::analysis::cost;
  Calibration c;
  c.uninstrumentedNs = {1e9, 0, 1};
  c.costs = {{cost::kProcess, "", {5e6, 0, 1}},
             {cost::kAnnotation, "", {800, 0, 1}},
             {cost::kPythonTransition, "", {60, 0, 1}},
             {cost::kCudaApiInterception, "", {150, 0, 1}},
             {cost::kCupti, "cudaLaunchKernel", {900, 0, 1}},
             {cost::kCupti, "cudaMemcpyAsync", {1100, 0, 1}}};
  return c;
}

// What `rlscope analyze` computes (cli/trace_analysis.cpp): the breakdown, and the GPU metrics of
// the CUDA API and GPU rows the breakdown reads. Returns the intervals swept.
std::uint64_t analyzeAsTheCommandDoes(const fs::path& path, AnalyzeOptions options) {
  rlscope::analysis::GpuMetricsBuilder gpu;
  options.gpuMetrics = &gpu;
  rlscope::trace::TraceReader reader(path);
  auto b = rlscope::analysis::analyzeTrace(reader, options);
  auto metrics = gpu.finish(reader);
  benchmark::DoNotOptimize(b.operations.data());
  benchmark::DoNotOptimize(&metrics);
  return b.events;
}

// `withGpuMetrics`: also what `rlscope analyze` computes besides the breakdown (kernel breakdown,
// GPU idle time, launch statistics), of the rows the breakdown reads.
void runAnalysis(benchmark::State& state, bool corrected, bool withGpuMetrics = false) {
  std::int64_t size = state.range(0);
  const fs::path& path = cache().trace(size);
  std::int64_t events = cache().rows(size);
  Calibration cal = calibration();
  AnalyzeOptions options;
  if (corrected) {
    options.calibration = &cal;
    options.calibrationOrigin = "bench";
  }
  double before = rlscope::bench::procStatusKiB("VmRSS");
  bool reset = rlscope::bench::resetPeakRss();
  double hwmBefore = rlscope::bench::procStatusKiB("VmHWM");
  std::uint64_t swept = 0;
  for (auto _ : state) {
    if (withGpuMetrics) {
      swept = analyzeAsTheCommandDoes(path, options);
      continue;
    }
    rlscope::trace::TraceReader reader(path);
    auto b = rlscope::analysis::analyzeTrace(reader, options);
    swept = b.events;
    benchmark::DoNotOptimize(b.operations.data());
  }
  double hwmAfter = rlscope::bench::procStatusKiB("VmHWM");
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["events"] = static_cast<double>(events);
  state.counters["swept"] = static_cast<double>(swept);  // intervals, overhead ones included
  state.counters["rss_before_MiB"] = before / 1024;
  state.counters["peak_rss_MiB"] = (reset ? hwmAfter : before + hwmAfter - hwmBefore) / 1024;
}

void BM_Analyze(benchmark::State& state) {
  runAnalysis(state, false);
}
void BM_AnalyzeCorrected(benchmark::State& state) {
  runAnalysis(state, true);
}
// What `rlscope analyze TRACE` computes: the breakdown and the GPU metrics.
void BM_AnalyzeCommand(benchmark::State& state) {
  runAnalysis(state, false, true);
}

// What `rlscope analyze` computes on 3 M-event traces of other shapes (support/shaped_trace.h):
// many threads, many streams, deep nesting, many short operations, long runs of kernels, no GPU.
void BM_AnalyzeShape(benchmark::State& state) {
  const auto& shape = rlscope::bench::traceShapes().at(static_cast<std::size_t>(state.range(0)));
  state.SetLabel(shape.name);
  // RLSCOPE_BENCH_KEEP_TRACES=DIR keeps the traces there (DIR/SHAPE.sqlite, reused when present)
  // for profiling `rlscope analyze` on them.
  static const char* keep = std::getenv("RLSCOPE_BENCH_KEEP_TRACES");
  static std::map<std::string, std::pair<fs::path, std::int64_t>> written;
  auto& [path, events] = written[shape.name];
  if (path.empty()) {
    path =
        keep ? fs::path(keep) / (std::string(shape.name) + ".sqlite")
             : fs::temp_directory_path() / ("rlscope_analysis_bench." + std::to_string(::getpid()) +
                                            "." + shape.name + ".sqlite");
    if (keep && fs::exists(path)) {
      namespace table = rlscope::trace::table;
      rlscope::trace::TraceReader reader(path);
      for (auto t : {table::kCpuIntervals, table::kOperations, table::kRuntime, table::kKernel})
        events += reader.rowCount(t);
    } else {
      events = rlscope::bench::writeShapedTrace(path, shape, 3'000'000);
    }
  }
  double before = rlscope::bench::procStatusKiB("VmRSS");
  bool reset = rlscope::bench::resetPeakRss();
  double hwmBefore = rlscope::bench::procStatusKiB("VmHWM");
  for (auto _ : state) {
    analyzeAsTheCommandDoes(path, {});
  }
  double hwmAfter = rlscope::bench::procStatusKiB("VmHWM");
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["events"] = static_cast<double>(events);
  state.counters["peak_rss_MiB"] = (reset ? hwmAfter : before + hwmAfter - hwmBefore) / 1024;
  if (!keep &&
      state.range(0) + 1 == static_cast<std::int64_t>(rlscope::bench::traceShapes().size())) {
    std::error_code ignored;
    for (const auto& [name, trace] : written) fs::remove(trace.first, ignored);
  }
}

BENCHMARK(BM_AnalyzeShape)
    ->DenseRange(0, static_cast<int>(rlscope::bench::traceShapes().size()) - 1)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Analyze)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Analyze)->Arg(10'000'000)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeCommand)
    ->Arg(10'000'000)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_AnalyzeCorrected)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeCorrected)
    ->Arg(10'000'000)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
