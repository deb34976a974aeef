#include "rlscope/trace/writer.h"

#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <unordered_map>

#include "batched_insert.h"
#include "rlscope/trace/atomic_output.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"
#include "rlscope/trace/version.h"
#include "writer_thread.h"

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

std::int64_t i64(int v) {
  return v;
}

// Opens the private file for fast bulk loading and creates the empty schema.
bool prepareDatabase(Database& db, const WriterOptions& options) {
  db.exec("PRAGMA page_size=16384");
  db.exec("PRAGMA locking_mode=EXCLUSIVE");
  if (options.journal == WriterOptions::Journal::kWal) {
    db.exec("PRAGMA journal_mode=WAL");
  } else {
    // The file is private until commit() renames it into place, so a crash can only lose the
    // temporary file: a rollback journal would buy nothing and write every page twice.
    db.exec("PRAGMA journal_mode=OFF");
  }
  db.exec("PRAGMA synchronous=OFF");
  // Bounded memory: the page cache is capped, and index sorts spill to temporary files.
  db.exec("PRAGMA temp_store=FILE");
  db.exec("PRAGMA cache_size=-" + std::to_string(options.cacheKiB));
  createSchema(db);
  if (options.indexing == WriterOptions::Indexing::kDuringLoad) createIndexes(db);
  db.exec("BEGIN");
  return true;
}

// Text columns: empty means NULL.
void setTextOrNull(BatchedInsert& ins, int column, std::string_view text) {
  if (!text.empty()) ins.set(column, text);
}

// Plain-event pid/tid keep the source's type: integers stay INTEGER, anything else is TEXT.
void setLoose(BatchedInsert& ins, int column, const std::string& value) {
  if (value.empty()) return;
  std::size_t pos = value[0] == '-' ? 1 : 0;
  bool integral = pos < value.size() && value.size() - pos <= 18 &&
                  !(value.size() - pos > 1 && value[pos] == '0');
  for (std::size_t i = pos; integral && i < value.size(); ++i) {
    integral = value[i] >= '0' && value[i] <= '9';
  }
  if (integral) {
    ins.set(column, static_cast<std::int64_t>(std::stoll(value)));
  } else {
    ins.set(column, std::string_view(value));
  }
}

// Sets consecutive integer columns starting at `first`.
void setInts(BatchedInsert& ins, int first, std::initializer_list<std::int64_t> values) {
  for (auto v : values) ins.set(first++, v);
}

}  // namespace

struct TraceWriter::Impl {
  Impl(const std::filesystem::path& path, WriterOptions opts)
      : options(opts), output(path), db(output.tempPath(), Database::Mode::kCreate) {
    setMeta(meta::kSchemaVersion, std::to_string(kSchemaVersion));
    setMeta(meta::kRlscopeVersion, kRlscopeVersion);
    setMeta(meta::kCreatedAt, isoNowUtc());
  }

  ~Impl() { worker.stop(); }

  void setMeta(std::string_view key, std::string_view value) {
    worker.post([this, k = std::string(key), v = std::string(value)] {
      insertMeta.bind(1, k);
      insertMeta.bind(2, v);
      insertMeta.run();
    });
  }

  // Every staged row ends here: the transaction rolls over when it is full, which bounds the
  // pages SQLite holds for it.
  void endRow(BatchedInsert& ins) {
    ins.endRow();
    ++rows;
    if (++rowsInTransaction >= options.rowsPerTransaction) {
      flushAll();
      worker.post([this] {
        db.exec("COMMIT");
        db.exec("BEGIN");
      });
      rowsInTransaction = 0;
    }
  }

  void flushAll() {
    for (auto* ins :
         {&strings, &processes, &processIdentities, &threads, &cpuIntervals, &operations, &phases,
          &plainEvents, &externalCorrelations, &calibrations, &kernels, &apiCalls[0], &apiCalls[1],
          &memcpys, &memsets, &syncs, &nvtx, &threadNames, &gpuInfo}) {
      ins->flush();
    }
  }

