// Loading traces into timeline tracks (rlscope/gui_model/timeline_data.h): a small constructed
// trace with exact tracks, labels and items; progress and cancelling; and the real Kineto traces of
// ../shared/traces, imported first, where every row of the six tables must land in a track.
#include "rlscope/gui_model/timeline_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rlscope/gui_model/lod_query.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::gui {
namespace {

using testing::addA100;
using testing::addApiCall;
using testing::addCpu;
using testing::addKernel;
using testing::addMemcpy;
using testing::addMemset;
using testing::addOperation;
using testing::addProcess;
using testing::addThread;
using trace::Category;
constexpr std::int64_t kPid = 42;
constexpr std::int64_t kOtherPid = 77;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, 42);
constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 43);

// One training step of process 42 on its main thread, a worker thread's Backend call, and GPU work
// of processes 42 and 77 on two devices.
std::filesystem::path writeStep(const testing::TempDir& dir) {
  auto path = dir / "step.sqlite";
  trace::TraceWriter w(path);
  addProcess(w, kPid);
  addThread(w, kPid, 42, "MainThread");
  addThread(w, kPid, 43, "worker");
  addA100(w);
  // Operations: step [0, 100) holds inference [10, 40) and backprop [50, 90); prefetch [30, 60),
  // also at depth 1, overlaps both without nesting.
  addOperation(w, 1, 0, 100, "step", kMain);
  addOperation(w, 2, 10, 40, "inference", kMain, 1, 1);
  addOperation(w, 3, 50, 90, "backprop", kMain, 1, 1);
  addOperation(w, 4, 30, 60, "prefetch", kMain, 1, 1);
  addCpu(w, 0, 100, Category::kPython, kMain, "train.py:step");
  addCpu(w, 15, 35, Category::kBackend, kMain, "aten::linear");
  addCpu(w, 55, 85, Category::kBackend, kMain, "aten::mm");
  addCpu(w, 95, 120, Category::kBackend, kWorker, "aten::copy_");
  addCpu(w, 70, 60, Category::kBackend, kWorker, "damaged");  // ends before it starts: left out
  addApiCall(w, 60, 62, kMain, 7, "cudaLaunchKernel");
  addApiCall(w, 63, 64, kMain, 8, "cuMemcpyHtoDAsync_v2", trace::ApiKind::kDriver);
  addKernel(w,
            {.start = 61, .end = 80, .pid = kPid, .correlation = 7, .name = "gemm", .stream = 7});
  addKernel(
      w, {.start = 20, .end = 30, .pid = kOtherPid, .correlation = 3, .name = "relu", .stream = 7});
  addKernel(w, {.start = 40,
                .end = 50,
                .pid = kPid,
                .correlation = 9,
                .name = "reduce",
                .device = 1,
                .stream = 7});
  addMemcpy(w, {.start = 81, .end = 90, .pid = kPid, .correlation = 8, .stream = 7});  // HtoD
  addMemset(w, {.start = 5, .end = 6, .pid = kPid, .stream = 13});
  w.commit();
  return path;
}

std::vector<std::string> labels(const std::vector<Track>& tracks) {
  std::vector<std::string> out;
  for (const auto& t : tracks) out.push_back(t.label);
  return out;
}

std::vector<std::string> names(const TimelineData& data, const Track& track) {
  std::vector<std::string> out;
  for (const auto& x : track.row.items()) out.emplace_back(data.name(x));
  return out;
}

using Strings = std::vector<std::string>;

