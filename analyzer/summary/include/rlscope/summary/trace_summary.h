// What `rlscope info` shows: who ran, on which GPUs, how many events of each kind, over what
// time, and which features were recorded. Computed from the trace with SQL, no event scan.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlscope/trace/reader.h"

namespace rlscope::summary {

struct ProcessSummary {
  trace::ProcessRecord process;
  trace::ProcessIdentityRecord identity;  // host and rank (none for processes only threads name)
  std::vector<trace::ThreadRecord> threads;
};

struct StreamSummary {
  std::int64_t deviceId = 0;
  std::int64_t streamId = 0;
  std::int64_t kernels = 0;
  std::int64_t memcpys = 0;
  std::int64_t memsets = 0;
};

struct TraceSummary {
  std::string path;
  int schemaVersion = 0;
  std::vector<std::pair<std::string, std::string>> meta;
  std::optional<trace::TimeSpan> span;
  std::vector<ProcessSummary> processes;
  std::vector<std::string> hosts;  // the processes' hosts, sorted
  std::int64_t ranks = 0;          // processes with a rank
  std::vector<trace::GpuInfoRecord> gpus;
  std::string gpuVendor = "NVIDIA";  // rlscope_meta gpu_vendor: "AMD" for ROCm traces
  std::vector<StreamSummary> streams;
  std::vector<std::pair<std::string, std::int64_t>> tableCounts;     // every event table
  std::vector<std::pair<std::string, std::int64_t>> categoryCounts;  // CPU categories present
  std::int64_t strings = 0;
  std::vector<std::string> features;  // what the trace holds, e.g. "GPU kernels", "NVTX ranges"
};

TraceSummary summarize(trace::TraceReader& reader, const std::string& path);
nlohmann::json toJson(const TraceSummary& s);
void printText(const TraceSummary& s, std::ostream& out);

}  // namespace rlscope::summary
