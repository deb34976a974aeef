// The CUDA injection entry point's work, apart from the exported symbol so tests can run it.
#pragma once

#include <string>

namespace rlscope::cupti {

// Starts CUPTI for the collector (once per process; later calls do nothing) and records in the
// part whether GPU activity is being recorded. Returns the reason GPU activity is not recorded,
// empty when it is (or when the collector is not active and there is nothing to do).
std::string initializeInjection();

}  // namespace rlscope::cupti
