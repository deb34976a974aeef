// The links between CUDA API calls and their GPU work (rlscope/gui_model/correlation_index.h): from
// a constructed trace (both directions, two processes using the same correlation id, a call that
// launched nothing, a call with kernels on two streams), and against a brute-force pairing on
// random timelines of many processes and large correlation ids.
#include "rlscope/gui_model/correlation_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::gui {
namespace {

constexpr std::int64_t kPid = 42;
constexpr std::int64_t kOtherPid = 77;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, kPid);
constexpr std::int64_t kOtherMain = trace::globalTidOf(kOtherPid, kOtherPid);

using testing::addApiCall;
using testing::addKernel;
using testing::addMemcpy;
using testing::addMemset;

// Process 42: a launch (7), a copy (8, driver), a memset (9), a synchronize that launched nothing
// (10), a graph launch with kernels on streams 7 and 8 (12). Process 77 reuses correlation id 7.
// A kernel (11) whose call is not in the trace.
std::filesystem::path writeLinks(const testing::TempDir& dir) {
  auto path = dir / "links.sqlite";
  trace::TraceWriter w(path);
  auto kernel = [&](std::int64_t pid, std::int64_t stream, TimeNs start, std::int64_t correlation,
                    const char* name) {
    addKernel(w, {.start = start,
                  .end = start + 10,
                  .pid = pid,
                  .correlation = correlation,
                  .name = name,
                  .stream = stream});
  };
  addApiCall(w, 100, 105, kMain, 7, "cudaLaunchKernel");
  addApiCall(w, 110, 115, kMain, 8, "cuMemcpyHtoDAsync_v2", trace::ApiKind::kDriver);
  addApiCall(w, 120, 125, kMain, 9, "cudaMemsetAsync");
  addApiCall(w, 130, 135, kMain, 10, "cudaStreamSynchronize");
  addApiCall(w, 140, 145, kMain, 12, "cudaGraphLaunch");
  addApiCall(w, 100, 105, kOtherMain, 7, "cudaLaunchKernel");
  kernel(kPid, 7, 103, 7, "gemm");
  addMemcpy(w, {.start = 115, .end = 118, .pid = kPid, .correlation = 8, .stream = 7});
  addMemset(w, {.start = 125, .end = 126, .pid = kPid, .correlation = 9, .stream = 7});
  kernel(kPid, 8, 145, 12, "graph_b");  // later on stream 8, earlier in the table
  kernel(kPid, 7, 142, 12, "graph_a");
  kernel(kOtherPid, 7, 104, 7, "relu");
  kernel(kPid, 7, 200, 11, "orphan");
  w.commit();
  return path;
}

// The location of the item named `name` (the first one, in forEachTrack order).
ItemLocation find(const TimelineData& data, std::string_view name, std::int64_t pid = kPid) {
  ItemLocation out;
  data.forEachTrack([&](const Track& t) {
    if (out.track || t.globalPid != trace::globalPidOf(pid)) return;
    for (std::size_t i = 0; i < t.row.size(); ++i) {
      if (data.name(t.row[i]) == name) {
        out = {&t, i};
        return;
      }
    }
  });
  EXPECT_TRUE(out.track) << name;
  return out;
}

std::vector<std::string> names(const TimelineData& data, const std::vector<ItemLocation>& links) {
  std::vector<std::string> out;
  for (const auto& l : links) out.emplace_back(data.name(l.item()));
  return out;
}

using Strings = std::vector<std::string>;

