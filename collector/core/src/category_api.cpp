// The C interface of rlscope/collector/category_abi.h: CPU category pushes and pops into the
// calling thread's buffer, with the same hot path as an NVTX push.
#include <atomic>

#include "collector_state.h"
#include "rlscope/collector/category_abi.h"

namespace rlscope::collector {
namespace {
std::atomic<std::uint64_t> g_nextName{1};
}  // namespace
}  // namespace rlscope::collector

using namespace rlscope;
using namespace rlscope::collector;

extern "C" RLSCOPE_COLLECTOR_API int rlscope_collector_recording(void) {
  return active() ? 1 : 0;
}

extern "C" RLSCOPE_COLLECTOR_API int rlscope_collector_category_tracking(void) {
  return active() && (features() & part::kFeaturePython) ? 1 : 0;
}

extern "C" RLSCOPE_COLLECTOR_API std::uint64_t rlscope_collector_register_name(const char* name,
                                                                               size_t size) {
  if (!active()) return 0;
  std::uint64_t handle = g_nextName.fetch_add(1, std::memory_order_relaxed);
  recordName(part::RecordType::kCategoryName, part::NvtxHandleName{0, handle},
             {std::string_view(name, size)});
  return handle;
}

extern "C" RLSCOPE_COLLECTOR_API void rlscope_collector_category_push_counted(
    std::uint32_t category, std::uint64_t name, std::uint64_t events) {
  if (ThreadBuffer* b = threadBuffer()) {
    t_tracksCategories = true;  // its native waits are Waiting from now on (wait_hooks.cpp)
    record(b, part::RecordType::kCategoryPush,
           part::CategoryPush{now(), category, part::categoryPushFlags(false, events), name});
  }
}

extern "C" RLSCOPE_COLLECTOR_API void rlscope_collector_category_pop_counted(std::uint64_t events) {
  if (ThreadBuffer* b = threadBuffer())
    record(b, part::RecordType::kCategoryPopEvents, part::CategoryPopEvents{now(), events});
}

extern "C" RLSCOPE_COLLECTOR_API void rlscope_collector_python_event_counter(
    const volatile std::uint64_t* counter) {
  setPythonEventCounter(counter);
}
