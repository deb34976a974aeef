// rlscope merge on constructed hosts' traces: clock offsets from the wall-clock origins and from
// collectives (with late-seen completions), and every row moved onto one clock with pids,
// devices, operation ids and strings kept apart.
#include "rlscope/distributed/job_merge.h"

#include "rlscope/distributed/rank_analysis.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "rlscope/trace/clock_sync.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {
namespace {

using testing::addCpu;
using testing::addKernel;
using testing::addOperation;
using trace::Category;
using trace::TimeNs;

constexpr TimeNs kAhead = 1'000'000'000'123;  // host B's monotonic clock against host A's
constexpr TimeNs kWallError = 5'000'000;      // host B's wall clock (NTP) against host A's
constexpr std::int64_t kPid = 4242;           // both hosts' rank has this pid (containers)
constexpr int kCollectives = 20;

// One host's trace: rank `rank` in process kPid, a "step" operation per collective, an
// allreduce entered at `entry` and waited on until `completion(k)`; GPU 0 with one kernel.
std::filesystem::path writeHost(const rlscope::testing::TempDir& dir, const std::string& host,
                                std::int64_t rank, TimeNs clock, TimeNs wall,
                                const std::function<TimeNs(int)>& entry,
                                const std::function<TimeNs(int)>& completion,
                                const std::string& clockSync = "") {
  auto path = dir / (host + ".sqlite");
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kHost, host);
  if (!clockSync.empty()) w.setMeta(trace::kClockSyncMetaKey, clockSync);
  w.setMeta(trace::meta::kStartMonotonicNs, std::to_string(clock));
  w.setMeta(trace::meta::kStartWallNs, std::to_string(wall));
  w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
  w.addProcessIdentity({.globalPid = trace::globalPidOf(kPid),
                        .host = host,
                        .launcher = "torchrun",
                        .rank = rank,
                        .worldSize = 2});
  auto tid = trace::globalTidOf(kPid, kPid);
  testing::addA100(w);
  for (int k = 0; k < kCollectives; ++k) {
    TimeNs e = clock + entry(k), c = clock + completion(k);
    addOperation(w, k + 1, e - 500'000, c, host == "a" ? "step a" : "step b", tid);
    addCpu(w, e, e + 10'000, Category::kBackend, tid, "torch._C._distributed_c10d.allreduce");
    addCpu(w, e + 10'000, c, Category::kWaiting, tid, "torch._C._distributed_c10d.wait");
  }
  addKernel(w, {.start = clock + 5, .end = clock + 9, .pid = kPid, .name = "gemm", .stream = 7});
  w.commit();
  return path;
}

// Collective k: rank 0 (host a) enters at 1 ms + k x 10 ms, rank 1 (host b) 2 ms later; both have
// the result 100 µs after rank 1 entered, but host b sees it late in a third of them (1.2 ms: a
// scheduler period), and host a 3 µs late in every other one.
// With clock-sync records (rlscope-prof --clock-sync), a's the reference and b's measured.
struct Job {
  rlscope::testing::TempDir dir;
  std::filesystem::path a, b;
  explicit Job(const std::string& syncA = "", const std::string& syncB = "") {
    auto at = [](int k) { return 1'000'000 + TimeNs{k} * 10'000'000; };
    a = writeHost(
        dir, "a", 0, 50'000'000'000, 1'700'000'000'000'000'000, at,
        [&](int k) { return at(k) + 2'100'000 + (k % 2 ? 3'000 : 0); }, syncA);
    b = writeHost(
        dir, "b", 1, 50'000'000'000 + kAhead, 1'700'000'000'000'000'000 + kWallError,
        [&](int k) { return at(k) + 2'000'000; },
        [&](int k) { return at(k) + 2'100'000 + (k % 3 == 0 ? 1'200'000 : 0); }, syncB);
  }
};

TEST(ClockAlignment, WallClockOffsetIsAsGoodAsTheWallClocks) {
  Job job;
  trace::TraceReader a(job.a), b(job.b);
  auto wall = wallClockOffset(a, b);
  ASSERT_TRUE(wall);
  EXPECT_EQ(wall->method, "wall clock");
  EXPECT_EQ(wall->offset, -kAhead + kWallError);
  auto self = wallClockOffset(a, a);
  EXPECT_EQ(self->method, "same host");
  EXPECT_EQ(self->offset, 0);
}

// Imports know only the wall-clock time of their clock's origin (nsys's session start, Kineto's
// baseTimeNanoseconds): their clock counts from 0 there.
TEST(ClockAlignment, WallClockOriginsOfImports) {
  rlscope::testing::TempDir dir;
  std::vector<std::unique_ptr<trace::TraceReader>> traces;
  for (auto [host, wall] :
       {std::pair{"a", "1711964646000000000"}, std::pair{"b", "1711964646250000000"}}) {
    auto path = dir / (std::string(host) + ".sqlite");
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kHost, host);
    w.setMeta(trace::meta::kStartWallNs, wall);
    w.commit();
    traces.push_back(std::make_unique<trace::TraceReader>(path));
  }
  auto wall = wallClockOffset(*traces[0], *traces[1]);
  ASSERT_TRUE(wall);
  EXPECT_EQ(wall->offset, 250'000'000);  // b's 0 is a's 250 ms
}

TEST(ClockAlignment, CollectivesFindTheOffsetDespiteLateCompletions) {
  Job job;
  trace::TraceReader a(job.a), b(job.b);
  auto c = collectiveOffset(a, b);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->method, "collectives");
  EXPECT_EQ(c->collectives, static_cast<std::size_t>(kCollectives));
  // The main cluster's differences are 0 and 3 µs: the median is one of them.
  EXPECT_GE(c->offset, -kAhead);
  EXPECT_LE(c->offset, -kAhead + 3'000);
  EXPECT_LE(c->uncertainty, 3'000);
}

TEST(JobMerge, EveryRowOnOneClockWithPidsDevicesAndIdsApart) {
  Job job;
  auto out = job.dir / "job.sqlite";
  auto report = mergeJob({job.a, job.b}, out);
  ASSERT_EQ(report.traces.size(), 2u);
  EXPECT_EQ(report.traces[0].clock.method, "reference");
  EXPECT_EQ(report.traces[1].clock.method, "collectives");
  EXPECT_EQ(report.traces[1].pidsRemapped, 1u);  // both ranks were pid 4242
  EXPECT_EQ(report.traces[1].deviceOffset, 1);   // host b's GPU 0 is the job's GPU 1

  trace::TraceReader r(out);
  auto ids = r.processIdentities();
  ASSERT_EQ(ids.size(), 2u);
  std::map<std::int64_t, std::string> hostOfRank;
  for (const auto& id : ids) hostOfRank[*id.rank] = id.host;
  EXPECT_EQ(hostOfRank, (std::map<std::int64_t, std::string>{{0, "a"}, {1, "b"}}));
  for (const auto& p : r.processes()) EXPECT_EQ(p.pid, kPid);  // the OS pid is kept
  EXPECT_EQ(r.gpus().size(), 2u);
  EXPECT_EQ(r.rowCount(trace::table::kOperations), 2 * kCollectives);
  EXPECT_FALSE(r.metaValue(trace::meta::kHost));  // two hosts: the identity rows say which

  // Host b's rows moved onto host a's clock: rank 1 enters 2 ms after rank 0, as it did.
  RankAnalysis ranks = analyzeRanks(r, analyzeTrace(r));
  EXPECT_EQ(ranks.matched, static_cast<std::uint64_t>(kCollectives));
  EXPECT_EQ(ranks.ranks[1].collectivesLast, static_cast<std::uint64_t>(kCollectives));
  EXPECT_NEAR(static_cast<double>(ranks.ranks[1].othersWaited), kCollectives * 2'000'000.0,
              kCollectives * 3'000.0);
  // While rank 0 waited (2 ms each time), rank 1 was 1.5 ms outside its step, then in it.
  const auto& doing = ranks.ranks[1].doing;
  ASSERT_EQ(doing.size(), 2u);
  EXPECT_EQ(doing[0].operation, kUnannotatedName);
  EXPECT_EQ(doing[0].category, "no CPU activity");
  EXPECT_EQ(doing[1].operation, "step b");
  EXPECT_NEAR(static_cast<double>(doing[1].time), kCollectives * 500'000.0, kCollectives * 3'000.0);

  auto merged = nlohmann::json::parse(*r.metaValue("merged_traces"));
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[1]["method"], "collectives");
  EXPECT_EQ(merged[1]["host"], "b");
  EXPECT_EQ(merged[1]["offset_ns"], report.traces[1].clock.offset);
}

// Collectives refine the clock exchange's offset within its bound: here the exchange (off by
// 40 µs, within ± 10 µs by its own account) keeps the collectives' estimate (the truth, -kAhead,
// to 3 µs) at the nearest end of its interval; a looser exchange leaves it as it is.
TEST(JobMerge, CollectivesRefineTheClockExchangeWithinItsBound) {
  auto sync = [](std::int64_t offset, std::int64_t bound) {
    trace::ClockSync s{.role = trace::ClockSync::Role::kMeasured,
                       .endpoint = "a:29600",
                       .session = "s",
                       .offsetNs = offset,
                       .boundNs = bound,
                       .bursts = {{.offsetNs = offset, .delayNs = 2 * bound}}};
    return trace::clockSyncToJson(s);
  };
  std::string reference = trace::clockSyncToJson(
      {.role = trace::ClockSync::Role::kReference, .endpoint = "a:29600", .session = "s"});
  Job tight(reference, sync(-kAhead + 40'000, 10'000));
  auto report = mergeJob({tight.a, tight.b}, tight.dir / "job.sqlite");
  EXPECT_EQ(report.traces[1].clock.method, "collectives");
  EXPECT_EQ(report.traces[1].clock.offset, -kAhead + 30'000);
  EXPECT_LE(report.traces[1].clock.uncertainty, 10'000);
  auto exchangeOnly =
      mergeJob({tight.a, tight.b}, tight.dir / "exchange.sqlite", {.alignByCollectives = false});
  EXPECT_EQ(exchangeOnly.traces[1].clock.method, "clock exchange");
  EXPECT_EQ(exchangeOnly.traces[1].clock.offset, -kAhead + 40'000);

  Job loose(reference, sync(-kAhead + 40'000, 100'000));
  auto refined = mergeJob({loose.a, loose.b}, loose.dir / "job.sqlite");
  EXPECT_GE(refined.traces[1].clock.offset, -kAhead);
  EXPECT_LE(refined.traces[1].clock.offset, -kAhead + 3'000);
}

// Two GPU hosts whose ranks are both pid 4242, with NCCL kernels: after the merge renumbers host
// b's process, what its rank did while the other waited is still found on its main thread.
TEST(JobMerge, StragglersOfRenumberedGpuRanksAreFoundOnTheirMainThread) {
  rlscope::testing::TempDir dir;
  std::vector<std::filesystem::path> hosts;
  for (int rank = 0; rank < 2; ++rank) {
    std::string host = rank ? "b" : "a";
    auto path = dir / (host + ".sqlite");
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kHost, host);
    w.setMeta(trace::meta::kStartMonotonicNs, "0");
    w.setMeta(trace::meta::kStartWallNs, "1700000000000000000");
    w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
    w.addProcessIdentity(
        {.globalPid = trace::globalPidOf(kPid), .host = host, .rank = rank, .worldSize = 2});
    for (int k = 0; k < 4; ++k) {
      TimeNs t = k * 1'000'000, start = t + (rank ? 400'000 : 100'000);
      addKernel(w, {.start = start,
                    .end = t + 600'000,
                    .pid = kPid,
                    .correlation = k + 1,
                    .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                    .stream = 7});
      addCpu(w, t, start, Category::kBackend, trace::globalTidOf(kPid, kPid), "aten::mm");
    }
    w.commit();
    hosts.push_back(path);
  }
  auto out = dir / "job.sqlite";
  auto report = mergeJob(hosts, out);
  EXPECT_EQ(report.traces[1].pidsRemapped, 1u);
  EXPECT_EQ(report.traces[1].clock.method, "collectives");
  EXPECT_EQ(report.traces[1].clock.offset, 0);  // the kernels end together
  trace::TraceReader r(out);
  RankAnalysis ranks = analyzeRanks(r, analyzeTrace(r));
  EXPECT_EQ(ranks.source, "NCCL kernels");
  ASSERT_EQ(ranks.ranks.size(), 2u);
  EXPECT_EQ(ranks.ranks[1].collectivesLast, 4u);
  ASSERT_EQ(ranks.ranks[1].doing.size(), 1u);
  EXPECT_EQ(ranks.ranks[1].doing[0].category, "Backend");
  EXPECT_EQ(ranks.ranks[1].doing[0].time, 4 * 300'000);
}

TEST(JobMerge, RefusesToOverwriteAnInputAndSaysWhatCannotBeAligned) {
  Job job;
  EXPECT_THROW(mergeJob({job.a, job.b}, job.a), trace::TraceError);
  // A trace with neither a wall-clock origin nor collectives in common.
  auto bare = job.dir / "bare.sqlite";
  {
    trace::TraceWriter w(bare);
    w.setMeta(trace::meta::kHost, "c");
    w.commit();
  }
  try {
    mergeJob({job.a, bare}, job.dir / "out.sqlite");
    FAIL() << "merged a trace it could not align";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("bare.sqlite: cannot be put on the first trace's clock"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(job.dir / "out.sqlite"));
}

}  // namespace
}  // namespace rlscope::analysis
