#include "collector_link.h"

#include <dlfcn.h>

namespace rlscope::python {

const CollectorLink& collectorLink() {
  static const CollectorLink link = [] {
    CollectorLink l;
    l.recording =
        reinterpret_cast<rlscope_recording_fn>(::dlsym(RTLD_DEFAULT, RLSCOPE_RECORDING_SYMBOL));
    l.tracking = reinterpret_cast<rlscope_category_tracking_fn>(
        ::dlsym(RTLD_DEFAULT, RLSCOPE_CATEGORY_TRACKING_SYMBOL));
    l.registerName = reinterpret_cast<rlscope_register_name_fn>(
        ::dlsym(RTLD_DEFAULT, RLSCOPE_REGISTER_NAME_SYMBOL));
    l.push = reinterpret_cast<rlscope_category_push_fn>(
        ::dlsym(RTLD_DEFAULT, RLSCOPE_CATEGORY_PUSH_SYMBOL));
    l.pop = reinterpret_cast<rlscope_category_pop_fn>(
        ::dlsym(RTLD_DEFAULT, RLSCOPE_CATEGORY_POP_SYMBOL));
    l.eventCounter = reinterpret_cast<rlscope_python_event_counter_fn>(
        ::dlsym(RTLD_DEFAULT, RLSCOPE_PYTHON_EVENT_COUNTER_SYMBOL));
    return l.complete() ? l : CollectorLink{};
  }();
  return link;
}

}  // namespace rlscope::python
