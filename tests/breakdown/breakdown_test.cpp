// The breakdown of small constructed traces, with exact expected times, and of the real A100
// traces (../shared/traces).
#include "breakdown.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "breakdown_output.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::analysis {
namespace {

using trace::Category;
constexpr std::int64_t kPid = 42;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, 42);
constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 43);

const OperationBreakdown& find(const Breakdown& b, const std::string& name) {
  for (const auto& o : b.operations)
    if (o.name == name) return o;
  throw std::runtime_error("no operation " + name);
}

trace::TimeNs setTime(const OperationBreakdown& o, std::vector<std::string> set) {
  for (const auto& c : o.categories)
    if (c.set == set) return c.time;
  return 0;
}

// One training step: "step" [0, 100) holds "inference" [10, 40) and "backprop" [50, 90);
// Python on the main thread throughout, Backend [15, 35) and [55, 85), a CUDA launch [60, 62)
// and a kernel [61, 80) on the GPU; a worker thread's Backend [95, 120) after the step.
std::filesystem::path writeStep(const testing::TempDir& dir) {
  auto path = dir / "step.sqlite";
  trace::TraceWriter w(path);
  w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
  auto cpu = [&](trace::TimeNs s, trace::TimeNs e, Category c, std::int64_t tid = kMain) {
    w.addCpuInterval({.start = s, .end = e, .globalTid = tid, .category = c});
  };
  cpu(0, 100, Category::kPython);
  cpu(15, 35, Category::kBackend);
  cpu(55, 85, Category::kBackend);
  cpu(95, 120, Category::kBackend, kWorker);
  trace::ApiCallRecord launch;
  launch.start = 60;
  launch.end = 62;
  launch.globalTid = kMain;
  launch.nameId = w.intern("cudaLaunchKernel");
  w.addApiCall(trace::ApiKind::kRuntime, launch);
  trace::KernelRecord k;
  k.start = 61;
  k.end = 80;
  k.globalPid = trace::globalPidOf(kPid);
  k.shortName = k.demangledName = k.mangledName = w.intern("gemm");
  w.addKernel(k);
  auto op = [&](std::int64_t id, trace::TimeNs s, trace::TimeNs e, const char* name,
                std::int64_t parent, int depth) {
    w.addOperation({.id = id,
                    .start = s,
                    .end = e,
                    .globalTid = kMain,
                    .nameId = w.intern(name),
                    .parentId = parent,
                    .depth = depth});
  };
  op(1, 0, 100, "step", 0, 0);
  op(2, 10, 40, "inference", 1, 1);
  op(3, 50, 90, "backprop", 1, 1);
  w.addPhase({0, 100, trace::globalPidOf(kPid), w.intern("training")});
  w.commit();
  return path;
}

TEST(Breakdown, OperationsResourcesAndCategorySetsAreExact) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStep(dir));
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

TEST(Breakdown, JsonFollowsTheContract) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStep(dir));
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

TEST(Breakdown, AnalyzeCommandOnARealA100Trace) {
  auto dir0 = testing::sharedTracesDir();
  if (dir0.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  auto source = dir0 / "a100_alexnet.json.gz";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not there";
  testing::TempDir dir;
  auto trace = dir / "alexnet.sqlite";
  ASSERT_EQ(testing::runCommand({"rlscope", "import", "-q", source.string(), "-o", trace.string()})
                .exitCode,
            0);
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

}  // namespace
}  // namespace rlscope::analysis
