#include "rlscope/trace/writer.h"

#include <chrono>
#include <ctime>
#include <string>
#include <unordered_map>

#include "rlscope/trace/atomic_output.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"
#include "rlscope/trace/version.h"

namespace rlscope::trace {

namespace {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

std::string isoNowUtc() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::int64_t i64(int v) { return v; }

// "INSERT INTO table (a, b) VALUES (?, ?)" prepared once.
Statement prepareInsert(Database& db, std::string_view table,
                        std::initializer_list<std::string_view> columns,
                        std::string_view verb = "INSERT") {
  std::string sql = std::string(verb) + " INTO " + std::string(table) + " (";
  std::string params;
  for (auto c : columns) {
    if (!params.empty()) {
      sql += ", ";
      params += ", ";
    }
    sql += c;
    params += '?';
  }
  return db.prepare(sql + ") VALUES (" + params + ")");
}

Statement prepareApiInsert(Database& db, std::string_view table) {
  return prepareInsert(db, table,
                       {"start", "end", "eventClass", "globalTid", "correlationId", "nameId",
                        "returnValue", "callchainId", "cbid"});
}

// Opens the private file for fast bulk loading and creates the empty schema.
bool prepareDatabase(Database& db, const WriterOptions& options) {
  db.exec("PRAGMA page_size=16384");
  db.exec("PRAGMA journal_mode=WAL");
  // The file is private until commit renames it, so durability before then buys nothing.
  db.exec("PRAGMA synchronous=OFF");
  db.exec("PRAGMA temp_store=MEMORY");
  db.exec("PRAGMA cache_size=-" + std::to_string(options.cacheKiB));
  createSchema(db);
  db.exec("BEGIN");
  return true;
}

}  // namespace

struct TraceWriter::Impl {
  Impl(const std::filesystem::path& path, WriterOptions opts)
      : options(opts), output(path), db(output.tempPath(), Database::Mode::kCreate) {
    setMeta(meta::kSchemaVersion, std::to_string(kSchemaVersion));
    setMeta(meta::kRlscopeVersion, kRlscopeVersion);
    setMeta(meta::kCreatedAt, isoNowUtc());
  }

  void setMeta(std::string_view key, std::string_view value) {
    insertMeta.bind(1, key);
    insertMeta.bind(2, value);
    finishRow(insertMeta);
  }

  // Every insert ends here: run the statement and roll the transaction over when it is full.
  void finishRow(Statement& st) {
    st.run();
    ++rows;
    if (++rowsInTransaction >= options.rowsPerTransaction) {
      db.exec("COMMIT");
      db.exec("BEGIN");
      rowsInTransaction = 0;
    }
  }

