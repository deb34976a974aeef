#include "cupti_session.h"

#include <cupti.h>

#include <mutex>
#include <set>

#include "cupti_activity_api.h"
#include "cupti_error.h"
#include "gpu_properties.h"
#include "rlscope/collector/collector.h"

namespace rlscope::cupti {

namespace {

CUpti_SubscriberHandle g_subscriber = nullptr;

// GPU properties go into the part once per device, at its first context.
void describeDevice(std::uint32_t deviceId) {
  static std::mutex mutex;
  static std::set<std::uint32_t> described;
  {
    std::lock_guard lock(mutex);
    if (!described.insert(deviceId).second) return;
  }
  std::string error;
  if (auto gpu = queryGpu(deviceId, &error)) {
    std::vector<std::byte> record = encodeGpuInfo(*gpu);
    collector::appendProcessRecords(record.data(), record.size());
  } else {
    collector::warn("properties of GPU " + std::to_string(deviceId) + " unavailable: " + error);
  }
}

void onContextCreated(CUcontext context) {
  std::uint32_t deviceId = 0, contextId = 0;
  if (cuptiGetDeviceId(context, &deviceId) != CUPTI_SUCCESS) return;
  if (cuptiGetContextId(context, &contextId) == CUPTI_SUCCESS)
    CuptiActivityApi::instance().decoder().noteContextDevice(contextId, deviceId);
  describeDevice(deviceId);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      onContextCreated(resource->context);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      // The context is still alive here; its records would be lost with it.
      CuptiActivityApi::instance().flush();
    }
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
             cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite == CUPTI_API_ENTER) CuptiActivityApi::instance().flush();
  }
}

}  // namespace

std::string startCupti(std::uint32_t features) {
  if (CUptiResult r = cuptiSubscribe(&g_subscriber, onCallback, nullptr); r != CUPTI_SUCCESS) {
    g_subscriber = nullptr;
    return describeCuptiError("cuptiSubscribe", r);
  }
  auto fail = [](std::string reason) {
    cuptiUnsubscribe(g_subscriber);
    g_subscriber = nullptr;
    return reason;
  };
  if (CUptiResult r = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
      r != CUPTI_SUCCESS)
    return fail(describeCuptiError("cuptiEnableDomain(RESOURCE)", r));
  if (CUptiResult r = cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
      r != CUPTI_SUCCESS)
    return fail(describeCuptiError("cuptiEnableCallback(cudaDeviceReset)", r));
  // API records then carry OS thread ids (gettid), as the collector's CPU records do.
  if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS)
    return fail(describeCuptiError("cuptiSetThreadIdType", r));
  if (std::string reason = CuptiActivityApi::instance().enable(features); !reason.empty())
    return fail(reason);
  return {};
}

void flushActivity() {
  CuptiActivityApi::instance().flush();
}

void drainActivity() {
  CuptiActivityApi::instance().drain();
}

void forgetCuptiInForkChild() {
  CuptiActivityApi::instance().abandon();
}

void pushOperation(std::uint64_t operationId) {
  if (CuptiActivityApi::instance().enabled())
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, operationId);
}

void popOperation() {
  std::uint64_t last = 0;
  if (CuptiActivityApi::instance().enabled())
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void finalFlush() {
  CuptiActivityApi::instance().finalFlush();
}

}  // namespace rlscope::cupti
