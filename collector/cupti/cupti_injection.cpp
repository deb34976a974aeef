// librlscope_cupti.so is CUDA_INJECTION64_PATH: the CUDA driver loads it during cuInit and calls
// InitializeInjection. librlscope_collector.so, preloaded by rlscope-prof, is already running.
#include "cupti_injection.h"

#include <cstdlib>
#include <mutex>

#include "cupti_session.h"
#include "rlscope/collector/collector.h"

namespace rlscope::cupti {

namespace {

void recordStatus(bool recording, std::string_view reason) {
  collector::appendProcessRecord(
      part::RecordType::kGpuActivityStatus,
      part::GpuActivityStatus{static_cast<std::int64_t>(collector::timestamp()),
                              recording ? 1u : 0u, 0},
      {reason});
}

std::string start() {
  if (!collector::active()) return {};  // not under rlscope-prof
  std::uint32_t features = collector::features();
  bool gpu = features & part::kFeatureGpuActivity;
  bool api = features & part::kFeatureCudaApi;
  if (!gpu && !api) {
    std::string reason = "switched off (--no-gpu-activity, --no-cuda-api)";
    recordStatus(false, reason);
    return reason;
  }
  if (std::string reason = startCupti(features); !reason.empty()) {
    collector::warn("GPU activity unavailable: " + reason + "; recording CPU activity only");
    recordStatus(false, reason);
    return reason;
  }
  static const collector::CudaHooks hooks{flushActivity, drainActivity, forgetCuptiInForkChild,
                                          gpu ? pushOperation : nullptr,
                                          gpu ? popOperation : nullptr};
  collector::setCudaHooks(&hooks);
  // The last flush while CUDA still works. If CUDA's exit handlers run first, their context
  // teardown has already flushed (the context-destroy callback), and this only decodes.
  std::atexit(finalFlush);
  std::string reason = gpu ? "" : "switched off (--no-gpu-activity)";
  recordStatus(gpu, reason);
  return reason;
}

}  // namespace

std::string initializeInjection() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] { reason = start(); });
  return reason;
}

}  // namespace rlscope::cupti

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  rlscope::cupti::initializeInjection();
  return 1;  // the driver carries on either way: the collector still records CPU activity
}
