// The breakdown of a time window (AnalyzeOptions::window, the GUI's selected range) on small
// constructed traces with exact expected times: intervals clipped, calls counted where they start,
// the correction's events those inside, and a window holding everything the whole run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "step_trace.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {
namespace {

using testing::addApiCall;
using testing::addCpu;
using testing::addKernel;
using testing::addOperation;
using testing::addProcess;
using trace::Category;

Breakdown analyzeWindow(const std::filesystem::path& path, trace::TimeNs t0, trace::TimeNs t1) {
  trace::TraceReader reader(path);
  AnalyzeOptions options;
  options.window = TimeWindow{t0, t1};
  return analyzeTrace(reader, options);
}

TEST(Window, HoldingTheWholeTraceIsTheWholeRun) {
  testing::TempDir dir;
  auto path = writeStepTrace(dir, {.correlation = 7});
  trace::TraceReader reader(path);
  Breakdown whole = analyzeTrace(reader);
  for (auto [t0, t1] : {std::pair<trace::TimeNs, trace::TimeNs>{0, 120}, {-1000, 1000}}) {
    Breakdown b = analyzeWindow(path, t0, t1);
    EXPECT_FALSE(b.window.has_value());
    EXPECT_EQ(b.totalNs, whole.totalNs);
    ASSERT_EQ(b.operations.size(), whole.operations.size());
    for (std::size_t i = 0; i < b.operations.size(); ++i) {
      const auto &x = b.operations[i], &y = whole.operations[i];
      EXPECT_EQ(x.name, y.name);
      EXPECT_EQ(x.time, y.time);
      EXPECT_EQ(x.cpu, y.cpu);
      EXPECT_EQ(x.cpuGpu, y.cpuGpu);
      EXPECT_EQ(x.gpu, y.gpu);
      EXPECT_EQ(x.launchedGpu, y.launchedGpu);
      EXPECT_EQ(x.instances, y.instances);
      EXPECT_EQ(x.categories.size(), y.categories.size());
    }
  }
}

TEST(Window, IntervalsAreClippedAndOperationsOutsideLeftOut) {
  testing::TempDir dir;
  Breakdown b = analyzeWindow(writeStepTrace(dir, {.correlation = 7}), 0, 50);
  ASSERT_TRUE(b.window.has_value());
  EXPECT_EQ(b.totalNs, 50);
  ASSERT_NE(findOperation(b, "inference"), nullptr);
  EXPECT_EQ(findOperation(b, "inference")->time, 30);
  EXPECT_EQ(setTime(*findOperation(b, "inference"), {"Backend", "Python"}), 20);
  ASSERT_NE(findOperation(b, "step"), nullptr);
  EXPECT_EQ(findOperation(b, "step")->time, 50 - 30);  // [0, 10) and [40, 50)
  EXPECT_EQ(findOperation(b, "backprop"), nullptr);
  EXPECT_EQ(findOperation(b, kUnannotatedName),
            nullptr);  // the worker's Backend is after the window
}

TEST(Window, GpuTimeIsClippedAndLaunchesCountWhereTheyStart) {
  testing::TempDir dir;
  auto path = writeStepTrace(dir, {.correlation = 7});
  // [60, 100): the launch [60, 62) is inside, so the kernel it launched counts whole.
  Breakdown b = analyzeWindow(path, 60, 100);
  EXPECT_EQ(b.totalNs, 40);
  const auto* backprop = findOperation(b, "backprop");
  ASSERT_NE(backprop, nullptr);
  EXPECT_EQ(backprop->time, 30);
  EXPECT_EQ(backprop->instances, 1u);
  EXPECT_EQ(setTime(*backprop, {"Backend", "CUDA API", "Python"}), 1);
  EXPECT_EQ(setTime(*backprop, {"Backend", "CUDA API", "GPU kernel", "Python"}), 1);
  EXPECT_EQ(setTime(*backprop, {"Backend", "GPU kernel", "Python"}), 18);
  EXPECT_EQ(setTime(*backprop, {"Backend", "Python"}), 5);
  EXPECT_EQ(setTime(*backprop, {"Python"}), 5);
  EXPECT_EQ(backprop->cpuGpu, 19);
  EXPECT_EQ(backprop->launchedGpu, 19);
  EXPECT_EQ(backprop->transitions.toCudaApi, 1u);
  EXPECT_EQ(findOperation(b, "step")->time, 10);
  EXPECT_EQ(findOperation(b, "inference"), nullptr);

  // [70, 100): the kernel runs [70, 80) inside, but was launched before: wall time, no launch.
  b = analyzeWindow(path, 70, 100);
  backprop = findOperation(b, "backprop");
  ASSERT_NE(backprop, nullptr);
  EXPECT_EQ(backprop->cpuGpu, 10);
  EXPECT_EQ(backprop->launchedGpu, 0);
  EXPECT_EQ(backprop->transitions.toCudaApi, 0u);
  EXPECT_EQ(backprop->transitions.pythonToBackend, 0u);  // the Backend call started at 55
  for (const auto& o : b.operations) EXPECT_EQ(o.launchedGpu, 0) << o.name;

  // [55, 62): the launch is inside, the kernel mostly after it: launched whole, run clipped.
  b = analyzeWindow(path, 55, 62);
  backprop = findOperation(b, "backprop");
  ASSERT_NE(backprop, nullptr);
  EXPECT_EQ(backprop->launchedGpu, 19);
  EXPECT_EQ(backprop->cpuGpu, 1);
  EXPECT_EQ(backprop->transitions.pythonToBackend, 1u);
}

// Operations of two threads that both started before the window start together once clipped:
// the one that started last still owns the time, as without a window.
TEST(Window, ClippedOperationsKeepTheirOwnership) {
  testing::TempDir dir;
  auto path = dir / "threads.sqlite";
  {
    trace::TraceWriter w(path);
    addProcess(w, kPid);
    addCpu(w, 0, 100, Category::kPython, kMain);
    addCpu(w, 20, 60, Category::kSimulator, kWorker);
    addOperation(w, 2, 20, 60, "simulate", kWorker);
    addOperation(w, 1, 0, 100, "train", kMain);
    w.commit();
  }
  Breakdown b = analyzeWindow(path, 30, 80);
  ASSERT_NE(findOperation(b, "simulate"), nullptr);
  EXPECT_EQ(findOperation(b, "simulate")->time, 30);
  EXPECT_EQ(findOperation(b, "train")->time, 20);
}

TEST(Window, EmptyOrInvertedWindowsHaveNothing) {
  testing::TempDir dir;
  auto path = writeStepTrace(dir, {.correlation = 7});
  for (auto [t0, t1] : {std::pair<trace::TimeNs, trace::TimeNs>{50, 50}, {80, 20}, {500, 600}}) {
    Breakdown b = analyzeWindow(path, t0, t1);
    EXPECT_EQ(b.totalNs, 0);
    EXPECT_TRUE(b.operations.empty());
  }
}

// Costs for the trace of testing::writeCorrectableTrace (support/trace_builder.h): one operation
// [0, 1000) whose Python thread calls the backend [400, 600), which launches a kernel [500, 900)
// at [420, 430).
Calibration knownCosts() {
  Calibration c;
  c.uninstrumentedNs = {1700, 0, 1};
  c.costs = {{cost::kProcess, "", {10, 0, 1}},
             {cost::kAnnotation, "", {100, 0, 1}},
             {cost::kPythonTransition, "", {50, 0, 1}},
             {cost::kCupti, "cudaLaunchKernel", {5, 0, 1}}};
  return c;
}

bool hasNoteStarting(const Correction& c, const std::string& prefix) {
  return std::any_of(c.notes.begin(), c.notes.end(),
                     [&](const std::string& n) { return n.starts_with(prefix); });
}

TEST(Window, CorrectionCountsTheEventsInside) {
  testing::TempDir dir;
  auto path = testing::writeCorrectableTrace(
      dir, R"({"nvtx": true, "python": true, "cuda_api": true, "gpu_activity": true})");
  Calibration cal = knownCosts();
  auto analyze = [&](trace::TimeNs t0, trace::TimeNs t1) {
    trace::TraceReader reader(path);
    AnalyzeOptions options{.calibration = &cal, .calibrationOrigin = "test"};
    options.window = TimeWindow{t0, t1};
    return analyzeTrace(reader, options);
  };

  // [0, 500): the annotation [0, 100), the transition before the call [350, 400) and CUPTI's
  // [420, 425) are inside; the transition after it, [600, 650), is not.
  Breakdown b = analyze(0, 500);
  ASSERT_TRUE(b.correction.has_value());
  const Correction& c = *b.correction;
  EXPECT_EQ(findOperation(b, "update")->time, 500 - 100 - 50 - 5);
  EXPECT_EQ(c.sources.at(cost::kAnnotation).events, 1);
  EXPECT_EQ(c.sources.at(cost::kAnnotation).breakdownNs, 100);
  EXPECT_EQ(c.sources.at(cost::kPythonTransition).events, 2);  // the one call, in and out
  EXPECT_EQ(c.sources.at(cost::kPythonTransition).breakdownNs, 50);
  EXPECT_EQ(c.sources.at(cost::kCupti).events, 1);
  EXPECT_EQ(c.sources.count(cost::kProcess), 0u);
  EXPECT_TRUE(hasNoteStarting(c, cost::kProcess)) << "the process cost is the whole run's";
  EXPECT_DOUBLE_EQ(c.uncorrectedTotalNs, 500);
  EXPECT_DOUBLE_EQ(c.correctedTotalNs, 500 - 100 - 2 * 50 - 5);
  EXPECT_FALSE(c.biasPct.has_value());

  // [500, 1000): no event starts inside; the transition after the call still costs the CPU time
  // under it, which leaves the kernel as GPU-only time.
  b = analyze(500, 1000);
  const auto* update = findOperation(b, "update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->time, 500);
  EXPECT_EQ(setTime(*update, {"Backend", "GPU kernel", "Python"}), 100);
  EXPECT_EQ(setTime(*update, {"GPU kernel"}), 50);
  EXPECT_EQ(setTime(*update, {"GPU kernel", "Python"}), 250);
  EXPECT_EQ(setTime(*update, {"Python"}), 100);
  EXPECT_EQ(b.correction->sources.at(cost::kAnnotation).events, 0);
  EXPECT_EQ(b.correction->sources.at(cost::kPythonTransition).events, 0);
  EXPECT_DOUBLE_EQ(b.correction->correctedTotalNs, 500);
}

}  // namespace
}  // namespace rlscope::analysis
