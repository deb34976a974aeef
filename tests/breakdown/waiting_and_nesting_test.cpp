// Waiting time (a blocked thread is not CPU time), CPU rows that nest in imported traces (the
// innermost is what ran), Python time inferred for PyTorch-profiler traces without Python stacks,
// and the bias's uncertainty and verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "step_trace.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {
namespace {

using testing::addCpu;
using testing::addKernel;
using testing::addOperation;
using testing::addProcess;
using trace::Category;

constexpr std::int64_t kProc = 7;
const std::int64_t kThread = trace::globalTidOf(kProc, 7);
const std::int64_t kOther = trace::globalTidOf(kProc, 8);

TEST(Waiting, ABlockedThreadIsWaitingNotCpuAndGivesWayToOtherWork) {
  testing::TempDir dir;
  auto path = dir / "waiting.sqlite";
  {
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    addProcess(w, kProc);
    // step [0, 400): Python 0-100, blocked in Connection.recv 100-300 (the GPU runs 150-200,
    // another thread computes 250-280), Python 300-400.
    addCpu(w, 0, 100, Category::kPython, kThread);
    addCpu(w, 100, 300, Category::kWaiting, kThread, "posix.read");
    addCpu(w, 300, 400, Category::kPython, kThread);
    addCpu(w, 250, 280, Category::kBackend, kOther);
    addKernel(w, {.start = 150, .end = 200, .pid = kProc, .correlation = 0});
    addOperation(w, 1, 0, 400, "step", kThread);
    w.commit();
  }
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  const auto& step = find(b, "step");
  EXPECT_EQ(step.time, 400);
  EXPECT_EQ(step.cpu, 200 + 30);
  EXPECT_EQ(step.gpu, 50);
  EXPECT_EQ(step.waiting, 200 - 50 - 30);
  EXPECT_EQ(setTime(step, {"Waiting"}), 120);
  EXPECT_EQ(setTime(step, {"GPU kernel"}), 50);  // the wait gives way to the GPU's work
  EXPECT_EQ(setTime(step, {"Backend"}), 30);     // and to the other thread's
  auto j = toJson(b);
  for (const auto& op : j["operations"]) {
    if (op["name"] == "step") {
      EXPECT_DOUBLE_EQ(op["waiting_us"].get<double>(), 0.120);
    }
  }
}

// A PyTorch-profiler trace's main thread: a step with two operators, the second launching a
// kernel (its CUDA API call inside it).
std::filesystem::path writeKinetoShaped(const testing::TempDir& dir, bool withStack) {
  auto path = dir / (withStack ? "with_stack.sqlite" : "no_stack.sqlite");
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kSourceFormat, "kineto");
  addProcess(w, kProc);
  addOperation(w, {.id = 1,
                   .start = 0,
                   .end = 100,
                   .name = "ProfilerStep#3",
                   .globalTid = kThread,
                   .source = trace::OperationSource::kKinetoUserAnnotation});
  if (withStack) {  // python_function rows nest: train_step > forward > the operators
    addCpu(w, 0, 100, Category::kPython, kThread, "train_step");
    addCpu(w, 5, 70, Category::kPython, kThread, "forward");
  }
  addCpu(w, 10, 30, Category::kBackend, kThread, "aten::linear");
  addCpu(w, 12, 18, Category::kBackend, kThread, "aten::addmm");  // an operator inside another
  addCpu(w, 50, 60, Category::kBackend, kThread, "aten::relu");
  addCpu(w, 52, 57, Category::kCudaApi, kThread, "cudaLaunchKernel");
  w.commit();
  return path;
}

// A stranger's trace may give operations parents in a cycle: finding the operation that made a
// call (the innermost open one, up the parents) must still end, and count the call where the
// containment says. (The walk went round the cycle for ever.)
TEST(HostileTraces, OperationsWhoseParentsFormACycleStillEnd) {
  testing::TempDir dir;
  auto path = dir / "cycle.sqlite";
  {
    trace::TraceWriter w(path);
    addProcess(w, kProc);
    addCpu(w, 0, 300, Category::kPython, kThread);
    addOperation(w, 1, 0, 100, "a", kThread, 2, 1);  // a's parent is b, b's is a
    addOperation(w, 2, 50, 80, "b", kThread, 1, 1);
    testing::addApiCall(w, 200, 210, kThread, 7);  // after both: made by neither
    testing::addApiCall(w, 60, 62, kThread, 8);    // inside b
    w.commit();
  }
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  EXPECT_EQ(find(b, "b").transitions.toCudaApi, 1);
  EXPECT_EQ(find(b, "a").transitions.toCudaApi, 0);
}

