// Opening files for the viewer (rlscope/gui_widgets/trace_file.h): a Kineto JSON trace is imported
// on the way (the A100 AlexNet trace of ../shared/traces; skipped when absent), a garbage file is
// refused with one line.
#include "rlscope/gui_widgets/trace_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/nsys_fixture.h"
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

TEST(TraceFile, ImportsAnNsightSystemsExportWithItsLinks) {
  testing::TempDir dir;
  const auto report = dir / "report.sqlite";
  constexpr std::int64_t kGlobalPid = trace::globalPidOf(77);
  constexpr std::int64_t kTid = trace::globalTidOf(77, 78);
  {
    testing::NsysFixture nsys(report);
    nsys.process(kGlobalPid, 77, "train");
    nsys.gpu({.id = 0, .name = "NVIDIA H100 80GB HBM3"});
    trace::ApiCallRecord call;
    call.start = 1'000;
    call.end = 3'000;
    call.globalTid = kTid;
    call.correlationId = 5;
    call.nameId = nsys.string("cudaLaunchKernel_v7000");
    nsys.runtime(call);
    trace::KernelRecord k;
    k.start = 4'000;
    k.end = 9'000;
    k.streamId = 7;
    k.correlationId = 5;
    k.globalPid = kGlobalPid;
    k.shortName = k.demangledName = nsys.string("gemm");
    nsys.kernel(k);
  }
  auto doc = openTraceFile(report);
  EXPECT_TRUE(doc->imported);
  EXPECT_NE(doc->tracePath, report);
  ASSERT_EQ(doc->timeline.devices.size(), 1u);
  ASSERT_EQ(doc->timeline.devices[0].streams.size(), 1u);
  const Track& stream = doc->timeline.devices[0].streams[0];
  ASSERT_EQ(stream.row.size(), 1u);
  // The kernel is linked to its launch, on the process's thread.
  const auto calls = doc->links.linked(stream, 0);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(doc->timeline.name(calls[0].item()), "cudaLaunchKernel_v7000");
  EXPECT_EQ(calls[0].track->globalTid, kTid);
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
