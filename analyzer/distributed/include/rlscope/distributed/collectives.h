// The collective operations of a process, as its trace shows them: NCCL kernels on its GPUs, or,
// where it ran none, its calls into torch.distributed (c10d) on the CPU. Every rank of a group
// issues a group's collectives in the same order, which is what lets rank_analysis match them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

struct CollectiveCall {
  std::string kind;  // allreduce, allgather, reduce_scatter, broadcast, reduce, gather, scatter,
                     // alltoall, barrier; "nccl" for a kernel that does not say (Generic)
  trace::TimeNs entry = 0;       // when the rank entered it (call or kernel start)
  trace::TimeNs completion = 0;  // when the rank had its result (the wait's or kernel's end)
  std::int64_t globalTid = 0;    // the calling thread; 0 for a kernel
  bool gpu = false;              // an NCCL kernel
};

// The collective a CPU call's name says: c10d's Python methods as the Python tracker names them
// (torch._C._distributed_c10d.allreduce) and Kineto's c10d operators (c10d::allreduce_).
// Point-to-point calls (send, recv) are not collectives: not every rank takes part.
std::optional<std::string> collectiveKindOfCall(std::string_view name);

// The collective an NCCL kernel's name says (ncclKernel_AllReduce_RING_LL_Sum_float,
// ncclDevKernel_Broadcast_...); "nccl" for ncclDevKernel_Generic; nullopt for other kernels and
// NCCL's point-to-point SendRecv.
std::optional<std::string> collectiveKindOfKernel(std::string_view name);

// A c10d Work's wait (torch._C._distributed_c10d.wait): where a CPU collective completes.
bool isCollectiveWait(std::string_view name);

// The process's collectives in entry order: its NCCL kernels when it ran any, else its c10d calls,
// each completed by the first wait its thread made before its next collective (or at its own end).
std::vector<CollectiveCall> findCollectives(trace::TraceReader& reader, std::int64_t globalPid);

}  // namespace rlscope::analysis
