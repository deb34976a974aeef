#include "rlscope/distributed/collectives.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <utility>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"

namespace rlscope::analysis {

namespace {

constexpr std::string_view kPythonC10d = "torch._C._distributed_c10d.";  // the Python tracker's
constexpr std::string_view kKinetoC10d = "c10d::";                       // PyTorch profiler's

// c10d's collective methods (ProcessGroup's, as torch.distributed calls them) and their kind.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kC10dCollectives = {{
    {"allreduce", "allreduce"},
    {"allreduce_coalesced", "allreduce"},
    {"allgather", "allgather"},
    {"_allgather_base", "allgather"},
    {"allgather_coalesced", "allgather"},
    {"allgather_into_tensor_coalesced", "allgather"},
    {"reduce_scatter", "reduce_scatter"},
    {"_reduce_scatter_base", "reduce_scatter"},
    {"reduce_scatter_tensor_coalesced", "reduce_scatter"},
    {"broadcast", "broadcast"},
    {"reduce", "reduce"},
    {"gather", "gather"},
    {"scatter", "scatter"},
    {"alltoall", "alltoall"},
    {"alltoall_base", "alltoall"},
    {"barrier", "barrier"},
    {"monitored_barrier", "barrier"},
}};

// NCCL's kernel names: ncclKernel_<Op>_... (NCCL 2.x) and ncclDevKernel_<Op>_... (2.19 and later).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kNcclOps = {{
    {"AllReduce", "allreduce"},
    {"AllGather", "allgather"},
    {"ReduceScatter", "reduce_scatter"},
    {"Broadcast", "broadcast"},
    {"Reduce", "reduce"},
    {"Generic", "nccl"},
}};

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::optional<std::string> collectiveKindOfCall(std::string_view name) {
  std::string_view method;
  if (startsWith(name, kPythonC10d)) {
    method = name.substr(kPythonC10d.size());
  } else if (startsWith(name, kKinetoC10d)) {
    method = name.substr(kKinetoC10d.size());
    if (!method.empty() && method.back() == '_') method.remove_suffix(1);  // allreduce_: in place
  } else {
    return std::nullopt;
  }
  for (const auto& [m, kind] : kC10dCollectives) {
    if (method == m) return std::string(kind);
  }
  return std::nullopt;
}

std::optional<std::string> collectiveKindOfKernel(std::string_view name) {
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    if (!startsWith(name, prefix)) continue;
    std::string_view rest = name.substr(prefix.size());
    std::string_view op = rest.substr(0, rest.find_first_of("_("));
    for (const auto& [nccl, kind] : kNcclOps) {
      if (op == nccl) return std::string(kind);
    }
    return std::nullopt;  // SendRecv: point to point
  }
  return std::nullopt;
}

bool isCollectiveWait(std::string_view name) {
  return name == "torch._C._distributed_c10d.wait";
}

namespace {

// The trace's strings that may name a collective (or a wait), by id: a scan of StringIds instead
// of every interval's name.
std::unordered_map<std::int64_t, std::string> candidateNames(trace::Database& db,
                                                             std::string_view like) {
  std::unordered_map<std::int64_t, std::string> out;
  auto st = db.prepare("SELECT id, value FROM StringIds WHERE value LIKE ?");
  st.bind(1, like);
  while (st.step()) out.emplace(st.columnInt(0), std::string(st.columnText(1)));
  return out;
}

std::vector<CollectiveCall> ncclKernels(trace::TraceReader& reader, std::int64_t globalPid) {
  std::vector<CollectiveCall> out;
  trace::Database& db = reader.db();
  if (!db.hasTable(trace::table::kKernel)) return out;
  std::unordered_map<std::int64_t, std::optional<std::string>> kinds;
  for (auto& [id, name] : candidateNames(db, "nccl%")) kinds[id] = collectiveKindOfKernel(name);
  if (kinds.empty()) return out;
  auto st =
      db.prepare("SELECT start, end, demangledName FROM " + std::string(trace::table::kKernel) +
                 " WHERE globalPid = ? ORDER BY start, rowid");
  st.bind(1, globalPid);
  while (st.step()) {
    auto it = kinds.find(st.columnInt(2));
    if (it == kinds.end() || !it->second) continue;
    out.push_back({.kind = *it->second,
                   .entry = st.columnInt(0),
                   .completion = st.columnInt(1),
                   .gpu = true});
  }
  return out;
}

std::vector<CollectiveCall> c10dCalls(trace::TraceReader& reader, std::int64_t globalPid) {
  std::vector<CollectiveCall> out;
  trace::Database& db = reader.db();
  auto names = candidateNames(db, "torch._C._distributed_c10d.%");
  names.merge(candidateNames(db, "c10d::%"));
  std::unordered_map<std::int64_t, std::optional<std::string>> kinds;  // nullopt: a wait
  for (auto& [id, name] : names) {
    if (auto kind = collectiveKindOfCall(name))
      kinds[id] = std::move(kind);
    else if (isCollectiveWait(name))
      kinds[id] = std::nullopt;
  }
  if (kinds.empty()) return out;
  auto st = db.prepare("SELECT start, end, globalTid, nameId FROM " +
                       std::string(trace::table::kCpuIntervals) +
                       " WHERE globalTid >= ? AND globalTid < ? ORDER BY start, rowid");
  st.bind(1, globalPid);
  st.bind(2, globalPid + trace::kGlobalIdFieldLimit);
  std::map<std::int64_t, std::size_t> awaiting;  // thread -> its last collective, not yet waited
  while (st.step()) {
    auto it = kinds.find(st.columnInt(3));
    if (it == kinds.end()) continue;
    trace::TimeNs start = st.columnInt(0), end = st.columnInt(1);
    std::int64_t tid = st.columnInt(2);
    if (!it->second) {  // a wait: completes the thread's collective that has not been waited on
      auto a = awaiting.find(tid);
      if (a == awaiting.end()) continue;
      out[a->second].completion = std::max(out[a->second].completion, end);
      awaiting.erase(a);
      continue;
    }
    awaiting[tid] = out.size();
    out.push_back({.kind = *it->second, .entry = start, .completion = end, .globalTid = tid});
  }
  return out;
}

}  // namespace

std::vector<CollectiveCall> findCollectives(trace::TraceReader& reader, std::int64_t globalPid) {
  auto kernels = ncclKernels(reader, globalPid);
  return kernels.empty() ? c10dCalls(reader, globalPid) : kernels;
}

}  // namespace rlscope::analysis