TEST(ImportedTraces, NestedRowsCountTheInnermostAndPythonIsInferredWithoutStacks) {
  testing::TempDir dir;
  for (bool withStack : {false, true}) {
    SCOPED_TRACE(withStack ? "with_stack" : "without stacks");
    trace::TraceReader reader(writeKinetoShaped(dir, withStack));
    Breakdown b = analyzeTrace(reader);
    const auto& step = find(b, "ProfilerStep#3");
    EXPECT_EQ(step.time, 100);
    // Between the operators the interpreter runs: Python, not idle, and never under an operator.
    EXPECT_EQ(setTime(step, {"Python"}), 10 + 20 + 40);
    EXPECT_EQ(setTime(step, {"Backend"}), 20 + 5);
    EXPECT_EQ(setTime(step, {"Backend", "CUDA API"}), 5);
    EXPECT_EQ(setTime(step, {"Backend", "Python"}), 0);
    EXPECT_EQ(setTime(step, {}), 0);
    EXPECT_EQ(step.cpu, 100);
    std::ostringstream table;
    writeTable(b, table);
    EXPECT_EQ(table.str().find("rlscope calibrate"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("only runs\nof rlscope-prof can be calibrated"), std::string::npos)
        << table.str();
  }
}

TEST(Correction, TheBiasHasAnUncertaintyAndAVerdict) {
  testing::TempDir dir;
  trace::TraceReader reader(testing::writeCorrectableTrace(
      dir, R"({"nvtx": true, "python": true, "cuda_api": true, "gpu_activity": true})"));
  auto correct = [&](std::vector<double> plain, std::vector<double> annotation) {
    Calibration c;
    c.uninstrumentedNs = statisticOf(plain);
    c.costs = {{cost::kAnnotation, "", statisticOf(annotation)}};
    return *analyzeTrace(reader, {.calibration = &c, .calibrationOrigin = "test"}).correction;
  };
  // Corrected: 2000 − 1 × 100 = 1900 against a median of 1900, which varies by 1.4826 × 10.
  Correction quiet = correct({1890, 1900, 1910, 1900, 1900}, {100, 100, 100});
  ASSERT_TRUE(quiet.biasPct && quiet.biasUncertaintyPct && quiet.verdict);
  EXPECT_NEAR(*quiet.biasPct, 0, 1e-9);
  double spread = 1.4826 * 0;  // deviations 10, 0, 10, 0, 0: their median is 0
  EXPECT_NEAR(*quiet.biasUncertaintyPct, spread, 1e-9);
  EXPECT_EQ(*quiet.verdict, Correction::Verdict::kWithinTarget);
  EXPECT_NE(biasLine(quiet).find("within"), std::string::npos) << biasLine(quiet);

  // A noisy machine: one run varies by about 10 %; the bias cannot be told.
  Correction noisy = correct({1700, 1900, 2100, 1800, 2000}, {100, 100, 100});
  ASSERT_TRUE(noisy.verdict);
  EXPECT_EQ(*noisy.verdict, Correction::Verdict::kTooNoisy);
  EXPECT_GT(*noisy.biasUncertaintyPct, kBiasTargetPct);
  EXPECT_NE(biasLine(noisy).find("too noisy to tell"), std::string::npos) << biasLine(noisy);
  EXPECT_EQ(toJson(Breakdown{.correction = noisy})["correction"]["bias_verdict"],
            "too_noisy_to_tell");

  // Quiet, but the correction is off by 10 %.
  Correction off = correct({1720, 1730, 1727, 1727, 1727}, {100, 100, 100});
  EXPECT_EQ(*off.verdict, Correction::Verdict::kOutsideTarget);

  // One uninstrumented run: no verdict, and the text says why.
  Correction once = correct({1900}, {100});
  EXPECT_FALSE(once.verdict);
  EXPECT_TRUE(std::isinf(*once.biasUncertaintyPct));
  EXPECT_NE(biasLine(once).find("uncertainty unknown"), std::string::npos) << biasLine(once);
}

// CSV is for scripts: every time at full precision, the same figure as the JSON's, not a
// 6-digit double ("3.74442e+06").
TEST(Output, CsvTimesAreExactMicroseconds) {
  Breakdown b;
  OperationBreakdown op;
  op.process = 7;
  op.name = "train, \"big\"";
  op.time = 3'744'422'260;
  op.categories = {{{"Backend", "Python"}, 3'744'422'260}, {{"Python"}, 1}};
  b.operations.push_back(op);
  std::ostringstream csv;
  writeCsv(b, csv);
  EXPECT_EQ(csv.str(),
            "process,operation,phase,set,time_us\n"
            "7,\"train, \"\"big\"\"\",,Backend+Python,3744422.260\n"
            "7,\"train, \"\"big\"\"\",,Python,0.001\n");
  EXPECT_EQ(toJson(b)["operations"][0]["categories"][0]["time_us"].get<double>(), 3744422.26);
}

}  // namespace
}  // namespace rlscope::analysis
