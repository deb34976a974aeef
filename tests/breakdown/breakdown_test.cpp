// The breakdown of small constructed traces, with exact expected times, and of the real A100
// traces (../shared/traces).
#include "rlscope/breakdown/breakdown.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/gpu_metrics/gpu_metrics.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "step_trace.h"
#include "support/run_command.h"
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

TEST(Breakdown, OperationsResourcesAndCategorySetsAreExact) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStepTrace(dir, {.trainingPhase = true}));
  Breakdown b = analyzeTrace(reader);

  const auto& inference = find(b, "inference");
  EXPECT_EQ(inference.time, 30);
  EXPECT_EQ(inference.phase, "training");
  EXPECT_EQ(setTime(inference, {"Python"}), 10);
  EXPECT_EQ(setTime(inference, {"Backend", "Python"}), 20);
  EXPECT_EQ(inference.cpu, 30);
  EXPECT_EQ(inference.gpu + inference.cpuGpu, 0);

  // backprop [50, 90): Python 50-55, +Backend 55-60, +CUDA API 60-61, +kernel 61-62,
  // Backend+kernel 62-80, Backend 80-85, Python 85-90.
  const auto& backprop = find(b, "backprop");
  EXPECT_EQ(backprop.time, 40);
  EXPECT_EQ(setTime(backprop, {"Python"}), 10);
  EXPECT_EQ(setTime(backprop, {"Backend", "Python"}), 5 + 5);
  EXPECT_EQ(setTime(backprop, {"Backend", "CUDA API", "Python"}), 1);
  EXPECT_EQ(setTime(backprop, {"Backend", "CUDA API", "GPU kernel", "Python"}), 1);
  EXPECT_EQ(setTime(backprop, {"Backend", "GPU kernel", "Python"}), 18);
  EXPECT_EQ(backprop.cpuGpu, 1 + 18);
  EXPECT_EQ(backprop.gpu, 0);

  // The step's own time is what its children do not own.
  const auto& step = find(b, "step");
  EXPECT_EQ(step.time, 100 - 30 - 40);
  EXPECT_EQ(step.instances, 1u);

  // The worker's Backend after the step, with Python ended at 100: unannotated.
  const auto& rest = find(b, kUnannotatedName);
  EXPECT_EQ(rest.time, 20);
  EXPECT_EQ(setTime(rest, {"Backend"}), 20);
}

// The analysis reserves room for the rows a table's largest rowid says it has: a stranger's
// trace that claims rowids of 2^62 must not make it ask for exabytes. Same result as without.
TEST(Breakdown, AHugeRowidIsNotTakenForARowCount) {
  testing::TempDir dir;
  auto path = writeStepTrace(dir, {.trainingPhase = true});
  Breakdown before = [&] {
    trace::TraceReader reader(path);
    return analyzeTrace(reader);
  }();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const char* table : {"rlscope_cpu_intervals", "rlscope_operations",
                              "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"}) {
      std::string sql = std::string("UPDATE ") + table +
                        " SET rowid = 4611686018427387904 WHERE rowid = (SELECT MAX(rowid) FROM " +
                        table + ")";
      ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << table;
    }
    sqlite3_close(db);
  }
  trace::TraceReader reader(path);
  Breakdown after = analyzeTrace(reader);
  ASSERT_EQ(after.operations.size(), before.operations.size());
  for (std::size_t i = 0; i < after.operations.size(); ++i) {
    EXPECT_EQ(after.operations[i].name, before.operations[i].name);
    EXPECT_EQ(after.operations[i].time, before.operations[i].time);
    EXPECT_EQ(after.operations[i].cpu, before.operations[i].cpu);
  }
}

