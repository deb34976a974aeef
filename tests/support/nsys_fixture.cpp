#include "support/nsys_fixture.h"

#include <stdexcept>

namespace rlscope::testing {

namespace {

// Nsight Systems export DDL, schema 3.x, from the documented column lists. Columns rlscope does
// not import (greenContextId, cluster*, payloads, ...) are here so the importer meets them.
const std::map<std::string_view, std::string_view>& documentedTables() {
  static const std::map<std::string_view, std::string_view> kTables = {
      {"META_DATA_EXPORT", "name TEXT NOT NULL, value TEXT"},
      {"StringIds", "id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL"},
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
       "contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, "
       "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
       "shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, "
       "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
       "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, "
       "blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, "
       "dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, "
       "localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, "
       "sharedMemoryExecuted INTEGER, graphNodeId INTEGER, graphId INTEGER, clusterX INTEGER, "
       "clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER, "
       "maxPotentialClusterSize INTEGER"},
      {"CUPTI_ACTIVITY_KIND_RUNTIME",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
       "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
       "returnValue INTEGER NOT NULL, callchainId INTEGER"},
      {"CUPTI_ACTIVITY_KIND_DRIVER",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
       "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
       "returnValue INTEGER NOT NULL, callchainId INTEGER"},
      {"CUPTI_ACTIVITY_KIND_MEMCPY",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
       "contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, "
       "correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
       "copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, "
       "srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, "
       "migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER"},
      {"CUPTI_ACTIVITY_KIND_MEMSET",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
       "contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, "
       "correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, "
       "bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER"},
      {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
       "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
       "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "
       "globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL, "
       "eventSyncId INTEGER"},
      {"NVTX_EVENTS",
       "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
       "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
       "textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
       "doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, "
       "jsonTextId INTEGER, jsonText TEXT, binaryData BLOB, "
       "eventId INTEGER NOT NULL PRIMARY KEY"},
      {"ThreadNames", "nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER"},
      {"TARGET_INFO_GPU",
       "vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, "
       "isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, "
       "clockRate INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, cuDevice INTEGER, "
       "computeMajor INTEGER, computeMinor INTEGER, maxIPC INTEGER, "
       "maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, "
       "maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, "
       "maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER"},
      {"PROCESSES", "globalPid INTEGER, pid INTEGER, name TEXT"},
      {"TARGET_INFO_SESSION_START_TIME", "utcEpochNs INTEGER, utcTime TEXT, localTime TEXT"},
  };
  return kTables;
}

NsysValue orNull(std::int64_t v) {
  return v == 0 ? NsysValue{} : NsysValue{v};
}
NsysValue orNull(const std::string& v) {
  return v.empty() ? NsysValue{} : NsysValue{v};
}

}  // namespace

NsysFixture::NsysFixture(const std::filesystem::path& path, NsysFixtureOptions options)
    : path_(path),
      options_(std::move(options)),
      db_(std::make_unique<trace::Database>(path, trace::Database::Mode::kCreate)),
      nextStringId_(options_.firstStringId) {
  db_->exec("BEGIN");
  ensureTable("StringIds");
  if (options_.schemaVersion) {
    insert("META_DATA_EXPORT",
           {{"name", std::string("EXPORT_SCHEMA_VERSION")}, {"value", *options_.schemaVersion}});
  }
}

NsysFixture::~NsysFixture() {
  try {
    close();
  } catch (...) {  // a destructor must not throw; the test sees the broken file instead
  }
}

void NsysFixture::close() {
  if (!db_) return;
  db_->exec("COMMIT");
  db_->close();
  db_.reset();
}

void NsysFixture::exec(std::string_view sql) {
  db_->exec(sql);
}

void NsysFixture::createTable(std::string_view table, std::string_view columnDefinitions) {
  if (columns_.count(table)) throw std::logic_error("table already created: " + std::string(table));
  db_->exec("CREATE TABLE \"" + std::string(table) + "\" (" + std::string(columnDefinitions) + ")");
  std::vector<std::string> names;
  auto st = db_->prepare("SELECT name FROM pragma_table_info(?)");
  st.bind(1, table);
  while (st.step()) names.emplace_back(st.columnText(0));
  columns_.emplace(std::string(table), std::move(names));
}

void NsysFixture::ensureTable(std::string_view table) {
  if (columns_.count(table)) return;
  auto it = documentedTables().find(table);
  if (it == documentedTables().end()) {
    throw std::logic_error("no documented DDL for " + std::string(table));
  }
  createTable(table, it->second);
}

void NsysFixture::createEmptyTable(std::string_view table) {
  ensureTable(table);
}