TEST(TimelineData, TracksOfProcessesThreadsAndStreams) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStep(dir));
  TimelineData data = loadTimeline(reader);

  EXPECT_EQ(data.itemCount, 4 + 4 + 2 + 3 + 2);
  EXPECT_EQ(data.damagedRows, 1);
  EXPECT_EQ(data.span.start, 0);
  EXPECT_EQ(data.span.end, 120);

  ASSERT_EQ(data.processes.size(), 1u);
  const ProcessTracks& p = data.processes[0];
  EXPECT_EQ(p.pid, kPid);
  EXPECT_EQ(p.label, "python (pid 42)");
  ASSERT_EQ(p.threads.size(), 2u);
  const ThreadTracks& main = p.threads[0];
  EXPECT_EQ(main.label, "MainThread (tid 42)");
  EXPECT_EQ(p.threads[1].label, "worker (tid 43)");

  EXPECT_EQ(labels(main.tracks),
            (Strings{"Operations", "Operations, depth 1", "Operations, depth 1 (2)",
                     "CPU categories", "CPU categories, level 1", "CPU categories, level 2"}));
  EXPECT_EQ(names(data, main.tracks[0]), (Strings{"step"}));
  EXPECT_EQ(names(data, main.tracks[1]), (Strings{"inference", "backprop"}));
  EXPECT_EQ(names(data, main.tracks[2]), (Strings{"prefetch"}));
  EXPECT_EQ(names(data, main.tracks[3]), (Strings{"train.py:step"}));
  EXPECT_EQ(names(data, main.tracks[4]), (Strings{"aten::linear", "aten::mm"}));
  EXPECT_EQ(names(data, main.tracks[5]), (Strings{"cudaLaunchKernel", "cuMemcpyHtoDAsync_v2"}));
  EXPECT_EQ(main.tracks[1].depth, 1);
  EXPECT_EQ(main.tracks[2].subRow, 1);

  // What a details view and a link to the launched kernel need.
  const TrackItem& backprop = main.tracks[1].row[1];
  EXPECT_EQ(backprop.source, ItemSource::kOperation);
  EXPECT_EQ(backprop.rowId, 3u);  // the operation's id
  EXPECT_FALSE(backprop.category());
  const TrackItem& launch = main.tracks[5].row[0];
  EXPECT_EQ(launch.source, ItemSource::kRuntime);
  EXPECT_EQ(launch.category(), Category::kCudaApi);
  EXPECT_EQ(launch.correlationId, 7u);
  EXPECT_EQ(launch.rowId, 1u);
  EXPECT_EQ(main.tracks[5].row[1].source, ItemSource::kDriver);
  EXPECT_EQ(main.tracks[3].row[0].category(), Category::kPython);

  const ThreadTracks& worker = p.threads[1];
  ASSERT_EQ(worker.tracks.size(), 1u);
  EXPECT_EQ(names(data, worker.tracks[0]), (Strings{"aten::copy_"}));

  ASSERT_EQ(data.devices.size(), 2u);
  const DeviceTracks& gpu0 = data.devices[0];
  EXPECT_EQ(gpu0.label, "GPU 0: NVIDIA A100-SXM4-40GB");
  // Device 0 runs work of two processes: its stream labels say whose.
  EXPECT_EQ(labels(gpu0.streams),
            (Strings{"Stream 7, pid 42", "Stream 7, pid 77", "Stream 13, pid 42"}));
  EXPECT_EQ(names(data, gpu0.streams[0]), (Strings{"gemm", "Memcpy HtoD"}));
  const TrackItem& gemm = gpu0.streams[0].row[0];
  EXPECT_EQ(gemm.source, ItemSource::kKernel);
  EXPECT_EQ(gemm.category(), Category::kGpuKernel);
  EXPECT_EQ(gemm.correlationId, launch.correlationId);
  EXPECT_EQ(gpu0.streams[0].globalPid, trace::globalPidOf(kPid));
  EXPECT_EQ(gpu0.streams[0].row[1].category(), Category::kGpuMemcpy);
  EXPECT_EQ(names(data, gpu0.streams[2]), (Strings{"Memset"}));
  EXPECT_EQ(gpu0.streams[2].row[0].category(), Category::kGpuMemset);
  EXPECT_EQ(data.devices[1].label, "GPU 1");  // not in TARGET_INFO_GPU
  EXPECT_EQ(labels(data.devices[1].streams), (Strings{"Stream 7"}));

  data.forEachTrack([](const Track& t) { EXPECT_FALSE(t.row.empty()) << t.label; });
}

TEST(TimelineData, RanksComeFirstInRankOrderAndSayTheirHost) {
  testing::TempDir dir;
  auto path = dir / "ranks.sqlite";
  {
    trace::TraceWriter w(path);
    // pid 10 launched rank 1 (pid 20, on node-a) and rank 0 (pid 30, on node-b).
    for (std::int64_t pid : {10, 20, 30}) {
      addProcess(w, pid);
      addCpu(w, 0, 10, Category::kPython, trace::globalTidOf(pid, pid));
    }
    w.addProcessIdentity({.globalPid = trace::globalPidOf(10), .host = "node-a"});
    w.addProcessIdentity(
        {.globalPid = trace::globalPidOf(20), .host = "node-a", .rank = 1, .worldSize = 2});
    w.addProcessIdentity(
        {.globalPid = trace::globalPidOf(30), .host = "node-b", .rank = 0, .worldSize = 2});
    w.commit();
  }
  trace::TraceReader reader(path);
  TimelineData data = loadTimeline(reader);
  std::vector<std::string> processLabels;
  for (const auto& p : data.processes) processLabels.push_back(p.label);
  EXPECT_EQ(processLabels,
            (Strings{"rank 0 of 2 on node-b \u00b7 python (pid 30)",
                     "rank 1 of 2 on node-a \u00b7 python (pid 20)", "python (pid 10)"}));
  EXPECT_EQ(data.processes[0].rank, 0);
  EXPECT_FALSE(data.processes[2].rank);
}

TEST(TimelineData, ATrackAnswersTheLodQuery) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStep(dir));
  TimelineData data = loadTimeline(reader);
  const Track& depth1 = data.processes[0].threads[0].tracks[1];
  auto blocks = queryLod(depth1.row, {0, 100, 10});
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(data.name(depth1.row[blocks[1].representative]), "backprop");
  EXPECT_EQ(blocks[1].firstColumn, 5);
  EXPECT_EQ(blocks[1].lastColumn, 8);
}

