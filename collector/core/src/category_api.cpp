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

extern "C" RLSCOPE_COLLECTOR_API void rlscope_collector_category_push(std::uint32_t category,
                                                                      std::uint64_t name) {
  if (ThreadBuffer* b = threadBuffer()) {
    t_tracksCategories = true;  // its native waits are Waiting from now on (wait_hooks.cpp)
    record(b, part::RecordType::kCategoryPush, part::CategoryPush{now(), category, 0, name});
  }
}

extern "C" RLSCOPE_COLLECTOR_API void rlscope_collector_category_pop(void) {
  if (ThreadBuffer* b = threadBuffer())
    record(b, part::RecordType::kCategoryPop, part::Instant{now()});
}
