// The timeline's data layer against design.md §6 (GUI: a 10 M-event trace opens in < 3 s, any
// zoom or pan frame < 16 ms):
// - BM_LoadTimeline: TraceReader + loadTimeline on a synthetic RL-shaped trace written with
//   TraceWriter into a temporary directory (removed at exit). Counters: `events` (rows loaded),
//   items_per_second, `peak_rss_MiB` (the process's peak resident memory during the load, reset
//   before it where /proc/self/clear_refs allows, else the growth of the high-water mark),
//   `bytes_per_item` (sizeof(TrackItem)), `tracks`.
// - BM_LodFrame/Z: one frame = the level-of-detail query of every track of that trace, 2000
//   pixels wide, over a window of 1/Z of the trace, panned to a new place each frame. Counters:
//   `median_ms` and `worst_ms` per frame, `blocks` drawn per frame.
// - BM_CorrelationIndex: building the API call <-> GPU activity index of that trace. Counters:
//   `linked` (calls and activities indexed), `bytes_per_linked`, `bytes_per_event` (over all
//   items), `index_MiB`.
// - BM_Search/Q: a search over that trace: 0 a substring ignoring case ("kernel": launches and two
//   of the four kernels), 1 a regex ("^(sgemm|adam)_"), 2 an exact name ("aten::addmm"), 3 no
//   match. Counters: `matches`, `bytes_per_match`, `next_us` (one next(t) at a random time).
// - BM_EventDetails: what a click costs, the details of random items of every track read back
//   from the trace (cold statements on the first read). Counters: `mean_us`, `worst_us`.
// The trace is RL-shaped as in analysis_bench: a main thread running steps (inference,
// simulation, backprop) of Python, Backend and Simulator intervals, with CUDA launches nested in
// the Backend calls and their kernels, copies and memsets queued on two streams; a prefetching
// worker thread; idle gaps of all scales between steps. For clean memory figures run the load
// alone:
//   bench_gui --benchmark_filter=BM_LoadTimeline
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "correlation_index.h"
#include "event_details.h"
#include "event_search.h"
#include "lod_query.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/process_memory.h"
#include "timeline_data.h"

namespace {

namespace fs = std::filesystem;
namespace trace = rlscope::trace;
namespace gui = rlscope::gui;
using trace::Category;
using trace::TimeNs;

constexpr std::int64_t kEvents = 10'000'000;
constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, 4242);
constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 4243);

