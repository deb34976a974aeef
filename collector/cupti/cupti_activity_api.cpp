#include "cupti_activity_api.h"

#include "cupti_error.h"
#include "rlscope/collector/collector.h"

namespace rlscope::cupti {

namespace {

constexpr std::int64_t kUnforcedFlushIntervalNs = 1'000'000'000;

// CUPTI 12.9 (API version 27) is the first that copes with a rejected buffer request.
bool cuptiSurvivesRejectedBuffers() {
  std::uint32_t version = 0;
  return cuptiGetVersion(&version) == CUPTI_SUCCESS && version >= 27;
}

std::uint64_t CUPTIAPI collectorTimestamp() {
  return collector::timestamp();
}

struct KindName {
  CUpti_ActivityKind kind;
  const char* name;
};

}  // namespace

CuptiActivityApi& CuptiActivityApi::instance() {
  // Leaked: CUPTI may call back during and after static destruction.
  static auto* api = new CuptiActivityApi;
  return *api;
}

CuptiActivityApi::CuptiActivityApi()
    : buffers_(ActivityBuffers::kBufferBytes, ActivityBuffers::kMaxBuffers,
               cuptiSurvivesRejectedBuffers()) {}

std::string CuptiActivityApi::enable(std::uint32_t features) {
  if (CUptiResult r = cuptiActivityRegisterTimestampCallback(collectorTimestamp);
      r != CUPTI_SUCCESS)
    return describeCuptiError("cuptiActivityRegisterTimestampCallback", r);
  if (CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
      r != CUPTI_SUCCESS)
    return describeCuptiError("cuptiActivityRegisterCallbacks", r);

  std::vector<KindName> kinds;
  if (features & part::kFeatureGpuActivity) {
    // CONCURRENT_KERNEL, never KERNEL: KERNEL serialises every kernel launch.
    kinds.insert(kinds.end(), {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
                               {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
                               {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
                               {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
                               {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
                               {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"}});
  }
  if (features & part::kFeatureCudaApi) {
    kinds.insert(kinds.end(), {{CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
                               {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"}});
  }
  if (!kinds.empty()) kinds.push_back({CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"});

  for (const KindName& k : kinds) {
    if (CUptiResult r = cuptiActivityEnable(k.kind); r != CUPTI_SUCCESS) {
      for (CUpti_ActivityKind on : enabledKinds_) cuptiActivityDisable(on);
      enabledKinds_.clear();
      return describeCuptiError(std::string("cuptiActivityEnable(") + k.name + ")", r);
    }
    enabledKinds_.push_back(k.kind);
  }
  if (features & part::kFeatureCudaApi) {
    // Hot calls frameworks make thousands of times a second, with no GPU work behind them (the
    // list Kineto switches off). Best effort: older CUPTI lacks per-API switches.
    cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, 0);
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, 0);
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 0);
  }
  lastUnforcedFlushNs_.store(collector::nowNs());
  enabled_.store(true, std::memory_order_release);
  return {};
}

void CuptiActivityApi::flush() {
  if (abandoned_.load()) return;
  if (enabled()) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    // The count since the last call: one record per flush that lost some, the merge sums them.
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
      collector::appendProcessRecord(part::RecordType::kDroppedRecords,
                                     part::DroppedRecords{dropped, 0, 0});
  }
  decodeCompleted();
}

void CuptiActivityApi::drain() {
  if (abandoned_.load()) return;
  std::int64_t now = collector::nowNs();
  if (enabled() && now - lastUnforcedFlushNs_.load() >= kUnforcedFlushIntervalNs) {
    lastUnforcedFlushNs_.store(now);
    cuptiActivityFlushAll(0);
  }
  decodeCompleted();
}

void CuptiActivityApi::finalFlush() {
  flush();
  // After CUDA's own exit handlers a flush could wait on a context being torn down.
  enabled_.store(false, std::memory_order_release);
}

void CuptiActivityApi::abandon() {
  abandoned_.store(true);
  enabled_.store(false, std::memory_order_release);
}

void CuptiActivityApi::decodeCompleted() {
  // Taken under the decode lock so buffers are decoded in completion order.
  std::lock_guard lock(decodeMutex_);
  std::vector<CompletedBuffer> completed = buffers_.takeCompleted();
  for (const CompletedBuffer& b : completed) {
    encoded_.clear();
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(b.data(), b.validBytes(), &record) == CUPTI_SUCCESS)
      decoder_.decode(record, encoded_);
    if (!encoded_.empty()) collector::appendProcessRecords(encoded_.data(), encoded_.size());
  }
}

void CUPTIAPI CuptiActivityApi::bufferRequested(std::uint8_t** buffer, std::size_t* size,
                                                std::size_t* maxNumRecords) {
  ActivityBuffers& b = instance().buffers_;
  *buffer = b.request();
  *size = *buffer ? b.bufferBytes() : 0;
  *maxNumRecords = 0;  // as many as fit
}

void CUPTIAPI CuptiActivityApi::bufferCompleted(CUcontext, std::uint32_t, std::uint8_t* buffer,
                                                std::size_t, std::size_t validSize) {
  instance().buffers_.complete(buffer, validSize);
}

}  // namespace rlscope::cupti
