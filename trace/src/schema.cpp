#include "rlscope/trace/schema.h"

#include <array>
#include <string>

#include "rlscope/trace/records.h"

namespace rlscope::trace {

namespace {

// Column names, order and units follow Nsight Systems' SQLite export (schema 3.x) for its tables.
// Columns marked "rlscope" are additions; nsys SQL never needs them.
constexpr std::string_view kDdl = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE rlscope_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE ENUM_RLSCOPE_CATEGORY (id INTEGER PRIMARY KEY, name TEXT NOT NULL, resource TEXT NOT NULL);
CREATE TABLE ENUM_RLSCOPE_OPERATION_SOURCE (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT);

CREATE TABLE rlscope_processes (
  globalPid INTEGER PRIMARY KEY, pid INTEGER NOT NULL, parentPid INTEGER NOT NULL DEFAULT 0,
  name TEXT, commandLine TEXT, start INTEGER, end INTEGER, exitStatus INTEGER);
CREATE TABLE rlscope_process_identity (
  globalPid INTEGER PRIMARY KEY, host TEXT, launcher TEXT, rank INTEGER, localRank INTEGER,
  worldSize INTEGER, localWorldSize INTEGER, nodeRank INTEGER, backend TEXT, variables TEXT);
CREATE TABLE rlscope_threads (
  globalTid INTEGER PRIMARY KEY, globalPid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT);
CREATE TABLE rlscope_cpu_intervals (
  start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,
  category INTEGER NOT NULL REFERENCES ENUM_RLSCOPE_CATEGORY(id),
  nameId INTEGER REFERENCES StringIds(id), args TEXT, pythonEvents INTEGER);
CREATE TABLE rlscope_operations (
  id INTEGER PRIMARY KEY, start INTEGER NOT NULL, end INTEGER NOT NULL,
  globalTid INTEGER NOT NULL, nameId INTEGER NOT NULL REFERENCES StringIds(id),
  parentId INTEGER NOT NULL DEFAULT 0, depth INTEGER NOT NULL DEFAULT 0,
  source INTEGER NOT NULL REFERENCES ENUM_RLSCOPE_OPERATION_SOURCE(id), args TEXT);
CREATE TABLE rlscope_phases (
  start INTEGER NOT NULL, end INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  nameId INTEGER NOT NULL REFERENCES StringIds(id));
CREATE TABLE rlscope_events (
  start INTEGER NOT NULL, end INTEGER NOT NULL, pid, tid,
  nameId INTEGER REFERENCES StringIds(id), categoryId INTEGER REFERENCES StringIds(id),
  phase TEXT NOT NULL, args TEXT);
CREATE TABLE rlscope_external_correlation (
  globalPid INTEGER NOT NULL, correlationId INTEGER NOT NULL, externalId INTEGER NOT NULL);
CREATE TABLE rlscope_calibration (
  source TEXT NOT NULL, name TEXT NOT NULL, meanNs REAL NOT NULL, stdNs REAL NOT NULL,
  count INTEGER NOT NULL, medianNs REAL, spreadNs REAL);

CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),
  shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL REFERENCES StringIds(id),
  returnValue INTEGER NOT NULL, callchainId INTEGER, cbid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (
  start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL REFERENCES StringIds(id),
  returnValue INTEGER NOT NULL, callchainId INTEGER, cbid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEMCPY_OPER(id),
  deprecatedSrcId INTEGER, srcKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id),
  dstKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), srcDeviceId INTEGER, srcContextId INTEGER,
  dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER,
  memKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id));
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL REFERENCES ENUM_CUPTI_SYNC_TYPE(id),
  eventId INTEGER NOT NULL, eventSyncId INTEGER);
CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL REFERENCES ENUM_NSYS_EVENT_TYPE(id),
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id), domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds(id), priority INTEGER,
  globalTid INTEGER);
CREATE TABLE TARGET_INFO_GPU (
  vmId INTEGER NOT NULL DEFAULT 0, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,
  clockRate INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, computeMajor INTEGER,
  computeMinor INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER,
  maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,
  threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,
  maxThreadsPerBlock INTEGER, memoryClockRate INTEGER, memoryBusWidth INTEGER);
)sql";