void NsysFixture::insert(std::string_view table,
                         const std::vector<std::pair<std::string_view, NsysValue>>& values) {
  ensureTable(table);
  const auto& present = columns_.find(table)->second;
  std::string names;
  std::string params;
  std::vector<const NsysValue*> bound;
  for (const auto& [column, value] : values) {
    bool has = false;
    for (const auto& c : present) has = has || c == column;
    if (!has) continue;
    if (!names.empty()) {
      names += ", ";
      params += ", ";
    }
    names += "\"" + std::string(column) + "\"";
    params += "?";
    bound.push_back(&value);
  }
  auto st = db_->prepare("INSERT INTO \"" + std::string(table) + "\" (" + names + ") VALUES (" +
                         params + ")");
  for (std::size_t i = 0; i < bound.size(); ++i) {
    int index = static_cast<int>(i) + 1;
    const NsysValue& v = *bound[i];
    if (auto* n = std::get_if<std::int64_t>(&v)) {
      st.bind(index, *n);
    } else if (auto* s = std::get_if<std::string>(&v)) {
      st.bind(index, std::string_view(*s));
    } else {
      st.bindNull(index);
    }
  }
  st.run();
}

std::int64_t NsysFixture::string(std::string_view text) {
  auto it = strings_.find(text);
  if (it != strings_.end()) return it->second;
  std::int64_t id = nextStringId_;
  nextStringId_ += options_.stringIdStep;
  insert("StringIds", {{"id", id}, {"value", std::string(text)}});
  strings_.emplace(std::string(text), id);
  return id;
}

void NsysFixture::kernel(const trace::KernelRecord& r) {
  insert("CUPTI_ACTIVITY_KIND_KERNEL", {{"start", r.start},
                                        {"end", r.end},
                                        {"deviceId", r.deviceId},
                                        {"contextId", r.contextId},
                                        {"greenContextId", NsysValue{}},
                                        {"streamId", r.streamId},
                                        {"correlationId", r.correlationId},
                                        {"globalPid", r.globalPid},
                                        {"demangledName", r.demangledName},
                                        {"shortName", r.shortName},
                                        {"mangledName", orNull(r.mangledName)},
                                        {"launchType", r.launchType},
                                        {"cacheConfig", r.cacheConfig},
                                        {"registersPerThread", r.registersPerThread},
                                        {"gridX", r.gridX},
                                        {"gridY", r.gridY},
                                        {"gridZ", r.gridZ},
                                        {"blockX", r.blockX},
                                        {"blockY", r.blockY},
                                        {"blockZ", r.blockZ},
                                        {"staticSharedMemory", r.staticSharedMemory},
                                        {"dynamicSharedMemory", r.dynamicSharedMemory},
                                        {"localMemoryPerThread", r.localMemoryPerThread},
                                        {"localMemoryTotal", r.localMemoryTotal},
                                        {"gridId", r.gridId},
                                        {"sharedMemoryExecuted", r.sharedMemoryExecuted},
                                        {"graphNodeId", orNull(r.graphNodeId)},
                                        {"graphId", orNull(r.graphId)},
                                        {"clusterX", std::int64_t{1}},
                                        {"clusterY", std::int64_t{1}},
                                        {"clusterZ", std::int64_t{1}}});
}

void NsysFixture::apiCall(std::string_view table, const trace::ApiCallRecord& r) {
  insert(table, {{"start", r.start},
                 {"end", r.end},
                 {"eventClass", r.eventClass},
                 {"globalTid", r.globalTid},
                 {"correlationId", r.correlationId},
                 {"nameId", r.nameId},
                 {"returnValue", r.returnValue},
                 {"callchainId", orNull(r.callchainId)}});
}

void NsysFixture::runtime(const trace::ApiCallRecord& r) {
  apiCall("CUPTI_ACTIVITY_KIND_RUNTIME", r);
}

void NsysFixture::driver(const trace::ApiCallRecord& r) {
  apiCall("CUPTI_ACTIVITY_KIND_DRIVER", r);
}

void NsysFixture::memcpy(const trace::MemcpyRecord& r) {
  insert("CUPTI_ACTIVITY_KIND_MEMCPY", {{"start", r.start},
                                        {"end", r.end},
                                        {"deviceId", r.deviceId},
                                        {"contextId", r.contextId},
                                        {"streamId", r.streamId},
                                        {"correlationId", r.correlationId},
                                        {"globalPid", r.globalPid},
                                        {"bytes", r.bytes},
                                        {"copyKind", r.copyKind},
                                        {"srcKind", r.srcKind},
                                        {"dstKind", r.dstKind},
                                        {"srcDeviceId", r.srcDeviceId},
                                        {"dstDeviceId", r.dstDeviceId},
                                        {"graphNodeId", orNull(r.graphNodeId)},
                                        {"virtualAddress", std::int64_t{0}},
                                        {"copyCount", std::int64_t{1}}});
}