TEST(CorrelationIndex, LinksCallsAndTheirGpuWorkBothWaysWithinAProcess) {
  testing::TempDir dir;
  trace::TraceReader reader(writeLinks(dir));
  TimelineData data = loadTimeline(reader);
  CorrelationIndex index(data);
  EXPECT_EQ(index.calls(), 6u);
  EXPECT_EQ(index.activities(), 7u);

  auto linked = [&](std::string_view name, std::int64_t pid = kPid) {
    ItemLocation at = find(data, name, pid);
    return at.track ? index.linked(*at.track, at.index) : std::vector<ItemLocation>{};
  };
  EXPECT_EQ(names(data, linked("cudaLaunchKernel")), (Strings{"gemm"}));
  EXPECT_EQ(names(data, linked("gemm")), (Strings{"cudaLaunchKernel"}));
  // The link leads to the item itself, on its own track.
  ItemLocation gemm = find(data, "gemm");
  EXPECT_EQ(linked("cudaLaunchKernel"), (std::vector<ItemLocation>{gemm}));
  EXPECT_EQ(linked("gemm"), (std::vector<ItemLocation>{find(data, "cudaLaunchKernel")}));

  EXPECT_EQ(names(data, linked("cuMemcpyHtoDAsync_v2")), (Strings{"Memcpy HtoD"}));
  EXPECT_EQ(names(data, linked("Memcpy HtoD")), (Strings{"cuMemcpyHtoDAsync_v2"}));
  EXPECT_EQ(names(data, linked("cudaMemsetAsync")), (Strings{"Memset"}));
  EXPECT_EQ(names(data, linked("Memset")), (Strings{"cudaMemsetAsync"}));

  // Same correlation id in process 77: its own call and kernel only.
  EXPECT_EQ(names(data, linked("cudaLaunchKernel", kOtherPid)), (Strings{"relu"}));
  EXPECT_EQ(names(data, linked("relu", kOtherPid)), (Strings{"cudaLaunchKernel"}));
  EXPECT_EQ(linked("relu", kOtherPid).front().track->globalPid, trace::globalPidOf(kOtherPid));

  // A graph launch: both kernels, in time order across the two streams.
  EXPECT_EQ(names(data, linked("cudaGraphLaunch")), (Strings{"graph_a", "graph_b"}));
  ItemLocation graph = find(data, "cudaGraphLaunch");
  EXPECT_EQ(index.linkedCount(*graph.track, graph.index), 2u);
  EXPECT_EQ(names(data, index.linked(*graph.track, graph.index, 1)), (Strings{"graph_a"}));

  // Nothing on the other side.
  EXPECT_TRUE(linked("cudaStreamSynchronize").empty());
  EXPECT_TRUE(linked("orphan").empty());
  ItemLocation sync = find(data, "cudaStreamSynchronize");
  EXPECT_EQ(index.linkedCount(*sync.track, sync.index), 0u);
  // Out of range, or a track of another timeline.
  EXPECT_TRUE(index.linked(*sync.track, sync.track->row.size()).empty());
  Track stranger = *sync.track;
  EXPECT_TRUE(index.linked(stranger, sync.index).empty());
  EXPECT_TRUE(CorrelationIndex().linked(*sync.track, sync.index).empty());
  EXPECT_GT(index.memoryBytes(), 13 * sizeof(CorrelationIndex::Entry) - 1);
}

// --- Random timelines against a brute-force pairing ----------------------------------------------

struct Random {
  TimelineData data;
  // Every item with a correlation id: (globalPid, correlation, is a call, location).
  std::vector<std::tuple<std::int64_t, std::uint32_t, bool, ItemLocation>> linkable;
};