constexpr std::string_view kEnumRows = R"sql(
INSERT INTO ENUM_RLSCOPE_OPERATION_SOURCE VALUES
  (0, 'annotation'), (1, 'nvtx'), (2, 'kineto_user_annotation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES
  (33, 'NvtxCategory', 'NVTX category'), (34, 'NvtxMark', 'NVTX mark'),
  (39, 'NvtxThread', 'NVTX thread name'), (59, 'NvtxPushPopRange', 'NVTX push/pop range'),
  (60, 'NvtxStartEndRange', 'NVTX start/end range'), (75, 'NvtxDomainCreate', 'NVTX domain create'),
  (76, 'NvtxDomainDestroy', 'NVTX domain destroy');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'CUDA runtime'),
  (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'UNKNOWN', 'Unknown'),
  (1, 'EVENT_SYNCHRONIZE', 'Event sync'), (2, 'STREAM_WAIT_EVENT', 'Stream wait event'),
  (3, 'STREAM_SYNCHRONIZE', 'Stream sync'), (4, 'CONTEXT_SYNCHRONIZE', 'Context sync');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'UNKNOWN', 'Unknown'), (1, 'HTOD', 'HtoD'),
  (2, 'DTOH', 'DtoH'), (3, 'HTOA', 'HtoA'), (4, 'ATOH', 'AtoH'), (5, 'ATOA', 'AtoA'),
  (6, 'ATOD', 'AtoD'), (7, 'DTOA', 'DtoA'), (8, 'DTOD', 'DtoD'), (9, 'HTOH', 'HtoH'),
  (10, 'PTOP', 'PtoP'), (11, 'UVM_HTOD', 'Unified HtoD'), (12, 'UVM_DTOH', 'Unified DtoH'),
  (13, 'UVM_DTOD', 'Unified DtoD');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'PAGEABLE', 'Pageable'), (1, 'PINNED', 'Pinned'),
  (2, 'DEVICE', 'Device'), (3, 'ARRAY', 'Array'), (4, 'MANAGED', 'Managed'),
  (5, 'DEVICE_STATIC', 'Device Static'), (6, 'MANAGED_STATIC', 'Managed Static'),
  (7, 'UNKNOWN', 'Unknown');
)sql";

constexpr std::string_view kIndexes = R"sql(
CREATE INDEX idx_cpu_intervals_thread ON rlscope_cpu_intervals (globalTid, start);
CREATE INDEX idx_operations_thread ON rlscope_operations (globalTid, start);
CREATE INDEX idx_phases_process ON rlscope_phases (globalPid, start);
CREATE INDEX idx_events_track ON rlscope_events (pid, tid, start);
CREATE INDEX idx_external_correlation ON rlscope_external_correlation (globalPid, correlationId);
CREATE INDEX idx_kernel_stream ON CUPTI_ACTIVITY_KIND_KERNEL (deviceId, streamId, start);
CREATE INDEX idx_kernel_correlation ON CUPTI_ACTIVITY_KIND_KERNEL (globalPid, correlationId);
CREATE INDEX idx_runtime_thread ON CUPTI_ACTIVITY_KIND_RUNTIME (globalTid, start);
CREATE INDEX idx_runtime_correlation ON CUPTI_ACTIVITY_KIND_RUNTIME (correlationId);
CREATE INDEX idx_driver_thread ON CUPTI_ACTIVITY_KIND_DRIVER (globalTid, start);
CREATE INDEX idx_driver_correlation ON CUPTI_ACTIVITY_KIND_DRIVER (correlationId);
CREATE INDEX idx_memcpy_stream ON CUPTI_ACTIVITY_KIND_MEMCPY (deviceId, streamId, start);
CREATE INDEX idx_memcpy_correlation ON CUPTI_ACTIVITY_KIND_MEMCPY (globalPid, correlationId);
CREATE INDEX idx_memset_stream ON CUPTI_ACTIVITY_KIND_MEMSET (deviceId, streamId, start);
CREATE INDEX idx_memset_correlation ON CUPTI_ACTIVITY_KIND_MEMSET (globalPid, correlationId);
CREATE INDEX idx_sync_stream ON CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (deviceId, streamId, start);
CREATE INDEX idx_nvtx_thread ON NVTX_EVENTS (globalTid, start);
)sql";

constexpr std::array<std::string_view, 11> kEventTables = {
    table::kOperations, table::kCpuIntervals, table::kRuntime,     table::kDriver,
    table::kKernel,     table::kMemcpy,       table::kMemset,      table::kSync,
    table::kNvtx,       table::kPhases,       table::kPlainEvents,
};

}  // namespace

std::span<const std::string_view> eventTables() {
  return kEventTables;
}

void createSchema(Database& db) {
  db.exec(kDdl);
  db.exec(kEnumRows);
  auto insert = db.prepare("INSERT INTO ENUM_RLSCOPE_CATEGORY VALUES (?, ?, ?)");
  for (int i = 1; i <= kCategoryCount; ++i) {
    auto c = static_cast<Category>(i);
    insert.bind(1, std::int64_t{i});
    insert.bind(2, categoryName(c));
    insert.bind(3, c == Category::kWaiting ? std::string_view("none")
                   : isGpuCategory(c)      ? std::string_view("GPU")
                                           : std::string_view("CPU"));
    insert.run();
  }
}

void createIndexes(Database& db) {
  db.exec(kIndexes);
}

}  // namespace rlscope::trace
