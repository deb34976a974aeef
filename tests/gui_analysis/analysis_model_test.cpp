// The analysis panel's model (rlscope/gui_analysis/analysis_model.h) on constructed traces with
// exact expected times: the whole run as the analyzer has it, ranges clipped, one operation with
// what nests in it, the bars' segments and the category table, the correction from a stored
// calibration, the what-if, errors and cancelling; a synthetic RL loop of any size (timed), and
// the real A100 AlexNet trace of ../shared/traces imported (skipped when absent).
#include "rlscope/gui_analysis/analysis_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gui_analysis/analysis_traces.h"
#include "rlscope/breakdown/breakdown.h"
#include "rlscope/import/importer.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

using trace::Category;

const OperationRow* find(const AnalysisResult& r, const std::string& name) {
  for (const auto& o : r.operations)
    if (o.name == name) return &o;
  return nullptr;
}

trace::TimeNs segment(const OperationRow& row, Resource resource, Category category) {
  for (const auto& s : row.segments)
    if (s.resource == resource && s.category == category) return s.time;
  return 0;
}

trace::TimeNs tableTime(const AnalysisResult& r, Resource resource,
                        std::optional<Category> category) {
  for (const auto& c : r.categories)
    if (c.resource == resource && c.category == category) return c.time;
  return 0;
}

AnalysisResult run(const std::filesystem::path& path, AnalysisScope scope = {},
                   std::string gpu = {}) {
  return analyze({.tracePath = path.string(), .scope = scope, .whatIfGpu = gpu});
}

class AnalysisModel : public ::testing::Test {
 protected:
  void SetUp() override { testing::writeAnalysisStep(step); }
  testing::TempDir dir;
  std::filesystem::path step = dir / "step.sqlite";
};

TEST_F(AnalysisModel, WholeRunIsTheAnalyzersBreakdown) {
  AnalysisResult r = run(step);
  ASSERT_TRUE(r.ok()) << r.error;
  trace::TraceReader reader(step);
  analysis::Breakdown b = analysis::analyzeTrace(reader);
  ASSERT_EQ(r.operations.size(), b.operations.size());
  trace::TimeNs time = 0, cpu = 0, cpuGpu = 0, gpu = 0;
  for (const auto& o : b.operations) {
    time += o.time;
    cpu += o.cpu;
    cpuGpu += o.cpuGpu;
    gpu += o.gpu;
    const OperationRow* row = find(r, o.name);
    ASSERT_NE(row, nullptr) << o.name;
    EXPECT_EQ(row->time, o.time);
    trace::TimeNs segments = 0;
    for (const auto& s : row->segments) segments += s.time;
    EXPECT_EQ(segments, row->time) << o.name;
  }
  EXPECT_EQ(r.totals.time, time);
  EXPECT_EQ(r.totals.cpu, cpu);
  EXPECT_EQ(r.totals.cpuGpu, cpuGpu);
  EXPECT_EQ(r.totals.gpu, gpu);
  EXPECT_EQ(r.scopeNs, b.totalNs);
  EXPECT_EQ(r.traceStart, 0);
  EXPECT_EQ(r.traceEnd, 120);
  EXPECT_FALSE(r.correction.corrected);
  EXPECT_FALSE(r.whatIf.has_value());
  // Longest first.
  for (std::size_t i = 1; i < r.operations.size(); ++i)
    EXPECT_GE(r.operations[i - 1].time, r.operations[i].time);
}

