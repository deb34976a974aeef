// The process's memory as Linux reports it, for the benchmarks' peak-memory counters.
#pragma once

#include <string>

namespace rlscope::bench {

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"); 0 when unavailable.
double procStatusKiB(const std::string& field);

// Resets VmHWM to the current RSS (Linux >= 4.0); false where that is not permitted.
bool resetPeakRss();

}  // namespace rlscope::bench
