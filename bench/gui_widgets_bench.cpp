// The viewer end to end, off screen, against docs/performance.md (a 10 M-event trace opens in < 3
// s; every zoom and pan frame < 16 ms, median and worst), on the synthetic RL trace of
// support/synthetic_rl_trace.h (10 M events, written once into a temporary directory): -
// BM_OpenInViewer: what File ▸ Open does on its worker thread (format detection, TraceReader,
//   loadTimeline) and then on the GUI thread (MainWindow::showDocument, the window's first paint,
//   grabbed to an image). Counters: `events`, items_per_second, `peak_rss_MiB`.
// - BM_PaintFrame/Z: a TimelineView with a 2000-pixel plot, 1200 pixels tall (every track in
//   view), showing 1/Z of the trace, panned to a new place each frame and rendered into an image:
//   the whole paintEvent (grid, level-of-detail queries, fills, names, ruler, labels), with an
//   event selected and linked and a search's matches framed (every sgemm kernel, 1 in 4).
//   Counters: `median_ms`, `worst_ms`.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QImage>
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "rlscope/gui_model/event_search.h"
#include "rlscope/gui_widgets/main_window.h"
#include "rlscope/gui_widgets/timeline_view.h"
#include "rlscope/gui_widgets/trace_file.h"
#include "support/process_memory.h"
#include "support/synthetic_rl_trace.h"

namespace {

namespace gui = rlscope::gui;
using rlscope::trace::TimeNs;

constexpr std::int64_t kEvents = 10'000'000;

rlscope::bench::SyntheticRlTrace& traceFile() {
  static rlscope::bench::SyntheticRlTrace trace("gui_widgets_bench", kEvents);
  return trace;
}

void BM_OpenInViewer(benchmark::State& state) {
  const auto& path = traceFile().path();
  const double before = rlscope::bench::procStatusKiB("VmRSS");
  const bool reset = rlscope::bench::resetPeakRss();
  const double hwmBefore = rlscope::bench::procStatusKiB("VmHWM");
  std::int64_t items = 0;
  for (auto _ : state) {
    gui::MainWindow window;
    window.resize(1600, 900);
    auto doc = gui::openTraceFile(path);
    items = doc->timeline.itemCount;
    window.showDocument(std::move(doc));
    window.show();
    benchmark::DoNotOptimize(window.grab().toImage().bits());
  }
  const double hwmAfter = rlscope::bench::procStatusKiB("VmHWM");
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["events"] = static_cast<double>(items);
  state.counters["peak_rss_MiB"] = (reset ? hwmAfter : before + hwmAfter - hwmBefore) / 1024;
}
BENCHMARK(BM_OpenInViewer)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PaintFrame(benchmark::State& state) {
  static std::shared_ptr<const gui::TraceDocument> doc = gui::openTraceFile(traceFile().path());
  gui::TimelineView view;
  view.setData(gui::TraceDocument::timelineOf(doc));
  view.resize(gui::TimelineView::kLabelWidth + 2000, 1200);
  // A selected CUDA call linked to its kernel, as after a click: the links are drawn too.
  const gui::TimelineData& data = doc->timeline;
  const gui::Track* calls = nullptr;
  const gui::Track* kernels = nullptr;
  data.forEachTrack([&](const gui::Track& t) {
    if (t.kind == gui::TrackKind::kCategories && t.subRow == 1 && !calls) calls = &t;
    if (t.kind == gui::TrackKind::kGpuStream && !kernels) kernels = &t;
  });
  if (calls && kernels) {
    view.select(gui::ItemLocation{calls, calls->row.size() / 2});
    view.setLinks({gui::ItemLocation{kernels, kernels->row.size() / 2}});
  }
  const auto search = std::make_shared<const gui::EventSearch>(data, gui::SearchQuery{"sgemm"});
  view.setHighlight([search](const gui::Track& track, std::size_t first, std::size_t count) {
    return search->matchesAny(track, first, count);
  });
  QImage image(view.size(), QImage::Format_RGB32);

  const double start = static_cast<double>(data.span.start);
  const double span = static_cast<double>(data.span.end - data.span.start);
  const double window = std::max(10.0, span / static_cast<double>(state.range(0)));
  std::vector<double> frameMs;
  double pan = 0;
  for (auto _ : state) {
    pan += 0.6180339887;  // a new place each frame, spread over the whole trace
    pan -= static_cast<int>(pan);
    const double t0 = start + pan * (span - window);
    const auto before = std::chrono::steady_clock::now();
    view.showWindow(t0, t0 + window);
    view.render(&image);
    const auto after = std::chrono::steady_clock::now();
    frameMs.push_back(std::chrono::duration<double, std::milli>(after - before).count());
  }
  std::sort(frameMs.begin(), frameMs.end());
  state.counters["median_ms"] = frameMs[frameMs.size() / 2];
  state.counters["worst_ms"] = frameMs.back();
}
// Z: the window is 1/Z of the trace (about 440 s): 1 is the whole trace, 10^7 about 45 µs.
BENCHMARK(BM_PaintFrame)
    ->RangeMultiplier(10)
    ->Range(1, 10'000'000)
    ->Iterations(100)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
