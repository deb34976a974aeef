#include "activity_decoder.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "rlscope/part/record_codec.h"

namespace rlscope::cupti {

namespace {

using part::RecordType;

template <class P>
void append(std::vector<std::byte>& out, RecordType type, const P& payload,
            std::initializer_list<std::string_view> strings = {}) {
  std::size_t at = out.size();
  out.resize(at + part::encodedSize<P>(strings));
  part::encodeRecord(out.data() + at, type, payload, strings);
}

// CUPTI leaves start/end at CUPTI_TIMESTAMP_UNKNOWN in records a forced flush returned before the
// work finished: such an interval means nothing, so it is dropped (and counted).
bool timed(std::uint64_t start, std::uint64_t end) {
  return start != CUPTI_TIMESTAMP_UNKNOWN && end != CUPTI_TIMESTAMP_UNKNOWN && end >= start;
}

// CUPTI's timestamps are already on the part's clock (the collector is its timestamp source).
std::int64_t partTime(std::uint64_t t) {
  return static_cast<std::int64_t>(t);
}

// The interval and placement every kernel, copy and memset record carries.
template <class Out, class In>
void copyPlacement(Out& o, const In& a) {
  o.start = partTime(a.start);
  o.end = partTime(a.end);
  o.deviceId = a.deviceId;
  o.contextId = a.contextId;
  o.streamId = a.streamId;
  o.correlationId = a.correlationId;
}

// MEMCPY and MEMCPY2 (peer to peer) records differ only in where the bytes go.
template <class In>
part::Memcpy memcpyOf(const In& a, std::uint32_t srcDevice, std::uint32_t dstDevice) {
  part::Memcpy m{};
  copyPlacement(m, a);
  m.bytes = a.bytes;
  m.graphNodeId = a.graphNodeId;
  m.srcDeviceId = srcDevice;
  m.dstDeviceId = dstDevice;
  m.copyKind = a.copyKind;
  m.srcKind = a.srcKind;
  m.dstKind = a.dstKind;
  return m;
}

}  // namespace

std::string stripRuntimeVersionSuffix(std::string_view name) {
  std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 == name.size()) return std::string(name);
  bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(v + 2), name.end(),
                            [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return std::string(digits ? name.substr(0, v) : name);
}

std::string cuptiApiName(part::ApiKind kind, std::uint32_t cbid) {
  const char* name = nullptr;
  CUpti_CallbackDomain domain =
      kind == part::ApiKind::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return {};
  return kind == part::ApiKind::kRuntime ? stripRuntimeVersionSuffix(name) : std::string(name);
}

ActivityDecoder::ActivityDecoder(ApiNamer namer) : namer_(std::move(namer)) {}

void ActivityDecoder::noteContextDevice(std::uint32_t contextId, std::uint32_t deviceId) {
  std::lock_guard lock(contextMutex_);
  contextDevice_[contextId] = deviceId;
}

std::uint32_t ActivityDecoder::deviceOfContext(std::uint32_t contextId) const {
  std::lock_guard lock(contextMutex_);
  auto it = contextDevice_.find(contextId);
  return it == contextDevice_.end() ? kUnknownDevice : it->second;
}

const std::string& ActivityDecoder::apiName(part::ApiKind kind, std::uint32_t cbid) {
  std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(kind)} << 32) | cbid;
  auto it = apiNames_.find(key);
  if (it == apiNames_.end()) {
    std::string name = namer_ ? namer_(kind, cbid) : std::string();
    // Keep the id visible rather than writing an empty name.
    if (name.empty()) name = "cbid_" + std::to_string(cbid);
    it = apiNames_.emplace(key, std::move(name)).first;
  }
  return it->second;
}