TEST_F(AnalysisModel, BarSegmentsAreTheInnermostCategoryPerResource) {
  AnalysisResult r = run(step);
  const OperationRow* backprop = find(r, "backprop");
  ASSERT_NE(backprop, nullptr);
  // backprop [50, 90): Python 50-55 and 85-90; +Backend 55-60 and 80-85; +CUDA API 60-61; with
  // the kernel: CUDA API 61-62, Backend 62-80.
  EXPECT_EQ(segment(*backprop, Resource::kCpu, Category::kPython), 10);
  EXPECT_EQ(segment(*backprop, Resource::kCpu, Category::kBackend), 10);
  EXPECT_EQ(segment(*backprop, Resource::kCpu, Category::kCudaApi), 1);
  EXPECT_EQ(segment(*backprop, Resource::kCpuGpu, Category::kCudaApi), 1);
  EXPECT_EQ(segment(*backprop, Resource::kCpuGpu, Category::kBackend), 18);
  EXPECT_EQ(backprop->segments.size(), 5u);
  EXPECT_DOUBLE_EQ(backprop->gpuBoundShare(), 19.0 / 40.0);
  EXPECT_EQ(backprop->launchedGpu, 19);
  // Drawing order: CPU first, then CPU+GPU; categories in their order.
  EXPECT_EQ(backprop->segments.front().resource, Resource::kCpu);
  EXPECT_EQ(backprop->segments.front().category, Category::kPython);
  EXPECT_EQ(backprop->segments.back().resource, Resource::kCpuGpu);

  // The table: every row's segments summed, percent of the breakdown's time (120 ns).
  EXPECT_EQ(tableTime(r, Resource::kCpuGpu, Category::kBackend), 18);
  EXPECT_EQ(tableTime(r, Resource::kCpu, Category::kBackend), 20 + 10 + 5 + 20);
  double percent = 0;
  for (const auto& c : r.categories) {
    percent += c.percent;
    EXPECT_FALSE(c.name.empty());
  }
  EXPECT_NEAR(percent, 100.0, 1e-9);
  // The longest: Backend on the CPU alone, 55 ns of 120 (the worker's 25 included).
  EXPECT_EQ(r.categories.front().name, "Backend");
  EXPECT_EQ(r.categories.front().time, 55);
}

TEST_F(AnalysisModel, ARangeHoldingEverythingIsTheWholeRun) {
  AnalysisResult whole = run(step);
  for (auto scope : {AnalysisScope::range(0, 120), AnalysisScope::range(-5000, 5000)}) {
    AnalysisResult r = run(step, scope);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.scopeNs, whole.scopeNs);
    ASSERT_EQ(r.operations.size(), whole.operations.size());
    for (std::size_t i = 0; i < r.operations.size(); ++i) {
      EXPECT_EQ(r.operations[i].name, whole.operations[i].name);
      EXPECT_EQ(r.operations[i].time, whole.operations[i].time);
      EXPECT_EQ(r.operations[i].segments.size(), whole.operations[i].segments.size());
    }
    EXPECT_EQ(r.categories.size(), whole.categories.size());
  }
}

TEST_F(AnalysisModel, AHalfRangeIsClipped) {
  AnalysisResult r = run(step, AnalysisScope::range(0, 60));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.scopeNs, 60);
  EXPECT_EQ(r.totals.time, 60);
  ASSERT_NE(find(r, "step"), nullptr);
  EXPECT_EQ(find(r, "step")->time, 20);  // [0, 10) and [40, 50)
  EXPECT_EQ(find(r, "inference")->time, 30);
  const OperationRow* backprop = find(r, "backprop");
  ASSERT_NE(backprop, nullptr);
  EXPECT_EQ(backprop->time, 10);  // [50, 60): Python, then Backend
  EXPECT_EQ(segment(*backprop, Resource::kCpu, Category::kPython), 5);
  EXPECT_EQ(segment(*backprop, Resource::kCpu, Category::kBackend), 5);
  EXPECT_EQ(backprop->launchedGpu, 0);  // the launch at 60 is after the range
  EXPECT_EQ(find(r, analysis::kUnannotatedName), nullptr);
  EXPECT_EQ(tableTime(r, Resource::kCpu, Category::kBackend), 20 + 5);
  EXPECT_EQ(tableTime(r, Resource::kCpu, Category::kPython), 20 + 10 + 5);

  // The two halves of the run add up to it.
  AnalysisResult rest = run(step, AnalysisScope::range(60, 120));
  AnalysisResult whole = run(step);
  EXPECT_EQ(r.totals.time + rest.totals.time, whole.totals.time);
  EXPECT_EQ(r.totals.cpuGpu + rest.totals.cpuGpu, whole.totals.cpuGpu);
}

