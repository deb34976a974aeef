// The analysis panel's worker (rlscope/gui_analysis/analysis_runner.h): results come back on the
// worker thread with their generation, a newer request supersedes an older one (never delivered), a
// cancel delivers nothing, the what-if is kept between scopes, and destroying the runner while it
// analyzes is safe.
#include "rlscope/gui_analysis/analysis_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "gui_analysis/analysis_traces.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

using namespace std::chrono_literals;

// What the runner delivered, waited for from the test's thread.
class Deliveries {
 public:
  AnalysisRunner::Callbacks callbacks() {
    return {.progress = {}, .done = [this](std::uint64_t generation, AnalysisResult result) {
              std::lock_guard lock(mutex_);
              results_.emplace_back(generation, std::move(result));
              changed_.notify_all();
            }};
  }
  // Waits for the delivery of `generation`; false after 30 s.
  bool waitFor(std::uint64_t generation) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 30s, [&] {
      for (const auto& r : results_)
        if (r.first == generation) return true;
      return false;
    });
  }
  std::vector<std::pair<std::uint64_t, AnalysisResult>> results() {
    std::lock_guard lock(mutex_);
    return results_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<std::uint64_t, AnalysisResult>> results_;
};

class AnalysisRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::writeAnalysisStep(step, true);
    testing::writeAnalysisLoop(big, 20'000);  // 200 000 events: long enough to supersede
  }
  testing::TempDir dir;
  std::filesystem::path step = dir / "step.sqlite";
  std::filesystem::path big = dir / "loop.sqlite";
};

TEST_F(AnalysisRunnerTest, OnlyTheNewestRequestIsDelivered) {
  Deliveries deliveries;
  AnalysisRunner runner(deliveries.callbacks());
  auto first = runner.submit({.tracePath = big.string(), .whatIfGpu = "H100 SXM"});
  auto second = runner.submit({.tracePath = step.string(), .scope = AnalysisScope::operation(1)});
  EXPECT_GT(second, first);
  EXPECT_EQ(runner.generation(), second);
  ASSERT_TRUE(deliveries.waitFor(second));
  auto results = deliveries.results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].second.scope, AnalysisScope::operation(1));
  EXPECT_TRUE(results[0].second.ok()) << results[0].second.error;
}

TEST_F(AnalysisRunnerTest, ACancelDeliversNothing) {
  Deliveries deliveries;
  AnalysisRunner runner(deliveries.callbacks());
  runner.submit({.tracePath = big.string()});
  runner.cancel();
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(deliveries.results().empty());
  auto next = runner.submit({.tracePath = step.string()});
  ASSERT_TRUE(deliveries.waitFor(next));
}

TEST_F(AnalysisRunnerTest, TheWhatIfIsKeptBetweenScopes) {
  Deliveries deliveries;
  AnalysisRunner runner(deliveries.callbacks());
  auto a = runner.submit({.tracePath = step.string(), .whatIfGpu = "H100 SXM"});
  ASSERT_TRUE(deliveries.waitFor(a));
  auto b = runner.submit(
      {.tracePath = step.string(), .scope = AnalysisScope::range(0, 60), .whatIfGpu = "H100 SXM"});
  ASSERT_TRUE(deliveries.waitFor(b));
  auto results = deliveries.results();
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].second.whatIf && results[1].second.whatIf);
  EXPECT_EQ(results[0].second.whatIf->predictedNs, results[1].second.whatIf->predictedNs);
  EXPECT_EQ(results[1].second.totals.time, 60);  // the scope's own breakdown
}

TEST_F(AnalysisRunnerTest, DestroyedWhileAnalyzing) {
  for (auto wait : {0ms, 5ms, 50ms}) {
    Deliveries deliveries;
    {
      AnalysisRunner runner(deliveries.callbacks());
      runner.submit({.tracePath = big.string(), .whatIfGpu = "H100 SXM"});
      std::this_thread::sleep_for(wait);
    }
    // Nothing is delivered once the runner is gone: it cancels and joins its worker.
    auto delivered = deliveries.results().size();
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(deliveries.results().size(), delivered);
  }
}

}  // namespace
}  // namespace rlscope::gui