  WriterOptions options;
  AtomicOutput output;
  Database db;
  bool ready = prepareDatabase(db, options);
  Statement insertString = prepareInsert(db, table::kStringIds, {"id", "value"});
  Statement insertMeta = prepareInsert(db, table::kMeta, {"key", "value"}, "INSERT OR REPLACE");
  Statement insertProcess =
      prepareInsert(db, table::kProcesses,
                    {"globalPid", "pid", "parentPid", "name", "commandLine", "start", "end",
                     "exitStatus"},
                    "INSERT OR REPLACE");
  Statement insertThread = prepareInsert(db, table::kThreads,
                                         {"globalTid", "globalPid", "tid", "name"},
                                         "INSERT OR REPLACE");
  Statement insertCpuInterval = prepareInsert(
      db, table::kCpuIntervals, {"start", "end", "globalTid", "category", "nameId", "args"});
  Statement insertOperation =
      prepareInsert(db, table::kOperations,
                    {"id", "start", "end", "globalTid", "nameId", "parentId", "depth", "source",
                     "args"});
  Statement insertPhase =
      prepareInsert(db, table::kPhases, {"start", "end", "globalPid", "nameId"});
  Statement insertPlainEvent =
      prepareInsert(db, table::kPlainEvents,
                    {"start", "end", "pid", "tid", "nameId", "categoryId", "phase", "args"});
  Statement insertExternalCorrelation = prepareInsert(
      db, table::kExternalCorrelation, {"globalPid", "correlationId", "externalId"});
  Statement insertCalibration =
      prepareInsert(db, table::kCalibration, {"source", "name", "meanNs", "stdNs", "count"});
  Statement insertKernel = prepareInsert(
      db, table::kKernel,
      {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
       "demangledName", "shortName", "mangledName", "launchType", "cacheConfig",
       "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
       "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread", "localMemoryTotal",
       "gridId", "sharedMemoryExecuted", "graphNodeId", "graphId"});
  Statement insertApi[2] = {prepareApiInsert(db, table::kRuntime),
                            prepareApiInsert(db, table::kDriver)};
  Statement insertMemcpy = prepareInsert(
      db, table::kMemcpy,
      {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
       "copyKind", "srcKind", "dstKind", "srcDeviceId", "dstDeviceId", "graphNodeId"});
  Statement insertMemset = prepareInsert(
      db, table::kMemset,
      {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "value",
       "bytes", "memKind", "graphNodeId"});
  Statement insertSync = prepareInsert(
      db, table::kSync,
      {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
       "syncType", "eventId"});
  Statement insertNvtx = prepareInsert(
      db, table::kNvtx,
      {"start", "end", "eventType", "rangeId", "category", "color", "text", "globalTid",
       "endGlobalTid", "textId", "domainId"});
  Statement insertThreadName =
      prepareInsert(db, table::kThreadNames, {"nameId", "priority", "globalTid"});
  Statement insertGpuInfo = prepareInsert(
      db, table::kGpuInfo,
      {"id", "name", "busLocation", "isDiscrete", "l2CacheSize", "totalMemory",
       "memoryBandwidth", "clockRate", "smCount", "uuid", "chipName", "computeMajor",
       "computeMinor", "maxIPC", "maxRegistersPerBlock", "maxShmemPerBlock",
       "maxShmemPerBlockOptin", "maxShmemPerSm", "maxRegistersPerSm", "threadsPerWarp",
       "maxWarpsPerSm", "maxBlocksPerSm", "maxThreadsPerBlock", "memoryClockRate",
       "memoryBusWidth"});
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> strings;
  StringId nextStringId = 1;
  std::uint64_t rows = 0;
  std::size_t rowsInTransaction = 0;
  bool committed = false;
};

TraceWriter::TraceWriter(const std::filesystem::path& path, WriterOptions options)
    : impl_(std::make_unique<Impl>(path, options)) {}

TraceWriter::~TraceWriter() = default;

std::uint64_t TraceWriter::rowsWritten() const { return impl_->rows; }
const std::filesystem::path& TraceWriter::path() const { return impl_->output.finalPath(); }

StringId TraceWriter::intern(std::string_view text) {
  auto it = impl_->strings.find(text);
  if (it != impl_->strings.end()) return it->second;
  StringId id = impl_->nextStringId++;
  impl_->strings.emplace(std::string(text), id);
  auto& st = impl_->insertString;
  st.bind(1, id);
  st.bind(2, text);
  impl_->finishRow(st);
  return id;
}

void TraceWriter::setMeta(std::string_view key, std::string_view value) {
  impl_->setMeta(key, value);
}

void TraceWriter::addProcess(const ProcessRecord& r) {
  auto& st = impl_->insertProcess;
  st.bind(1, r.globalPid);
  st.bind(2, r.pid);
  st.bind(3, r.parentPid);
  st.bindTextOrNull(4, r.name);
  st.bindTextOrNull(5, r.commandLine);
  if (r.start) st.bind(6, r.start);
  if (r.end) st.bind(7, r.end);
  if (r.exitStatus) st.bind(8, i64(*r.exitStatus));
  impl_->finishRow(st);
}

void TraceWriter::addThread(const ThreadRecord& r) {
  auto& st = impl_->insertThread;
  st.bind(1, r.globalTid);
  st.bind(2, r.globalPid);
  st.bind(3, r.tid);
  st.bindTextOrNull(4, r.name);
  impl_->finishRow(st);
}

void TraceWriter::addCpuInterval(const CpuIntervalRecord& r) {
  auto& st = impl_->insertCpuInterval;
  st.bind(1, r.start);
  st.bind(2, r.end);
  st.bind(3, r.globalTid);
  st.bind(4, i64(static_cast<int>(r.category)));
  if (r.nameId) st.bind(5, r.nameId);
  st.bindTextOrNull(6, r.args);
  impl_->finishRow(st);
}

void TraceWriter::addOperation(const OperationRecord& r) {
  auto& st = impl_->insertOperation;
  st.bind(1, r.id);
  st.bind(2, r.start);
  st.bind(3, r.end);
  st.bind(4, r.globalTid);
  st.bind(5, r.nameId);
  st.bind(6, r.parentId);
  st.bind(7, i64(r.depth));
  st.bind(8, i64(static_cast<int>(r.source)));
  st.bindTextOrNull(9, r.args);
  impl_->finishRow(st);
}

void TraceWriter::addPhase(const PhaseRecord& r) {
  auto& st = impl_->insertPhase;
  st.bind(1, r.start);
  st.bind(2, r.end);
  st.bind(3, r.globalPid);
  st.bind(4, r.nameId);
  impl_->finishRow(st);
}

namespace {
// Plain-event pid/tid keep the source's type: integers stay INTEGER, anything else is TEXT.
void bindLoose(Statement& st, int index, const std::string& value) {
  if (value.empty()) {
    st.bindNull(index);
    return;
  }
  std::size_t pos = 0;
  if (value[0] == '-') pos = 1;
  bool integral = pos < value.size() && value.size() - pos <= 18;
  for (std::size_t i = pos; integral && i < value.size(); ++i) {
    integral = value[i] >= '0' && value[i] <= '9';
  }
  if (integral && !(value.size() - pos > 1 && value[pos] == '0')) {
    st.bind(index, static_cast<std::int64_t>(std::stoll(value)));
  } else {
    st.bind(index, std::string_view(value));
  }
}
}  // namespace

void TraceWriter::addPlainEvent(const PlainEventRecord& r) {
  auto& st = impl_->insertPlainEvent;
  st.bind(1, r.start);
  st.bind(2, r.end);
  bindLoose(st, 3, r.pid);
  bindLoose(st, 4, r.tid);
  if (r.nameId) st.bind(5, r.nameId);
  if (r.categoryId) st.bind(6, r.categoryId);
  st.bind(7, std::string_view(r.phase));
  st.bindTextOrNull(8, r.args);
  impl_->finishRow(st);
}

void TraceWriter::addExternalCorrelation(const ExternalCorrelationRecord& r) {
  auto& st = impl_->insertExternalCorrelation;
  st.bind(1, r.globalPid);
  st.bind(2, r.correlationId);
  st.bind(3, r.externalId);
  impl_->finishRow(st);
}

void TraceWriter::addCalibration(const CalibrationRecord& r) {
  auto& st = impl_->insertCalibration;
  st.bind(1, std::string_view(r.source));
  st.bind(2, std::string_view(r.name));
  st.bind(3, r.meanNs);
  st.bind(4, r.stdNs);
  st.bind(5, r.count);
  impl_->finishRow(st);
}

void TraceWriter::addKernel(const KernelRecord& r) {
  auto& st = impl_->insertKernel;
  const std::int64_t values[] = {
      r.start, r.end, r.deviceId, r.contextId, r.streamId, r.correlationId, r.globalPid,
      r.demangledName, r.shortName, r.mangledName, r.launchType, r.cacheConfig,
      r.registersPerThread, r.gridX, r.gridY, r.gridZ, r.blockX, r.blockY, r.blockZ,
      r.staticSharedMemory, r.dynamicSharedMemory, r.localMemoryPerThread, r.localMemoryTotal,
      r.gridId, r.sharedMemoryExecuted, r.graphNodeId, r.graphId};
  int i = 1;
  for (auto v : values) st.bind(i++, v);
  if (!r.mangledName) st.bindNull(10);
  impl_->finishRow(st);
}

void TraceWriter::addApiCall(ApiKind kind, const ApiCallRecord& r) {
  auto& st = impl_->insertApi[kind == ApiKind::kRuntime ? 0 : 1];
  st.bind(1, r.start);
  st.bind(2, r.end);
  st.bind(3, r.eventClass);
  st.bind(4, r.globalTid);
  st.bind(5, r.correlationId);
  st.bind(6, r.nameId);
  st.bind(7, r.returnValue);
  if (r.callchainId) st.bind(8, r.callchainId);
  if (r.cbid) st.bind(9, r.cbid);
  impl_->finishRow(st);
}

void TraceWriter::addMemcpy(const MemcpyRecord& r) {
  auto& st = impl_->insertMemcpy;
  const std::int64_t values[] = {r.start,       r.end,         r.deviceId,      r.contextId,
                                 r.streamId,    r.correlationId, r.globalPid,  r.bytes,
                                 r.copyKind,    r.srcKind,     r.dstKind,       r.srcDeviceId,
                                 r.dstDeviceId, r.graphNodeId};
  int i = 1;
  for (auto v : values) st.bind(i++, v);
  impl_->finishRow(st);
}

void TraceWriter::addMemset(const MemsetRecord& r) {
  auto& st = impl_->insertMemset;
  const std::int64_t values[] = {r.start,     r.end,   r.deviceId, r.contextId,
                                 r.streamId,  r.correlationId, r.globalPid, r.value,
                                 r.bytes,     r.memKind, r.graphNodeId};
  int i = 1;
  for (auto v : values) st.bind(i++, v);
  impl_->finishRow(st);
}

void TraceWriter::addSync(const SyncRecord& r) {
  auto& st = impl_->insertSync;
  const std::int64_t values[] = {r.start,    r.end,           r.deviceId,
                                 r.contextId, r.streamId,     r.correlationId,
                                 r.globalPid, static_cast<std::int64_t>(r.syncType), r.eventId};
  int i = 1;
  for (auto v : values) st.bind(i++, v);
  impl_->finishRow(st);
}

void TraceWriter::addNvtx(const NvtxRecord& r) {
  auto& st = impl_->insertNvtx;
  st.bind(1, r.start);
  st.bindOptional(2, r.end);
  st.bind(3, i64(static_cast<int>(r.eventType)));
  st.bind(4, r.rangeId);
  st.bind(5, r.category);
  st.bindOptional(6, r.color);
  st.bindTextOrNull(7, r.text);
  st.bind(8, r.globalTid);
  if (r.endGlobalTid) st.bind(9, r.endGlobalTid);
  if (r.textId) st.bind(10, r.textId);
  st.bind(11, r.domainId);
  impl_->finishRow(st);
}

void TraceWriter::addThreadName(const ThreadNameRecord& r) {
  auto& st = impl_->insertThreadName;
  st.bind(1, r.nameId);
  st.bind(2, r.priority);
  st.bind(3, r.globalTid);
  impl_->finishRow(st);
}

void TraceWriter::addGpuInfo(const GpuInfoRecord& r) {
  auto& st = impl_->insertGpuInfo;
  st.bind(1, r.id);
  st.bindTextOrNull(2, r.name);
  st.bindTextOrNull(3, r.busLocation);
  const std::int64_t mid[] = {r.isDiscrete, r.l2CacheSize, r.totalMemory, r.memoryBandwidth,
                              r.clockRate, r.smCount};
  int i = 4;
  for (auto v : mid) st.bind(i++, v);
  st.bindTextOrNull(i++, r.uuid);
  st.bindTextOrNull(i++, r.chipName);
  const std::int64_t tail[] = {r.computeMajor,        r.computeMinor,   r.maxIPC,
                               r.maxRegistersPerBlock, r.maxShmemPerBlock, r.maxShmemPerBlockOptin,
                               r.maxShmemPerSm,       r.maxRegistersPerSm, r.threadsPerWarp,
                               r.maxWarpsPerSm,       r.maxBlocksPerSm, r.maxThreadsPerBlock,
                               r.memoryClockRate,     r.memoryBusWidth};
  for (auto v : tail) st.bind(i++, v);
  impl_->finishRow(st);
}

void TraceWriter::commit() {
  auto& impl = *impl_;
  if (impl.committed) return;
  impl.db.exec("COMMIT");
  createIndexes(impl.db);
  impl.db.exec("ANALYZE");
  // One self-contained file: fold the WAL back and leave the rollback journal mode.
  impl.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  impl.db.exec("PRAGMA journal_mode=DELETE");
  impl.db.close();
  impl.output.commit();
  impl.committed = true;
}

}  // namespace rlscope::trace