// Writes the synthetic trace of about `events` rows; returns the number of rows.
std::int64_t writeTrace(const fs::path& path, std::int64_t events) {
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
  w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
  w.addThread({kMain, trace::globalPidOf(kPid), 4242, "MainThread"});
  w.addThread({kWorker, trace::globalPidOf(kPid), 4243, "prefetch"});
  const trace::StringId step = w.intern("step"), prefetch = w.intern("prefetch"),
                        launch = w.intern("cudaLaunchKernel"),
                        memcpyAsync = w.intern("cudaMemcpyAsync"),
                        memsetAsync = w.intern("cudaMemsetAsync"), python = w.intern("train.py"),
                        simulator = w.intern("mujoco.mj_step"), backend = w.intern("aten::addmm");
  const trace::StringId parts[] = {w.intern("inference"), w.intern("simulation"),
                                   w.intern("backprop")};
  const trace::StringId kernels[] = {w.intern("sgemm_128x64_nn"), w.intern("relu_kernel"),
                                     w.intern("reduce_kernel"), w.intern("adam_update")};
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<TimeNs> slice(200, 3000), api(2000, 6000), gpu(1000, 8000);
  // Idle time between steps (waiting for the environment, logging, evaluation), log-uniform from
  // 1 µs to 50 ms: at every zoom level some gaps are a pixel wide or more, so the query has runs
  // to end and blocks to return, as in a real trace.
  std::uniform_real_distribution<double> logIdle(std::log(1e3), std::log(5e7));
  auto idle = [&](std::mt19937_64& r) { return static_cast<TimeNs>(std::exp(logIdle(r))); };

  std::int64_t rows = 0, opId = 0, correlation = 0;
  TimeNs streamFree[2] = {0, 0};
  auto cpu = [&](TimeNs s, TimeNs e, Category c, std::int64_t tid, trace::StringId name) {
    w.addCpuInterval({.start = s, .end = e, .globalTid = tid, .category = c, .nameId = name});
    ++rows;
  };
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
  // A Backend call from Python at `t` holding one CUDA call; the GPU work it launches is queued
  // on its stream. Returns the end of the Backend call.
  auto backendCall = [&](TimeNs t, int i) {
    TimeNs n = slice(rng), a = api(rng);
    TimeNs apiStart = t + n / 2, apiEnd = apiStart + a;
    cpu(t, apiEnd + n / 2, Category::kBackend, kMain, backend);
    int kind = i % 10 == 9 ? 2 : i % 8 == 7 ? 1 : 0;  // memset, memcpy, kernel
    trace::ApiCallRecord call;
    call.start = apiStart;
    call.end = apiEnd;
    call.globalTid = kMain;
    call.correlationId = ++correlation;
    call.nameId = kind == 0 ? launch : kind == 1 ? memcpyAsync : memsetAsync;
    w.addApiCall(trace::ApiKind::kRuntime, call);
    int stream = i & 1;
    TimeNs start = std::max(apiEnd - a / 4, streamFree[stream]);
    TimeNs end = streamFree[stream] = start + gpu(rng);
    if (kind == 0) {
      trace::KernelRecord k;
      k.start = start;
      k.end = end;
      k.streamId = 7 + stream;
      k.correlationId = correlation;
      k.globalPid = trace::globalPidOf(kPid);
      k.shortName = k.demangledName = kernels[i & 3];
      w.addKernel(k);
    } else if (kind == 1) {
      trace::MemcpyRecord m;
      m.start = start;
      m.end = end;
      m.streamId = 7 + stream;
      m.correlationId = correlation;
      m.globalPid = trace::globalPidOf(kPid);
      m.copyKind = 1;
      m.bytes = 1 << 20;
      w.addMemcpy(m);
    } else {
      trace::MemsetRecord m;
      m.start = start;
      m.end = end;
      m.streamId = 7 + stream;
      m.correlationId = correlation;
      m.globalPid = trace::globalPidOf(kPid);
      m.bytes = 1 << 16;
      w.addMemset(m);
    }
    rows += 2;
    return apiEnd + n / 2;
  };

  TimeNs t = 1'000'000;
  while (rows < events) {
    TimeNs stepStart = t;
    std::int64_t stepId = ++opId;
    for (int p = 0; p < 3; ++p) {
      std::int64_t partId = ++opId;
      TimeNs partStart = t;
      for (int i = 0; i < 10; ++i) {
        TimeNs py = slice(rng);
        cpu(t, t + py, Category::kPython, kMain, python);
        t += py;
        if (p == 1) {
          TimeNs s = slice(rng);
          cpu(t, t + s, Category::kSimulator, kMain, simulator);
          t += s;
        } else {
          t = backendCall(t, i);
        }
      }
      op(partId, partStart, t, parts[p], stepId, 1, kMain);
    }
    op(stepId, stepStart, t, step, 0, 0, kMain);
    TimeNs ws = stepStart + slice(rng), b = slice(rng) * 4;
    op(++opId, ws, ws + 2 * b, prefetch, 0, 0, kWorker);
    cpu(ws, ws + b, Category::kPython, kWorker, python);
    cpu(ws + b, ws + 2 * b, Category::kBackend, kWorker, backend);
    t += idle(rng);
  }
  w.commit();
  return rows;
}

