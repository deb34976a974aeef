// The collector's costs (docs/performance.md):
//  - native annotation push+pop with the collector on: <= 100 ns per pair (goal 50). The
//    program's first NVTX call loads the real collector (NVTX_INJECTION64_PATH), exactly as under
//    rlscope-prof, and every pair goes through NVTX, the collector's handlers and the thread's
//    buffer, while the writer thread drains it to a part file. Built a second time as
//    bench_annotation_off (RLSCOPE_BENCH_COLLECTOR_OFF): the same calls with no tool attached.
//  - whole-run slowdown of the CPU sample under rlscope-prof vs. uninstrumented: <= 1.15x. Each
//    iteration runs the sample both ways; `slowdown` is the ratio of the training time the sample
//    measures itself, `end_to_end_slowdown` the ratio of wall times including rlscope-prof's start
//    and the merge into SQLite.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <rlscope/rlscope.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

void BM_AnnotationOperation(benchmark::State& state) {
  for (auto _ : state) {
    rlscope::Operation op("inference");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("push+pop pairs");
}
BENCHMARK(BM_AnnotationOperation);

void BM_NvtxPushPopA(benchmark::State& state) {
  for (auto _ : state) {
    nvtxRangePushA("inference");
    nvtxRangePop();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("push+pop pairs");
}
BENCHMARK(BM_NvtxPushPopA);

// Annotations from 2 threads at once: per-thread buffers, no shared state on the hot path.
void BM_AnnotationOperationThreads(benchmark::State& state) {
  for (auto _ : state) {
    rlscope::Operation op("simulate");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnnotationOperationThreads)->Threads(2)->UseRealTime();

#ifndef RLSCOPE_BENCH_COLLECTOR_OFF

struct Run {
  double wallS = 0;
  double trainingS = 0;  // what the sample reports: "... environment steps in X s"
};

Run runCommand(const std::vector<std::string>& argv, const fs::path& out) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  Run r;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) return r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  posix_spawn_file_actions_destroy(&fa);
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  std::smatch m;
  std::string text = s.str();
  if (std::regex_search(text, m, std::regex("environment steps in ([0-9.]+) s")))
    r.trainingS = std::stod(m[1]);
  return r;
}

void BM_CpuSampleSlowdown(benchmark::State& state) {
  const fs::path bin = RLSCOPE_BENCH_BIN_DIR;
  const fs::path tmp = fs::temp_directory_path() / ("rlscope-bench-" + std::to_string(getpid()));
  fs::create_directories(tmp);
  const std::string iterations = std::to_string(state.range(0));
  std::vector<std::string> plain = {(bin / "rlscope_sample_cpu_training").string(), "--iterations",
                                    iterations};
  std::vector<std::string> profiled = {(bin / "rlscope-prof").string(), "-q", "-o",
                                       (tmp / "t.sqlite").string(), "--"};
  profiled.insert(profiled.end(), plain.begin(), plain.end());
  double plainTrain = 0, profTrain = 0, plainWall = 0, profWall = 0;
  for (auto _ : state) {
    Run a = runCommand(plain, tmp / "plain.out");
    Run b = runCommand(profiled, tmp / "prof.out");
    plainTrain += a.trainingS, profTrain += b.trainingS;
    plainWall += a.wallS, profWall += b.wallS;
    if (a.trainingS <= 0 || b.trainingS <= 0) state.SkipWithError("the sample did not report");
  }
  fs::remove_all(tmp);
  state.counters["slowdown"] = profTrain / plainTrain;
  state.counters["end_to_end_slowdown"] = profWall / plainWall;
  state.counters["plain_s"] = plainTrain / double(state.iterations());
  state.counters["profiled_s"] = profTrain / double(state.iterations());
}
BENCHMARK(BM_CpuSampleSlowdown)->Arg(20000)->Iterations(5)->Unit(benchmark::kMillisecond);

#endif

}  // namespace

int main(int argc, char** argv) {
#ifndef RLSCOPE_BENCH_COLLECTOR_OFF
  // Attach the collector as rlscope-prof does, before the first NVTX call.
  const fs::path parts =
      fs::temp_directory_path() / ("rlscope-bench-parts-" + std::to_string(getpid()));
  fs::create_directories(parts);
  setenv("RLSCOPE_PART_DIR", parts.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", RLSCOPE_BENCH_COLLECTOR, 1);
  setenv("RLSCOPE_FEATURES", "nvtx", 1);
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
#ifndef RLSCOPE_BENCH_COLLECTOR_OFF
  fs::remove_all(parts);  // the part is unlinked; the collector's last write goes nowhere
#endif
  return 0;
}
