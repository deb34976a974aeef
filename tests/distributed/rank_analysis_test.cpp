// Ranks side by side on constructed jobs with exact expected times: collectives from c10d calls
// and from NCCL kernels, the straggler of each collective and what it did, and ranks whose
// collective sequences part.
#include "rlscope/distributed/rank_analysis.h"

#include <gtest/gtest.h>

#include <sstream>

#include "rlscope/distributed/collectives.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {
namespace {

using testing::addCpu;
using testing::addKernel;
using testing::addOperation;
using testing::addProcess;
using trace::Category;
using trace::TimeNs;

constexpr const char* kAllreduce = "torch._C._distributed_c10d.allreduce";
constexpr const char* kBroadcast = "torch._C._distributed_c10d.broadcast";
constexpr const char* kWait = "torch._C._distributed_c10d.wait";

TEST(Collectives, KindsOfCallsAndKernels) {
  EXPECT_EQ(collectiveKindOfCall(kAllreduce), "allreduce");
  EXPECT_EQ(collectiveKindOfCall("torch._C._distributed_c10d._allgather_base"), "allgather");
  EXPECT_EQ(collectiveKindOfCall("torch._C._distributed_c10d.monitored_barrier"), "barrier");
  EXPECT_EQ(collectiveKindOfCall("c10d::allreduce_"), "allreduce");
  EXPECT_EQ(collectiveKindOfCall("c10d::_reduce_scatter_base_"), "reduce_scatter");
  EXPECT_EQ(collectiveKindOfCall("c10d::broadcast_"), "broadcast");
  for (const char* no : {"torch._C._distributed_c10d.send", "c10d::recv_", kWait, "allreduce",
                         "torch._C._distributed_c10d.set", "record_param_comms", ""}) {
    EXPECT_FALSE(collectiveKindOfCall(no)) << no;
  }
  EXPECT_EQ(collectiveKindOfKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
                                   "unsigned long, ncclWork*)"),
            "allreduce");
  EXPECT_EQ(collectiveKindOfKernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(...)"),
            "reduce_scatter");
  EXPECT_EQ(collectiveKindOfKernel("ncclDevKernel_Reduce_Sum_f32_RING_LL"), "reduce");
  EXPECT_EQ(collectiveKindOfKernel("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"),
            "nccl");
  EXPECT_FALSE(collectiveKindOfKernel("ncclDevKernel_SendRecv(ncclDevComm*)"));
  EXPECT_FALSE(collectiveKindOfKernel("volta_sgemm_128x64_nn"));
  EXPECT_TRUE(isCollectiveWait(kWait));
}

constexpr std::int64_t kPids[3] = {100, 200, 300};
constexpr TimeNs kPeriod = 1000;

std::int64_t mainThread(std::int64_t pid) {
  return trace::globalTidOf(pid, pid);
}

void addRank(trace::TraceWriter& w, std::int64_t pid, std::int64_t rank, std::int64_t parent = 0) {
  w.addProcess(
      {.globalPid = trace::globalPidOf(pid), .pid = pid, .parentPid = parent, .name = "python"});
  w.addProcessIdentity({.globalPid = trace::globalPidOf(pid),
                        .host = "node" + std::to_string(rank),
                        .launcher = "torchrun",
                        .rank = rank,
                        .worldSize = 3});
}

// One step of a rank at T = step * kPeriod: "step" [T, T+900) holds "compute" [T, T+entry) in
// Python; then the collective's call [T+entry, T+entry+10) and its wait until T+700, when every
// rank has its result.
void addStep(trace::TraceWriter& w, std::int64_t pid, int step, TimeNs entry,
             const char* collective = kAllreduce) {
  TimeNs t = step * kPeriod;
  std::int64_t tid = mainThread(pid);
  std::int64_t id = pid * 100 + step * 2;
  addOperation(w, id + 1, t, t + 900, "step", tid);
  addOperation(w, id + 2, t, t + entry, "compute", tid, id + 1, 1);
  addCpu(w, t, t + entry, Category::kPython, tid, "train.py:compute");
  addCpu(w, t + entry, t + entry + 10, Category::kBackend, tid, collective);
  addCpu(w, t + entry + 10, t + 700, Category::kWaiting, tid, kWait);
}