// Processes with API threads and GPU streams; correlation ids drawn from a small range (so that
// they collide within and across processes) offset by up to 2^31 (so that every key digit varies).
void makeRandom(Random& r, std::mt19937_64& rng, int processes) {
  std::uniform_int_distribution<std::uint32_t> corr(0, 400);
  std::uniform_int_distribution<int> kind(0, 9);
  auto items = [&](bool cpu) {
    std::vector<TrackItem> out;
    TimeNs t = static_cast<TimeNs>(rng() % 100);
    int n = static_cast<int>(rng() % (processes > 10 ? 20 : 200));
    for (int i = 0; i < n; ++i) {
      TrackItem x{.start = t, .end = t + 3, .rowId = static_cast<std::uint32_t>(i + 1)};
      int k = kind(rng);
      x.source = cpu ? (k < 6   ? ItemSource::kRuntime
                        : k < 8 ? ItemSource::kDriver
                                : ItemSource::kCpuInterval)
                     : (k < 6   ? ItemSource::kKernel
                        : k < 8 ? ItemSource::kMemcpy
                                : ItemSource::kMemset);
      std::uint32_t c = corr(rng);
      x.correlationId = c == 0 ? 0 : c + (c % 3 == 0 ? 0x7FFF0000u : 0u);
      out.push_back(x);
      t += 3 + static_cast<TimeNs>(rng() % 5);
    }
    return out;
  };
  for (int p = 1; p <= processes; ++p) {
    std::int64_t globalPid = trace::globalPidOf(1000 + p);
    ProcessTracks pt{.globalPid = globalPid};
    for (int tid = 0; tid < 2; ++tid) {
      ThreadTracks tt{.globalTid = globalPid + tid};
      Track t{.kind = TrackKind::kCategories, .globalPid = globalPid, .globalTid = globalPid + tid};
      t.row = LodRow(items(true));
      tt.tracks.push_back(std::move(t));
      pt.threads.push_back(std::move(tt));
    }
    r.data.processes.push_back(std::move(pt));
  }
  DeviceTracks device{.deviceId = 0};
  for (int s = 0; s < 3 * processes; ++s) {
    Track t{.kind = TrackKind::kGpuStream,
            .globalPid = trace::globalPidOf(1000 + 1 + s % processes),
            .streamId = s};
    t.row = LodRow(items(false));
    device.streams.push_back(std::move(t));
  }
  r.data.devices.push_back(std::move(device));
  r.data.forEachTrack([&](const Track& t) {
    for (std::size_t i = 0; i < t.row.size(); ++i) {
      const TrackItem& x = t.row[i];
      if (x.correlationId == 0 || x.source == ItemSource::kCpuInterval) continue;
      bool call = x.source == ItemSource::kRuntime || x.source == ItemSource::kDriver;
      r.linkable.emplace_back(t.globalPid, x.correlationId, call, ItemLocation{&t, i});
    }
  });
}

TEST(CorrelationIndex, MatchesABruteForcePairingOnRandomTimelines) {
  std::mt19937_64 rng(7);
  for (int processes : {1, 2, 5, 300}) {
    SCOPED_TRACE(processes);
    Random r;
    makeRandom(r, rng, processes);
    CorrelationIndex index(r.data);
    // The pairing by its definition: same process, same correlation id, the other side.
    std::map<std::tuple<std::int64_t, std::uint32_t, bool>, std::vector<ItemLocation>> sides;
    for (const auto& [pid, corr, call, at] : r.linkable) sides[{pid, corr, call}].push_back(at);
    std::size_t calls = 0;
    for (const auto& [pid, corr, call, at] : r.linkable) {
      calls += call;
      auto other = sides.find({pid, corr, !call});
      std::vector<ItemLocation> expected;
      if (other != sides.end()) expected = other->second;
      auto got = index.linked(*at.track, at.index);
      // Equal starts may come in either order: compare as sets, and check the time order.
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](const auto& a, const auto& b) {
        return a.item().start < b.item().start;
      }));
      auto key = [](const ItemLocation& l) { return std::pair(l.track, l.index); };
      std::set<std::pair<const Track*, std::size_t>> g, e;
      for (const auto& l : got) g.insert(key(l));
      for (const auto& l : expected) e.insert(key(l));
      ASSERT_EQ(g, e);
      ASSERT_EQ(index.linkedCount(*at.track, at.index), expected.size());
    }
    EXPECT_EQ(index.calls(), calls);
    EXPECT_EQ(index.activities(), r.linkable.size() - calls);
  }
}

}  // namespace
}  // namespace rlscope::gui
