// Kineto import throughput (docs/performance.md: >= 1 M events/s). Each iteration runs the whole
// `rlscope import` path on a synthetic PyTorch-profiler trace: read the file, parse the JSON,
// map categories, resolve correlations, write and index the SQLite trace, rename it into place.
//
// The synthetic trace mirrors the real A100 traces' mix: per training step a user_annotation,
// cpu_ops with Kineto's usual args, cudaLaunchKernel calls, kernels with launch parameters,
// ac2g flow pairs, and some memcpys. items_per_second = source events per second.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "rlscope/import/importer.h"

namespace {

namespace fs = std::filesystem;

struct SyntheticTrace {
  fs::path path;
  std::int64_t events = 0;
};

// Writes a Kineto JSON trace with about `target` events and returns its path and event count.
SyntheticTrace makeTrace(std::int64_t target, bool gz) {
  SyntheticTrace t;
  t.path = fs::temp_directory_path() / ("rlscope_bench_kineto_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(target) + ".json");
  std::string out;
  out.reserve(static_cast<std::size_t>(target) * 260);
  out += R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100", )"
         R"("numSms": 108, "computeMajor": 8, "computeMinor": 0, "totalGlobalMem": 42297524224}],)"
         "\n\"traceEvents\": [\n";
  char buf[1024];
  double ts = 1695835542514261.0;
  std::int64_t correlation = 1;
  auto add = [&](int n) {
    out.append(buf, static_cast<std::size_t>(n));
    ++t.events;
  };
  bool first = true;
  while (t.events < target) {
    int n = std::snprintf(buf, sizeof buf,
                          R"(%s{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%lld", )"
                          R"("pid": 2869224, "tid": 2869224, "ts": %.3f, "dur": 900.5, )"
                          R"("args": {"External id": %lld}})",
                          first ? "" : ",\n", static_cast<long long>(correlation), ts,
                          static_cast<long long>(correlation));
    first = false;
    add(n);
    for (int op = 0; op < 10 && t.events < target; ++op) {
      ts += 7.25;
      n = std::snprintf(buf, sizeof buf,
                        R"J(,
{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 2869224, "tid": 2869224, "ts": %.3f, "dur": 40.125, "args": {"External id": %lld, "Ev Idx": %lld, "Input Dims": [[64, 512], [512, 512]], "Input type": ["float", "float"]}})J",
                        ts, static_cast<long long>(correlation), static_cast<long long>(op));
      add(n);
      n = std::snprintf(buf, sizeof buf,
                        R"J(,
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2869224, "tid": 2869224, "ts": %.3f, "dur": 5.5, "args": {"External id": %lld, "cbid": 211, "correlation": %lld}})J",
                        ts + 1, static_cast<long long>(correlation),
                        static_cast<long long>(correlation));
      add(n);
      n = std::snprintf(buf, sizeof buf,
                        R"J(,
{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x64_nn", "pid": 0, "tid": 7, "ts": %.3f, "dur": 12.75, "args": {"External id": %lld, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %lld, "registers per thread": 128, "shared memory": 16384, "blocks per SM": 2.5, "warps per SM": 10.0, "grid": [128, 2, 1], "block": [128, 1, 1], "est. achieved occupancy %%": 25}})J",
                        ts + 8, static_cast<long long>(correlation),
                        static_cast<long long>(correlation));
      add(n);
      n = std::snprintf(buf, sizeof buf,
                        R"J(,
{"ph": "s", "id": %lld, "pid": 2869224, "tid": 2869224, "ts": %.3f, "cat": "ac2g", "name": "ac2g"},
{"ph": "f", "id": %lld, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"})J",
                        static_cast<long long>(correlation), ts + 1,
                        static_cast<long long>(correlation), ts + 8);
      add(n);
      ++t.events;  // the flow pair is two events
      ++correlation;
    }
    n = std::snprintf(buf, sizeof buf,
                      R"J(,
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": %.3f, "dur": 3.0, "args": {"device": 0, "context": 1, "stream": 7, "correlation": %lld, "bytes": 4096, "memory bandwidth (GB/s)": 1.3}})J",
                      ts + 20, static_cast<long long>(correlation++));
    add(n);
    ts += 100;
  }
  out += "\n]}\n";
  if (gz) {
    t.path += ".gz";
    std::string cmd;
    std::ofstream(t.path.string() + ".raw", std::ios::binary) << out;
    cmd = "gzip -c '" + t.path.string() + ".raw' > '" + t.path.string() + "'";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("gzip failed");
    fs::remove(t.path.string() + ".raw");
  } else {
    std::ofstream(t.path, std::ios::binary) << out;
  }
  return t;
}

void importBenchmark(benchmark::State& state, bool gz) {
  auto trace = makeTrace(state.range(0), gz);
  auto output = fs::temp_directory_path() /
                ("rlscope_bench_kineto_" + std::to_string(::getpid()) + ".sqlite");
  for (auto _ : state) {
    auto stats = rlscope::import::importFile(trace.path, output);
    benchmark::DoNotOptimize(stats.events);
  }
  state.SetItemsProcessed(state.iterations() * trace.events);
  state.counters["input_MiB"] = static_cast<double>(fs::file_size(trace.path)) / (1024.0 * 1024.0);
  fs::remove(trace.path);
  fs::remove(output);
}

void BM_KinetoImportJson(benchmark::State& state) {
  importBenchmark(state, false);
}
void BM_KinetoImportJsonGz(benchmark::State& state) {
  importBenchmark(state, true);
}

BENCHMARK(BM_KinetoImportJson)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KinetoImportJsonGz)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
