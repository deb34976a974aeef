// Opening files for the viewer (gui/app/trace_file.h): a Kineto JSON trace is imported on the way
// (the A100 AlexNet trace of ../shared/traces; skipped when absent), a garbage file is refused
// with one line.
#include "trace_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rlscope/trace/error.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

TEST(TraceFile, ImportsAKinetoTrace) {
  const std::filesystem::path kineto =
      std::filesystem::path(RLSCOPE_SHARED_TRACES_DIR) / "a100_alexnet.json.gz";
  if (!std::filesystem::exists(kineto)) GTEST_SKIP() << kineto << " is not there";
  auto data = openTraceFile(kineto);
  EXPECT_GT(data->itemCount, 0);
  EXPECT_FALSE(data->processes.empty());
  EXPECT_FALSE(data->devices.empty());
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
