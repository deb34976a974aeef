// The timeline's data layer against docs/performance.md (GUI: a 10 M-event trace opens in < 3 s,
// any zoom or pan frame < 16 ms): - BM_LoadTimeline: TraceReader + loadTimeline on a synthetic
// RL-shaped trace written with
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
// The trace is support/synthetic_rl_trace.h's (10 M events): RL-shaped, with idle gaps of all
// scales between steps. For clean memory figures run the load alone:
//   bench_gui --benchmark_filter=BM_LoadTimeline
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rlscope/gui_model/correlation_index.h"
#include "rlscope/gui_model/event_details.h"
#include "rlscope/gui_model/event_search.h"
#include "rlscope/gui_model/lod_query.h"
#include "rlscope/gui_model/timeline_data.h"
#include "rlscope/trace/reader.h"
#include "support/process_memory.h"
#include "support/synthetic_rl_trace.h"

namespace {

namespace fs = std::filesystem;
namespace trace = rlscope::trace;
namespace gui = rlscope::gui;
using trace::TimeNs;

constexpr std::int64_t kEvents = 10'000'000;
rlscope::bench::SyntheticRlTrace& traceFile() {
  static rlscope::bench::SyntheticRlTrace trace("gui_bench", kEvents);
  return trace;
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
