// A stand-in for CUPTI, built as libcupti.so.<CUDA major> so that librlscope_cupti.so binds to it
// in a test program: the collector's whole CUDA path (injection, subscription, activity kinds,
// buffer callbacks, flushes, external correlation, GPU properties, decoding, the merge) then runs
// end to end on machines without a GPU, as libkineto's tests run against a mock activity API.
//
// It implements the CUPTI functions librlscope_cupti.so calls, as CUPTI documents them: one
// subscriber; callbacks on the calling thread; activity records only of the enabled kinds (and
// runtime APIs not switched off), timestamped by the registered timestamp callback, written into
// buffers the client hands over and handed back when full or flushed, with the client's
// completion callback called under this library's lock as CUPTI does; external correlation ids
// per thread and kind, one EXTERNAL_CORRELATION record per API call made under one. What the
// program does on the "GPU" comes from fake_cuda.h. It is not CUPTI: which records real CUPTI
// makes, in which order and with which timing, only scripts/gpu-check.sh on a GPU can show.
#include <cupti.h>
#include <cupti_target.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "fake_cuda.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr std::uint32_t kDeviceId = 0;
// Records sit in the client's buffers behind an 8-byte header holding their size.
constexpr std::size_t kHeaderBytes = 8;

struct CallbackName {
  CUpti_CallbackId cbid;
  const char* name;  // as CUPTI names runtime APIs: with the version suffix
};
constexpr CallbackName kRuntimeNames[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, "cudaDeviceReset_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
};

