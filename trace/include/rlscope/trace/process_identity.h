// Who a process is in a distributed job: the host it ran on and the rank its launcher gave it
// (rlscope_process_identity, trace format v2, docs/trace-format.md). Every producer of a trace
// fills it the same way: the collector from the launcher's environment variables, importers
// from what their format records (Kineto's `distributedInfo`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlscope::trace {

struct ProcessIdentityRecord {
  std::int64_t globalPid = 0;
  std::string host;                  // empty when the producer could not tell
  std::string launcher;              // torchrun | torch.distributed | mpi | slurm; empty: none seen
  std::optional<std::int64_t> rank;  // the global rank
  std::optional<std::int64_t> localRank;       // the rank among its host's processes
  std::optional<std::int64_t> worldSize;       // how many ranks the job has
  std::optional<std::int64_t> localWorldSize;  // how many of them run on its host
  std::optional<std::int64_t> nodeRank;        // which node of the job its host is
  std::string backend;    // the collective backend where the producer knows it (nccl, gloo)
  std::string variables;  // JSON object: the launcher's variables exactly as read; empty: none
};

using EnvironmentVariable = std::pair<std::string, std::string>;

// The identity a launcher's variables (launcher_variables.h) give: rank, sizes and the launcher
// that set them; `variables` holds them all as JSON. The host is the caller's to fill.
ProcessIdentityRecord identityFromEnvironment(std::span<const EnvironmentVariable> variables);

// The hosts the processes ran on, each once, sorted; unknown hosts left out. Labels add the host
// to a rank only where there are several (rankLabel's withHost).
std::vector<std::string> hostsOf(const std::vector<ProcessIdentityRecord>& identities);

// A process's label for people: "rank 1 of 4" when it has a rank ("rank 1 of 4 on node7" with
// withHost: where several hosts take part), else empty.
std::string rankLabel(const ProcessIdentityRecord& identity, bool withHost);

}  // namespace rlscope::trace