// Ranks 0, 1, 2 (pids 100, 200, 300) and a worker rank 1 forked (pid 201, no collectives), under
// a launcher (pid 50, no rank). Steps 0-2: rank 2 enters at 500, ranks 0 and 1 at 100 and 200;
// step 3: rank 0 enters at 600, rank 1 at 200, rank 2 at 100.
std::filesystem::path writeJob(const rlscope::testing::TempDir& dir,
                               const char* rank1Step2 = kAllreduce) {
  auto path = dir / "job.sqlite";
  trace::TraceWriter w(path);
  addProcess(w, 50, "torchrun");
  for (std::int64_t r = 0; r < 3; ++r) addRank(w, kPids[r], r, 50);
  addRank(w, 201, 1, 200);
  addCpu(w, 0, 3000, Category::kPython, mainThread(201), "worker.py:loop");
  for (int step = 0; step < 3; ++step) {
    addStep(w, kPids[0], step, 100);
    addStep(w, kPids[1], step, 200, step == 2 ? rank1Step2 : kAllreduce);
    addStep(w, kPids[2], step, 500);
  }
  addStep(w, kPids[0], 3, 600);
  addStep(w, kPids[1], 3, 200);
  addStep(w, kPids[2], 3, 100);
  w.commit();
  return path;
}

RankAnalysis analyze(const std::filesystem::path& path) {
  trace::TraceReader reader(path);
  Breakdown b = analyzeTrace(reader);
  return analyzeRanks(reader, b);
}

TEST(RankAnalysis, TheStragglerOfEveryCollectiveAndWhatItDid) {
  rlscope::testing::TempDir dir;
  RankAnalysis a = analyze(writeJob(dir));
  EXPECT_EQ(a.matched, 4u);
  EXPECT_EQ(a.source, "c10d calls");
  EXPECT_EQ(a.hosts, 3u);
  EXPECT_TRUE(a.notes.empty());
  ASSERT_EQ(a.ranks.size(), 3u);
  const auto& r0 = a.ranks[0];
  const auto& r1 = a.ranks[1];
  const auto& r2 = a.ranks[2];
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r1.pid, 200);  // the process that issued the collectives, not its worker
  EXPECT_EQ(r1.pids, (std::vector<std::int64_t>{200, 201}));
  EXPECT_EQ(r2.host, "node2");

  // Each collective from its entry to T+700: waiting until the last rank entered, then the rest.
  EXPECT_EQ(r0.collectives, 4u);
  EXPECT_EQ(r0.inCollectives, 3 * 600 + 100);
  EXPECT_EQ(r0.waitingForOthers, 3 * 400);
  EXPECT_EQ(r0.transferring, 3 * 200 + 100);
  EXPECT_EQ(r1.inCollectives, 4 * 500);
  EXPECT_EQ(r1.waitingForOthers, 3 * 300 + 400);
  EXPECT_EQ(r2.inCollectives, 3 * 200 + 600);
  EXPECT_EQ(r2.waitingForOthers, 500);

  // Rank 2 was last three times: ranks 0 and 1 waited 400 + 300 each time; rank 0 once, 400 + 500.
  EXPECT_EQ(r2.collectivesLast, 3u);
  EXPECT_EQ(r2.othersWaited, 3 * 700);
  EXPECT_EQ(r0.collectivesLast, 1u);
  EXPECT_EQ(r0.othersWaited, 900);
  EXPECT_EQ(r1.collectivesLast, 0u);
  EXPECT_EQ(r1.othersWaited, 0);
  // While someone waited for it (from the first other rank's entry to its own), it computed.
  ASSERT_EQ(r2.doing.size(), 1u);
  EXPECT_EQ(r2.doing[0].operation, "compute");
  EXPECT_EQ(r2.doing[0].category, "Python");
  EXPECT_EQ(r2.doing[0].time, 3 * 400);
  ASSERT_EQ(r0.doing.size(), 1u);
  EXPECT_EQ(r0.doing[0].time, 500);
  EXPECT_TRUE(r1.doing.empty());

  // The rank's time is its process's rows of the breakdown.
  trace::TraceReader reader(dir / "job.sqlite");
  Breakdown b = analyzeTrace(reader);
  TimeNs rank0 = 0;
  for (const auto& o : b.operations) {
    if (o.process == 100) rank0 += o.time;
  }
  EXPECT_EQ(r0.time, rank0);
  EXPECT_GT(r0.time, 0);
}

