// The collector's category ABI (rlscope/collector/category_abi.h), found at import with dlsym:
// the extension does not link librlscope_collector.so, which only rlscope-prof preloads.
#pragma once

#include "rlscope/collector/category_abi.h"

namespace rlscope::python {

struct CollectorLink {
  rlscope_recording_fn recording = nullptr;
  rlscope_category_tracking_fn tracking = nullptr;
  rlscope_register_name_fn registerName = nullptr;
  rlscope_category_push_fn push = nullptr;
  rlscope_category_pop_fn pop = nullptr;
  rlscope_python_event_counter_fn eventCounter = nullptr;

  bool complete() const {
    return recording && tracking && registerName && push && pop && eventCounter;
  }
};

// The functions, or all null when the collector is not in the process.
const CollectorLink& collectorLink();

}  // namespace rlscope::python