// The trace, written on first use into a temporary directory removed at exit.
class TraceFile {
 public:
  ~TraceFile() {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  const fs::path& path() {
    if (path_.empty()) {
      dir_ = fs::temp_directory_path() / ("rlscope_gui_bench." + std::to_string(::getpid()));
      fs::create_directories(dir_);
      path_ = dir_ / "rl_10M.sqlite";
      rows_ = writeTrace(path_, kEvents);
    }
    return path_;
  }
  std::int64_t rows() {
    path();
    return rows_;
  }

 private:
  fs::path dir_, path_;
  std::int64_t rows_ = 0;
};

TraceFile& traceFile() {
  static TraceFile f;
  return f;
}

void BM_LoadTimeline(benchmark::State& state) {
  const fs::path& path = traceFile().path();
  double before = rlscope::bench::procStatusKiB("VmRSS");
  bool reset = rlscope::bench::resetPeakRss();
  double hwmBefore = rlscope::bench::procStatusKiB("VmHWM");
  std::int64_t items = 0, tracks = 0;
  for (auto _ : state) {
    trace::TraceReader reader(path);
    gui::TimelineData data = gui::loadTimeline(reader);
    items = data.itemCount;
    tracks = 0;
    data.forEachTrack([&](const gui::Track&) { ++tracks; });
    benchmark::DoNotOptimize(data.processes.data());
  }
  double hwmAfter = rlscope::bench::procStatusKiB("VmHWM");
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["events"] = static_cast<double>(items);
  state.counters["tracks"] = static_cast<double>(tracks);
  state.counters["bytes_per_item"] = sizeof(gui::TrackItem);
  state.counters["rss_before_MiB"] = before / 1024;
  state.counters["peak_rss_MiB"] = (reset ? hwmAfter : before + hwmAfter - hwmBefore) / 1024;
}
BENCHMARK(BM_LoadTimeline)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The loaded trace for the frame benchmarks, kept for all of them.
const gui::TimelineData& timeline() {
  static std::unique_ptr<gui::TimelineData> data = [] {
    trace::TraceReader reader(traceFile().path());
    return std::make_unique<gui::TimelineData>(gui::loadTimeline(reader));
  }();
  return *data;
}

void BM_LodFrame(benchmark::State& state) {
  const gui::TimelineData& data = timeline();
  std::vector<const gui::Track*> tracks;
  data.forEachTrack([&](const gui::Track& t) { tracks.push_back(&t); });
  std::vector<std::vector<gui::LodBlock>> blocks(tracks.size());  // reused, as a painter would

  constexpr int kWidth = 2000;
  const TimeNs span = data.span.end - data.span.start;
  const TimeNs window = std::max<TimeNs>(1, span / state.range(0));
  std::vector<double> frameMs;
  std::size_t drawn = 0;
  double pan = 0;
  for (auto _ : state) {
    pan += 0.6180339887;  // a new place each frame, spread over the whole trace
    pan -= static_cast<int>(pan);
    TimeNs start = data.span.start + static_cast<TimeNs>(pan * static_cast<double>(span - window));
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < tracks.size(); ++i)
      gui::queryLod(tracks[i]->row, {start, start + window, kWidth}, blocks[i]);
    auto t1 = std::chrono::steady_clock::now();
    frameMs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (const auto& b : blocks) drawn += b.size();
  }
  std::sort(frameMs.begin(), frameMs.end());
  state.counters["median_ms"] = frameMs[frameMs.size() / 2];
  state.counters["worst_ms"] = frameMs.back();
  state.counters["blocks"] = static_cast<double>(drawn) / static_cast<double>(frameMs.size());
  state.counters["tracks"] = static_cast<double>(tracks.size());
}
// Z: the window is 1/Z of the trace (about 440 s): 1 is the whole trace, 10^7 about 45 µs.
BENCHMARK(BM_LodFrame)
    ->RangeMultiplier(10)
    ->Range(1, 10'000'000)
    ->Iterations(200)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_CorrelationIndex(benchmark::State& state) {
  const gui::TimelineData& data = timeline();
  std::size_t linked = 0, bytes = 0;
  for (auto _ : state) {
    gui::CorrelationIndex index(data);
    linked = index.calls() + index.activities();
    bytes = index.memoryBytes();
    benchmark::DoNotOptimize(linked);
  }
  state.SetItemsProcessed(state.iterations() * data.itemCount);
  state.counters["linked"] = static_cast<double>(linked);
  state.counters["bytes_per_linked"] = static_cast<double>(bytes) / static_cast<double>(linked);
  state.counters["bytes_per_event"] =
      static_cast<double>(bytes) / static_cast<double>(data.itemCount);
  state.counters["index_MiB"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_CorrelationIndex)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Search(benchmark::State& state) {
  const gui::TimelineData& data = timeline();
  using Mode = gui::SearchQuery::Mode;
  static const gui::SearchQuery kQueries[] = {
      {.text = "kernel", .mode = Mode::kSubstring},
      {.text = "^(sgemm|adam)_", .mode = Mode::kRegex},
      {.text = "aten::addmm", .mode = Mode::kExact, .caseSensitive = true},
      {.text = "no such event", .mode = Mode::kSubstring}};
  const gui::SearchQuery& query = kQueries[state.range(0)];
  std::size_t matches = 0, bytes = 0;
  double nextUs = 0;
  for (auto _ : state) {
    gui::EventSearch search(data, query);
    matches = search.count();
    bytes = search.memoryBytes();
    state.PauseTiming();
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<TimeNs> at(data.span.start, data.span.end);
    constexpr int kSteps = 10'000;
    auto t0 = std::chrono::steady_clock::now();
    std::size_t sum = 0;
    for (int i = 0; i < kSteps; ++i) sum += search.next(at(rng)).value_or(0);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sum);
    nextUs = std::chrono::duration<double, std::micro>(t1 - t0).count() / kSteps;
    state.ResumeTiming();
  }
  state.SetLabel(query.text);
  state.SetItemsProcessed(state.iterations() * data.itemCount);
  state.counters["matches"] = static_cast<double>(matches);
  state.counters["bytes_per_match"] =
      matches ? static_cast<double>(bytes) / static_cast<double>(matches) : 0;
  state.counters["next_us"] = nextUs;
}
BENCHMARK(BM_Search)->DenseRange(0, 3)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EventDetails(benchmark::State& state) {
  const gui::TimelineData& data = timeline();
  std::vector<const gui::Track*> tracks;
  data.forEachTrack([&](const gui::Track& t) { tracks.push_back(&t); });
  gui::EventDetailsReader reader(traceFile().path());
  std::mt19937_64 rng(3);
  std::vector<double> us;
  std::size_t fields = 0;
  for (auto _ : state) {
    const gui::Track& t = *tracks[rng() % tracks.size()];
    const gui::TrackItem& item = t.row[rng() % t.row.size()];
    auto t0 = std::chrono::steady_clock::now();
    gui::EventDetails d = reader.read(data, t, item);
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    fields += d.fields.size();
  }
  double sum = 0;
  for (double u : us) sum += u;
  state.counters["mean_us"] = sum / static_cast<double>(us.size());
  state.counters["worst_us"] = *std::max_element(us.begin(), us.end());
  state.counters["fields"] = static_cast<double>(fields) / static_cast<double>(us.size());
}
BENCHMARK(BM_EventDetails)->Iterations(2000)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