std::size_t padded(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

std::uint32_t osThreadId() {
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

struct Cupti {
  std::mutex mutex;  // CUPTI's internal lock: buffers, kinds, counters
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool subscribed = false;
  bool resourceDomain = false;
  std::set<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> callbacks;
  std::set<CUpti_ActivityKind> kinds;
  std::set<CUpti_CallbackId> runtimeOff;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  // Read without the lock, on any thread.
  std::atomic<CUpti_TimestampCallbackFunc> timestamp{nullptr};
  std::atomic<bool> systemThreadIds{false};
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;
  std::size_t dropped = 0;
  std::uint32_t nextCorrelationId = 1;
  std::atomic<std::uint32_t> contextId{0};  // 0: no context yet (or it was reset)

  bool on(CUpti_ActivityKind kind) {
    std::lock_guard lock(mutex);
    return kinds.count(kind) > 0;
  }

  std::uint64_t now() {
    if (auto f = timestamp.load()) return f();
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }

  // Under the lock: hands the current buffer back to the client.
  void completeLocked() {
    if (!buffer) return;
    complete(nullptr, 0, buffer, size, used);
    buffer = nullptr;
    size = used = 0;
  }

  template <class Record>
  void emit(const Record& record) {
    std::lock_guard lock(mutex);
    if (!kinds.count(record.kind) || !request || !complete) return;
    std::size_t need = kHeaderBytes + padded(sizeof record);
    if (buffer && used + need > size) completeLocked();
    if (!buffer) {
      std::size_t maxRecords = 0;
      request(&buffer, &size, &maxRecords);
      if (!buffer || size < need) {  // the client refused: the record is dropped
        buffer = nullptr;
        ++dropped;
        return;
      }
      used = 0;
    }
    auto bytes = static_cast<std::uint32_t>(sizeof record);
    std::memcpy(buffer + used, &bytes, sizeof bytes);
    std::memcpy(buffer + used + kHeaderBytes, &record, sizeof record);
    used += need;
  }

  void invoke(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
    CUpti_CallbackFunc f = nullptr;
    void* user = nullptr;
    {
      std::lock_guard lock(mutex);
      bool wanted =
          domain == CUPTI_CB_DOMAIN_RESOURCE ? resourceDomain : callbacks.count({domain, cbid}) > 0;
      if (subscribed && wanted) f = callback, user = userdata;
    }
    if (f) f(user, domain, cbid, data);  // on the calling thread, no lock of ours held
  }

  CUcontext context() { return reinterpret_cast<CUcontext>(std::uintptr_t{0x1000} + contextId); }

  // The primary context, created at the first runtime call (again after a reset).
  void ensureContext() {
    {
      std::lock_guard lock(mutex);
      if (contextId != 0) return;
      static std::uint32_t contexts = 0;
      contextId = ++contexts;
    }
    CUpti_ResourceData data{};
    data.context = context();
    invoke(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
  }

  std::uint32_t correlationId() {
    std::lock_guard lock(mutex);
    return nextCorrelationId++;
  }
};

Cupti& cupti() {
  static auto* c = new Cupti;  // leaked: the collector flushes from atexit handlers
  return *c;
}

// The external correlation ids pushed on this thread, per kind.
thread_local std::vector<std::uint64_t> t_external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

// GPU work takes a few microseconds of the caller's time, so that records have durations.
void busy(std::chrono::nanoseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// One runtime API call: the callbacks at entry and exit, the API record, the external correlation
// records of the ids open on the thread, and what gpuWork records between entry and exit.
template <class GpuWork>
void runtimeCall(CUpti_CallbackId cbid, GpuWork gpuWork) {
  Cupti& c = cupti();
  c.ensureContext();
  std::uint32_t correlation = c.correlationId();
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  data.context = c.context();
  data.correlationId = correlation;
  c.invoke(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);

  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = cbid;
  api.start = c.now();
  busy(std::chrono::microseconds(1));
  gpuWork(correlation, c.contextId);
  api.end = c.now();
  api.processId = static_cast<std::uint32_t>(::getpid());
  api.threadId = c.systemThreadIds ? osThreadId() : 0;
  api.correlationId = correlation;

  data.callbackSite = CUPTI_API_EXIT;
  c.invoke(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
  bool off = false;
  {
    std::lock_guard lock(c.mutex);
    off = c.runtimeOff.count(cbid) > 0;
  }
  if (off) return;
  c.emit(api);
  for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
    if (t_external[kind].empty()) continue;
    CUpti_ActivityExternalCorrelation x{};
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
    x.externalId = t_external[kind].back();
    x.correlationId = correlation;
    c.emit(x);
  }
}

// The record of GPU work of about d that the call `correlation` started on the stream, now.
template <class Record>
Record gpuWork(CUpti_ActivityKind kind, std::chrono::nanoseconds d, std::uint32_t correlation,
               std::uint32_t context, std::uint32_t stream) {
  Record r{};
  r.kind = kind;
  r.start = cupti().now();  // packed fields: assigned, never bound to references
  busy(d);
  r.end = cupti().now();
  if constexpr (requires { r.deviceId; }) r.deviceId = kDeviceId;
  r.contextId = context;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

void synchronize(CUpti_CallbackId cbid, CUpti_ActivitySynchronizationType type,
                 std::uint32_t stream) {
  runtimeCall(cbid, [&](std::uint32_t correlation, std::uint32_t context) {
    auto s = gpuWork<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                                     std::chrono::microseconds(2), correlation,
                                                     context, stream);
    s.type = type;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    cupti().emit(s);
  });
}

}  // namespace

// --- CUPTI -----------------------------------------------------------------------------------

FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  switch (result) {
    case CUPTI_SUCCESS:
      *str = "CUPTI_SUCCESS";
      break;
    case CUPTI_ERROR_INVALID_PARAMETER:
      *str = "CUPTI_ERROR_INVALID_PARAMETER";
      break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
      break;
    default:
      *str = "CUPTI_ERROR_UNKNOWN";
      break;
  }
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                       CUpti_CallbackFunc callback, void* userdata) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  if (c.subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  c.subscribed = true;
  c.callback = callback;
  c.userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&c);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.subscribed = false;
  c.callback = nullptr;
  c.resourceDomain = false;
  c.callbacks.clear();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle,
                                          CUpti_CallbackDomain domain) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return CUPTI_ERROR_INVALID_PARAMETER;
  c.resourceDomain = enable != 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle,
                                            CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  if (enable)
    c.callbacks.insert({domain, cbid});
  else
    c.callbacks.erase({domain, cbid});
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                             const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (const CallbackName& n : kRuntimeNames) {
      if (n.cbid == cbid) {
        *name = n.name;
        return CUPTI_SUCCESS;
      }
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.systemThreadIds = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetDeviceId(CUcontext, uint32_t* deviceId) {
  *deviceId = kDeviceId;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  *contextId = static_cast<uint32_t>(reinterpret_cast<std::uintptr_t>(context) - 0x1000);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* params) {
  if (!params || params->deviceIndex != kDeviceId) return CUPTI_ERROR_INVALID_PARAMETER;
  params->pChipName = "GH100";
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.timestamp = f;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                       CUpti_BuffersCallbackCompleteFunc complete) {
  if (!request || !complete) return CUPTI_ERROR_INVALID_PARAMETER;
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.request = request;
  c.complete = complete;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  // CUPTI refuses the serialising KERNEL kind next to CONCURRENT_KERNEL; the collector must not
  // ask for it, so the fake refuses it outright.
  if (kind == CUPTI_ACTIVITY_KIND_KERNEL) return CUPTI_ERROR_INVALID_KIND;
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.kinds.insert(kind);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  c.kinds.erase(kind);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  if (enable)
    c.runtimeOff.erase(cbid);
  else
    c.runtimeOff.insert(cbid);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) {
  return CUPTI_SUCCESS;  // the fake makes no driver API records
}

FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  Cupti& c = cupti();
  bool forced = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
  if (forced) {
    // CUPTI accounts for its flushes in OVERHEAD records.
    CUpti_ActivityOverhead3 o{};
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = static_cast<std::uint32_t>(::getpid());
    o.objectId.pt.threadId = osThreadId();
    o.start = c.now();
    o.end = c.now() + 1;
    c.emit(o);
  }
  std::lock_guard lock(c.mutex);
  // Unforced, CUPTI hands back only the buffers it has finished with; the fake has one buffer
  // and hands it back when it holds records, so long runs reach the part during the run.
  if (forced || c.used > 0) c.completeLocked();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  Cupti& c = cupti();
  std::lock_guard lock(c.mutex);
  *dropped = std::exchange(c.dropped, 0);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                                   CUpti_Activity** record) {
  std::size_t offset = 0;
  if (*record) {
    auto* header = reinterpret_cast<std::uint8_t*>(*record) - kHeaderBytes;
    std::uint32_t bytes = 0;
    std::memcpy(&bytes, header, sizeof bytes);
    offset = static_cast<std::size_t>(header - buffer) + kHeaderBytes + padded(bytes);
  }
  if (offset + kHeaderBytes > validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset + kHeaderBytes);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                               uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  t_external[kind].push_back(id);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                              uint64_t* lastId) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE || t_external[kind].empty())
    return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId) *lastId = t_external[kind].back();
  t_external[kind].pop_back();
  return CUPTI_SUCCESS;
}