bool ActivityDecoder::decode(const CUpti_Activity* record, std::vector<std::byte>& out) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* a = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (!timed(a->start, a->end)) break;
      noteContextDevice(a->contextId, a->deviceId);
      part::Kernel k{};
      copyPlacement(k, *a);
      k.gridX = a->gridX;
      k.gridY = a->gridY;
      k.gridZ = a->gridZ;
      k.blockX = a->blockX;
      k.blockY = a->blockY;
      k.blockZ = a->blockZ;
      k.registersPerThread = a->registersPerThread;
      k.staticSharedMemory = a->staticSharedMemory;
      k.dynamicSharedMemory = a->dynamicSharedMemory;
      k.localMemoryPerThread = static_cast<std::int32_t>(a->localMemoryPerThread);
      // The 64-bit field supersedes the 32-bit one, which CUPTI may leave truncated.
      std::uint64_t localTotal =
          a->localMemoryTotal_v2 ? a->localMemoryTotal_v2 : a->localMemoryTotal;
      k.localMemoryTotal = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(localTotal, std::numeric_limits<std::uint32_t>::max()));
      k.sharedMemoryExecuted = a->sharedMemoryExecuted;
      k.gridId = static_cast<std::uint64_t>(a->gridId);
      k.graphNodeId = a->graphNodeId;
      k.graphId = a->graphId;
      k.launchType = a->launchType;
      k.cacheConfigRequested = a->cacheConfig.config.requested;
      k.cacheConfigExecuted = a->cacheConfig.config.executed;
      append(out, RecordType::kKernel, k, {a->name ? std::string_view(a->name) : ""});
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* a = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (!timed(a->start, a->end)) break;
      noteContextDevice(a->contextId, a->deviceId);
      part::Memcpy m = memcpyOf(*a, a->deviceId, a->deviceId);
      append(out, RecordType::kMemcpy, m);
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer-to-peer copies
      const auto* a = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (!timed(a->start, a->end)) break;
      noteContextDevice(a->contextId, a->deviceId);
      part::Memcpy m = memcpyOf(*a, a->srcDeviceId, a->dstDeviceId);
      append(out, RecordType::kMemcpy, m);
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* a = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (!timed(a->start, a->end)) break;
      noteContextDevice(a->contextId, a->deviceId);
      part::Memset m{};
      copyPlacement(m, *a);
      m.bytes = a->bytes;
      m.graphNodeId = a->graphNodeId;
      m.value = a->value;
      m.memoryKind = a->memoryKind;
      append(out, RecordType::kMemset, m);
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      if (!timed(a->start, a->end)) break;
      auto kind =
          a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? part::ApiKind::kRuntime : part::ApiKind::kDriver;
      part::ApiCall c{};
      c.start = partTime(a->start);
      c.end = partTime(a->end);
      c.kind = static_cast<std::uint32_t>(kind);
      c.cbid = a->cbid;
      c.tid = a->threadId;
      c.correlationId = a->correlationId;
      c.returnValue = static_cast<std::int32_t>(a->returnValue);
      append(out, RecordType::kApiCall, c, {apiName(kind, a->cbid)});
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* a = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      if (!timed(a->start, a->end)) break;
      part::Synchronization s{};
      s.start = partTime(a->start);
      s.end = partTime(a->end);
      s.cudaEventId = a->cudaEventId;
      s.cudaEventSyncId = a->cudaEventSyncId;
      s.deviceId = deviceOfContext(a->contextId);
      s.contextId = a->contextId;
      s.streamId = a->streamId;
      s.correlationId = a->correlationId;
      s.type = static_cast<std::uint32_t>(a->type);
      append(out, RecordType::kSynchronization, s);
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* a = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      if (!timed(a->start, a->end)) break;
      part::Overhead o{};
      o.start = partTime(a->start);
      o.end = partTime(a->end);
      switch (a->objectKind) {
        case CUPTI_ACTIVITY_OBJECT_PROCESS:
          o.objectId = a->objectId.pt.processId;
          break;
        case CUPTI_ACTIVITY_OBJECT_THREAD:
          o.objectId = a->objectId.pt.threadId;
          break;
        default:  // device, context, stream: the device they belong to
          o.objectId = a->objectId.dcs.deviceId;
          break;
      }
      o.overheadKind = static_cast<std::uint32_t>(a->overheadKind);
      o.objectKind = static_cast<std::uint32_t>(a->objectKind);
      append(out, RecordType::kOverhead, o);
      ++decoded_;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* a = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      part::ExternalCorrelation x{};
      x.externalId = a->externalId;
      x.externalKind = static_cast<std::uint32_t>(a->externalKind);
      x.correlationId = a->correlationId;
      append(out, RecordType::kExternalCorrelation, x);
      ++decoded_;
      return true;
    }
    default:
      ++unknownKinds_;
      return false;
  }
  ++incomplete_;
  return false;
}

}  // namespace rlscope::cupti