// A trace whose CPU intervals are most of its rows is read on two connections at once, the end
// of the table by the thread that read the rest (readEvents): the groups come out as one read
// would give them, a process whose rows are all in the end included.
TEST(Breakdown, CpuIntervalsReadInTwoPartsAddUpAsOne) {
  testing::TempDir dir;
  auto path = dir / "split.sqlite";
  // Rows of process 1, then 2, then 3: 700 k, read as [1, 350 k] and the rest, so that process 1
  // is all in the head, process 2 in both parts and process 3 all in the end.
  const std::vector<std::pair<std::int64_t, std::int64_t>> rowsOf = {
      {1, 300'000}, {2, 200'000}, {3, 200'000}};
  {
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    for (auto [pid, rows] : rowsOf) {
      addProcess(w, pid);
      // Python and Backend alternating, 10 ns each.
      for (std::int64_t i = 0; i < rows; ++i)
        addCpu(w, i * 10, i * 10 + 10, i % 2 ? Category::kBackend : Category::kPython,
               trace::globalTidOf(pid, pid));
    }
    w.commit();
  }
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  std::map<std::int64_t, const OperationBreakdown*> byProcess;
  for (const auto& o : b.operations) byProcess[o.process] = &o;
  ASSERT_EQ(byProcess.size(), rowsOf.size());
  for (auto [pid, rows] : rowsOf) {
    const auto& o = *byProcess.at(pid);
    EXPECT_EQ(o.time, rows * 10) << pid;
    EXPECT_EQ(setTime(o, {"Python"}), rows / 2 * 10) << pid;
    EXPECT_EQ(setTime(o, {"Backend"}), rows / 2 * 10) << pid;
  }
}

// A trace whose kernels are most of its rows: this thread reads the end of the kernel table
// while the other reads the CPU intervals (readEvents), and the GPU metrics handed the rows
// (AnalyzeOptions::gpuMetrics) are fed in parts too. Groups and metrics come out as one read's,
// a process whose kernels are all in the end included, launches joined across the parts.
TEST(Breakdown, KernelsReadInTwoPartsAddUpAsOne) {
  testing::TempDir dir;
  auto path = dir / "kernels.sqlite";
  // 700 k kernels of processes 1, 2, 3, 10 ns each every 20 ns; the end read apart is about the
  // last 350 k: process 1 in the head, 2 in both parts, 3 in the end. Each process launches its
  // first 1000 kernels from a CUDA API call.
  const std::vector<std::pair<std::int64_t, std::int64_t>> rowsOf = {
      {1, 300'000}, {2, 200'000}, {3, 200'000}};
  constexpr std::int64_t kLaunched = 1000;
  {
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    for (auto [pid, rows] : rowsOf) {
      addProcess(w, pid);
      for (std::int64_t i = 0; i < kLaunched; ++i)
        addApiCall(w, i * 20 - 5, i * 20 - 2, trace::globalTidOf(pid, pid), i + 1);
    }
    for (auto [pid, rows] : rowsOf)
      for (std::int64_t i = 0; i < rows; ++i)
        addKernel(w, {.start = i * 20,
                      .end = i * 20 + 10,
                      .pid = pid,
                      .correlation = i < kLaunched ? i + 1 : 0,
                      .name = i % 2 ? "a" : "b",
                      .stream = 7});
    w.commit();
  }
  trace::TraceReader reader(path);
  GpuMetricsBuilder gpu;
  Breakdown b = analyzeTrace(reader, {.gpuMetrics = &gpu});
  GpuMetrics metrics = gpu.finish(reader);
  std::map<std::int64_t, const OperationBreakdown*> byProcess;
  for (const auto& o : b.operations) byProcess[o.process] = &o;
  ASSERT_EQ(byProcess.size(), rowsOf.size());
  GpuMetrics oneRead = computeGpuMetrics(reader);
  ASSERT_EQ(metrics.processes.size(), rowsOf.size());
  for (std::size_t p = 0; p < rowsOf.size(); ++p) {
    auto [pid, rows] = rowsOf[p];
    const auto& o = *byProcess.at(pid);
    EXPECT_EQ(o.gpu, rows * 10) << pid;
    EXPECT_EQ(o.launchedGpuActivities, static_cast<std::uint64_t>(rows)) << pid;
    const GpuSummary& got = metrics.processes[p].metrics;
    const GpuSummary& want = oneRead.processes[p].metrics;
    EXPECT_EQ(got.activities, static_cast<std::uint64_t>(rows)) << pid;
    EXPECT_EQ(got.launch.count, static_cast<std::uint64_t>(kLaunched)) << pid;
    EXPECT_EQ(got.launch.withoutApiCall, static_cast<std::uint64_t>(rows - kLaunched)) << pid;
    EXPECT_EQ(got.launch.delayMin, 2) << pid;
    EXPECT_EQ(got.idle.busy, rows * 10) << pid;
    EXPECT_EQ(got.idle.span, want.idle.span) << pid;
    EXPECT_EQ(got.idle.kernelWait, want.idle.kernelWait) << pid;
    ASSERT_EQ(got.kernels.size(), 2u) << pid;
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(got.kernels[k].name, want.kernels[k].name) << pid;
      EXPECT_EQ(got.kernels[k].count, want.kernels[k].count) << pid;
      EXPECT_EQ(got.kernels[k].total, want.kernels[k].total) << pid;
    }
  }
}

TEST(Breakdown, JsonFollowsTheContract) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStepTrace(dir, {.trainingPhase = true}));
  auto j = toJson(analyzeTrace(reader));
  EXPECT_EQ(j["schema"], "rlscope.analysis/1");
  EXPECT_EQ(j["corrected"], false);
  bool found = false;
  for (const auto& op : j["operations"]) {
    EXPECT_TRUE(op.contains("name") && op.contains("process") && op.contains("phase") &&
                op.contains("time_us") && op.contains("resources") && op.contains("categories"));
    if (op["name"] != "backprop") continue;
    found = true;
    EXPECT_EQ(op["process"], kPid);
    EXPECT_DOUBLE_EQ(op["time_us"].get<double>(), 0.040);
    EXPECT_DOUBLE_EQ(op["resources"]["CPU+GPU"].get<double>(), 0.019);
    for (const auto& c : op["categories"]) {
      auto set = c["set"].get<std::vector<std::string>>();
      EXPECT_TRUE(std::is_sorted(set.begin(), set.end()));
      EXPECT_GT(c["time_us"].get<double>(), 0.0);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Breakdown, OperationsSayTheirProcessRankAndHost) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStepTrace(
      dir, {.identity = trace::ProcessIdentityRecord{.host = "node3", .rank = 1, .worldSize = 4}}));
  Breakdown b = analyzeTrace(reader);
  const auto doc = toJson(b);
  for (const auto& op : doc["operations"]) {
    EXPECT_EQ(op["rank"], 1) << op["name"];
    EXPECT_EQ(op["host"], "node3") << op["name"];
  }
  std::ostringstream text;
  writeTable(b, text);
  EXPECT_NE(text.str().find("process " + std::to_string(kPid) + " (rank 1 of 4)\n"),
            std::string::npos)
      << text.str();

  // Without a rank: no label, and the JSON says null.
  testing::TempDir plainDir;
  trace::TraceReader plain(writeStepTrace(plainDir));
  Breakdown p = analyzeTrace(plain);
  EXPECT_TRUE(toJson(p)["operations"][0]["rank"].is_null());
  std::ostringstream plainText;
  writeTable(p, plainText);
  EXPECT_EQ(plainText.str().find("(rank"), std::string::npos);
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

TEST(Correction, OverheadIntervalsRemoveCpuTimeAndKeepGpuTime) {
  testing::TempDir dir;
  trace::TraceReader reader(testing::writeCorrectableTrace(
      dir, R"({"nvtx": true, "python": true, "cuda_api": true, "gpu_activity": true})"));
  Calibration cal = knownCosts();
  Breakdown b = analyzeTrace(reader, {.calibration = &cal, .calibrationOrigin = "test"});
  // Overhead: annotation [0, 100); Python transitions [350, 400) and [600, 650); CUPTI
  // [420, 425). CPU-only time under them is dropped; [600, 650) runs the kernel, so it stays
  // as GPU-only time.
  const auto& update = find(b, "update");
  EXPECT_EQ(update.time, 1000 - 100 - 50 - 5);
  EXPECT_EQ(setTime(update, {"Python"}), 250 + 100);
  EXPECT_EQ(setTime(update, {"Backend", "Python"}), 20 + 70);
  EXPECT_EQ(setTime(update, {"Backend", "CUDA API", "Python"}), 5);
  EXPECT_EQ(setTime(update, {"Backend", "GPU kernel", "Python"}), 100);
  EXPECT_EQ(setTime(update, {"GPU kernel"}), 50);
  EXPECT_EQ(setTime(update, {"GPU kernel", "Python"}), 250);
  EXPECT_EQ(update.gpu, 50);
  ASSERT_TRUE(b.correction);
  const Correction& c = *b.correction;
  EXPECT_EQ(c.sources.at(cost::kAnnotation).breakdownNs, 100);
  EXPECT_EQ(c.sources.at(cost::kPythonTransition).breakdownNs, 50);
  EXPECT_EQ(c.sources.at(cost::kCupti).breakdownNs, 5);
  // The whole run: 2000 − 1 process × 10 − 1 operation × 100 − 2 transitions × 50 − 1 call × 5.
  EXPECT_DOUBLE_EQ(c.sources.at(cost::kPythonTransition).removedNs, 100);
  EXPECT_DOUBLE_EQ(c.correctedTotalNs, 2000 - 10 - 100 - 100 - 5);
  ASSERT_TRUE(c.biasPct);
  EXPECT_NEAR(*c.biasPct, 100.0 * (1785 - 1700) / 1700, 1e-9);
  EXPECT_EQ(c.uninstrumentedNoisePct, 0);  // one uninstrumented run: no spread known
  auto j = toJson(b);
  EXPECT_EQ(j["corrected"], true);
  EXPECT_DOUBLE_EQ(j["correction"]["corrected_total_us"].get<double>(), 1.785);
  EXPECT_DOUBLE_EQ(j["correction"]["removed_us"]["annotation"].get<double>(), 0.1);
}

TEST(Correction, OnlyFeaturesTheTraceRecordedAreCorrected) {
  testing::TempDir dir;
  trace::TraceReader reader(testing::writeCorrectableTrace(
      dir, R"({"nvtx": true, "python": false, "cuda_api": true, "gpu_activity": true})"));
  Calibration cal = knownCosts();
  Breakdown b = analyzeTrace(reader, {.calibration = &cal});
  EXPECT_EQ(find(b, "update").time, 1000 - 100 - 5);
  EXPECT_FALSE(b.correction->sources.contains(cost::kPythonTransition));
  bool noted = false;
  for (const auto& n : b.correction->notes)
    noted |= n.find("python_transition: not applied, python was not recorded") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_DOUBLE_EQ(b.correction->correctedTotalNs, 2000 - 10 - 100 - 5);
}

TEST(Correction, AnUncalibratedPythonCostIsNotedOnlyWhereTheTraceHasTransitions) {
  // A native program profiled with Python tracking on (the default) has no transitions: a
  // calibration without a Python cost leaves nothing in its times, and says nothing of it.
  auto notes = [](const std::filesystem::path& path) {
    trace::TraceReader reader(path);
    Calibration cal;
    cal.uninstrumentedNs = {1700, 0, 1};
    cal.costs = {{cost::kAnnotation, "", {100, 0, 1}}};
    Breakdown b = analyzeTrace(reader, {.calibration = &cal});
    std::string all;
    for (const auto& n : b.correction->notes) all += n;
    return all;
  };
  const char* features = R"({"nvtx": true, "python": true, "cuda_api": false})";
  testing::TempDir dir;
  EXPECT_NE(notes(testing::writeCorrectableTrace(dir, features)).find("python_transition"),
            std::string::npos);  // 2 transitions
  auto native = dir / "native.sqlite";
  {
    trace::TraceWriter w(native);
    w.setMeta(trace::meta::kFeatures, features);
    w.setMeta(trace::meta::kCommandElapsedNs, "2000");
    addProcess(w, kPid);
    addOperation(w, 1, 0, 1000, "update", trace::globalTidOf(kPid, kPid));
    w.commit();
  }
  EXPECT_EQ(notes(native).find("python_transition"), std::string::npos) << notes(native);
}

TEST(Correction, ATraceRlscopeProfDidNotRecordIsRefused) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStepTrace(dir, {.trainingPhase = true}));
  Calibration cal = knownCosts();
  EXPECT_THROW(analyzeTrace(reader, {.calibration = &cal}), std::runtime_error);
}

