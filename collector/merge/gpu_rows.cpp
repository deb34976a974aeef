#include "gpu_rows.h"

#include <nlohmann/json.hpp>
#include <string>

#include "rlscope/trace/kernel_names.h"

namespace rlscope::merge {

namespace {

// The interval and placement every kernel, copy, memset and sync row carries.
template <class Row, class Rec>
Row placed(const Rec& x, std::int64_t globalPid) {
  Row r;
  r.start = x.start;
  r.end = x.end;
  r.deviceId = x.deviceId;
  r.contextId = x.contextId;
  r.streamId = x.streamId;
  r.correlationId = x.correlationId;
  r.globalPid = globalPid;
  return r;
}

}  // namespace

trace::KernelRecord kernelRow(const part::Kernel& k, std::string_view mangledName,
                              std::int64_t globalPid, trace::TraceWriter& names) {
  auto r = placed<trace::KernelRecord>(k, globalPid);
  std::string mangled(mangledName);
  std::string demangled = trace::demangleKernelName(mangled);
  r.mangledName = names.intern(mangled);
  r.demangledName = names.intern(demangled);
  r.shortName = names.intern(trace::shortKernelName(demangled));
  r.launchType = k.launchType;
  r.cacheConfig = k.cacheConfigRequested;
  r.registersPerThread = k.registersPerThread;
  r.gridX = k.gridX, r.gridY = k.gridY, r.gridZ = k.gridZ;
  r.blockX = k.blockX, r.blockY = k.blockY, r.blockZ = k.blockZ;
  r.staticSharedMemory = k.staticSharedMemory;
  r.dynamicSharedMemory = k.dynamicSharedMemory;
  r.localMemoryPerThread = k.localMemoryPerThread;
  r.localMemoryTotal = k.localMemoryTotal;
  r.gridId = static_cast<std::int64_t>(k.gridId);
  r.sharedMemoryExecuted = k.sharedMemoryExecuted;
  r.graphNodeId = static_cast<std::int64_t>(k.graphNodeId);
  r.graphId = k.graphId;
  return r;
}

trace::MemcpyRecord memcpyRow(const part::Memcpy& m, std::int64_t globalPid) {
  auto r = placed<trace::MemcpyRecord>(m, globalPid);
  r.bytes = static_cast<std::int64_t>(m.bytes);
  r.copyKind = m.copyKind;
  r.srcKind = m.srcKind;
  r.dstKind = m.dstKind;
  r.srcDeviceId = m.srcDeviceId;
  r.dstDeviceId = m.dstDeviceId;
  r.graphNodeId = static_cast<std::int64_t>(m.graphNodeId);
  return r;
}

trace::MemsetRecord memsetRow(const part::Memset& m, std::int64_t globalPid) {
  auto r = placed<trace::MemsetRecord>(m, globalPid);
  r.value = m.value;
  r.bytes = static_cast<std::int64_t>(m.bytes);
  r.memKind = m.memoryKind;
  r.graphNodeId = static_cast<std::int64_t>(m.graphNodeId);
  return r;
}

trace::SyncRecord syncRow(const part::Synchronization& s, std::int64_t globalPid) {
  auto r = placed<trace::SyncRecord>(s, globalPid);
  r.syncType = static_cast<trace::SyncType>(s.type);
  r.eventId = static_cast<std::int64_t>(s.cudaEventId);
  r.eventSyncId = static_cast<std::int64_t>(s.cudaEventSyncId);
  return r;
}

trace::PlainEventRecord overheadRow(const part::Overhead& o, std::uint32_t pid,
                                    trace::TraceWriter& names) {
  trace::PlainEventRecord r;
  r.start = o.start;
  r.end = o.end;
  r.pid = std::to_string(pid);
  r.tid = std::to_string(o.objectId);
  r.nameId = names.intern("cupti_overhead");
  r.categoryId = names.intern("rlscope.cupti_overhead");
  r.phase.push_back('X');  // not = "X": GCC 12 -Wrestrict false positive
  r.args =
      nlohmann::json{
          {"overheadKind", o.overheadKind}, {"objectKind", o.objectKind}, {"objectId", o.objectId}}
          .dump();
  return r;
}

trace::GpuInfoRecord gpuInfoRow(const part::GpuInfo& g, const part::RecordView& r) {
  trace::GpuInfoRecord t;
  t.id = g.deviceId;
  t.name = std::string(r.string<part::GpuInfo>(0).value_or(""));
  t.uuid = std::string(r.string<part::GpuInfo>(1).value_or(""));
  t.busLocation = std::string(r.string<part::GpuInfo>(2).value_or(""));
  t.chipName = std::string(r.string<part::GpuInfo>(3).value_or(""));
  t.isDiscrete = g.isDiscrete;
  t.l2CacheSize = g.l2CacheSize;
  t.totalMemory = g.totalMemory;
  t.memoryBandwidth = g.memoryBandwidth;
  t.clockRate = g.clockRate;
  t.smCount = g.smCount;
  t.computeMajor = g.computeMajor;
  t.computeMinor = g.computeMinor;
  t.maxRegistersPerBlock = g.maxRegistersPerBlock;
  t.maxShmemPerBlock = g.maxShmemPerBlock;
  t.maxShmemPerBlockOptin = g.maxShmemPerBlockOptin;
  t.maxShmemPerSm = g.maxShmemPerSm;
  t.maxRegistersPerSm = g.maxRegistersPerSm;
  t.threadsPerWarp = g.threadsPerWarp;
  t.maxWarpsPerSm = g.maxWarpsPerSm;
  t.maxBlocksPerSm = g.maxBlocksPerSm;
  t.maxThreadsPerBlock = g.maxThreadsPerBlock;
  t.memoryClockRate = g.memoryClockRate;
  t.memoryBusWidth = g.memoryBusWidth;
  return t;
}

}  // namespace rlscope::merge
