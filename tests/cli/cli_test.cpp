// The `rlscope` command end to end: help, version, import, info and export as a user runs them.
#include <gtest/gtest.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "rlscope/trace/reader.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using nlohmann::json;
using testing::runCommand;
using testing::TempDir;

TEST(Cli, VersionAndHelp) {
  auto v = runCommand({"rlscope", "--version"});
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_NE(v.out.find("rlscope 0."), std::string::npos) << v.out;
  auto h = runCommand({"rlscope", "--help"});
  EXPECT_EQ(h.exitCode, 0);
  for (const char* sub : {"import", "export", "info"}) {
    EXPECT_NE(h.out.find(sub), std::string::npos) << sub;
    auto sh = runCommand({"rlscope", sub, "--help"});
    EXPECT_EQ(sh.exitCode, 0) << sub;
    EXPECT_NE(sh.out.find("Usage"), std::string::npos) << sh.out;
  }
  auto none = runCommand({"rlscope"});
  EXPECT_NE(none.exitCode, 0);
  EXPECT_EQ(testing::lines(none.err).size(), 1u) << none.err;
}

TEST(Cli, ImportsAndSummarisesARealTrace) {
  auto dir = testing::sharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent: real-trace test skipped";
  TempDir tmp;
  auto out = tmp / "alexnet.sqlite";
  auto imp = runCommand(
      {"rlscope", "import", (dir / "a100_alexnet.json.gz").string(), "-o", out.string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  EXPECT_NE(imp.out.find("imported 1408 events (Kineto JSON)"), std::string::npos) << imp.out;
  // The time it took as people read it: "in 22.4 ms", not "in 0.0223962 s".
  std::smatch took;
  EXPECT_TRUE(std::regex_search(imp.out, took,
                                std::regex(R"( in [0-9]+\.[0-9] ms\n| in [0-9]+\.[0-9]{2} s\n)")))
      << imp.out;

  auto info = runCommand({"rlscope", "info", out.string()});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  for (const char* expected : {"rlscope trace v2, from kineto", "NVIDIA A100-PG509-200",
                               "sm_80, 108 SMs", "CUPTI_ACTIVITY_KIND_KERNEL", "GPU kernels",
                               "operations", "CPU category Backend", "device 0 stream 7"}) {
    EXPECT_NE(info.out.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                          << info.out;
  }

  auto j = runCommand({"rlscope", "info", "--format", "json", out.string()});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  auto doc = json::parse(j.out);
  EXPECT_EQ(doc["schema"], "rlscope.info/1");
  EXPECT_EQ(doc["event_counts"]["CUPTI_ACTIVITY_KIND_KERNEL"], 79);
  EXPECT_EQ(doc["event_counts"]["CUPTI_ACTIVITY_KIND_RUNTIME"], 361);
  EXPECT_EQ(doc["gpus"].size(), 8u);
  EXPECT_EQ(doc["processes"].size(), 1u);
  EXPECT_EQ(doc["processes"][0]["pid"], 2869224);
  EXPECT_GT(doc["time_span"]["duration_ns"].get<std::int64_t>(), 0);
}

// The bundled sample records a real training loop; its trace imports and shows its operations.
TEST(Cli, SampleTraceImports) {
  TempDir tmp;
  auto sampleJson = tmp / "sample.json";
  auto run = runCommand(
      {"rlscope_sample_cpu_training", "--iterations", "3", "--trace-out", sampleJson.string()});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto out = tmp / "sample.sqlite";
  auto imp = runCommand({"rlscope", "import", sampleJson.string(), "-o", out.string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  trace::TraceReader r(out);
  std::set<std::string> names;
  r.forEachOperation(
      {}, [&](const trace::OperationRecord& o) { names.insert(std::string(r.string(o.nameId))); });
  for (const char* op : {"inference", "simulation", "backpropagation"}) {
    EXPECT_TRUE(names.count(op)) << op;
  }
  std::map<trace::Category, int> cats;
  r.forEachCpuInterval({}, [&](const trace::CpuIntervalRecord& c) { ++cats[c.category]; });
  EXPECT_GT(cats[trace::Category::kBackend], 0);
  EXPECT_GT(cats[trace::Category::kSimulator], 0);
  EXPECT_GT(r.rowCount("rlscope_phases"), 0);
}

}  // namespace
}  // namespace rlscope