  WriterOptions options;
  AtomicOutput output;
  Database db;
  bool ready = prepareDatabase(db, options);
  // Metadata is set rarely and may be replaced: one row at a time.
  Statement insertMeta =
      db.prepare("INSERT OR REPLACE INTO rlscope_meta (key, value) VALUES (?, ?)");
  // Declared before the inserts that post to it; ~Impl stops it before anything is destroyed.
  WriterThread worker;
  BatchedInsert strings{db, worker, "INSERT", table::kStringIds, {"id", "value"}};
  BatchedInsert processes{
      db,
      worker,
      "INSERT OR REPLACE",
      table::kProcesses,
      {"globalPid", "pid", "parentPid", "name", "commandLine", "start", "end", "exitStatus"}};
  BatchedInsert processIdentities{
      db,
      worker,
      "INSERT OR REPLACE",
      table::kProcessIdentity,
      {"globalPid", "host", "launcher", "rank", "localRank", "worldSize", "localWorldSize",
       "nodeRank", "backend", "variables"}};
  BatchedInsert threads{
      db, worker, "INSERT OR REPLACE", table::kThreads, {"globalTid", "globalPid", "tid", "name"}};
  BatchedInsert cpuIntervals{
      db,
      worker,
      "INSERT",
      table::kCpuIntervals,
      {"start", "end", "globalTid", "category", "nameId", "args", "pythonEvents"}};
  BatchedInsert operations{
      db,
      worker,
      "INSERT",
      table::kOperations,
      {"id", "start", "end", "globalTid", "nameId", "parentId", "depth", "source", "args"}};
  BatchedInsert phases{
      db, worker, "INSERT", table::kPhases, {"start", "end", "globalPid", "nameId"}};
  BatchedInsert plainEvents{
      db,
      worker,
      "INSERT",
      table::kPlainEvents,
      {"start", "end", "pid", "tid", "nameId", "categoryId", "phase", "args"}};
  BatchedInsert externalCorrelations{db,
                                     worker,
                                     "INSERT",
                                     table::kExternalCorrelation,
                                     {"globalPid", "correlationId", "externalId"}};
  BatchedInsert calibrations{
      db,
      worker,
      "INSERT",
      table::kCalibration,
      {"source", "name", "meanNs", "stdNs", "count", "medianNs", "spreadNs"}};
  BatchedInsert kernels{db,
                        worker,
                        "INSERT",
                        table::kKernel,
                        {"start",
                         "end",
                         "deviceId",
                         "contextId",
                         "streamId",
                         "correlationId",
                         "globalPid",
                         "demangledName",
                         "shortName",
                         "mangledName",
                         "launchType",
                         "cacheConfig",
                         "registersPerThread",
                         "gridX",
                         "gridY",
                         "gridZ",
                         "blockX",
                         "blockY",
                         "blockZ",
                         "staticSharedMemory",
                         "dynamicSharedMemory",
                         "localMemoryPerThread",
                         "localMemoryTotal",
                         "gridId",
                         "sharedMemoryExecuted",
                         "graphNodeId",
                         "graphId"}};
  BatchedInsert apiCalls[2] = {{db,
                                worker,
                                "INSERT",
                                table::kRuntime,
                                {"start", "end", "eventClass", "globalTid", "correlationId",
                                 "nameId", "returnValue", "callchainId", "cbid"}},
                               {db,
                                worker,
                                "INSERT",
                                table::kDriver,
                                {"start", "end", "eventClass", "globalTid", "correlationId",
                                 "nameId", "returnValue", "callchainId", "cbid"}}};
  BatchedInsert memcpys{
      db,
      worker,
      "INSERT",
      table::kMemcpy,
      {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
       "copyKind", "srcKind", "dstKind", "srcDeviceId", "dstDeviceId", "graphNodeId"}};
  BatchedInsert memsets{db,
                        worker,
                        "INSERT",
                        table::kMemset,
                        {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                         "globalPid", "value", "bytes", "memKind", "graphNodeId"}};
  BatchedInsert syncs{db,
                      worker,
                      "INSERT",
                      table::kSync,
                      {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                       "globalPid", "syncType", "eventId", "eventSyncId"}};
  BatchedInsert nvtx{db,
                     worker,
                     "INSERT",
                     table::kNvtx,
                     {"start", "end", "eventType", "rangeId", "category", "color", "text",
                      "globalTid", "endGlobalTid", "textId", "domainId", "uint64Value",
                      "int64Value", "doubleValue", "uint32Value", "int32Value", "floatValue"}};
  BatchedInsert threadNames{
      db, worker, "INSERT", table::kThreadNames, {"nameId", "priority", "globalTid"}};
  BatchedInsert gpuInfo{db,
                        worker,
                        "INSERT",
                        table::kGpuInfo,
                        {"id",
                         "name",
                         "busLocation",
                         "isDiscrete",
                         "l2CacheSize",
                         "totalMemory",
                         "memoryBandwidth",
                         "clockRate",
                         "smCount",
                         "uuid",
                         "chipName",
                         "computeMajor",
                         "computeMinor",
                         "maxIPC",
                         "maxRegistersPerBlock",
                         "maxShmemPerBlock",
                         "maxShmemPerBlockOptin",
                         "maxShmemPerSm",
                         "maxRegistersPerSm",
                         "threadsPerWarp",
                         "maxWarpsPerSm",
                         "maxBlocksPerSm",
                         "maxThreadsPerBlock",
                         "memoryClockRate",
                         "memoryBusWidth"}};
  // UPDATEs of setGpuLaunch() per GpuTable, prepared on the writer thread when first needed.
  std::optional<Statement> gpuLaunchUpdates[4];
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> internTable;
  StringId nextStringId = 1;
  std::uint64_t rows = 0;
  std::size_t rowsInTransaction = 0;
  bool committed = false;
};

