// Who is who in a distributed run: identity from launcher variables, the identity table's round
// trip, and version 1 traces (before the table) read as they are.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/launcher_variables.h"
#include "rlscope/trace/process_identity.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::trace {
namespace {

using testing::TempDir;
using Env = std::vector<EnvironmentVariable>;

TEST(IdentityFromEnvironment, TorchrunGivesEveryNumber) {
  Env env = {{"RANK", "5"},       {"WORLD_SIZE", "8"},
             {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
             {"GROUP_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "abc"}};
  auto id = identityFromEnvironment(env);
  EXPECT_EQ(id.launcher, "torchrun");
  EXPECT_EQ(id.rank, 5);
  EXPECT_EQ(id.worldSize, 8);
  EXPECT_EQ(id.localRank, 1);
  EXPECT_EQ(id.localWorldSize, 4);
  EXPECT_EQ(id.nodeRank, 1);
  auto vars = nlohmann::json::parse(id.variables);
  EXPECT_EQ(vars["RANK"], "5");
  EXPECT_EQ(vars["TORCHELASTIC_RUN_ID"], "abc");
  EXPECT_EQ(vars.size(), env.size());
}

TEST(IdentityFromEnvironment, HandSetRankIsTorchDistributed) {
  auto id = identityFromEnvironment(Env{{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(id.launcher, "torch.distributed");
  EXPECT_EQ(id.rank, 0);
  EXPECT_EQ(id.worldSize, 2);
  EXPECT_FALSE(id.localRank);
}

TEST(IdentityFromEnvironment, TorchRanksWinOverSlurms) {
  // torchrun inside an sbatch step: the collectives use torch.distributed's ranks.
  auto id = identityFromEnvironment(
      Env{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"RANK", "3"}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(id.launcher, "torch.distributed");
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.worldSize, 4);
}

TEST(IdentityFromEnvironment, OpenMpiAndSlurmAlone) {
  auto mpi = identityFromEnvironment(Env{{"OMPI_COMM_WORLD_RANK", "2"},
                                         {"OMPI_COMM_WORLD_SIZE", "16"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                         {"OMPI_COMM_WORLD_NODE_RANK", "0"}});
  EXPECT_EQ(mpi.launcher, "mpi");
  EXPECT_EQ(mpi.rank, 2);
  EXPECT_EQ(mpi.worldSize, 16);
  EXPECT_EQ(mpi.localRank, 2);
  EXPECT_EQ(mpi.nodeRank, 0);

  auto slurm = identityFromEnvironment(
      Env{{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}, {"SLURM_NODEID", "3"}});
  EXPECT_EQ(slurm.launcher, "slurm");
  EXPECT_EQ(slurm.rank, 7);
  EXPECT_EQ(slurm.nodeRank, 3);
}

TEST(IdentityFromEnvironment, RayWorkersAreRaysUnlessTheyHaveARank) {
  auto worker = identityFromEnvironment(Env{{"RAY_JOB_ID", "01000000"}, {"RAY_RAYLET_PID", "77"}});
  EXPECT_EQ(worker.launcher, "ray");
  EXPECT_FALSE(worker.rank);
  EXPECT_EQ(nlohmann::json::parse(worker.variables)["RAY_RAYLET_PID"], "77");
  // A worker the raylet started before any job (Ray's prestarted workers) is one too.
  EXPECT_EQ(identityFromEnvironment(Env{{"RAY_RAYLET_PID", "77"}}).launcher, "ray");
  // Ray Train's workers run torch.distributed: their ranks are the ones the collectives use.
  auto train =
      identityFromEnvironment(Env{{"RAY_JOB_ID", "01000000"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(train.launcher, "torch.distributed");
  EXPECT_EQ(train.rank, 1);
}

TEST(IdentityFromEnvironment, NumbersAreStrict) {
  // A rank that is not a plain non-negative integer names nothing; the next launcher may.
  for (const char* bad : {"", "-1", "1.5", " 1", "1 ", "0x1", "abc", "99999999999999999999"}) {
    auto id = identityFromEnvironment(Env{{"RANK", bad}});
    EXPECT_FALSE(id.rank) << "'" << bad << "'";
    EXPECT_TRUE(id.launcher.empty()) << "'" << bad << "'";
  }
  auto id = identityFromEnvironment(Env{{"RANK", "x"}, {"PMI_RANK", "4"}, {"PMI_SIZE", "-2"}});
  EXPECT_EQ(id.launcher, "mpi");
  EXPECT_EQ(id.rank, 4);
  EXPECT_FALSE(id.worldSize);
}

TEST(IdentityFromEnvironment, NoVariablesNoIdentity) {
  auto id = identityFromEnvironment({});
  EXPECT_FALSE(id.rank);
  EXPECT_TRUE(id.launcher.empty());
  EXPECT_TRUE(id.variables.empty());
}

TEST(IdentityFromEnvironment, BytesThatAreNotUtf8StillGiveJson) {
  auto id = identityFromEnvironment(Env{{"SLURM_JOB_NODELIST", "node\xff"}});
  EXPECT_FALSE(nlohmann::json::parse(id.variables, nullptr, false).is_discarded());
}

TEST(LauncherVariables, OnlyTheListedNamesAreRecorded) {
  for (auto name : {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_JOB_ID", "MASTER_ADDR",
                    "TORCHELASTIC_RUN_ID", "PMIX_RANK"}) {
    EXPECT_TRUE(isLauncherVariable(name)) << name;
  }
  for (auto name : {"", "PATH", "HOME", "AWS_SECRET_ACCESS_KEY", "WANDB_API_KEY", "RANKS"}) {
    EXPECT_FALSE(isLauncherVariable(name)) << name;
  }
}

TEST(RankLabel, SaysRankWorldAndHost) {
  ProcessIdentityRecord id{.host = "node7"};
  EXPECT_EQ(rankLabel(id, true), "");
  id.rank = 1;
  EXPECT_EQ(rankLabel(id, false), "rank 1");
  id.worldSize = 4;
  EXPECT_EQ(rankLabel(id, false), "rank 1 of 4");
  EXPECT_EQ(rankLabel(id, true), "rank 1 of 4 on node7");
}

// A trace with two processes; the first has an identity row, the second none.
std::filesystem::path writeTwoProcesses(const TempDir& dir) {
  auto path = dir / "t.sqlite";
  TraceWriter w(path);
  w.setMeta(meta::kHost, "box");
  w.addProcess({.globalPid = globalPidOf(10), .pid = 10, .name = "python"});
  w.addProcess({.globalPid = globalPidOf(11), .pid = 11, .name = "python"});
  w.addProcessIdentity({.globalPid = globalPidOf(10),
                        .host = "node3",
                        .launcher = "torchrun",
                        .rank = 3,
                        .localRank = 1,
                        .worldSize = 4,
                        .localWorldSize = 2,
                        .nodeRank = 1,
                        .backend = "nccl",
                        .variables = R"({"RANK":"3"})"});
  w.commit();
  return path;
}

TEST(ProcessIdentityTable, RoundTripsAndFillsTheHostOfProcessesWithout) {
  TempDir dir;
  TraceReader r(writeTwoProcesses(dir));
  EXPECT_EQ(r.schemaVersion(), kSchemaVersion);
  auto ids = r.processIdentities();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].globalPid, globalPidOf(10));
  EXPECT_EQ(ids[0].host, "node3");
  EXPECT_EQ(ids[0].launcher, "torchrun");
  EXPECT_EQ(ids[0].rank, 3);
  EXPECT_EQ(ids[0].localRank, 1);
  EXPECT_EQ(ids[0].worldSize, 4);
  EXPECT_EQ(ids[0].localWorldSize, 2);
  EXPECT_EQ(ids[0].nodeRank, 1);
  EXPECT_EQ(ids[0].backend, "nccl");
  EXPECT_EQ(ids[0].variables, R"({"RANK":"3"})");
  // No row: the process ran on the trace's host, with no rank.
  EXPECT_EQ(ids[1].globalPid, globalPidOf(11));
  EXPECT_EQ(ids[1].host, "box");
  EXPECT_FALSE(ids[1].rank);
}

void execSql(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST(ProcessIdentityTable, VersionOneTracesReadWithHostOnlyIdentities) {
  TempDir dir;
  auto path = writeTwoProcesses(dir);
  execSql(path,
          "DROP TABLE rlscope_process_identity;"
          "UPDATE rlscope_meta SET value = '1' WHERE key = 'schema_version';");
  TraceReader r(path);
  EXPECT_EQ(r.schemaVersion(), 1);
  auto ids = r.processIdentities();
  ASSERT_EQ(ids.size(), 2u);
  for (const auto& id : ids) {
    EXPECT_EQ(id.host, "box");
    EXPECT_FALSE(id.rank);
    EXPECT_TRUE(id.launcher.empty());
  }
}

TEST(ProcessIdentityTable, VersionsNewerThanThisBuildAreRefused) {
  TempDir dir;
  auto path = writeTwoProcesses(dir);
  auto sql = "UPDATE rlscope_meta SET value = '" + std::to_string(kSchemaVersion + 1) +
             "' WHERE key = 'schema_version';";
  execSql(path, sql.c_str());
  try {
    TraceReader r(path);
    FAIL() << "opened a trace of a newer version";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version " + std::to_string(kSchemaVersion + 1)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rlscope::trace
