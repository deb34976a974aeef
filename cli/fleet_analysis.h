// `rlscope analyze` of many traces (a directory, several files, or analysis documents made
// elsewhere): each trace analysed on its own, several at once, then combined (docs/fleet.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rlscope/report/fleet.h"
#include "trace_analysis.h"

namespace rlscope::cli {

// The files named, with the traces (*.sqlite) and analysis documents (*.json) of each directory
// named, sorted. Throws with one line for a name that does not exist or a directory with neither.
std::vector<std::filesystem::path> fleetInputs(const std::vector<std::string>& names);

// True when `names` ask for a fleet analysis rather than one trace's: several inputs, a
// directory, or an analysis document.
bool isFleet(const std::vector<std::string>& names);

// Analyses the traces `jobs` at a time (documents are read as they are) and combines them. A
// trace that cannot be analysed becomes a failed input saying why; the others go on.
report::Fleet analyzeFleet(const std::vector<std::filesystem::path>& inputs,
                           const TraceAnalysisOptions& options, unsigned jobs);

}  // namespace rlscope::cli