TraceWriter::TraceWriter(const std::filesystem::path& path, WriterOptions options)
    : impl_(std::make_unique<Impl>(path, options)) {}

TraceWriter::~TraceWriter() = default;

std::uint64_t TraceWriter::rowsWritten() const {
  return impl_->rows;
}
const std::filesystem::path& TraceWriter::path() const {
  return impl_->output.finalPath();
}

StringId TraceWriter::intern(std::string_view text) {
  auto it = impl_->internTable.find(text);
  if (it != impl_->internTable.end()) return it->second;
  StringId id = impl_->nextStringId++;
  impl_->internTable.emplace(std::string(text), id);
  auto& ins = impl_->strings;
  ins.set(0, id);
  ins.set(1, text);
  impl_->endRow(ins);
  return id;
}

void TraceWriter::setMeta(std::string_view key, std::string_view value) {
  impl_->setMeta(key, value);
}

void TraceWriter::addProcess(const ProcessRecord& r) {
  auto& ins = impl_->processes;
  setInts(ins, 0, {r.globalPid, r.pid, r.parentPid});
  setTextOrNull(ins, 3, r.name);
  setTextOrNull(ins, 4, r.commandLine);
  if (r.start) ins.set(5, r.start);
  if (r.end) ins.set(6, r.end);
  if (r.exitStatus) ins.set(7, i64(*r.exitStatus));
  impl_->endRow(ins);
}

void TraceWriter::addProcessIdentity(const ProcessIdentityRecord& r) {
  auto& ins = impl_->processIdentities;
  ins.set(0, r.globalPid);
  setTextOrNull(ins, 1, r.host);
  setTextOrNull(ins, 2, r.launcher);
  int column = 3;
  for (const auto& v : {r.rank, r.localRank, r.worldSize, r.localWorldSize, r.nodeRank}) {
    if (v) ins.set(column, *v);
    ++column;
  }
  setTextOrNull(ins, 8, r.backend);
  setTextOrNull(ins, 9, r.variables);
  impl_->endRow(ins);
}

void TraceWriter::addThread(const ThreadRecord& r) {
  auto& ins = impl_->threads;
  setInts(ins, 0, {r.globalTid, r.globalPid, r.tid});
  setTextOrNull(ins, 3, r.name);
  impl_->endRow(ins);
}

void TraceWriter::addCpuInterval(const CpuIntervalRecord& r) {
  auto& ins = impl_->cpuIntervals;
  setInts(ins, 0, {r.start, r.end, r.globalTid, i64(static_cast<int>(r.category))});
  if (r.nameId) ins.set(4, r.nameId);
  setTextOrNull(ins, 5, r.args);
  if (r.pythonEvents) ins.set(6, r.pythonEvents);
  impl_->endRow(ins);
}

void TraceWriter::addOperation(const OperationRecord& r) {
  auto& ins = impl_->operations;
  setInts(ins, 0,
          {r.id, r.start, r.end, r.globalTid, r.nameId, r.parentId, i64(r.depth),
           i64(static_cast<int>(r.source))});
  setTextOrNull(ins, 8, r.args);
  impl_->endRow(ins);
}

void TraceWriter::addPhase(const PhaseRecord& r) {
  auto& ins = impl_->phases;
  setInts(ins, 0, {r.start, r.end, r.globalPid, r.nameId});
  impl_->endRow(ins);
}