TEST_F(AnalysisModel, OneOperationWithWhatNestsInIt) {
  AnalysisResult r = run(step, AnalysisScope::operation(1));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.operationName, "step");
  EXPECT_EQ(r.scopeNs, 100);
  ASSERT_EQ(r.operations.size(), 3u);
  EXPECT_EQ(r.operations[0].name, "step");
  EXPECT_FALSE(r.operations[0].nested);
  EXPECT_EQ(r.operations[0].time, 30);  // with the worker's Backend [95, 100) inside it
  EXPECT_TRUE(find(r, "inference")->nested);
  EXPECT_EQ(find(r, "inference")->time, 30);
  EXPECT_TRUE(find(r, "backprop")->nested);
  EXPECT_EQ(find(r, "backprop")->time, 40);
  EXPECT_EQ(r.totals.time, 100);
  EXPECT_EQ(r.concurrentNs, 0);

  // A leaf: its own span, none of its parent's.
  r = run(step, AnalysisScope::operation(3));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.operations.size(), 1u);
  EXPECT_EQ(r.operations[0].name, "backprop");
  EXPECT_EQ(r.operations[0].time, 40);
  EXPECT_EQ(r.operations[0].cpuGpu, 19);

  // By name: the analyzer's row of that name.
  r = run(step, AnalysisScope::operationNamed("inference"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.operations.size(), 1u);
  EXPECT_EQ(r.operations[0].time, 30);
  EXPECT_EQ(r.scopeNs, 30);
  EXPECT_EQ(scopeLabel(r.scope, r.traceStart, r.operationName), "Operation: inference");

  EXPECT_NE(run(step, AnalysisScope::operation(99)).error.find("no operation with id 99"),
            std::string::npos);
  EXPECT_FALSE(run(step, AnalysisScope::operationNamed("nope")).ok());
}

TEST_F(AnalysisModel, AnotherThreadsLaterOperationTakesItsTime) {
  auto path = dir / "threads.sqlite";
  {
    trace::TraceWriter w(path);
    testing::addAnalysisProcess(w);
    testing::addCpu(w, 0, 100, Category::kPython, testing::kAnalysisMain);
    testing::addCpu(w, 20, 50, Category::kSimulator, testing::kAnalysisWorker);
    testing::addOperation(w, 1, 0, 100, "train", testing::kAnalysisMain);
    testing::addOperation(w, 2, 20, 50, "simulate", testing::kAnalysisWorker);
    w.commit();
  }
  AnalysisResult r = run(path, AnalysisScope::operation(1));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.operations.size(), 1u);
  EXPECT_EQ(r.operations[0].time, 70);
  EXPECT_EQ(r.concurrentNs, 30);
}

TEST(AnalysisModelCorrection, AStoredCalibrationCorrects) {
  testing::TempDir dir;
  auto path = dir / "calibrated.sqlite";
  testing::writeAnalysisCalibrated(path);
  AnalysisResult r = run(path);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.correction.corrected);
  EXPECT_EQ(r.correction.calibrationOrigin, "stored in the trace");
  // The annotation [0, 100), the transition before the call [350, 400) and CUPTI's [420, 425)
  // are CPU time no longer in the bars; the one after it, [600, 650), leaves the kernel there.
  EXPECT_DOUBLE_EQ(r.correction.overheadRemovedNs, 100 + 50 + 5);
  EXPECT_EQ(find(r, "update")->time, 1000 - 155);
  EXPECT_DOUBLE_EQ(r.correction.uncorrectedTotalNs, 2000);
  EXPECT_DOUBLE_EQ(r.correction.correctedTotalNs, 2000 - 10 - 100 - 2 * 50 - 5);
  ASSERT_TRUE(r.correction.biasPct.has_value());

  AnalysisResult raw = analyze({.tracePath = path.string(), .correct = false});
  ASSERT_TRUE(raw.ok()) << raw.error;
  EXPECT_FALSE(raw.correction.corrected);
  EXPECT_EQ(find(raw, "update")->time, 1000);

  // A range: the events inside it, no bias.
  AnalysisResult range = run(path, AnalysisScope::range(0, 500));
  ASSERT_TRUE(range.ok()) << range.error;
  EXPECT_TRUE(range.correction.corrected);
  EXPECT_DOUBLE_EQ(range.correction.overheadRemovedNs, 155);
  EXPECT_FALSE(range.correction.biasPct.has_value());
}