TEST(Attribution, GpuWorkGoesToTheOperationThatLaunchedItAndTransitionsAreCounted) {
  testing::TempDir dir;
  auto path = dir / "launches.sqlite";
  {
    trace::TraceWriter w(path);
    addProcess(w, kPid);
    addOperation(w, 1, 0, 100, "step", kMain);
    addOperation(w, 2, 10, 20, "inference", kMain, 1, 1);
    addOperation(w, 3, 30, 40, "backprop", kMain, 1, 1);
    auto launch = [&](trace::TimeNs at, std::int64_t tid, std::int64_t correlation) {
      addApiCall(w, at, at + 2, tid, correlation);
    };
    auto kernel = [&](trace::TimeNs start, trace::TimeNs end, std::int64_t correlation) {
      addKernel(w, {.start = start,
                    .end = end,
                    .pid = kPid,
                    .correlation = correlation,
                    .name = "k",
                    .mangled = true});
    };
    launch(12, kMain, 1);  // in inference; its kernel runs later, during backprop
    kernel(30, 70, 1);
    launch(45, kMain, 2);  // in step, after backprop ended: the step's (the parent's)
    kernel(50, 55, 2);
    launch(15, kWorker, 3);  // another thread, no operation of its own...
    kernel(80, 90, 3);
    // ...but the collector recorded that it was launched for backprop (external correlation).
    w.addExternalCorrelation({trace::globalPidOf(kPid), 3, 3});
    addCpu(w, 11, 13, Category::kBackend, kMain);
    addCpu(w, 14, 15, Category::kSimulator, kMain);
    addCpu(w, 200, 210, Category::kBackend, kMain);
    w.commit();
  }
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  EXPECT_EQ(find(b, "inference").launchedGpu, 40);
  EXPECT_EQ(find(b, "step").launchedGpu, 5);
  EXPECT_EQ(find(b, "backprop").launchedGpu, 10);
  EXPECT_EQ(find(b, "backprop").launchedGpuActivities, 1u);
  // Wall time says otherwise: the first kernel runs while backprop is the innermost operation.
  EXPECT_EQ(find(b, "backprop").gpu, 10);
  const auto& t = find(b, "inference").transitions;
  EXPECT_EQ(t.pythonToBackend, 1u);
  EXPECT_EQ(t.pythonToSimulator, 1u);
  EXPECT_EQ(t.toCudaApi, 1u);
  EXPECT_EQ(find(b, kUnannotatedName).transitions.pythonToBackend, 1u);
  EXPECT_EQ(find(b, kUnannotatedName).transitions.toCudaApi, 1u);  // the worker's launch
}

