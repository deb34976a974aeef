// Opening files for the viewer (gui/app/trace_file.h): a Kineto JSON trace is imported on the way
// (the A100 AlexNet trace of ../shared/traces; skipped when absent), a garbage file is refused
// with one line.
#include "trace_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rlscope/trace/error.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

TEST(TraceFile, ImportsAKinetoTrace) {
  const std::filesystem::path kineto =
      std::filesystem::path(RLSCOPE_SHARED_TRACES_DIR) / "a100_alexnet.json.gz";
  if (!std::filesystem::exists(kineto)) GTEST_SKIP() << kineto << " is not there";
  std::vector<std::string> stages;
  auto doc = openTraceFile(kineto, [&](const std::string& stage, double) {
    if (stages.empty() || stages.back() != stage) stages.push_back(stage);
    return true;
  });
  EXPECT_GT(doc->timeline.itemCount, 0);
  EXPECT_FALSE(doc->timeline.processes.empty());
  EXPECT_FALSE(doc->timeline.devices.empty());
  EXPECT_TRUE(doc->imported);
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front(), "Importing Kineto JSON");
  EXPECT_EQ(stages.back(), "Linking CUDA calls to their GPU work");
  // The imported trace stays while the document (or its timeline) is alive, for the details
  // view and the analysis panel to read, and goes with it.
  const std::filesystem::path imported = doc->tracePath;
  auto timeline = TraceDocument::timelineOf(std::move(doc));
  EXPECT_TRUE(std::filesystem::exists(imported));
  timeline.reset();
  EXPECT_FALSE(std::filesystem::exists(imported));
}

TEST(TraceFile, CancelStopsTheRead) {
  testing::TempDir dir;
  const auto path = dir / "empty.sqlite";
  {
    trace::TraceWriter w(path);
    w.commit();
  }
  EXPECT_THROW(openTraceFile(path, [](const std::string&, double) { return false; }),
               LoadCancelled);
  auto doc = openTraceFile(path);
  EXPECT_FALSE(doc->imported);
  EXPECT_EQ(doc->tracePath, path);
}

TEST(TraceFile, RefusesGarbageWithOneLine) {
  testing::TempDir dir;
  const auto garbage = dir / "garbage.json";
  std::ofstream(garbage) << "{ not json";
  try {
    openTraceFile(garbage);
    FAIL() << "opened garbage";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_THROW(openTraceFile(dir / "missing.sqlite"), std::exception);
}

}  // namespace
}  // namespace rlscope::gui