TEST_F(AnalysisModel, WhatIfOnAnA100) {
  auto path = dir / "a100.sqlite";
  testing::writeAnalysisStep(path, true);
  for (const char* gpu : {"A100 SXM4 40GB", "H100 SXM"}) {
    AnalysisResult r = run(path, {}, gpu);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.whatIf.has_value()) << r.whatIfError;
    EXPECT_EQ(r.whatIf->target, gpu);
    EXPECT_EQ(r.whatIf->origin, "A100 SXM4 40GB");
    EXPECT_GT(r.whatIf->originNs, 0);
    EXPECT_GT(r.whatIf->predictedNs, 0);
    EXPECT_GT(r.whatIf->speedup, 0);
    EXPECT_FALSE(r.whatIf->verdict.empty());
    ASSERT_FALSE(r.whatIf->operations.empty());
    for (const auto& o : r.whatIf->operations) EXPECT_GT(o.predictedNs, 0) << o.name;
  }
  // A trace without GPU properties: the breakdown stands, the what-if says why not.
  AnalysisResult r = run(step, {}, "H100 SXM");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.whatIf.has_value());
  EXPECT_NE(r.whatIfError.find("GPU properties"), std::string::npos) << r.whatIfError;
  EXPECT_FALSE(r.operations.empty());
  // An unknown GPU likewise.
  r = run(path, {}, "Voodoo 2");
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.whatIfError.find("unknown GPU"), std::string::npos) << r.whatIfError;

  auto gpus = whatIfGpus();
  EXPECT_GE(gpus.size(), 20u);
  EXPECT_NE(std::find(gpus.begin(), gpus.end(), "A100 SXM4 40GB"), gpus.end());
}

TEST_F(AnalysisModel, ErrorsComeBackAsOneLine) {
  auto garbage = dir.write("garbage.sqlite", "this is not a trace");
  for (const auto& path : {garbage, dir / "missing.sqlite"}) {
    AnalysisResult r = run(path);
    EXPECT_FALSE(r.ok());
    EXPECT_FALSE(r.cancelled);
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
    EXPECT_TRUE(r.operations.empty());
  }
}

TEST_F(AnalysisModel, CancelStopsTheAnalysis) {
  int calls = 0;
  AnalysisResult r = analyze({.tracePath = step.string()}, [&](const std::string&) {
    ++calls;
    return false;
  });
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(calls, 1);
  std::vector<std::string> lines;
  r = analyze({.tracePath = step.string()}, [&](const std::string& line) {
    lines.push_back(line);
    return true;
  });
  EXPECT_TRUE(r.ok());
  EXPECT_GE(lines.size(), 2u);  // reading, then the process
}

TEST(AnalysisModelRanks, AJobsRanksSideBySideInTheWholeRunOnly) {
  testing::TempDir dir;
  auto job = dir / "job.sqlite";
  testing::writeAnalysisJob(job);
  AnalysisResult r = run(job);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  EXPECT_EQ(r.ranks[0].host, "node");
  EXPECT_EQ(r.ranks[0].collectives, 3u);
  EXPECT_EQ(r.ranks[0].waitingForOthers, 3 * 200);
  EXPECT_EQ(r.ranks[0].transferring, 3 * 200);
  EXPECT_EQ(r.ranks[1].collectivesLast, 3u);
  EXPECT_EQ(r.ranks[1].othersWaited, 3 * 200);
  EXPECT_EQ(r.ranks[1].doing, "simulate / Python");
  EXPECT_TRUE(r.rankNotes.empty());
  // A range is not the job's comparison; a trace of one process has no ranks.
  EXPECT_TRUE(run(job, AnalysisScope::range(0, 1500)).ranks.empty());
  testing::writeAnalysisStep(dir / "step.sqlite");
  EXPECT_TRUE(run(dir / "step.sqlite").ranks.empty());
}

