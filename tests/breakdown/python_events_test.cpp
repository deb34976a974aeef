// Correction of the Python tracker's cost where it was paid: each span's events × their price
// from the span's start, δ around each native call, laid end to end where they meet
// (docs/calibration.md, "Python events").
#include <gtest/gtest.h>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/calibration/calibration.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "step_trace.h"

namespace rlscope::analysis {
namespace {

// One thread as rlscope-prof's merge writes it (flat rows): "inference" [0, 1000) calls the
// backend [300, 700); "simulation" [1000, 2000) calls the simulator [1100, 1900). The tracker
// handled 10, 6 and 4 events in the Python spans, the second of which runs from the backend
// call's return across the operations' boundary, and 16 more after the last transition.
std::filesystem::path writeTrackedTrace(const testing::TempDir& dir) {
  auto path = dir / "tracked.sqlite";
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kFeatures, R"({"nvtx": true, "python": true})");
  w.setMeta(trace::meta::kCommandElapsedNs, "3000");
  w.setMeta(trace::meta::kPythonTransitions, "4");
  w.setMeta(trace::meta::kPythonEvents, "36");
  testing::addProcess(w, kPid);
  auto row = [&](trace::TimeNs start, trace::TimeNs end, trace::Category c, std::int64_t events) {
    w.addCpuInterval(
        {.start = start, .end = end, .globalTid = kMain, .category = c, .pythonEvents = events});
  };
  row(0, 300, trace::Category::kPython, 10);
  row(300, 700, trace::Category::kBackend, 0);
  row(700, 1100, trace::Category::kPython, 6);
  row(1100, 1900, trace::Category::kSimulator, 0);
  row(1900, 2000, trace::Category::kPython, 4);
  testing::addOperation(w, 1, 0, 1000, "inference", kMain);
  testing::addOperation(w, 2, 1000, 2000, "simulation", kMain);
  w.commit();
  return path;
}

Calibration eventCosts() {
  Calibration c;
  c.uninstrumentedNs = {2400, 0, 1};
  c.costs = {{cost::kPythonEvent, "", {10, 0, 1}}, {cost::kPythonTransition, "", {50, 0, 1}}};
  return c;
}

TEST(PythonEvents, EachSpanPaysForItsEventsAndMeetingPiecesAddUp) {
  testing::TempDir dir;
  trace::TraceReader reader(writeTrackedTrace(dir));
  Calibration cal = eventCosts();
  Breakdown b = analyzeTrace(reader, {.calibration = &cal, .calibrationOrigin = "test"});
  // inference: events [0, 100); δ [250, 300) and [700, 750). The span [700, 1100)'s 60 ns of
  // events are shared 3:1 by its parts in "inference" and "simulation": 45 ns from 700, which
  // meet the δ after the call and follow it, [750, 795), and 15 ns [1000, 1015).
  const auto& inference = find(b, "inference");
  EXPECT_EQ(inference.time, 1000 - 100 - 50 - 50 - 45);
  EXPECT_EQ(setTime(inference, {"Python"}), 300 - 100 - 50 + 300 - 50 - 45);
  EXPECT_EQ(setTime(inference, {"Backend"}), 400);
  // simulation: [1000, 1015), δ [1050, 1100) and [1900, 1950), then the last span's 40 ns
  // [1950, 1990).
  const auto& simulation = find(b, "simulation");
  EXPECT_EQ(simulation.time, 1000 - 15 - 50 - 50 - 40);
  EXPECT_EQ(setTime(simulation, {"Simulator"}), 800);
  ASSERT_TRUE(b.correction);
  const Correction& c = *b.correction;
  EXPECT_EQ(c.sources.at(cost::kPythonEvent).breakdownNs, 100 + 45 + 15 + 40);
  EXPECT_EQ(c.sources.at(cost::kPythonTransition).breakdownNs, 4 * 50);
  // The whole run removes every event the tracker counted, those after the last transition too.
  EXPECT_EQ(c.sources.at(cost::kPythonEvent).events, 36);
  EXPECT_DOUBLE_EQ(c.correctedTotalNs, 3000 - 36 * 10 - 4 * 50);
}

TEST(PythonEvents, AWindowRemovesTheEventsOfTheSpansStartingInIt) {
  testing::TempDir dir;
  trace::TraceReader reader(writeTrackedTrace(dir));
  Calibration cal = eventCosts();
  Breakdown b = analyzeTrace(
      reader, {.calibration = &cal, .calibrationOrigin = "test", .window = TimeWindow{1000, 2000}});
  ASSERT_TRUE(b.correction);
  EXPECT_EQ(b.correction->sources.at(cost::kPythonEvent).events, 4);
}

TEST(PythonEvents, ACalibrationWithoutTheEventCostPricesTransitionsAlone) {
  testing::TempDir dir;
  trace::TraceReader reader(writeTrackedTrace(dir));
  Calibration cal = eventCosts();
  cal.costs.erase(cal.costs.begin());
  Breakdown b = analyzeTrace(reader, {.calibration = &cal, .calibrationOrigin = "test"});
  EXPECT_FALSE(b.correction->sources.contains(cost::kPythonEvent));
  EXPECT_EQ(find(b, "inference").time, 1000 - 50 - 50);
}

// Each row counts the tracker's events and the Python time in its own time, a span's shared by
// time between the operations it runs across: what calibration fits the slowdown to.
TEST(PythonEvents, RowsCountTheirEventsAndPythonTime) {
  testing::TempDir dir;
  trace::TraceReader reader(writeTrackedTrace(dir));
  Breakdown b = analyzeTrace(reader);
  EXPECT_DOUBLE_EQ(find(b, "inference").pythonEvents, 10 + 6 * 0.75);
  EXPECT_DOUBLE_EQ(find(b, "inference").pythonNs, 300 + 300);
  EXPECT_DOUBLE_EQ(find(b, "simulation").pythonEvents, 6 * 0.25 + 4);
  EXPECT_DOUBLE_EQ(find(b, "simulation").pythonNs, 100 + 100);
}

// The interpreter's slowdown comes off each Python span in proportion to its length, from the
// start of each of its parts, after the span's events; native spans pay none.
TEST(PythonEvents, TheInterpretersSlowdownComesOffPythonSpansOnly) {
  testing::TempDir dir;
  trace::TraceReader reader(writeTrackedTrace(dir));
  Calibration cal = eventCosts();
  cal.costs.push_back({cost::kPythonInterpreter, "", {0.1, 0, 1}});
  Breakdown b = analyzeTrace(reader, {.calibration = &cal, .calibrationOrigin = "test"});
  // 10 % of each Python span: 30 of [0, 300), 40 of [700, 1100) (30 in inference, 10 in
  // simulation), 10 of [1900, 2000).
  const auto& inference = find(b, "inference");
  EXPECT_EQ(inference.time, 1000 - 100 - 50 - 50 - 45 - 30 - 30);
  EXPECT_EQ(setTime(inference, {"Backend"}), 400);
  const auto& simulation = find(b, "simulation");
  EXPECT_EQ(simulation.time, 1000 - 15 - 50 - 50 - 40 - 10 - 10);
  EXPECT_EQ(setTime(simulation, {"Simulator"}), 800);
  ASSERT_TRUE(b.correction);
  const auto& slowdown = b.correction->sources.at(cost::kPythonInterpreter);
  EXPECT_EQ(slowdown.events, 300 + 400 + 100);  // its "events": the Python spans' ns
  EXPECT_DOUBLE_EQ(slowdown.removedNs, 80);
  EXPECT_EQ(slowdown.breakdownNs, 80);
  EXPECT_DOUBLE_EQ(b.correction->correctedTotalNs, 3000 - 36 * 10 - 4 * 50 - 80);
}

}  // namespace
}  // namespace rlscope::analysis