TEST(RankAnalysis, JsonAndTableSayTheStragglers) {
  rlscope::testing::TempDir dir;
  RankAnalysis a = analyze(writeJob(dir));
  auto j = ranksToJson(a);
  ASSERT_EQ(j["stragglers"].size(), 3u);
  const auto& s = j["stragglers"][2];
  EXPECT_EQ(s["rank"], 2);
  EXPECT_EQ(s["host"], "node2");
  EXPECT_EQ(s["collectives_last"], 3);
  EXPECT_DOUBLE_EQ(s["others_waited_us"].get<double>(), 2.1);
  EXPECT_EQ(s["doing"][0]["operation"], "compute");
  EXPECT_EQ(j["ranks"][0]["collectives"]["count"], 4);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["collectives"]["waiting_us"].get<double>(), 1.2);
  EXPECT_EQ(j["collectives"]["matched"], 4);
  EXPECT_EQ(j["collectives"]["source"], "c10d calls");

  std::ostringstream text;
  writeRanksTable(a, text);
  EXPECT_NE(text.str().find("ranks (3 on 3 hosts; 4 collectives matched, from c10d calls)"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("rank 2 on node2: last into 3 of 4 collectives; the others waited "
                            "0.002 ms for it"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("rank 1 on node1: last"), std::string::npos) << text.str();
}

TEST(RankAnalysis, SequencesThatPartAreMatchedUpToWhereTheyPart) {
  rlscope::testing::TempDir dir;
  RankAnalysis a = analyze(writeJob(dir, kBroadcast));
  EXPECT_EQ(a.matched, 2u);
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_NE(a.notes[0].find("collective 3 is broadcast on rank 1 but allreduce on rank 0"),
            std::string::npos)
      << a.notes[0];
  EXPECT_EQ(a.ranks[2].collectivesLast, 2u);
}

TEST(RankAnalysis, NcclKernelsAreTheCollectivesOfGpuRanks) {
  rlscope::testing::TempDir dir;
  auto path = dir / "nccl.sqlite";
  {
    trace::TraceWriter w(path);
    addRank(w, kPids[0], 0);
    addRank(w, kPids[1], 1);
    // Rank 1's kernel starts 300 ns later each time: its CPU was in Backend until then.
    for (int k = 0; k < 2; ++k) {
      TimeNs t = k * kPeriod;
      addKernel(w, {.start = t + 100,
                    .end = t + 600,
                    .pid = kPids[0],
                    .correlation = k + 1,
                    .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                    .stream = 7});
      addKernel(w, {.start = t + 400,
                    .end = t + 600,
                    .pid = kPids[1],
                    .correlation = k + 1,
                    .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                    .stream = 7});
      addKernel(w, {.start = t + 600,
                    .end = t + 700,
                    .pid = kPids[1],
                    .correlation = k + 10,
                    .name = "ncclDevKernel_SendRecv(ncclDevComm*)",
                    .stream = 7});
      addCpu(w, t, t + 400, Category::kBackend, mainThread(kPids[1]), "aten::mm");
      // A c10d call too: the kernels, not the calls, are the GPU rank's collectives.
      addCpu(w, t, t + 10, Category::kBackend, mainThread(kPids[0]), "c10d::allreduce_");
    }
    w.commit();
  }
  RankAnalysis a = analyze(path);
  EXPECT_EQ(a.source, "NCCL kernels");
  EXPECT_EQ(a.matched, 2u);
  EXPECT_EQ(a.ranks[1].collectivesLast, 2u);
  EXPECT_EQ(a.ranks[1].othersWaited, 2 * 300);
  EXPECT_EQ(a.ranks[0].waitingForOthers, 2 * 300);
  EXPECT_EQ(a.ranks[0].transferring, 2 * 200);
  ASSERT_EQ(a.ranks[1].doing.size(), 1u);
  EXPECT_EQ(a.ranks[1].doing[0].operation, kUnannotatedName);
  EXPECT_EQ(a.ranks[1].doing[0].category, "Backend");
  EXPECT_EQ(a.ranks[1].doing[0].time, 2 * 300);
}

TEST(RankAnalysis, WithoutTwoRanksThereIsNothingToCompare) {
  rlscope::testing::TempDir dir;
  auto path = dir / "one.sqlite";
  {
    trace::TraceWriter w(path);
    addRank(w, kPids[0], 0);
    addStep(w, kPids[0], 0, 100);
    w.commit();
  }
  RankAnalysis a = analyze(path);
  EXPECT_EQ(a.ranks.size(), 1u);
  EXPECT_EQ(a.matched, 0u);
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_EQ(a.notes[0], "one rank only: nothing to compare it with");
  EXPECT_EQ(a.ranks[0].collectives, 0u);
}

}  // namespace
}  // namespace rlscope::analysis