TEST(AnalysisModelText, ScopeLabels) {
  EXPECT_EQ(scopeLabel(AnalysisScope::wholeRun(), 0), "Whole run");
  EXPECT_EQ(scopeLabel(AnalysisScope::range(1000 + 12'300'000, 1000 + 45'600'000), 1000),
            "Range 12.3 ms – 45.6 ms (33.3 ms)");
  EXPECT_EQ(scopeLabel(AnalysisScope::operation(7), 0, "inference"), "Operation: inference");
  EXPECT_EQ(scopeLabel(AnalysisScope::operation(7), 0), "Operation #7");
  EXPECT_EQ(resourceName(Resource::kCpuGpu), std::string("CPU+GPU"));
}

// A synthetic RL loop; RLSCOPE_GUI_ANALYSIS_EVENTS sets its size (default 100 000 events), and
// the times are printed.
TEST(AnalysisModelScale, SyntheticLoopAnalyzedInEveryScope) {
  std::int64_t events = 100'000;
  if (const char* e = std::getenv("RLSCOPE_GUI_ANALYSIS_EVENTS")) events = std::atoll(e);
  testing::TempDir dir;
  auto path = dir / "loop.sqlite";
  auto t0 = std::chrono::steady_clock::now();
  testing::writeAnalysisLoop(path, events / 10);
  double written = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  AnalysisResult plain = run(path);
  AnalysisResult whole = run(path, {}, "H100 SXM");
  ASSERT_TRUE(whole.ok()) << whole.error;
  ASSERT_TRUE(whole.whatIf.has_value()) << whole.whatIfError;
  AnalysisResult half = run(path, AnalysisScope::range(whole.traceStart, whole.traceEnd / 2));
  AnalysisResult other = run(path, AnalysisScope::range(whole.traceEnd / 2, whole.traceEnd + 1));
  AnalysisResult op = run(path, AnalysisScope::operation(4));  // the second step
  ASSERT_TRUE(half.ok() && other.ok() && op.ok());
  EXPECT_EQ(half.totals.time + other.totals.time, whole.totals.time);
  EXPECT_EQ(half.totals.gpu + other.totals.gpu, whole.totals.gpu);
  EXPECT_EQ(op.totals.time, 8'000);
  EXPECT_GT(whole.totals.cpuGpu, 0);
  EXPECT_EQ(plain.totals.time, whole.totals.time);
  std::printf(
      "[ timing ] %lld events: written %.2f s; whole run %.2f s, %.2f s with the H100 what-if; "
      "half range %.2f s, one step %.2f s\n",
      static_cast<long long>(events), written, plain.seconds, whole.seconds, half.seconds,
      op.seconds);
}

// The real A100 traces (AlexNet steps; a DDP step with NCCL, 40 k events), imported.
TEST(AnalysisModelReal, ImportedA100TracesHaveTime) {
  auto shared = testing::sharedTracesDir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  for (const char* name : {"a100_alexnet.json.gz", "a100_nccl.json.gz"}) {
    SCOPED_TRACE(name);
    auto source = shared / name;
    if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not there";
    testing::TempDir dir;
    auto path = dir / "imported.sqlite";
    import::importFile(source, path);
    AnalysisResult r = run(path, {}, "H100 SXM");
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.totals.time, 0);
    EXPECT_GT(r.totals.gpu + r.totals.cpuGpu, 0);
    EXPECT_FALSE(r.categories.empty());
    EXPECT_FALSE(r.correction.corrected);  // imported: no profiler overhead
    ASSERT_TRUE(r.whatIf.has_value()) << r.whatIfError;
    EXPECT_GT(r.whatIf->predictedNs, 0);
    AnalysisResult range = run(
        path, AnalysisScope::range(r.traceStart, r.traceStart + (r.traceEnd - r.traceStart) / 2));
    ASSERT_TRUE(range.ok()) << range.error;
    EXPECT_GT(range.totals.time, 0);
    EXPECT_LT(range.totals.time, r.totals.time);
    std::printf(
        "[ timing ] %s: whole run %.3f s with the H100 what-if (%llu intervals swept), half "
        "range %.3f s\n",
        name, r.seconds, static_cast<unsigned long long>(r.events), range.seconds);
  }
}

}  // namespace
}  // namespace rlscope::gui