void TraceWriter::addPlainEvent(const PlainEventRecord& r) {
  auto& ins = impl_->plainEvents;
  setInts(ins, 0, {r.start, r.end});
  setLoose(ins, 2, r.pid);
  setLoose(ins, 3, r.tid);
  if (r.nameId) ins.set(4, r.nameId);
  if (r.categoryId) ins.set(5, r.categoryId);
  ins.set(6, std::string_view(r.phase));
  setTextOrNull(ins, 7, r.args);
  impl_->endRow(ins);
}

void TraceWriter::addExternalCorrelation(const ExternalCorrelationRecord& r) {
  auto& ins = impl_->externalCorrelations;
  setInts(ins, 0, {r.globalPid, r.correlationId, r.externalId});
  impl_->endRow(ins);
}

void TraceWriter::addCalibration(const CalibrationRecord& r) {
  auto& ins = impl_->calibrations;
  ins.set(0, std::string_view(r.source));
  ins.set(1, std::string_view(r.name));
  ins.set(2, r.meanNs);
  ins.set(3, r.stdNs);
  ins.set(4, r.count);
  for (auto [column, value] : {std::pair{5, r.medianNs}, std::pair{6, r.spreadNs}}) {
    if (value)
      ins.set(column, *value);
    else
      ins.setNull(column);
  }
  impl_->endRow(ins);
}

void TraceWriter::addKernel(const KernelRecord& r) {
  auto& ins = impl_->kernels;
  setInts(ins, 0,
          {r.start,
           r.end,
           r.deviceId,
           r.contextId,
           r.streamId,
           r.correlationId,
           r.globalPid,
           r.demangledName,
           r.shortName,
           r.mangledName,
           r.launchType,
           r.cacheConfig,
           r.registersPerThread,
           r.gridX,
           r.gridY,
           r.gridZ,
           r.blockX,
           r.blockY,
           r.blockZ,
           r.staticSharedMemory,
           r.dynamicSharedMemory,
           r.localMemoryPerThread,
           r.localMemoryTotal,
           r.gridId,
           r.sharedMemoryExecuted,
           r.graphNodeId,
           r.graphId});
  if (!r.mangledName) ins.setNull(9);
  impl_->endRow(ins);
}

void TraceWriter::addApiCall(ApiKind kind, const ApiCallRecord& r) {
  auto& ins = impl_->apiCalls[kind == ApiKind::kRuntime ? 0 : 1];
  setInts(ins, 0,
          {r.start, r.end, r.eventClass, r.globalTid, r.correlationId, r.nameId, r.returnValue});
  if (r.callchainId) ins.set(7, r.callchainId);
  if (r.cbid) ins.set(8, r.cbid);
  impl_->endRow(ins);
}

void TraceWriter::addMemcpy(const MemcpyRecord& r) {
  auto& ins = impl_->memcpys;
  setInts(ins, 0,
          {r.start, r.end, r.deviceId, r.contextId, r.streamId, r.correlationId, r.globalPid,
           r.bytes, r.copyKind, r.srcKind, r.dstKind, r.srcDeviceId, r.dstDeviceId, r.graphNodeId});
  impl_->endRow(ins);
}

void TraceWriter::addMemset(const MemsetRecord& r) {
  auto& ins = impl_->memsets;
  setInts(ins, 0,
          {r.start, r.end, r.deviceId, r.contextId, r.streamId, r.correlationId, r.globalPid,
           r.value, r.bytes, r.memKind, r.graphNodeId});
  impl_->endRow(ins);
}

void TraceWriter::addSync(const SyncRecord& r) {
  auto& ins = impl_->syncs;
  setInts(ins, 0,
          {r.start, r.end, r.deviceId, r.contextId, r.streamId, r.correlationId, r.globalPid,
           static_cast<std::int64_t>(r.syncType), r.eventId, r.eventSyncId});
  impl_->endRow(ins);
}

namespace {

// The payload into its column of the six that start at `first` (NVTX_EVENTS' order: uint64,
// int64, double, uint32, int32, float). uint64 values above INT64_MAX keep their bits.
void setNvtxPayload(BatchedInsert& ins, int first, NvtxPayloadType type, std::uint64_t bits) {
  auto as = [&](auto value) {
    std::memcpy(&value, &bits, sizeof value);
    return value;
  };
  switch (type) {
    case NvtxPayloadType::kUint64:
      ins.set(first, static_cast<std::int64_t>(bits));
      break;
    case NvtxPayloadType::kInt64:
      ins.set(first + 1, as(std::int64_t{}));
      break;
    case NvtxPayloadType::kDouble:
      ins.set(first + 2, as(double{}));
      break;
    case NvtxPayloadType::kUint32:
      ins.set(first + 3, std::int64_t{as(std::uint32_t{})});
      break;
    case NvtxPayloadType::kInt32:
      ins.set(first + 4, std::int64_t{as(std::int32_t{})});
      break;
    case NvtxPayloadType::kFloat:
      ins.set(first + 5, double{as(float{})});
      break;
    case NvtxPayloadType::kNone:
      break;
  }
}

}  // namespace