TEST(TimelineData, ATraceWithoutEventsHasNoTracks) {
  testing::TempDir dir;
  auto path = dir / "empty.sqlite";
  {
    trace::TraceWriter w(path);
    addProcess(w, kPid);
    w.commit();
  }
  trace::TraceReader reader(path);
  TimelineData data = loadTimeline(reader);
  EXPECT_TRUE(data.processes.empty());
  EXPECT_TRUE(data.devices.empty());
  EXPECT_EQ(data.itemCount, 0);
}

TEST(TimelineData, ProgressRisesToOneAndCanCancel) {
  testing::TempDir dir;
  trace::TraceReader reader(writeStep(dir));
  std::vector<double> seen;
  loadTimeline(reader, [&](double f) {
    seen.push_back(f);
    return true;
  });
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), 1.0);
  EXPECT_THROW(loadTimeline(reader, [](double) { return false; }), LoadCancelled);
}

// --- The real Kineto traces ----------------------------------------------------------------------

// Every row of the six tables the timeline reads, minus the damaged ones, is an item of a track.
void expectEveryRowLoaded(trace::TraceReader& reader, const TimelineData& data) {
  std::map<ItemSource, std::int64_t> items;
  data.forEachTrack([&](const Track& t) {
    for (const auto& x : t.row.items()) ++items[x.source];
  });
  std::int64_t rows = 0;
  for (ItemSource s :
       {ItemSource::kOperation, ItemSource::kCpuInterval, ItemSource::kRuntime, ItemSource::kDriver,
        ItemSource::kKernel, ItemSource::kMemcpy, ItemSource::kMemset}) {
    std::int64_t n = reader.rowCount(sourceTable(s));
    rows += n;
    if (data.damagedRows == 0) {
      EXPECT_EQ(items[s], n) << sourceTable(s);
    }
  }
  EXPECT_EQ(data.itemCount + data.damagedRows, rows);
}

TEST(TimelineData, LoadsEveryRealKinetoTrace) {
  auto traces = testing::sharedTracesDir();
  if (traces.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  testing::TempDir dir;
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(traces)) {
    std::string file = entry.path().filename().string();
    if (!file.ends_with(".json.gz")) continue;
    SCOPED_TRACE(file);
    auto path = dir / (file + ".sqlite");
    auto imported = testing::runCommand(
        {"rlscope", "import", "-q", entry.path().string(), "-o", path.string()});
    ASSERT_EQ(imported.exitCode, 0) << imported.err;
    trace::TraceReader reader(path);
    TimelineData data = loadTimeline(reader);
    expectEveryRowLoaded(reader, data);
    EXPECT_FALSE(data.processes.empty());
    // Kineto's wrapped 32-bit tids (a100_nccl's -549452224) are shown as the unsigned ids they
    // are, never as a negative thread.
    for (const auto& p : data.processes)
      for (const auto& t : p.threads) EXPECT_EQ(t.label.find("thread -"), std::string::npos);
    if (file == "a100_nccl.json.gz") {
      bool unwrapped = false;
      for (const auto& t : data.processes.at(0).threads)
        unwrapped |= t.label == "thread 3745515072";
      EXPECT_TRUE(unwrapped);
    }
    ++loaded;
  }
  EXPECT_GT(loaded, 0);
}

TEST(TimelineData, TheA100AlexNetTraceLinksLaunchesToKernels) {
  testing::TempDir dir;
  std::string why;
  auto path = testing::importSharedTrace(dir, "a100_alexnet", why);
  if (path.empty()) GTEST_SKIP() << why;
  trace::TraceReader reader(path);
  TimelineData data = loadTimeline(reader);

  // Kineto's CPU events nest (Python functions, aten ops, CUDA calls): several category levels.
  ASSERT_FALSE(data.processes.empty());
  std::set<std::string> trackLabels;
  for (const auto& t : data.processes[0].threads)
    for (const auto& track : t.tracks) trackLabels.insert(track.label);
  EXPECT_TRUE(trackLabels.count("Operations"));
  EXPECT_TRUE(trackLabels.count("CPU categories, level 1"));

  // Every kernel has a name, and the launch with its correlation id on the CPU side.
  std::set<std::uint32_t> launches;
  for (const auto& p : data.processes)
    for (const auto& t : p.threads)
      for (const auto& track : t.tracks)
        for (const auto& x : track.row.items())
          if (x.source == ItemSource::kRuntime && x.correlationId) launches.insert(x.correlationId);
  std::int64_t kernels = 0, linked = 0;
  ASSERT_FALSE(data.devices.empty());
  for (const auto& d : data.devices) {
    EXPECT_NE(d.label.find("A100"), std::string::npos) << d.label;
    for (const auto& s : d.streams)
      for (const auto& x : s.row.items()) {
        if (x.source != ItemSource::kKernel) continue;
        ++kernels;
        EXPECT_FALSE(data.name(x).empty());
        linked += launches.count(x.correlationId);
      }
  }
  EXPECT_EQ(kernels, reader.rowCount("CUPTI_ACTIVITY_KIND_KERNEL"));
  EXPECT_EQ(linked, kernels);
}

}  // namespace
}  // namespace rlscope::gui
