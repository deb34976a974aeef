// TraceWriter throughput (docs/performance.md: trace writing >= 2 M events/s sustained, memory
// bounded by buffers). Each iteration writes a whole trace file of N rows, commit() (indexes, WAL
// checkpoint, rename) included, into the system temp directory.
//
// Counters: items_per_second = rows/s end to end (commit included); sustained_rows_per_s = rows/s
// while rows are being added (the writer's streaming rate, docs/performance.md); commit_s = the
// one-off cost of commit() (indexes, ANALYZE, rename); file_MiB = size of the finished trace;
// peak_rss_MiB = how far the process's peak resident set rose above its resident set before the
// iteration (the peak is reset through /proc/self/clear_refs first where the kernel allows it). It
// should not grow with N.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"
#include "rlscope/trace/writer.h"
#include "support/process_memory.h"

namespace {

namespace fs = std::filesystem;
using rlscope::trace::TraceWriter;

class TempTrace {
 public:
  TempTrace()
      : path_(fs::temp_directory_path() /
              ("rlscope_bench_" + std::to_string(::getpid()) + ".sqlite")) {}
  ~TempTrace() { remove(); }
  TempTrace(const TempTrace&) = delete;
  TempTrace& operator=(const TempTrace&) = delete;
  const fs::path& path() const { return path_; }
  void remove() {
    std::error_code ec;
    fs::remove(path_, ec);
  }

 private:
  fs::path path_;
};

// Runs `fill(writer, rows)` into a fresh trace per iteration and reports rows/s and peak RSS.
template <typename Fill>
void writeTraceBenchmark(benchmark::State& state, Fill fill) {
  const auto rows = static_cast<std::int64_t>(state.range(0));
  TempTrace file;
  double peakKiB = 0;
  std::uintmax_t fileBytes = 0;
  double addSeconds = 0, commitSeconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    file.remove();
    rlscope::bench::resetPeakRss();
    const double rssBefore = rlscope::bench::procStatusKiB("VmRSS");
    state.ResumeTiming();
    {
      auto t0 = std::chrono::steady_clock::now();
      TraceWriter writer(file.path());
      fill(writer, rows);
      auto t1 = std::chrono::steady_clock::now();
      writer.commit();
      auto t2 = std::chrono::steady_clock::now();
      addSeconds += std::chrono::duration<double>(t1 - t0).count();
      commitSeconds += std::chrono::duration<double>(t2 - t1).count();
    }
    state.PauseTiming();
    peakKiB = std::max(peakKiB, rlscope::bench::procStatusKiB("VmHWM") - rssBefore);
    fileBytes = fs::file_size(file.path());
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * rows);
  state.counters["peak_rss_MiB"] = peakKiB / 1024.0;
  state.counters["file_MiB"] = static_cast<double>(fileBytes) / (1024.0 * 1024.0);
  // The rate rows are taken in while the trace is being written, and the one-off cost of
  // commit() (index build, ANALYZE, rename) that items_per_second also includes.
  const double iterations = static_cast<double>(state.iterations());
  state.counters["sustained_rows_per_s"] =
      static_cast<double>(rows) * iterations / std::max(addSeconds, 1e-9);
  state.counters["commit_s"] = commitSeconds / iterations;
}

void BM_AddCpuInterval(benchmark::State& state) {
  writeTraceBenchmark(state, [](TraceWriter& w, std::int64_t rows) {
    constexpr std::array<const char*, 8> kNames = {
        "aten::linear",  "aten::addmm",      "aten::relu", "aten::softmax",
        "CartPole.step", "cudaLaunchKernel", "forward",    "backward"};
    std::array<rlscope::trace::StringId, kNames.size()> ids{};
    for (std::size_t i = 0; i < kNames.size(); ++i) ids[i] = w.intern(kNames[i]);
    rlscope::trace::CpuIntervalRecord r;
    r.globalTid = rlscope::trace::globalTidOf(4242, 4243);
    for (std::int64_t i = 0; i < rows; ++i) {
      r.start = 1'000'000 + i * 250;
      r.end = r.start + 180;
      r.category = static_cast<rlscope::trace::Category>(1 + i % 5);
      r.nameId = ids[static_cast<std::size_t>(i) % ids.size()];
      w.addCpuInterval(r);
    }
  });
}
BENCHMARK(BM_AddCpuInterval)
    ->Arg(1 << 20)
    ->Arg(1 << 22)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

