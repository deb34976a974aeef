// Many traces analysed one by one and combined (`rlscope analyze DIRECTORY`, docs/fleet.md): every
// process side by side (by rank when it has one), and every operation across them: its total,
// and its spread from the fastest to the slowest process, naming the slowest, which is where a
// straggler shows without aligning the traces' clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

inline constexpr const char* kFleetSchema = "rlscope.fleet/1";

// One input: a trace's analysis, or why it has none.
struct FleetInput {
  std::string trace;
  std::optional<Analysis> analysis;
  std::string error;  // set when analysis is empty
};

// An analysis document (`rlscope analyze -f json`), or an error document
// {"schema": "rlscope.analysis/1", "trace": ..., "error": ...} of a trace that could not be
// analysed (rlscope.fleet's Ray tasks write those). A document that is neither is an error input
// saying why, named by `origin`.
FleetInput fleetInputFromDocument(const nlohmann::json& document, const std::string& origin);

struct FleetProcess {
  std::string trace;           // the trace it was recorded in
  std::size_t traceIndex = 0;  // into Fleet::traces
  std::int64_t process = 0;
  std::string host;                  // empty when unknown
  std::optional<std::int64_t> rank;  // in a distributed job
  // Its traced time (the sum of its operations, "(unannotated)" included), split by resource.
  double timeUs = 0, cpuUs = 0, cpuGpuUs = 0, gpuUs = 0, waitingUs = 0;
  // From analyses made with `--by rank`: time in collectives, and in them waiting for the last
  // rank to enter.
  std::optional<double> collectivesUs, waitingForOthersUs;
};

struct FleetOperation {
  std::string name;
  double totalUs = 0;
  std::size_t processes = 0;                          // that ran it
  double minUs = 0, medianUs = 0, maxUs = 0;          // its time per process
  std::size_t slowest = 0;                            // index into Fleet::processes
  std::vector<std::pair<std::size_t, double>> times;  // (index into processes, µs), by index
};

struct FleetTrace {
  std::string trace;
  std::string error;  // empty: analysed
  std::optional<double> totalUs;
  std::size_t processes = 0;
  std::optional<double> gpuBusyUs;
};

struct Fleet {
  std::vector<FleetTrace> traces;          // in the order given
  std::vector<FleetProcess> processes;     // by rank (rank-less last), then trace and process
  std::vector<FleetOperation> operations;  // longest total first, "(unannotated)" last
  std::vector<std::string> hosts;          // sorted
  std::size_t failed = 0;                  // traces without an analysis
  double medianProcessUs = 0;
};

Fleet combineAnalyses(const std::vector<FleetInput>& inputs);

// "rank 3", or "pid 4242 in FILE" (the trace's file name) for a process without a rank.
std::string processLabel(const FleetProcess& process);

// Schema rlscope.fleet/1 (docs/fleet.md).
nlohmann::json fleetToJson(const Fleet& fleet);
// For people: the traces that failed, the processes side by side, the top operations.
void writeFleetTable(const Fleet& fleet, std::ostream& out, std::size_t topOperations);
// One row per process and operation, for scripts.
void writeFleetCsv(const Fleet& fleet, std::ostream& out);

}  // namespace rlscope::report