void NsysFixture::memset(const trace::MemsetRecord& r) {
  insert("CUPTI_ACTIVITY_KIND_MEMSET", {{"start", r.start},
                                        {"end", r.end},
                                        {"deviceId", r.deviceId},
                                        {"contextId", r.contextId},
                                        {"streamId", r.streamId},
                                        {"correlationId", r.correlationId},
                                        {"globalPid", r.globalPid},
                                        {"value", r.value},
                                        {"bytes", r.bytes},
                                        {"graphNodeId", orNull(r.graphNodeId)},
                                        {"memKind", r.memKind}});
}

void NsysFixture::sync(const trace::SyncRecord& r) {
  insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
         {{"start", r.start},
          {"end", r.end},
          {"deviceId", r.deviceId},
          {"contextId", r.contextId},
          {"streamId", r.streamId},
          {"correlationId", r.correlationId},
          {"globalPid", r.globalPid},
          {"syncType", static_cast<std::int64_t>(r.syncType)},
          {"eventId", r.eventId},
          {"eventSyncId", r.eventSyncId}});
}

void NsysFixture::nvtx(const trace::NvtxRecord& r) {
  insert("NVTX_EVENTS", {{"start", r.start},
                         {"end", r.end ? NsysValue{*r.end} : NsysValue{}},
                         {"eventType", static_cast<std::int64_t>(r.eventType)},
                         {"rangeId", orNull(r.rangeId)},
                         {"category", orNull(r.category)},
                         {"color", r.color ? NsysValue{*r.color} : NsysValue{}},
                         {"text", orNull(r.text)},
                         {"globalTid", r.globalTid},
                         {"endGlobalTid", orNull(r.endGlobalTid)},
                         {"textId", orNull(r.textId)},
                         {"domainId", r.domainId}});
}

void NsysFixture::threadName(std::int64_t globalTid, std::string_view name, std::int64_t priority) {
  insert("ThreadNames",
         {{"nameId", string(name)}, {"priority", priority}, {"globalTid", globalTid}});
}

void NsysFixture::gpu(const trace::GpuInfoRecord& r) {
  insert("TARGET_INFO_GPU", {{"vmId", std::int64_t{0}},
                             {"id", r.id},
                             {"name", r.name},
                             {"busLocation", r.busLocation},
                             {"isDiscrete", r.isDiscrete},
                             {"l2CacheSize", r.l2CacheSize},
                             {"totalMemory", r.totalMemory},
                             {"memoryBandwidth", r.memoryBandwidth},
                             {"clockRate", r.clockRate},
                             {"smCount", r.smCount},
                             {"uuid", r.uuid},
                             {"chipName", r.chipName},
                             {"cuDevice", r.id},
                             {"computeMajor", r.computeMajor},
                             {"computeMinor", r.computeMinor},
                             {"maxIPC", r.maxIPC},
                             {"maxRegistersPerBlock", r.maxRegistersPerBlock},
                             {"maxShmemPerBlock", r.maxShmemPerBlock},
                             {"maxShmemPerBlockOptin", r.maxShmemPerBlockOptin},
                             {"maxShmemPerSm", r.maxShmemPerSm},
                             {"maxRegistersPerSm", r.maxRegistersPerSm},
                             {"threadsPerWarp", r.threadsPerWarp},
                             {"maxWarpsPerSm", r.maxWarpsPerSm},
                             {"maxBlocksPerSm", r.maxBlocksPerSm},
                             {"maxThreadsPerBlock", r.maxThreadsPerBlock}});
}

void NsysFixture::process(std::int64_t globalPid, std::int64_t pid, std::string_view name) {
  insert("PROCESSES", {{"globalPid", globalPid}, {"pid", pid}, {"name", std::string(name)}});
}

void NsysFixture::sessionStart(std::int64_t utcEpochNs) {
  insert("TARGET_INFO_SESSION_START_TIME", {{"utcEpochNs", utcEpochNs},
                                            {"utcTime", std::string("2026-01-01T00:00:00Z")},
                                            {"localTime", std::string("2026-01-01T00:00:00")}});
}

void NsysFixture::runtimeRows(std::int64_t count, std::int64_t globalTid, std::int64_t nameId) {
  ensureTable("CUPTI_ACTIVITY_KIND_RUNTIME");
  auto st = db_->prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME "
      "(start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?1) "
      "SELECT 10 * i, 10 * i + 5, 0, ?2, i + 1, ?3, 0 FROM n");
  st.bind(1, count);
  st.bind(2, globalTid);
  st.bind(3, nameId);
  st.run();
}

}  // namespace rlscope::testing
