// `rlscope merge` (issue #19: merge speed for 8 and 64 rank traces of 1 M events each): mergeJob
// end to end, opening the inputs and committing the output included, on copies of the synthetic
// RL trace (bench/support/synthetic_rl_trace.h), each made another host's (its own host name and
// wall-clock origin, the same pids: every row of every copy after the first is renumbered), so
// that alignment is by wall clock (the traces have no collectives) and every row is copied.
//
// The inputs are written once per size, outside the timed loop, into a temporary directory that
// is removed at exit. Counters: `events` (rows merged), items_per_second (rows / s), `traces`.
//   bench_job_merge --benchmark_filter='BM_MergeJob/8/'
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rlscope/distributed/job_merge.h"
#include "rlscope/trace/sqlite.h"
#include "support/synthetic_rl_trace.h"

namespace {

namespace fs = std::filesystem;

class Inputs {
 public:
  Inputs(std::int64_t traces, std::int64_t events) {
    dir_ = fs::temp_directory_path() / ("rlscope_merge_bench." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    auto first = dir_ / "host0.sqlite";
    rowsPerTrace_ = rlscope::bench::writeSyntheticRlTrace(first, events);
    for (std::int64_t i = 0; i < traces; ++i) {
      auto path = dir_ / ("host" + std::to_string(i) + ".sqlite");
      if (i > 0) fs::copy_file(first, path, fs::copy_options::overwrite_existing);
      // Another host: its name, and a wall-clock origin 1 ms further on for each.
      rlscope::trace::Database db(path, rlscope::trace::Database::Mode::kCreate);
      db.exec("INSERT OR REPLACE INTO rlscope_meta VALUES ('host', 'node" + std::to_string(i) +
              "'), ('start_monotonic_ns', '0'), ('start_wall_ns', '" +
              std::to_string(1'700'000'000'000'000'000 + i * 1'000'000) + "')");
      paths_.push_back(path);
    }
  }
  ~Inputs() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const std::vector<fs::path>& paths() const { return paths_; }
  fs::path output() const { return dir_ / "job.sqlite"; }
  std::int64_t rows() const { return rowsPerTrace_ * static_cast<std::int64_t>(paths_.size()); }

 private:
  fs::path dir_;
  std::vector<fs::path> paths_;
  std::int64_t rowsPerTrace_ = 0;
};

void BM_MergeJob(benchmark::State& state) {
  Inputs inputs(state.range(0), state.range(1));
  for (auto _ : state) {
    auto report = rlscope::analysis::mergeJob(inputs.paths(), inputs.output());
    benchmark::DoNotOptimize(report.rows);
  }
  state.counters["traces"] = static_cast<double>(state.range(0));
  state.counters["events"] = static_cast<double>(inputs.rows());
  state.SetItemsProcessed(state.iterations() * inputs.rows());
}
BENCHMARK(BM_MergeJob)
    ->Args({8, 1'000'000})
    ->Args({64, 1'000'000})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