void BM_AddKernel(benchmark::State& state) {
  writeTraceBenchmark(state, [](TraceWriter& w, std::int64_t rows) {
    std::array<rlscope::trace::StringId, 64> ids{};
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ids[i] = w.intern("void at::native::vectorized_elementwise_kernel<4, kernel_" +
                        std::to_string(i) + ">(int, float*, float const*)");
    }
    rlscope::trace::KernelRecord k;
    k.globalPid = rlscope::trace::globalPidOf(4242);
    k.contextId = 1;
    k.registersPerThread = 32;
    k.gridX = 1024;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    for (std::int64_t i = 0; i < rows; ++i) {
      k.start = 1'000'000 + i * 2'000;
      k.end = k.start + 1'500;
      k.streamId = 7 + i % 4;
      k.correlationId = i + 1;
      k.gridId = i + 1;
      k.demangledName = k.shortName = ids[static_cast<std::size_t>(i) % ids.size()];
      w.addKernel(k);
    }
  });
}
BENCHMARK(BM_AddKernel)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// The ceiling for BM_AddKernel: SQLite alone inserting the same 27-column kernel rows into the
// trace's own CUPTI_ACTIVITY_KIND_KERNEL table, on one thread, with the writer's settings
// (16 KiB pages, no journal, exclusive lock, 64 MiB cache, 64 rows per INSERT, no indexes) and
// nothing else: no staging, no queue, no strings. Whatever a single SQLite connection does, a
// kernel row cannot be written faster than this.
void BM_SqliteKernelRowCeiling(benchmark::State& state) {
  const auto rows = static_cast<std::int64_t>(state.range(0));
  constexpr int kColumns = 27, kBatch = 64;
  TempTrace file;
  double seconds = 0;
  for (auto _ : state) {
    file.remove();
    rlscope::trace::Database db(file.path(), rlscope::trace::Database::Mode::kCreate);
    db.exec("PRAGMA page_size=16384");
    db.exec("PRAGMA journal_mode=OFF");
    db.exec("PRAGMA synchronous=OFF");
    db.exec("PRAGMA locking_mode=EXCLUSIVE");
    db.exec("PRAGMA cache_size=-65536");
    rlscope::trace::createSchema(db);
    std::string sql = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ";
    for (int r = 0; r < kBatch; ++r) {
      sql += r ? ", (" : "(";
      for (int c = 0; c < kColumns; ++c) sql += c ? ", ?" : "?";
      sql += ")";
    }
    auto insert = db.prepare(sql);
    auto t0 = std::chrono::steady_clock::now();
    db.exec("BEGIN");
    for (std::int64_t i = 0; i < rows; i += kBatch) {
      int param = 1;
      for (std::int64_t r = i; r < i + kBatch; ++r) {
        const std::int64_t start = 1'000'000 + r * 2'000;
        const std::array<std::int64_t, kColumns> v = {start,      start + 1'500,
                                                      0,          1,
                                                      7 + r % 4,  r + 1,
                                                      4242,       1 + r % 64,
                                                      1 + r % 64, 0,
                                                      0,          0,
                                                      32,         1024,
                                                      1,          1,
                                                      256,        1,
                                                      1,          0,
                                                      0,          0,
                                                      0,          r + 1,
                                                      0,          0,
                                                      0};
        for (std::int64_t x : v) insert.bind(param++, x);
      }
      insert.step();
      insert.resetKeepingBindings();
    }
    db.exec("COMMIT");
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["sustained_rows_per_s"] =
      static_cast<double>(rows) * static_cast<double>(state.iterations()) / seconds;
}
BENCHMARK(BM_SqliteKernelRowCeiling)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
