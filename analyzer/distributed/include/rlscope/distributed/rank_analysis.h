// The ranks of a distributed job side by side (`rlscope analyze --by rank`, docs/analysis.md):
// each rank's time by resource, its collectives (count, time in them, waiting for the last rank,
// transferring), and the stragglers: for every collective matched across the ranks, which rank
// entered it last, how long the others waited for it, and what it was doing meanwhile.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

// What a rank was doing while the others waited for it: its innermost operation and the
// innermost CPU category of the thread that entered the collective late.
struct StragglerActivity {
  std::string operation;  // kUnannotatedName outside every operation
  std::string category;   // "Python", "Backend", ...; "no CPU activity" where its thread had none
  trace::TimeNs time = 0;
};

struct RankSummary {
  std::int64_t rank = 0;
  std::string host;
  std::int64_t pid = 0;            // the rank's process (the one that issued its collectives)
  std::vector<std::int64_t> pids;  // every process with this rank (children inherit it)
  // The rank's process's time, from the breakdown's rows (docs/analysis.md).
  trace::TimeNs time = 0, cpu = 0, gpu = 0, cpuGpu = 0, waiting = 0;
  // Its collectives matched with every other rank's: time from entry to completion, split into
  // waiting for the last rank to enter and the rest (transferring, reducing).
  std::uint64_t collectives = 0;
  trace::TimeNs inCollectives = 0, waitingForOthers = 0, transferring = 0;
  // As the straggler: the collectives it entered last, the other ranks' waiting for it (summed
  // over them), and what it did while any of them waited, longest first.
  std::uint64_t collectivesLast = 0;
  trace::TimeNs othersWaited = 0;
  std::vector<StragglerActivity> doing;
};

struct RankAnalysis {
  std::vector<RankSummary> ranks;  // by rank
  std::size_t hosts = 0;
  std::uint64_t matched = 0;  // collectives matched across every rank
  std::string source;         // "NCCL kernels", "c10d calls", or mixed; empty: none found
  std::vector<std::string> notes;
};

// Needs the breakdown in the process or thread view (rows with their process). A trace without
// ranked processes gives no ranks and a note saying so.
RankAnalysis analyzeRanks(trace::TraceReader& reader, const Breakdown& breakdown);

// {"ranks": [...], "stragglers": [...], "collectives": {...}} (docs/analysis.md).
nlohmann::json ranksToJson(const RankAnalysis& a);
void writeRanksTable(const RankAnalysis& a, std::ostream& out);

}  // namespace rlscope::analysis