// A group with more intervals than kSweepBesideAbove: the overlap sweep runs on a thread of its
// own while launches and transitions are attributed (analyzeGroup). Both halves land in the rows.
TEST(Attribution, ABigGroupSweptBesideItsLookupsGetsEveryFigure) {
  testing::TempDir dir;
  auto path = dir / "big.sqlite";
  constexpr std::int64_t kSteps = 60'000;  // 4 CPU intervals each: 240 k
  {
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    addProcess(w, kPid);
    // step [100 i, 100 i + 100): Python 0-40, Backend 40-60 (launching at 45, its kernel 70-90
    // while Python runs again 60-80), Simulator 80-100.
    for (std::int64_t i = 0; i < kSteps; ++i) {
      trace::TimeNs t = i * 100;
      addOperation(w, i + 1, t, t + 100, i % 2 ? "act" : "learn", kMain);
      addCpu(w, t, t + 40, Category::kPython, kMain);
      addCpu(w, t + 40, t + 60, Category::kBackend, kMain);
      addCpu(w, t + 60, t + 80, Category::kPython, kMain);
      addCpu(w, t + 80, t + 100, Category::kSimulator, kMain);
      addApiCall(w, t + 45, t + 50, kMain, i + 1);
      addKernel(w, {.start = t + 70,
                    .end = t + 90,
                    .pid = kPid,
                    .correlation = i + 1,
                    .name = "k",
                    .mangled = true});
    }
    w.commit();
  }
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  for (const char* name : {"act", "learn"}) {
    const auto& o = find(b, name);
    EXPECT_EQ(o.instances, static_cast<std::uint64_t>(kSteps / 2)) << name;
    EXPECT_EQ(o.time, kSteps / 2 * 100) << name;
    // From the sweep: CPU+GPU while the kernel runs (70-90), CPU alone the rest.
    EXPECT_EQ(o.cpuGpu, kSteps / 2 * 20) << name;
    EXPECT_EQ(o.cpu, kSteps / 2 * 80) << name;
    EXPECT_EQ(setTime(o, {"GPU kernel", "Python"}), kSteps / 2 * 10) << name;
    // From the lookups beside it.
    EXPECT_EQ(o.launchedGpu, kSteps / 2 * 20) << name;
    EXPECT_EQ(o.launchedGpuActivities, static_cast<std::uint64_t>(kSteps / 2)) << name;
    EXPECT_EQ(o.transitions.toCudaApi, static_cast<std::uint64_t>(kSteps / 2)) << name;
    EXPECT_EQ(o.transitions.pythonToBackend, static_cast<std::uint64_t>(kSteps / 2)) << name;
    EXPECT_EQ(o.transitions.pythonToSimulator, static_cast<std::uint64_t>(kSteps / 2)) << name;
  }
}

