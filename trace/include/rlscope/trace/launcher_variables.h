// The environment variables by which launchers tell a process its place in a distributed job
// (torchrun, Open MPI, MVAPICH, MPICH's PMI, PMIx, Slurm). Header-only and dependency-free: the
// collector, preloaded into every process, records the ones set (only these: the environment
// holds secrets a trace must not carry), and trace::identityFromEnvironment reads them.
#pragma once

#include <array>
#include <string_view>

namespace rlscope::trace {

// One launcher's names for a process's five numbers; empty where it has none.
struct LauncherScheme {
  std::string_view launcher;
  std::string_view rank;
  std::string_view worldSize;
  std::string_view localRank;
  std::string_view localWorldSize;
  std::string_view nodeRank;
};

// In order of precedence: the first whose rank variable is set names the process, so that under
// torchrun inside Slurm the ranks are torch.distributed's, the ones its collectives use.
inline constexpr std::array<LauncherScheme, 6> kLauncherSchemes = {{
    {"torch.distributed", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"},
    {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK"},
    {"mpi", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
     "MV2_COMM_WORLD_LOCAL_SIZE", ""},
    {"mpi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", ""},
    {"mpi", "PMIX_RANK", "", "", "", ""},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "", "SLURM_NODEID"},
}};

// Set by torchrun (torch.distributed elastic): tells it from a hand-set RANK and WORLD_SIZE.
inline constexpr std::string_view kTorchElasticRunId = "TORCHELASTIC_RUN_ID";

// Set by Ray in the environment of its worker processes (tasks and actors): the job, and the
// raylet (the node's Ray daemon) that started the worker.
inline constexpr std::string_view kRayJobId = "RAY_JOB_ID";
inline constexpr std::string_view kRayRayletPid = "RAY_RAYLET_PID";

// Recorded as well, for the user's queries: what else the launchers say about the job.
inline constexpr std::array<std::string_view, 16> kLauncherJobVariables = {
    "GROUP_WORLD_SIZE", "ROLE_RANK",     "ROLE_WORLD_SIZE",  "ROLE_NAME",
    "MASTER_ADDR",      "MASTER_PORT",   kTorchElasticRunId, "TORCHELASTIC_RESTART_COUNT",
    "SLURM_JOB_ID",     "SLURM_STEP_ID", "SLURM_NNODES",     "SLURM_JOB_NODELIST",
    "PMIX_NAMESPACE",   "PMI_JOBID",     kRayJobId,          kRayRayletPid,
};

constexpr bool isLauncherVariable(std::string_view name) {
  if (name.empty()) return false;
  for (const auto& s : kLauncherSchemes) {
    for (auto v : {s.rank, s.worldSize, s.localRank, s.localWorldSize, s.nodeRank}) {
      if (v == name) return true;
    }
  }
  for (auto v : kLauncherJobVariables) {
    if (v == name) return true;
  }
  return false;
}

}  // namespace rlscope::trace
