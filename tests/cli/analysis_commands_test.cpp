// rlscope calibrate, rlscope-prof --calibrate, rlscope analyze (corrected, html) and rlscope
// report (HTML, Markdown, the regression gate) end to end on the bundled CPU sample; real and
// ROCm Kineto traces imported, analysed and reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/rocm_trace.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using json = nlohmann::json;
using testing::lines;
using testing::runCommand;
using testing::TempDir;

const std::string kSample = std::string(RLSCOPE_BIN_DIR) + "/rlscope_sample_cpu_training";

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Calibrate, SampleCostsFileAndCorrectedAnalysis) {
  TempDir tmp;
  auto cal = tmp / "cal.json";
  auto r = runCommand({"rlscope", "calibrate", "-o", cal.string(), "--repetitions", "2", "--",
                       kSample, "--iterations", "40", "--seed", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("repetition 2 of 2, annotations"), std::string::npos) << r.err;
  auto doc = json::parse(readFile(cal));
  EXPECT_EQ(doc["schema"], "rlscope.calibration/2");
  EXPECT_TRUE(doc["uninstrumented"].contains("median_ns")) << doc["uninstrumented"].dump();
  EXPECT_TRUE(doc["uninstrumented"].contains("uncertainty_ns")) << doc["uninstrumented"].dump();
  EXPECT_EQ(doc["repetitions"], 2);
  EXPECT_EQ(doc["uninstrumented"]["n"], 2);
  std::set<std::string> sources;
  for (const auto& c : doc["costs"]) {
    sources.insert(c["source"].get<std::string>());
    EXPECT_EQ(c["n"], 2) << c.dump();
  }
  EXPECT_TRUE(sources.contains("process") && sources.contains("annotation")) << doc.dump();
  EXPECT_FALSE(sources.contains("python_transition"));  // a native program: nothing to price
  // Every configuration twice, except Python tracking: its events configuration is dropped after
  // a first run without any, and the transitions' configuration, which builds on it, with it.
  std::map<std::string, int> runs;
  for (const auto& run : doc["runs"]) ++runs[run["config"].get<std::string>()];
  EXPECT_EQ(runs["uninstrumented"], 2);
  EXPECT_EQ(runs["annotations"], 2);
  EXPECT_EQ(runs["python_events"], 1);
  EXPECT_EQ(runs["python"], 0);
  EXPECT_FALSE(sources.contains("python_event"));

  // Profile, then analyze with that calibration: corrected, with a bias and per-source costs.
  auto trace = tmp / "run.sqlite";
  ASSERT_EQ(runCommand({"rlscope-prof", "-q", "-o", trace.string(), "--", kSample, "--iterations",
                        "40", "--seed", "1"})
                .exitCode,
            0);
  auto a = runCommand(
      {"rlscope", "analyze", trace.string(), "--calibration", cal.string(), "--format", "json"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  auto analysis = json::parse(a.out);
  EXPECT_EQ(analysis["corrected"], true);
  const auto& c = analysis["correction"];
  EXPECT_TRUE(c.contains("bias_pct")) << c.dump();
  EXPECT_GT(c["events"]["annotation"].get<std::int64_t>(), 1000);
  EXPECT_LE(c["corrected_total_us"].get<double>(), c["uncorrected_total_us"].get<double>());
  // The sample's operations run native code: Native time, not idle.
  bool native = false;
  for (const auto& op : analysis["operations"])
    for (const auto& s : op["categories"]) native |= s["set"] == json::array({"Native"});
  EXPECT_TRUE(native) << a.out;
  auto plain = runCommand({"rlscope", "analyze", trace.string(), "--format", "json"});
  EXPECT_EQ(json::parse(plain.out)["corrected"], false);  // no calibration in this trace
}

TEST(Calibrate, ProfCalibrateStoresTheCostsInTheTrace) {
  TempDir tmp;
  auto trace = tmp / "run.sqlite";
  auto r = runCommand({"rlscope-prof", "--calibrate", "--repetitions", "1", "-o", trace.string(),
                       "--", kSample, "--iterations", "20", "--seed", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(tmp / "run.sqlite.calibration.json"));
  auto a = runCommand({"rlscope", "analyze", trace.string(), "--format", "json"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  auto doc = json::parse(a.out);
  EXPECT_EQ(doc["corrected"], true);
  EXPECT_EQ(doc["correction"]["calibration"], "stored in the trace");
  auto table = runCommand({"rlscope", "analyze", trace.string()});
  EXPECT_NE(table.out.find("overhead correction"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("bias"), std::string::npos) << table.out;
  auto raw =
      runCommand({"rlscope", "analyze", trace.string(), "--no-correction", "--format", "json"});
  EXPECT_EQ(json::parse(raw.out)["corrected"], false);
}

TEST(Calibrate, AFailingCommandOrBadFileIsOneErrorLine) {
  TempDir tmp;
  auto cal = tmp / "cal.json";
  auto r = runCommand({"rlscope", "calibrate", "-o", cal.string(), "--", kSample, "--bogus"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("calibration needs a command that succeeds"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(cal));
  auto none = runCommand({"rlscope", "calibrate", "-o", cal.string()});
  EXPECT_NE(none.exitCode, 0);
  EXPECT_EQ(lines(none.err).size(), 1u) << none.err;
  // A file that is not a calibration, for a trace: one line, status 1.
  std::ofstream(tmp / "bad.json") << "{\"schema\": \"something else\"}";
  auto trace = tmp / "run.sqlite";
  ASSERT_EQ(
      runCommand({"rlscope-prof", "-q", "-o", trace.string(), "--", kSample, "--iterations", "2"})
          .exitCode,
      0);
  auto bad = runCommand(
      {"rlscope", "analyze", trace.string(), "--calibration", (tmp / "bad.json").string()});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_EQ(lines(bad.err).size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("not an rlscope calibration"), std::string::npos) << bad.err;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = tmp_ / "run.sqlite";
    ASSERT_EQ(runCommand({"rlscope-prof", "-q", "-o", trace_.string(), "--", kSample,
                          "--iterations", "30", "--seed", "1"})
                  .exitCode,
              0);
  }
  TempDir tmp_;
  std::filesystem::path trace_;
};

TEST_F(Report, HtmlMarkdownAndJsonByExtension) {
  for (const char* name : {"r.html", "r.md", "r.json"}) {
    auto out = tmp_ / name;
    auto r = runCommand({"rlscope", "report", trace_.string(), "-o", out.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::string text = readFile(out);
    EXPECT_NE(text.find("inference"), std::string::npos) << name;
    std::string n = name;
    if (n == "r.html") {
      EXPECT_EQ(text.rfind("<!DOCTYPE html>", 0), 0u);
    } else if (n == "r.md") {
      EXPECT_NE(text.find("| inference"), std::string::npos);
    } else {
      EXPECT_EQ(json::parse(text)["schema"], "rlscope.analysis/1");
    }
  }
  auto md = runCommand({"rlscope", "report", trace_.string()});
  EXPECT_NE(md.out.find("## rlscope report"), std::string::npos) << md.out;
  auto html = runCommand({"rlscope", "analyze", trace_.string(), "--format", "html"});
  EXPECT_NE(html.out.find("<svg"), std::string::npos);
}

TEST_F(Report, TheGateFailsOnARegressionAndPassesOnNoise) {
  auto a = runCommand({"rlscope", "analyze", trace_.string(), "--format", "json"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  auto base = json::parse(a.out);
  auto write = [&](const char* name, const json& doc) {
    std::ofstream(tmp_ / name) << doc.dump();
    return (tmp_ / name).string();
  };
  // The same run against itself, and a run 3 % slower everywhere, pass at 10 %.
  auto noisy = base;
  for (auto& op : noisy["operations"]) op["time_us"] = op["time_us"].get<double>() * 1.03;
  auto same = runCommand({"rlscope", "report", "--baseline", write("base.json", base),
                          write("noisy.json", noisy), "--fail-above", "10"});
  EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
  // Backpropagation 50 % slower fails, and the Markdown summary says what regressed.
  auto slow = base;
  for (auto& op : slow["operations"])
    if (op["name"] == "backpropagation") op["time_us"] = op["time_us"].get<double>() * 1.5;
  auto summary = tmp_ / "summary.md";
  auto gate = runCommand({"rlscope", "report", "--baseline", (tmp_ / "base.json").string(),
                          write("slow.json", slow), "--fail-above", "10", "-o", summary.string()});
  EXPECT_EQ(gate.exitCode, 1) << gate.out << gate.err;
  EXPECT_NE(gate.out.find("backpropagation"), std::string::npos) << gate.out;
  EXPECT_NE(readFile(summary).find("regression"), std::string::npos);
  // A trace as the baseline works too (analysed on the fly).
  auto traces = runCommand({"rlscope", "report", "--baseline", trace_.string(), trace_.string()});
  EXPECT_EQ(traces.exitCode, 0) << traces.out << traces.err;
}

}  // namespace
}  // namespace rlscope

namespace rlscope {
namespace {

// Every real Kineto trace of ../shared/traces: imported, analysed and reported, with the
// invariants every analysis keeps.
TEST(RealTraces, EachIsAnalysedAndReported) {
  auto dir = testing::sharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent: real-trace test skipped";
  TempDir tmp;
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (!name.ends_with(".json.gz")) continue;
    SCOPED_TRACE(name);
    ++traces;
    auto trace = tmp / (name + ".sqlite");
    ASSERT_EQ(runCommand({"rlscope", "import", "-q", entry.path().string(), "-o", trace.string()})
                  .exitCode,
              0);
    auto a = runCommand({"rlscope", "analyze", trace.string(), "--format", "json"});
    ASSERT_EQ(a.exitCode, 0) << a.err;
    auto doc = json::parse(a.out);
    EXPECT_EQ(doc["corrected"], false);
    double total = 0;
    for (const auto& op : doc["operations"]) {
      double resources = op["resources"]["CPU"].get<double>() +
                         op["resources"]["GPU"].get<double>() +
                         op["resources"]["CPU+GPU"].get<double>();
      EXPECT_LE(resources, op["time_us"].get<double>() + 1e-6) << op["name"];
      double sets = 0;
      for (const auto& s : op["categories"]) sets += s["time_us"].get<double>();
      EXPECT_NEAR(sets, op["time_us"].get<double>(), 1e-3) << op["name"];
      total += op["time_us"].get<double>();
    }
    EXPECT_GT(total, 0.0);
    const auto& gpu = doc["gpu"];
    // GPU metrics exactly when the trace has GPU activity (the CUPTI-profiler trace has only
    // profiler ranges, the CPU-only one nothing).
    auto counts = json::parse(
        runCommand({"rlscope", "info", "--format", "json", trace.string()}).out)["event_counts"];
    bool activity = counts.value("CUPTI_ACTIVITY_KIND_KERNEL", 0) +
                        counts.value("CUPTI_ACTIVITY_KIND_MEMCPY", 0) +
                        counts.value("CUPTI_ACTIVITY_KIND_MEMSET", 0) >
                    0;
    EXPECT_EQ(gpu["available"].get<bool>(), activity);
    if (name == "cpu_only.json.gz") {
      EXPECT_FALSE(activity);
    }
    if (name == "a100_nccl.json.gz") {  // NCCL kernels are communication
      EXPECT_GT(gpu["classes"]["communication"].get<double>(), 0.0);
      // One rank's trace: its rank, nothing to compare it with.
      auto byRank = runCommand({"rlscope", "analyze", "--by", "rank", trace.string()});
      ASSERT_EQ(byRank.exitCode, 0) << byRank.err;
      EXPECT_NE(byRank.out.find("ranks (1)\n  note: one rank only: nothing to compare it with"),
                std::string::npos)
          << byRank.out;
      EXPECT_NE(byRank.out.find("(rank 0 of 2)"), std::string::npos) << byRank.out;
      auto wrongView =
          runCommand({"rlscope", "analyze", "--by", "rank", "--view", "run", trace.string()});
      EXPECT_NE(wrongView.exitCode, 0);
      EXPECT_EQ(lines(wrongView.err).size(), 1u) << wrongView.err;
      EXPECT_NE(wrongView.err.find("--by rank compares the ranks in the process view"),
                std::string::npos)
          << wrongView.err;
    }
    if (gpu["available"].get<bool>()) {
      EXPECT_LE(gpu["idle"]["busy_us"].get<double>(), gpu["idle"]["span_us"].get<double>());
      EXPECT_FALSE(gpu["kernels"].empty());
    }
    auto html = tmp / (name + ".html");
    auto r = runCommand({"rlscope", "report", trace.string(), "-o", html.string()});
    EXPECT_EQ(r.exitCode, 0) << r.err;
  }
  EXPECT_GE(traces, 8);

  // The two tiny traces of one program: the same within 10 %; at a 1 % threshold without a
  // noise floor, Backend time that grew 20-fold is a regression.
  auto base = (tmp / "tiny_base.json.gz.sqlite").string();
  auto test = (tmp / "tiny_test.json.gz.sqlite").string();
  EXPECT_EQ(
      runCommand({"rlscope", "report", "--baseline", base, test, "--fail-above", "10"}).exitCode,
      0);
  auto strict = runCommand({"rlscope", "report", "--baseline", base, test, "--fail-above", "1",
                            "--noise-floor-us", "0"});
  EXPECT_EQ(strict.exitCode, 1) << strict.out;
  EXPECT_NE(strict.out.find("Backend"), std::string::npos) << strict.out;
}

// A PyTorch-on-ROCm trace: imported, its GPU metrics computed from HIP launches (vendor-neutral),
// shown as AMD by info; the predictor, NVIDIA-only, says so instead of predicting.
TEST(RocmTrace, IsAnalysedAndThePredictorSaysItCoversNvidiaOnly) {
  TempDir tmp;
  auto in = tmp.write("rocm.json", testing::rocmKinetoTrace());
  auto trace = (tmp / "rocm.sqlite").string();
  auto imp = runCommand({"rlscope", "import", in.string(), "-o", trace});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  EXPECT_EQ(imp.err.find("warning"), std::string::npos) << imp.err;

  auto analyzed = runCommand({"rlscope", "analyze", "--format", "json", trace});
  ASSERT_EQ(analyzed.exitCode, 0) << analyzed.err;
  auto gpu = json::parse(analyzed.out)["gpu"];
  EXPECT_TRUE(gpu["available"].get<bool>());
  EXPECT_EQ(gpu["launch"]["count"].get<int>(), 2);  // the kernel and the copy, by their flows
  EXPECT_EQ(gpu["launch"]["without_api_call"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(gpu["launch"]["kernels_only"]["delay_max_us"].get<double>(), 10.0);
  EXPECT_EQ(gpu["kernels"][0]["name"], "Cijk_Alik_Bljk_SB_MT64x64x16");

  auto info = runCommand({"rlscope", "info", trace});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("AMD Instinct MI250X/MI250  gfx9.0, 104 CUs"), std::string::npos)
      << info.out;

  auto predict = runCommand({"rlscope", "predict", trace, "--target", "T4"});
  EXPECT_EQ(predict.exitCode, 1);
  EXPECT_EQ(lines(predict.err).size(), 1u) << predict.err;
  EXPECT_NE(predict.err.find("the predictor covers NVIDIA GPUs only, and this trace ran on AMD"),
            std::string::npos)
      << predict.err;
}

}  // namespace
}  // namespace rlscope