// Two processes, each with one operation that launches a kernel under the same correlation id
// (CUPTI's ids are per process), and a worker thread in the first one.
std::filesystem::path writeTwoProcesses(const testing::TempDir& dir) {
  auto path = dir / "two.sqlite";
  trace::TraceWriter w(path);
  constexpr std::int64_t kOther = 77;
  for (std::int64_t pid : {kPid, kOther}) addProcess(w, pid, "worker");
  auto work = [&](std::int64_t pid, std::int64_t id, const char* name, trace::TimeNs kernelStart,
                  trace::TimeNs kernelEnd) {
    std::int64_t tid = trace::globalTidOf(pid, pid);
    addCpu(w, 0, 100, Category::kPython, tid);
    addOperation(w, id, 0, 100, name, tid);
    addApiCall(w, 5, 8, tid, 1);
    addKernel(w, {.start = kernelStart,
                  .end = kernelEnd,
                  .pid = pid,
                  .correlation = 1,
                  .name = "k",
                  .mangled = true});
  };
  work(kPid, 1, "a", 10, 20);
  work(kOther, 2, "b", 50, 80);
  addCpu(w, 90, 130, Category::kBackend, kWorker);
  w.commit();
  return path;
}

TEST(Views, ProcessThreadAndWholeRun) {
  testing::TempDir dir;
  auto path = writeTwoProcesses(dir);
  trace::TraceReader reader(path);
  Breakdown byProcess = analyzeTrace(reader);
  EXPECT_EQ(find(byProcess, "a").time, 100);
  EXPECT_EQ(find(byProcess, "a").cpuGpu, 10);
  EXPECT_EQ(find(byProcess, "b").cpuGpu, 30);
  // The whole run: both processes' time in one sweep; launches stay with their own process.
  Breakdown run = analyzeTrace(reader, {.view = View::kRun});
  EXPECT_EQ(run.view, View::kRun);
  for (const auto& o : run.operations) EXPECT_EQ(o.process, 0);
  EXPECT_EQ(find(run, "a").launchedGpu, 10);
  EXPECT_EQ(find(run, "b").launchedGpu, 30);
  // b started last, so it owns [0, 100) of the run, with a's kernel running in it.
  EXPECT_EQ(find(run, "b").time, 100);
  EXPECT_EQ(find(run, "b").cpuGpu, 10 + 30);
  EXPECT_EQ(find(run, kUnannotatedName).time, 30);  // the worker after both operations
  // Per thread: the worker's Backend is its own, all of it outside operations.
  Breakdown threads = analyzeTrace(reader, {.view = View::kThread});
  bool worker = false;
  for (const auto& o : threads.operations)
    if (o.thread == 43) {
      worker = true;
      EXPECT_EQ(o.name, kUnannotatedName);
      EXPECT_EQ(o.time, 40);
      EXPECT_EQ(o.process, kPid);
    }
  EXPECT_TRUE(worker);
  EXPECT_EQ(find(threads, "a").cpuGpu, 10);  // its kernel, launched by its thread
  EXPECT_EQ(toJson(threads)["view"], "thread");
}