// --- the CUDA runtime calls of fake_cuda.h ------------------------------------------------------

FAKE_EXPORT void fakeCudaLaunchKernel(const char* name, FakeDim3 grid, FakeDim3 block,
                                      int registersPerThread, unsigned stream) {
  runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
              [&](std::uint32_t correlation, std::uint32_t context) {
                auto k = gpuWork<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                         std::chrono::microseconds(3), correlation,
                                                         context, stream);
                k.gridX = static_cast<int32_t>(grid.x);
                k.gridY = static_cast<int32_t>(grid.y);
                k.gridZ = static_cast<int32_t>(grid.z);
                k.blockX = static_cast<int32_t>(block.x);
                k.blockY = static_cast<int32_t>(block.y);
                k.blockZ = static_cast<int32_t>(block.z);
                k.registersPerThread = static_cast<uint16_t>(registersPerThread);
                k.name = name;
                cupti().emit(k);
              });
}

FAKE_EXPORT void fakeCudaMemcpy(size_t bytes, enum FakeCopyKind kind, int async, unsigned stream) {
  auto cbid = async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
                    : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
  runtimeCall(cbid, [&](std::uint32_t correlation, std::uint32_t context) {
    auto m =
        gpuWork<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, std::chrono::microseconds(2),
                                       correlation, context, async ? stream : 0);
    m.copyKind = kind == kFakeHostToDevice ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                                           : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = kind == kFakeHostToDevice ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                                          : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = kind == kFakeHostToDevice ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                                          : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.bytes = bytes;
    cupti().emit(m);
  });
}

FAKE_EXPORT void fakeCudaMemsetAsync(size_t bytes, unsigned stream) {
  runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, [&](std::uint32_t correlation,
                                                                  std::uint32_t context) {
    auto m = gpuWork<CUpti_ActivityMemset4>(
        CUPTI_ACTIVITY_KIND_MEMSET, std::chrono::microseconds(1), correlation, context, stream);
    m.value = 0;
    m.bytes = bytes;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    cupti().emit(m);
  });
}

FAKE_EXPORT void fakeCudaStreamSynchronize(unsigned stream) {
  synchronize(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream);
}

FAKE_EXPORT void fakeCudaDeviceSynchronize(void) {
  synchronize(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
              CUPTI_SYNCHRONIZATION_INVALID_VALUE);
}

FAKE_EXPORT void fakeCudaGetDevice(void) {
  runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, [](std::uint32_t, std::uint32_t) {});
}

FAKE_EXPORT void fakeCudaDeviceReset(void) {
  Cupti& c = cupti();
  runtimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, [&](std::uint32_t, std::uint32_t) {
    CUpti_ResourceData data{};
    data.context = c.context();
    c.invoke(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &data);
  });
  std::lock_guard lock(c.mutex);
  c.contextId = 0;  // the next call creates a new primary context
}