void TraceWriter::addNvtx(const NvtxRecord& r) {
  auto& ins = impl_->nvtx;
  ins.set(0, r.start);
  if (r.end) ins.set(1, *r.end);
  setInts(ins, 2, {i64(static_cast<int>(r.eventType)), r.rangeId, r.category});
  if (r.color) ins.set(5, *r.color);
  setTextOrNull(ins, 6, r.text);
  ins.set(7, r.globalTid);
  if (r.endGlobalTid) ins.set(8, r.endGlobalTid);
  if (r.textId) ins.set(9, r.textId);
  ins.set(10, r.domainId);
  setNvtxPayload(ins, 11, r.payloadType, r.payloadBits);
  impl_->endRow(ins);
}

void TraceWriter::addThreadName(const ThreadNameRecord& r) {
  auto& ins = impl_->threadNames;
  setInts(ins, 0, {r.nameId, r.priority, r.globalTid});
  impl_->endRow(ins);
}

void TraceWriter::addGpuInfo(const GpuInfoRecord& r) {
  auto& ins = impl_->gpuInfo;
  ins.set(0, r.id);
  setTextOrNull(ins, 1, r.name);
  setTextOrNull(ins, 2, r.busLocation);
  setInts(ins, 3,
          {r.isDiscrete, r.l2CacheSize, r.totalMemory, r.memoryBandwidth, r.clockRate, r.smCount});
  setTextOrNull(ins, 9, r.uuid);
  setTextOrNull(ins, 10, r.chipName);
  setInts(ins, 11,
          {r.computeMajor, r.computeMinor, r.maxIPC, r.maxRegistersPerBlock, r.maxShmemPerBlock,
           r.maxShmemPerBlockOptin, r.maxShmemPerSm, r.maxRegistersPerSm, r.threadsPerWarp,
           r.maxWarpsPerSm, r.maxBlocksPerSm, r.maxThreadsPerBlock, r.memoryClockRate,
           r.memoryBusWidth});
  impl_->endRow(ins);
}

void TraceWriter::setGpuLaunch(GpuTable which, std::int64_t row, std::int64_t globalPid,
                               std::int64_t correlationId) {
  auto& impl = *impl_;
  BatchedInsert* ins = &impl.kernels;
  std::string_view name = table::kKernel;
  if (which == GpuTable::kMemcpy) {
    ins = &impl.memcpys;
    name = table::kMemcpy;
  } else if (which == GpuTable::kMemset) {
    ins = &impl.memsets;
    name = table::kMemset;
  } else if (which == GpuTable::kSync) {
    ins = &impl.syncs;
    name = table::kSync;
  }
  ins->flush();  // the row may still be staged; the writer thread runs tasks in order
  impl.worker.post([&impl, t = static_cast<int>(which), name, row, globalPid, correlationId] {
    auto& st = impl.gpuLaunchUpdates[t];
    if (!st) {
      std::string sql = "UPDATE ";
      sql += name;
      sql += " SET globalPid = ?, correlationId = ? WHERE rowid = ?";
      st.emplace(impl.db.prepare(sql));
    }
    st->bind(1, globalPid);
    st->bind(2, correlationId);
    st->bind(3, row);
    st->run();
  });
}

void TraceWriter::commit() {
  auto& impl = *impl_;
  if (impl.committed) return;
  impl.flushAll();
  impl.worker.post([&impl] { impl.db.exec("COMMIT"); });
  impl.worker.drain();
  impl.worker.stop();  // the database is this thread's again
  if (impl.options.indexing == WriterOptions::Indexing::kAtCommit) createIndexes(impl.db);
  // Statistics for the query planner from a sample: a full ANALYZE would scan every index.
  impl.db.exec("PRAGMA analysis_limit=1000");
  impl.db.exec("ANALYZE");
  if (impl.options.journal == WriterOptions::Journal::kWal) {
    // One self-contained file: fold the WAL back and leave WAL mode.
    impl.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    impl.db.exec("PRAGMA journal_mode=DELETE");
  }
  impl.db.close();
  impl.output.commit();
  impl.committed = true;
}

}  // namespace rlscope::trace
