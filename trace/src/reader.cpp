#include "rlscope/trace/reader.h"

#include <limits>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/input_path.h"
#include "rlscope/trace/schema.h"

namespace rlscope::trace {

namespace {

// Which filter columns a table has.
struct TableKeys {
  bool globalTid = false;
  bool globalPid = false;
  bool stream = false;  // deviceId + streamId
  bool category = false;
};

TableKeys keysOf(std::string_view table) {
  if (table == table::kCpuIntervals) return {.globalTid = true, .category = true};
  if (table == table::kOperations || table == table::kRuntime || table == table::kDriver ||
      table == table::kNvtx) {
    return {.globalTid = true};
  }
  if (table == table::kPhases) return {.globalPid = true};
  return {.globalPid = true, .stream = true};  // GPU activity tables
}

// The end of an event as SQL: NVTX marks have no end and last no time.
std::string endColumn(std::string_view table) {
  return table == table::kNvtx ? "COALESCE(end, start)" : "end";
}

}  // namespace

TraceReader::TraceReader(const std::filesystem::path& path) {
  requireInputFile(path);
  if (!looksLikeSqlite(path)) {
    throw TraceError(path.string() +
                     ": not an rlscope trace (not an SQLite file; use `rlscope import` for "
                     "Kineto JSON or Nsight Systems exports)");
  }
  db_ = std::make_unique<Database>(path, Database::Mode::kReadOnlyUntrusted);
  if (!db_->hasTable(table::kMeta)) {
    if (db_->hasTable("META_DATA_EXPORT") || db_->hasTable(table::kKernel)) {
      throw TraceError(path.string() +
                       ": is an Nsight Systems export, not an rlscope trace; convert it with "
                       "`rlscope import " +
                       path.string() + " -o TRACE`");
    }
    throw TraceError(path.string() + ": not an rlscope trace (no rlscope_meta table)");
  }
  auto st = db_->prepare("SELECT key, value FROM rlscope_meta");
  while (st.step()) meta_[std::string(st.columnText(0))] = std::string(st.columnText(1));
  auto version = metaValue(meta::kSchemaVersion);
  if (!version) throw TraceError(path.string() + ": not an rlscope trace (no schema_version)");
  try {
    std::size_t used = 0;
    schemaVersion_ = std::stoi(*version, &used);
    if (used != version->size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw TraceError(path.string() + ": invalid schema_version '" + *version + "'");
  }
  if (schemaVersion_ < kOldestReadableSchemaVersion || schemaVersion_ > kSchemaVersion) {
    throw TraceError(path.string() + ": trace schema version " + std::to_string(schemaVersion_) +
                     " is not supported (this rlscope reads versions " +
                     std::to_string(kOldestReadableSchemaVersion) + " to " +
                     std::to_string(kSchemaVersion) + ")");
  }
  for (auto t : eventTables()) {
    if (!db_->hasTable(t)) {
      throw TraceError(path.string() + ": corrupt trace: table " + std::string(t) + " is missing");
    }
  }
}

TraceReader::~TraceReader() = default;

std::optional<std::string> TraceReader::metaValue(std::string_view key) const {
  auto it = meta_.find(std::string(key));
  if (it == meta_.end()) return std::nullopt;
  return it->second;
}

std::string_view TraceReader::string(StringId id) {
  if (!stringsLoaded_) {
    stringsLoaded_ = true;
    auto maxId = db_->queryInt("SELECT MAX(id) FROM StringIds").value_or(0);
    // Ids are dense from 1 in rlscope traces; a stranger's sparse ids fall back to a bounded size.
    auto count = db_->queryInt("SELECT COUNT(*) FROM StringIds").value_or(0);
    if (maxId > 4 * count + 1024) maxId = 0;
    strings_.resize(static_cast<std::size_t>(maxId) + 1);
    auto st = db_->prepare("SELECT id, value FROM StringIds WHERE id >= 0 AND id <= ?");
    st.bind(1, maxId);
    while (st.step()) strings_[static_cast<std::size_t>(st.columnInt(0))] = st.columnText(1);
  }
  if (id <= 0 || static_cast<std::size_t>(id) >= strings_.size()) return {};
  return strings_[static_cast<std::size_t>(id)];
}

std::int64_t TraceReader::rowCount(std::string_view table) {
  if (!db_->hasTable(table)) return 0;
  return db_->queryInt("SELECT COUNT(*) FROM \"" + std::string(table) + "\"").value_or(0);
}

std::optional<TimeSpan> TraceReader::timeSpan() {
  std::optional<TimeSpan> span;
  for (auto t : eventTables()) {
    std::string endExpr = endColumn(t);
    auto st = db_->prepare("SELECT MIN(start), MAX(" + endExpr + ") FROM " + std::string(t));
    if (!st.step() || st.columnIsNull(0)) continue;
    TimeSpan s{st.columnInt(0), st.columnInt(1)};
    if (!span) {
      span = s;
    } else {
      span->start = std::min(span->start, s.start);
      span->end = std::max(span->end, s.end);
    }
  }
  return span;
}

TimeNs TraceReader::maxDuration(std::string_view table) {
  auto it = maxDuration_.find(table);
  if (it != maxDuration_.end()) return it->second;
  std::string endExpr = endColumn(table);
  TimeNs d =
      db_->queryInt("SELECT MAX(" + endExpr + " - start) FROM " + std::string(table)).value_or(0);
  maxDuration_.emplace(std::string(table), d);
  return d;
}

void TraceReader::query(std::string_view table, std::string_view columns, const EventFilter& f,
                        const std::function<void(Statement&)>& fn) {
  TableKeys keys = keysOf(table);
  std::string sql = "SELECT " + std::string(columns) + " FROM " + std::string(table) + " WHERE 1";
  std::vector<std::int64_t> binds;
  auto where = [&](std::string_view clause, std::int64_t v) {
    sql += " AND ";
    sql += clause;
    binds.push_back(v);
  };
  if (f.globalTid && keys.globalTid) where("globalTid = ?", *f.globalTid);
  if (f.globalPid) {
    if (keys.globalPid) {
      where("globalPid = ?", *f.globalPid);
    } else if (keys.globalTid) {
      where("globalTid >= ?", *f.globalPid);
      where("globalTid < ?", *f.globalPid + kGlobalIdFieldLimit);
    }
  }
  if (keys.stream) {
    if (f.deviceId) where("deviceId = ?", *f.deviceId);
    if (f.streamId) where("streamId = ?", *f.streamId);
  }
  if (f.category && keys.category) where("category = ?", static_cast<int>(*f.category));
  std::string endExpr = endColumn(table);
  if (f.windowStart) {
    // Bounding start from below lets the (track, start) index do the work.
    auto lowest = *f.windowStart - maxDuration(table);
    where("start >= ?", lowest);
    // An event ending exactly at the window start counts only if it has no length (starts there).
    sql += " AND (" + endExpr + " > ? OR start = ?)";
    binds.push_back(*f.windowStart);
    binds.push_back(*f.windowStart);
  }
  if (f.windowEnd) where("start < ?", *f.windowEnd);
  sql += f.storageOrder ? " ORDER BY rowid" : " ORDER BY start, rowid";
  auto st = db_->prepare(sql);
  for (std::size_t i = 0; i < binds.size(); ++i) st.bind(static_cast<int>(i) + 1, binds[i]);
  while (st.step()) fn(st);
}

std::vector<ProcessRecord> TraceReader::processes() {
  std::vector<ProcessRecord> out;
  auto st = db_->prepare(
      "SELECT globalPid, pid, parentPid, name, commandLine, start, end, exitStatus "
      "FROM rlscope_processes ORDER BY globalPid");
  while (st.step()) {
    ProcessRecord r;
    r.globalPid = st.columnInt(0);
    r.pid = st.columnInt(1);
    r.parentPid = st.columnInt(2);
    r.name = st.columnText(3);
    r.commandLine = st.columnText(4);
    r.start = st.columnInt(5);
    r.end = st.columnInt(6);
    if (!st.columnIsNull(7)) r.exitStatus = static_cast<int>(st.columnInt(7));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ThreadRecord> TraceReader::threads() {
  std::vector<ThreadRecord> out;
  auto st = db_->prepare(
      "SELECT globalTid, globalPid, tid, name FROM rlscope_threads ORDER BY globalTid");
  while (st.step()) {
    out.push_back(
        {st.columnInt(0), st.columnInt(1), st.columnInt(2), std::string(st.columnText(3))});
  }
  return out;
}

std::vector<ProcessIdentityRecord> TraceReader::processIdentities() {
  std::map<std::int64_t, ProcessIdentityRecord> recorded;
  if (db_->hasTable(table::kProcessIdentity)) {
    auto st = db_->prepare(
        "SELECT globalPid, host, launcher, rank, localRank, worldSize, localWorldSize, nodeRank, "
        "backend, variables FROM rlscope_process_identity");
    auto optionalInt = [&](int c) {
      return st.columnIsNull(c) ? std::nullopt : std::optional<std::int64_t>(st.columnInt(c));
    };
    while (st.step()) {
      ProcessIdentityRecord r;
      r.globalPid = st.columnInt(0);
      r.host = st.columnText(1);
      r.launcher = st.columnText(2);
      r.rank = optionalInt(3);
      r.localRank = optionalInt(4);
      r.worldSize = optionalInt(5);
      r.localWorldSize = optionalInt(6);
      r.nodeRank = optionalInt(7);
      r.backend = st.columnText(8);
      r.variables = st.columnText(9);
      recorded[r.globalPid] = std::move(r);
    }
  }
  std::string host = metaValue(meta::kHost).value_or("");
  std::vector<ProcessIdentityRecord> out;
  auto st = db_->prepare("SELECT globalPid FROM rlscope_processes ORDER BY globalPid");
  while (st.step()) {
    auto it = recorded.find(st.columnInt(0));
    if (it != recorded.end()) {
      out.push_back(std::move(it->second));
    } else {
      out.push_back({.globalPid = st.columnInt(0), .host = host});
    }
  }
  return out;
}

std::vector<GpuInfoRecord> TraceReader::gpus() {
  std::vector<GpuInfoRecord> out;
  auto st = db_->prepare(
      "SELECT id, name, busLocation, isDiscrete, l2CacheSize, totalMemory, memoryBandwidth, "
      "clockRate, smCount, uuid, chipName, computeMajor, computeMinor, maxIPC, "
      "maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, "
      "maxRegistersPerSm, threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, "
      "memoryClockRate, memoryBusWidth FROM TARGET_INFO_GPU ORDER BY id");
  while (st.step()) {
    GpuInfoRecord r;
    int c = 0;
    r.id = st.columnInt(c++);
    r.name = st.columnText(c++);
    r.busLocation = st.columnText(c++);
    for (auto* f : {&r.isDiscrete, &r.l2CacheSize, &r.totalMemory, &r.memoryBandwidth, &r.clockRate,
                    &r.smCount}) {
      *f = st.columnInt(c++);
    }
    r.uuid = st.columnText(c++);
    r.chipName = st.columnText(c++);
    for (auto* f : {&r.computeMajor, &r.computeMinor, &r.maxIPC, &r.maxRegistersPerBlock,
                    &r.maxShmemPerBlock, &r.maxShmemPerBlockOptin, &r.maxShmemPerSm,
                    &r.maxRegistersPerSm, &r.threadsPerWarp, &r.maxWarpsPerSm, &r.maxBlocksPerSm,
                    &r.maxThreadsPerBlock, &r.memoryClockRate, &r.memoryBusWidth}) {
      *f = st.columnInt(c++);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ThreadNameRecord> TraceReader::threadNames() {
  std::vector<ThreadNameRecord> out;
  auto st = db_->prepare("SELECT nameId, priority, globalTid FROM ThreadNames ORDER BY rowid");
  while (st.step()) out.push_back({st.columnInt(0), st.columnInt(1), st.columnInt(2)});
  return out;
}

std::vector<CalibrationRecord> TraceReader::calibration() {
  std::vector<CalibrationRecord> out;
  // Traces of rlscope before 0.2 have no medianNs and spreadNs columns.
  bool robust = db_->prepare(
                       "SELECT 1 FROM pragma_table_info('rlscope_calibration') "
                       "WHERE name = 'medianNs'")
                    .step();
  auto st = db_->prepare(robust ? "SELECT source, name, meanNs, stdNs, count, medianNs, spreadNs "
                                  "FROM rlscope_calibration ORDER BY rowid"
                                : "SELECT source, name, meanNs, stdNs, count "
                                  "FROM rlscope_calibration ORDER BY rowid");
  while (st.step()) {
    CalibrationRecord r{std::string(st.columnText(0)), std::string(st.columnText(1)),
                        st.columnDouble(2), st.columnDouble(3), st.columnInt(4)};
    if (robust && !st.columnIsNull(5)) r.medianNs = st.columnDouble(5);
    if (robust && !st.columnIsNull(6)) r.spreadNs = st.columnDouble(6);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ExternalCorrelationRecord> TraceReader::externalCorrelations() {
  std::vector<ExternalCorrelationRecord> out;
  auto st = db_->prepare(
      "SELECT globalPid, correlationId, externalId FROM rlscope_external_correlation "
      "ORDER BY globalPid, correlationId");
  while (st.step()) out.push_back({st.columnInt(0), st.columnInt(1), st.columnInt(2)});
  return out;
}

void TraceReader::forEachCpuInterval(const EventFilter& f,
                                     const std::function<void(const CpuIntervalRecord&)>& fn) {
  CpuIntervalRecord r;
  query(table::kCpuIntervals, "start, end, globalTid, category, nameId, args", f,
        [&](Statement& st) {
          r.start = st.columnInt(0);
          r.end = st.columnInt(1);
          r.globalTid = st.columnInt(2);
          r.category = static_cast<Category>(st.columnInt(3));
          r.nameId = st.columnInt(4);
          r.args = st.columnText(5);
          fn(r);
        });
}

void TraceReader::readOperationTiming(Statement& st, OperationRecord& r) {
  r.id = st.columnInt(0);
  r.start = st.columnInt(1);
  r.end = st.columnInt(2);
  r.globalTid = st.columnInt(3);
  r.nameId = st.columnInt(4);
  r.parentId = st.columnInt(5);
  r.depth = static_cast<int>(st.columnInt(6));
}

void TraceReader::forEachOperation(const EventFilter& f,
                                   const std::function<void(const OperationRecord&)>& fn) {
  OperationRecord r;
  query(table::kOperations, std::string(kOperationTimingColumns) + ", source, args", f,
        [&](Statement& st) {
          readOperationTiming(st, r);
          r.source = static_cast<OperationSource>(st.columnInt(7));
          r.args = st.columnText(8);
          fn(r);
        });
}

void TraceReader::forEachPhase(const EventFilter& f,
                               const std::function<void(const PhaseRecord&)>& fn) {
  PhaseRecord r;
  query(table::kPhases, "start, end, globalPid, nameId", f, [&](Statement& st) {
    r.start = st.columnInt(0);
    r.end = st.columnInt(1);
    r.globalPid = st.columnInt(2);
    r.nameId = st.columnInt(3);
    fn(r);
  });
}

void TraceReader::forEachApiCall(ApiKind kind, const EventFilter& f,
                                 const std::function<void(const ApiCallRecord&)>& fn) {
  ApiCallRecord r;
  query(kind == ApiKind::kRuntime ? table::kRuntime : table::kDriver,
        "start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId, cbid",
        f, [&](Statement& st) {
          r.start = st.columnInt(0);
          r.end = st.columnInt(1);
          r.eventClass = st.columnInt(2);
          r.globalTid = st.columnInt(3);
          r.correlationId = st.columnInt(4);
          r.nameId = st.columnInt(5);
          r.returnValue = st.columnInt(6);
          r.callchainId = st.columnInt(7);
          r.cbid = st.columnInt(8);
          fn(r);
        });
}

void TraceReader::forEachKernel(const EventFilter& f,
                                const std::function<void(const KernelRecord&)>& fn) {
  KernelRecord r;
  query(table::kKernel,
        "start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, "
        "shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
        "localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, graphId",
        f, [&](Statement& st) {
          int c = 0;
          for (auto* v : {&r.start,
                          &r.end,
                          &r.deviceId,
                          &r.contextId,
                          &r.streamId,
                          &r.correlationId,
                          &r.globalPid,
                          &r.demangledName,
                          &r.shortName,
                          &r.mangledName,
                          &r.launchType,
                          &r.cacheConfig,
                          &r.registersPerThread,
                          &r.gridX,
                          &r.gridY,
                          &r.gridZ,
                          &r.blockX,
                          &r.blockY,
                          &r.blockZ,
                          &r.staticSharedMemory,
                          &r.dynamicSharedMemory,
                          &r.localMemoryPerThread,
                          &r.localMemoryTotal,
                          &r.gridId,
                          &r.sharedMemoryExecuted,
                          &r.graphNodeId,
                          &r.graphId}) {
            *v = st.columnInt(c++);
          }
          fn(r);
        });
}

void TraceReader::forEachMemcpy(const EventFilter& f,
                                const std::function<void(const MemcpyRecord&)>& fn) {
  MemcpyRecord r;
  query(table::kMemcpy,
        "start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, "
        "srcKind, dstKind, srcDeviceId, dstDeviceId, graphNodeId",
        f, [&](Statement& st) {
          int c = 0;
          for (auto* v : {&r.start, &r.end, &r.deviceId, &r.contextId, &r.streamId,
                          &r.correlationId, &r.globalPid, &r.bytes, &r.copyKind, &r.srcKind,
                          &r.dstKind, &r.srcDeviceId, &r.dstDeviceId, &r.graphNodeId}) {
            *v = st.columnInt(c++);
          }
          fn(r);
        });
}

void TraceReader::forEachMemset(const EventFilter& f,
                                const std::function<void(const MemsetRecord&)>& fn) {
  MemsetRecord r;
  query(
      table::kMemset,
      "start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes, "
      "memKind, graphNodeId",
      f, [&](Statement& st) {
        int c = 0;
        for (auto* v : {&r.start, &r.end, &r.deviceId, &r.contextId, &r.streamId, &r.correlationId,
                        &r.globalPid, &r.value, &r.bytes, &r.memKind, &r.graphNodeId}) {
          *v = st.columnInt(c++);
        }
        fn(r);
      });
}

void TraceReader::forEachSync(const EventFilter& f,
                              const std::function<void(const SyncRecord&)>& fn) {
  SyncRecord r;
  query(table::kSync,
        "start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId, "
        "eventSyncId",
        f, [&](Statement& st) {
          r.start = st.columnInt(0);
          r.end = st.columnInt(1);
          r.deviceId = st.columnInt(2);
          r.contextId = st.columnInt(3);
          r.streamId = st.columnInt(4);
          r.correlationId = st.columnInt(5);
          r.globalPid = st.columnInt(6);
          r.syncType = static_cast<SyncType>(st.columnInt(7));
          r.eventId = st.columnInt(8);
          r.eventSyncId = st.columnInt(9);
          fn(r);
        });
}

void TraceReader::forEachNvtx(const EventFilter& f,
                              const std::function<void(const NvtxRecord&)>& fn) {
  query(table::kNvtx,
        "start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, textId, "
        "domainId",
        f, [&](Statement& st) {
          NvtxRecord r;
          r.start = st.columnInt(0);
          if (!st.columnIsNull(1)) r.end = st.columnInt(1);
          r.eventType = static_cast<NvtxEventType>(st.columnInt(2));
          r.rangeId = st.columnInt(3);
          r.category = st.columnInt(4);
          if (!st.columnIsNull(5)) r.color = st.columnInt(5);
          r.text = st.columnText(6);
          r.globalTid = st.columnInt(7);
          r.endGlobalTid = st.columnInt(8);
          r.textId = st.columnInt(9);
          r.domainId = st.columnInt(10);
          fn(r);
        });
}

void TraceReader::forEachPlainEvent(const std::function<void(const PlainEventRecord&)>& fn) {
  PlainEventRecord r;
  query(table::kPlainEvents, "start, end, pid, tid, nameId, categoryId, phase, args", {},
        [&](Statement& st) {
          r.start = st.columnInt(0);
          r.end = st.columnInt(1);
          r.pid = st.columnAsText(2);
          r.tid = st.columnAsText(3);
          r.nameId = st.columnInt(4);
          r.categoryId = st.columnInt(5);
          r.phase = st.columnText(6);
          r.args = st.columnText(7);
          fn(r);
        });
}

}  // namespace rlscope::trace