TEST(Breakdown, AnalyzeCommandOnARealA100Trace) {
  testing::TempDir dir;
  std::string why;
  auto trace = testing::importSharedTrace(dir, "a100_alexnet", why);
  if (trace.empty()) GTEST_SKIP() << why;
  auto json = testing::runCommand({"rlscope", "analyze", trace.string(), "--format", "json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  double gpuBound = 0, total = 0;
  for (const auto& op : j["operations"]) {
    total += op["time_us"].get<double>();
    gpuBound += op["gpu_bound_us"].get<double>();
    double resources = op["resources"]["CPU"].get<double>() + op["resources"]["GPU"].get<double>() +
                       op["resources"]["CPU+GPU"].get<double>();
    EXPECT_LE(resources, op["time_us"].get<double>() + 1e-6) << op["name"];
  }
  EXPECT_GT(total, 0.0);
  EXPECT_GT(gpuBound, 0.0);  // AlexNet's kernels land inside its operations
  auto table = testing::runCommand({"rlscope", "analyze", trace.string()});
  EXPECT_EQ(table.exitCode, 0);
  EXPECT_NE(table.out.find("CPU+GPU"), std::string::npos);
  auto missing = testing::runCommand({"rlscope", "analyze", (dir / "nope.sqlite").string()});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(testing::lines(missing.err).size(), 1u) << missing.err;
}

TEST(Breakdown, GpuWaitCallsAreTheBlockingOnes) {
  for (const char* name : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cuCtxSynchronize",
                           "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cuMemcpyDtoH_v2"})
    EXPECT_TRUE(isGpuWaitCall(name)) << name;
  for (const char* name : {"cudaLaunchKernel", "cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2",
                           "cudaStreamWaitEvent", "cudaEventRecord", "cudaMalloc"})
    EXPECT_FALSE(isGpuWaitCall(name)) << name;
}

}  // namespace
}  // namespace rlscope::analysis
