// The breakdown as `rlscope analyze` prints it: JSON (the contract of docs/analysis.md), a table
// for people, CSV for spreadsheets.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "rlscope/breakdown/breakdown.h"

namespace rlscope::analysis {

// {"schema": "rlscope.analysis/1", "corrected": false, "operations": [...]}, times in µs.
nlohmann::json toJson(const Breakdown& b);
// The "resources" object of an operation or a rank: {"CPU": µs, "GPU": µs, "CPU+GPU": µs}.
nlohmann::json resourcesToJson(trace::TimeNs cpu, trace::TimeNs gpu, trace::TimeNs cpuGpu);
// The "correction" object of the JSON: per source events, cost and time removed; the bias.
nlohmann::json correctionToJson(const Correction& c);
// "bias +2.1 % ± 3.0 % (within ±5 %)", or that the machine was too noisy to tell.
std::string biasLine(const Correction& c);
void writeTable(const Breakdown& b, std::ostream& out);
// One row per (operation, category set): process, operation, phase, set, time_us.
void writeCsv(const Breakdown& b, std::ostream& out);

}  // namespace rlscope::analysis
