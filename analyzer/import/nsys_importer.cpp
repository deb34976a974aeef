#include "rlscope/import/nsys_importer.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/input_path.h"
#include "rlscope/trace/operation_nesting.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::import {

namespace {

using trace::Database;
using trace::StringId;
using trace::TimeNs;
using trace::TraceError;

constexpr std::uint64_t kProgressInterval = 1'000'000;
constexpr int kSupportedMajor = 3;
constexpr std::string_view kVersionMetaKey = "nsys_export_schema_version";
constexpr std::string_view kUnnamedRange = "(unnamed)";

// nsys tables that rlscope traces do not have.
constexpr std::string_view kMetaExportTable = "META_DATA_EXPORT";

// The tables that make an SQLite database an nsys export (one is enough: exports of a run
// without CUDA have no CUPTI tables, old ones no META_DATA_EXPORT).
bool hasExportTables(Database& db) {
  return db.hasTable(kMetaExportTable) || db.hasTable(trace::table::kNvtx) ||
         db.hasTable(trace::table::kGpuInfo) ||
         db.queryInt(
               "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND "
               "name GLOB 'CUPTI_ACTIVITY_KIND_*'")
                 .value_or(0) > 0;
}

Match matchNsys(const InputSample& s) {
  if (!s.sqlite) return Match::kNo;
  return hasExportTables(*s.sqlite) ? Match::kYes : Match::kMaybe;
}

constexpr std::string_view kProcessesTable = "PROCESSES";
constexpr std::string_view kSessionStartTable = "TARGET_INFO_SESSION_START_TIME";

// "1 row", "3 rows".
std::string counted(std::uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

struct SchemaVersion {
  int major = 0;
  int minor = 0;
  int micro = 0;
};

// "3", "3.11" or "3.11.0"; nullopt for anything else.
std::optional<SchemaVersion> parseVersion(std::string_view text) {
  int parts[3] = {0, 0, 0};
  int count = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (count < 3) {
    auto [next, ec] = std::from_chars(p, end, parts[count]);
    if (ec != std::errc() || next == p || parts[count] < 0) return std::nullopt;
    ++count;
    p = next;
    if (p == end) break;
    if (*p != '.') return std::nullopt;
    ++p;
  }
  if (p != end) return std::nullopt;
  return SchemaVersion{parts[0], parts[1], parts[2]};
}

// Reads the named columns of a table; a column the export lacks (nsys adds and renames columns
// between versions) is selected as NULL so callers see it as absent. Column 0 is the rowid, used
// to name bad rows in errors.
class TableScan {
 public:
  TableScan(Database& db, std::string_view table, std::span<const std::string_view> columns)
      : statement_(db.prepare(buildSql(db, table, columns))) {}

  bool step() { return statement_.step(); }
  std::int64_t rowid() const { return statement_.columnInt(0); }
  bool isNull(int col) const { return statement_.columnIsNull(col + 1); }
  std::int64_t integer(int col) const { return statement_.columnInt(col + 1); }
  std::string_view text(int col) const { return statement_.columnText(col + 1); }
  std::string anyText(int col) const { return statement_.columnAsText(col + 1); }
  // Overwrites `out` only for a non-NULL value, so the record's default stays otherwise.
  void get(int col, std::int64_t& out) const {
    if (!isNull(col)) out = integer(col);
  }

 private:
  static std::string buildSql(Database& db, std::string_view table,
                              std::span<const std::string_view> columns) {
    std::string sql = "SELECT rowid";
    for (auto c : columns) {
      sql += ", ";
      sql += db.hasColumn(table, c) ? trace::quotedIdentifier(c) : std::string("NULL");
    }
    return sql + " FROM " + trace::quotedIdentifier(table);
  }

  trace::Statement statement_;
};

// Old (export) string id -> new (trace) string id. Dense ids, the usual case, use a vector.
class StringMap {
 public:
  void configure(std::int64_t minId, std::int64_t maxId, std::int64_t count) {
    if (count > 0 && minId >= 0 && maxId >= minId && maxId - minId <= 2 * count + 1024) {
      base_ = minId;
      dense_.assign(static_cast<std::size_t>(maxId - minId + 1), kUnmapped);
    }
  }

  void add(std::int64_t oldId, StringId newId) {
    if (!dense_.empty() && oldId >= base_ && oldId - base_ < std::ssize(dense_)) {
      dense_[static_cast<std::size_t>(oldId - base_)] = newId;
    } else {
      sparse_[oldId] = newId;
    }
  }

  // kNoString for an id the export's StringIds lacks (counted, except 0 which nsys uses as
  // "none" when StringIds has no row 0).
  StringId map(std::int64_t oldId) {
    if (!dense_.empty() && oldId >= base_ && oldId - base_ < std::ssize(dense_)) {
      StringId id = dense_[static_cast<std::size_t>(oldId - base_)];
      if (id != kUnmapped) return id;
    } else if (auto it = sparse_.find(oldId); it != sparse_.end()) {
      return it->second;
    }
    if (oldId != 0) ++unknown_;
    return trace::kNoString;
  }

  std::uint64_t unknownReferences() const { return unknown_; }

 private:
  static constexpr StringId kUnmapped = -1;
  std::int64_t base_ = 0;
  std::vector<StringId> dense_;
  std::unordered_map<std::int64_t, StringId> sparse_;
  std::uint64_t unknown_ = 0;
};

// A column copied as an integer into a record field; `isString` columns hold StringIds ids.
template <class Record>
struct Field {
  std::string_view column;
  std::int64_t Record::*member = nullptr;  // nullptr: the caller's `extra` reads the column
  bool isString = false;
};

// Which process/thread a table's rows belong to.
enum class Owner { kProcess, kThread };

class NsysImporter {
 public:
  NsysImporter(const std::filesystem::path& input, trace::TraceWriter& writer,
               const ImportOptions& options, ImportStats& stats)
      : input_(input), name_(input.string()), writer_(writer), options_(options), stats_(stats) {}

  void run() {
    checkFile();
    db_.emplace(input_, Database::Mode::kReadOnlyUntrusted);
    checkIsNsysExport();
    readSchemaVersion();
    writer_.setMeta(trace::meta::kSourceFormat, "nsys");
    readSessionStart();

    auto threadNames = readThreadNames();
    importStrings();
    writeThreadNames(threadNames);

    copyKernels();
    copyApiCalls(trace::ApiKind::kRuntime);
    copyApiCalls(trace::ApiKind::kDriver);
    copyMemcpy();
    copyMemset();
    copySync();
    copyNvtx();
    copyGpus();

    writeOperations();
    writeProcessesAndThreads();
    finishWarnings();
  }

 private:
  // --- checks -----------------------------------------------------------------------------------

  [[noreturn]] void fail(const std::string& what) const { throw TraceError(name_ + ": " + what); }

  void checkFile() {
    auto size = trace::requireInputFile(input_);
    if (size > options_.maxInputBytes) {
      fail("file is " + std::to_string(size) + " bytes, larger than the import limit of " +
           std::to_string(options_.maxInputBytes) + " bytes");
    }
    if (!trace::looksLikeSqlite(input_)) {
      fail("not an Nsight Systems SQLite export (not an SQLite database)");
    }
    stats_.format = nsysFormat().name;
    stats_.inputBytes = size;
  }

  Database& db() { return *db_; }

  void checkIsNsysExport() {
    if (db().hasTable(trace::table::kMeta)) {
      fail("is already an rlscope trace, not an Nsight Systems export");
    }
    if (!hasExportTables(db())) {
      fail(
          "not an Nsight Systems SQLite export (none of META_DATA_EXPORT, "
          "CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, TARGET_INFO_GPU)");
    }
    if (!db().hasTable(trace::table::kStringIds)) {
      fail("corrupt Nsight Systems export: required table StringIds is missing");
    }
  }

  void requireColumns(std::string_view table, std::initializer_list<std::string_view> columns) {
    for (auto c : columns) {
      if (!db().hasColumn(table, c)) {
        fail("table " + std::string(table) + " has no column '" + std::string(c) +
             "' (not an Nsight Systems 3.x export?)");
      }
    }
  }

  void readSchemaVersion() {
    std::optional<std::string> version;
    if (db().hasTable(kMetaExportTable) && db().hasColumn(kMetaExportTable, "name") &&
        db().hasColumn(kMetaExportTable, "value")) {
      auto st = db().prepare(
          "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION' LIMIT 1");
      if (st.step() && !st.columnIsNull(0)) version = st.columnAsText(0);
    }
    if (!version) {
      stats_.warnings.push_back("no EXPORT_SCHEMA_VERSION in META_DATA_EXPORT; read as schema 3.x");
      return;
    }
    auto parsed = parseVersion(*version);
    if (!parsed) fail("invalid Nsight Systems EXPORT_SCHEMA_VERSION '" + *version + "'");
    if (parsed->major != kSupportedMajor) {
      fail("Nsight Systems export schema " + *version + " is not supported (rlscope reads " +
           std::to_string(kSupportedMajor) + ".x)");
    }
    writer_.setMeta(kVersionMetaKey, *version);
  }

  // nsys times count from the session start; its wall-clock time is rlscope's start_wall_ns.
  void readSessionStart() {
    if (!db().hasTable(kSessionStartTable) || !db().hasColumn(kSessionStartTable, "utcEpochNs")) {
      return;
    }
    auto ns = db().queryInt("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
    if (ns && *ns > 0) writer_.setMeta(trace::meta::kStartWallNs, std::to_string(*ns));
  }

  // Rows must have a start, and an end not before it; a negative start (before the capture
  // range) is kept but counted.
  TimeNs requireStart(std::string_view table, const TableScan& scan, int col) {
    if (scan.isNull(col)) rowError(table, scan, "has no start");
    return scan.integer(col);
  }

  void checkTimes(std::string_view table, const TableScan& scan, TimeNs start,
                  std::optional<TimeNs> end) {
    if (end && *end < start) {
      rowError(table, scan,
               "ends before it starts (start " + std::to_string(start) + ", end " +
                   std::to_string(*end) + ")");
    }
    if (start < 0) ++negativeStarts_;
  }

  [[noreturn]] void rowError(std::string_view table, const TableScan& scan,
                             const std::string& what) {
    fail(std::string(table) + " row " + std::to_string(scan.rowid()) + " " + what);
  }

  // --- bookkeeping ------------------------------------------------------------------------------

  void countRow(bool isEvent) {
    if (isEvent) ++stats_.events;
    if (++rowsRead_ % kProgressInterval == 0 && options_.progress) {
      options_.progress("nsys import: " + std::to_string(rowsRead_) + " rows read");
    }
  }

  void noteProcess(std::int64_t globalPid) {
    if (globalPid == 0 || globalPid == lastPid_) return;
    lastPid_ = globalPid;
    pids_.insert(globalPid);
  }

  void noteThread(std::int64_t globalTid) {
    if (globalTid == 0 || globalTid == lastTid_) return;
    lastTid_ = globalTid;
    tids_.insert(globalTid);
  }

  // writer.intern, counting the StringIds rows it adds.
  StringId intern(std::string_view text) {
    auto before = writer_.rowsWritten();
    StringId id = writer_.intern(text);
    stringsWritten_ += writer_.rowsWritten() - before;
    return id;
  }

  // --- strings and thread names -----------------------------------------------------------------

  void importStrings() {
    requireColumns(trace::table::kStringIds, {"id", "value"});
    {
      auto st = db().prepare("SELECT MIN(id), MAX(id), COUNT(*) FROM StringIds");
      if (st.step()) strings_.configure(st.columnInt(0), st.columnInt(1), st.columnInt(2));
    }
    auto st = db().prepare("SELECT id, value FROM StringIds");
    while (st.step()) {
      countRow(false);
      if (st.columnIsNull(0)) continue;
      std::int64_t oldId = st.columnInt(0);
      std::string_view value = st.columnText(1);
      strings_.add(oldId, intern(value));
      if (auto it = threadNameText_.find(oldId); it != threadNameText_.end()) {
        it->second = std::string(value);
      }
    }
  }

  struct ThreadNameRow {
    std::int64_t nameId = 0;  // export's id
    std::int64_t priority = 0;
    std::int64_t globalTid = 0;
  };

  // Read before StringIds so that the names' texts can be caught while strings stream by.
  std::vector<ThreadNameRow> readThreadNames() {
    std::vector<ThreadNameRow> rows;
    if (!db().hasTable(trace::table::kThreadNames)) return rows;
    requireColumns(trace::table::kThreadNames, {"nameId", "globalTid"});
    static constexpr std::string_view kColumns[] = {"nameId", "priority", "globalTid"};
    TableScan scan(db(), trace::table::kThreadNames, kColumns);
    while (scan.step()) {
      countRow(false);
      ThreadNameRow r;
      scan.get(0, r.nameId);
      scan.get(1, r.priority);
      scan.get(2, r.globalTid);
      rows.push_back(r);
      threadNameText_.try_emplace(r.nameId);
      // The last name given to a thread wins (nsys records renames in order).
      if (r.globalTid != 0) threadNameOf_[r.globalTid] = r.nameId;
    }
    return rows;
  }

  void writeThreadNames(const std::vector<ThreadNameRow>& rows) {
    if (!db().hasTable(trace::table::kThreadNames)) return;
    for (const auto& r : rows) {
      writer_.addThreadName({strings_.map(r.nameId), r.priority, r.globalTid});
      noteThread(r.globalTid);
    }
    stats_.rowsPerTable[std::string(trace::table::kThreadNames)] = rows.size();
  }

  // --- CUPTI tables -----------------------------------------------------------------------------

  // Copies a table whose columns are all integers. fields[0] and fields[1] are start and end.
  template <class Record>
  void copyTable(std::string_view table, std::span<const Field<Record>> fields,
                 const Record& defaults, Owner owner, std::int64_t Record::*ownerMember,
                 const std::function<void(Record&, const TableScan&)>& extra,
                 const std::function<void(const Record&)>& emit) {
    if (!db().hasTable(table)) return;
    requireColumns(table, {"start", "end"});
    std::vector<std::string_view> columns;
    columns.reserve(fields.size());
    for (const auto& f : fields) columns.push_back(f.column);
    TableScan scan(db(), table, columns);
    std::uint64_t rows = 0;
    while (scan.step()) {
      countRow(true);
      Record r = defaults;
      r.*(fields[0].member) = requireStart(table, scan, 0);
      if (scan.isNull(1)) rowError(table, scan, "has no end");
      for (std::size_t i = 1; i < fields.size(); ++i) {
        const auto& f = fields[i];
        int col = static_cast<int>(i);
        if (!f.member || scan.isNull(col)) continue;
        std::int64_t v = scan.integer(col);
        r.*(f.member) = f.isString ? strings_.map(v) : v;
      }
      checkTimes(table, scan, r.*(fields[0].member), r.*(fields[1].member));
      if (extra) extra(r, scan);
      if (owner == Owner::kThread) {
        noteThread(r.*ownerMember);
      } else {
        noteProcess(r.*ownerMember);
      }
      emit(r);
      ++rows;
    }
    stats_.rowsPerTable[std::string(table)] = rows;
  }

  void copyKernels() {
    using K = trace::KernelRecord;
    static const Field<K> kFields[] = {
        {"start", &K::start},
        {"end", &K::end},
        {"deviceId", &K::deviceId},
        {"contextId", &K::contextId},
        {"streamId", &K::streamId},
        {"correlationId", &K::correlationId},
        {"globalPid", &K::globalPid},
        {"demangledName", &K::demangledName, true},
        {"shortName", &K::shortName, true},
        {"mangledName", &K::mangledName, true},
        {"launchType", &K::launchType},
        {"cacheConfig", &K::cacheConfig},
        {"registersPerThread", &K::registersPerThread},
        {"gridX", &K::gridX},
        {"gridY", &K::gridY},
        {"gridZ", &K::gridZ},
        {"blockX", &K::blockX},
        {"blockY", &K::blockY},
        {"blockZ", &K::blockZ},
        {"staticSharedMemory", &K::staticSharedMemory},
        {"dynamicSharedMemory", &K::dynamicSharedMemory},
        {"localMemoryPerThread", &K::localMemoryPerThread},
        {"localMemoryTotal", &K::localMemoryTotal},
        {"gridId", &K::gridId},
        {"sharedMemoryExecuted", &K::sharedMemoryExecuted},
        {"graphNodeId", &K::graphNodeId},
        {"graphId", &K::graphId},
    };
    copyTable<K>(trace::table::kKernel, kFields, K{}, Owner::kProcess, &K::globalPid, {},
                 [&](const K& r) { writer_.addKernel(r); });
  }

  void copyApiCalls(trace::ApiKind kind) {
    using A = trace::ApiCallRecord;
    static const Field<A> kFields[] = {
        {"start", &A::start},
        {"end", &A::end},
        {"eventClass", &A::eventClass},
        {"globalTid", &A::globalTid},
        {"correlationId", &A::correlationId},
        {"nameId", &A::nameId, true},
        {"returnValue", &A::returnValue},
        {"callchainId", &A::callchainId},
        {"cbid", &A::cbid},
    };
    A defaults;
    // ENUM_NSYS_EVENT_CLASS: 0 CUDA runtime, 1 CUDA driver, for exports without the column.
    defaults.eventClass = kind == trace::ApiKind::kRuntime ? 0 : 1;
    auto table = kind == trace::ApiKind::kRuntime ? trace::table::kRuntime : trace::table::kDriver;
    copyTable<A>(table, kFields, defaults, Owner::kThread, &A::globalTid, {},
                 [&](const A& r) { writer_.addApiCall(kind, r); });
  }

  void copyMemcpy() {
    using M = trace::MemcpyRecord;
    static const Field<M> kFields[] = {
        {"start", &M::start},
        {"end", &M::end},
        {"deviceId", &M::deviceId},
        {"contextId", &M::contextId},
        {"streamId", &M::streamId},
        {"correlationId", &M::correlationId},
        {"globalPid", &M::globalPid},
        {"bytes", &M::bytes},
        {"copyKind", &M::copyKind},
        {"srcKind", &M::srcKind},
        {"dstKind", &M::dstKind},
        {"srcDeviceId", &M::srcDeviceId},
        {"dstDeviceId", &M::dstDeviceId},
        {"graphNodeId", &M::graphNodeId},
    };
    copyTable<M>(trace::table::kMemcpy, kFields, M{}, Owner::kProcess, &M::globalPid, {},
                 [&](const M& r) { writer_.addMemcpy(r); });
  }

  void copyMemset() {
    using M = trace::MemsetRecord;
    static const Field<M> kFields[] = {
        {"start", &M::start},
        {"end", &M::end},
        {"deviceId", &M::deviceId},
        {"contextId", &M::contextId},
        {"streamId", &M::streamId},
        {"correlationId", &M::correlationId},
        {"globalPid", &M::globalPid},
        {"value", &M::value},
        {"bytes", &M::bytes},
        {"memKind", &M::memKind},
        {"graphNodeId", &M::graphNodeId},
    };
    copyTable<M>(trace::table::kMemset, kFields, M{}, Owner::kProcess, &M::globalPid, {},
                 [&](const M& r) { writer_.addMemset(r); });
  }

  void copySync() {
    using S = trace::SyncRecord;
    constexpr int kSyncTypeCol = 7;
    static const Field<S> kFields[] = {
        {"start", &S::start},         {"end", &S::end},
        {"deviceId", &S::deviceId},   {"contextId", &S::contextId},
        {"streamId", &S::streamId},   {"correlationId", &S::correlationId},
        {"globalPid", &S::globalPid}, {"syncType", nullptr},  // an enum: read by `extra`
        {"eventId", &S::eventId},     {"eventSyncId", &S::eventSyncId},
    };
    copyTable<S>(
        trace::table::kSync, kFields, S{}, Owner::kProcess, &S::globalPid,
        [](S& r, const TableScan& scan) {
          if (!scan.isNull(kSyncTypeCol)) {
            r.syncType = static_cast<trace::SyncType>(static_cast<int>(scan.integer(kSyncTypeCol)));
          }
        },
        [&](const S& r) { writer_.addSync(r); });
  }

  // --- NVTX -------------------------------------------------------------------------------------

  void copyNvtx() {
    auto table = trace::table::kNvtx;
    if (!db().hasTable(table)) return;
    requireColumns(table, {"start", "eventType"});
    enum Col {
      kStart,
      kEnd,
      kEventType,
      kRangeId,
      kCategory,
      kColor,
      kText,
      kGlobalTid,
      kEndGlobalTid,
      kTextId,
      kDomainId,
    };
    static constexpr std::string_view kColumns[] = {
        "start", "end",       "eventType",    "rangeId", "category", "color",
        "text",  "globalTid", "endGlobalTid", "textId",  "domainId",
    };
    TableScan scan(db(), table, kColumns);
    trace::NvtxRecord r;  // reused so that `text` keeps its buffer
    std::uint64_t rows = 0;
    while (scan.step()) {
      countRow(true);
      r.start = requireStart(table, scan, kStart);
      r.end = scan.isNull(kEnd) ? std::nullopt : std::optional<TimeNs>(scan.integer(kEnd));
      checkTimes(table, scan, r.start, r.end);
      r.eventType = static_cast<trace::NvtxEventType>(static_cast<int>(scan.integer(kEventType)));
      r.rangeId = 0;
      scan.get(kRangeId, r.rangeId);
      r.category = 0;
      scan.get(kCategory, r.category);
      r.color = scan.isNull(kColor) ? std::nullopt : std::optional(scan.integer(kColor));
      r.text.assign(scan.text(kText));
      r.globalTid = 0;
      scan.get(kGlobalTid, r.globalTid);
      r.endGlobalTid = 0;
      scan.get(kEndGlobalTid, r.endGlobalTid);
      r.textId = scan.isNull(kTextId) ? trace::kNoString : strings_.map(scan.integer(kTextId));
      r.domainId = 0;
      scan.get(kDomainId, r.domainId);
      noteThread(r.globalTid);
      noteThread(r.endGlobalTid);
      writer_.addNvtx(r);
      ++rows;

      if (r.eventType == trace::NvtxEventType::kPushPopRange ||
          r.eventType == trace::NvtxEventType::kStartEndRange) {
        if (!r.end) {
          ++unterminatedRanges_;
          continue;
        }
        StringId name = r.textId != trace::kNoString ? r.textId
                        : !r.text.empty()            ? intern(r.text)
                                                     : intern(kUnnamedRange);
        nesting_.add({.start = r.start,
                      .end = *r.end,
                      .globalTid = r.globalTid,
                      .nameId = name,
                      .source = trace::OperationSource::kNvtx});
      }
    }
    stats_.rowsPerTable[std::string(table)] = rows;
  }

  // Nesting per thread (shared with the Kineto importer): a range is the child of the innermost
  // earlier range of its thread that contains it; start/end ranges that overlap without nesting
  // become siblings.
  void writeOperations() {
    auto ops = nesting_.build();
    for (const auto& op : ops) writer_.addOperation(op);
    stats_.rowsPerTable[std::string(trace::table::kOperations)] = ops.size();
  }

  // --- GPUs, processes, threads -----------------------------------------------------------------

  void copyGpus() {
    auto table = trace::table::kGpuInfo;
    if (!db().hasTable(table)) return;
    using G = trace::GpuInfoRecord;
    // nsys names the device ordinal `id`; fall back to `cuDevice` for exports without it.
    std::string_view idColumn = db().hasColumn(table, "id") ? "id" : "cuDevice";
    static const std::pair<std::string_view, std::string G::*> kTexts[] = {
        {"name", &G::name},
        {"busLocation", &G::busLocation},
        {"uuid", &G::uuid},
        {"chipName", &G::chipName}};
    static const std::pair<std::string_view, std::int64_t G::*> kInts[] = {
        {"isDiscrete", &G::isDiscrete},
        {"l2CacheSize", &G::l2CacheSize},
        {"totalMemory", &G::totalMemory},
        {"memoryBandwidth", &G::memoryBandwidth},
        {"clockRate", &G::clockRate},
        {"smCount", &G::smCount},
        {"computeMajor", &G::computeMajor},
        {"computeMinor", &G::computeMinor},
        {"maxIPC", &G::maxIPC},
        {"maxRegistersPerBlock", &G::maxRegistersPerBlock},
        {"maxShmemPerBlock", &G::maxShmemPerBlock},
        {"maxShmemPerBlockOptin", &G::maxShmemPerBlockOptin},
        {"maxShmemPerSm", &G::maxShmemPerSm},
        {"maxRegistersPerSm", &G::maxRegistersPerSm},
        {"threadsPerWarp", &G::threadsPerWarp},
        {"maxWarpsPerSm", &G::maxWarpsPerSm},
        {"maxBlocksPerSm", &G::maxBlocksPerSm},
        {"maxThreadsPerBlock", &G::maxThreadsPerBlock},
        {"memoryClockRate", &G::memoryClockRate},
        {"memoryBusWidth", &G::memoryBusWidth},
    };
    std::vector<std::string_view> columns{idColumn};
    for (const auto& t : kTexts) columns.push_back(t.first);
    for (const auto& n : kInts) columns.push_back(n.first);
    TableScan scan(db(), table, columns);
    std::uint64_t rows = 0;
    while (scan.step()) {
      countRow(false);
      G g;
      scan.get(0, g.id);
      int col = 1;
      for (const auto& t : kTexts) {
        if (!scan.isNull(col)) g.*(t.second) = scan.anyText(col);
        ++col;
      }
      for (const auto& n : kInts) scan.get(col++, g.*(n.second));
      writer_.addGpuInfo(g);
      ++rows;
    }
    stats_.rowsPerTable[std::string(table)] = rows;
  }

  void writeProcessesAndThreads() {
    std::map<std::int64_t, trace::ProcessRecord> processes;
    if (db().hasTable(kProcessesTable) && db().hasColumn(kProcessesTable, "globalPid")) {
      static constexpr std::string_view kColumns[] = {"globalPid", "pid", "name"};
      TableScan scan(db(), kProcessesTable, kColumns);
      while (scan.step()) {
        countRow(false);
        if (scan.isNull(0) || scan.integer(0) == 0) continue;
        trace::ProcessRecord p;
        p.globalPid = trace::globalPidOfTid(scan.integer(0));
        p.pid = scan.isNull(1) ? trace::pidOfGlobalId(p.globalPid) : scan.integer(1);
        p.name = scan.anyText(2);
        processes[p.globalPid] = std::move(p);
      }
    }
    auto addProcess = [&](std::int64_t globalPid) {
      auto [it, inserted] = processes.try_emplace(globalPid);
      if (inserted) {
        it->second.globalPid = globalPid;
        it->second.pid = trace::pidOfGlobalId(globalPid);
      }
    };
    for (auto gp : pids_) addProcess(trace::globalPidOfTid(gp));
    std::vector<std::int64_t> tids(tids_.begin(), tids_.end());
    std::sort(tids.begin(), tids.end());
    for (auto gt : tids) addProcess(trace::globalPidOfTid(gt));
    for (const auto& [gp, p] : processes) writer_.addProcess(p);
    stats_.rowsPerTable[std::string(trace::table::kProcesses)] = processes.size();

    for (auto gt : tids) {
      trace::ThreadRecord t;
      t.globalTid = gt;
      t.globalPid = trace::globalPidOfTid(gt);
      t.tid = trace::tidOfGlobalId(gt);
      if (auto it = threadNameOf_.find(gt); it != threadNameOf_.end()) {
        t.name = threadNameText_[it->second];
      }
      writer_.addThread(t);
    }
    stats_.rowsPerTable[std::string(trace::table::kThreads)] = tids.size();
  }

  void finishWarnings() {
    stats_.rowsPerTable[std::string(trace::table::kStringIds)] = stringsWritten_;
    if (db().hasTable(trace::table::kKernel) || db().hasTable(trace::table::kMemcpy) ||
        db().hasTable(trace::table::kMemset)) {
      writer_.setMeta(trace::meta::kGpuActivity, "recorded");
    }
    if (negativeStarts_ > 0) {
      stats_.warnings.push_back("kept " + counted(negativeStarts_, "row") +
                                " with a negative start (recorded before the capture range)");
    }
    if (strings_.unknownReferences() > 0) {
      stats_.warnings.push_back(counted(strings_.unknownReferences(), "reference") +
                                " to string ids missing from StringIds, left empty");
    }
    if (unterminatedRanges_ > 0) {
      stats_.warnings.push_back(counted(unterminatedRanges_, "NVTX range") +
                                " without an end: kept in NVTX_EVENTS, not made operations");
    }
  }

  std::filesystem::path input_;
  std::string name_;
  trace::TraceWriter& writer_;
  const ImportOptions& options_;
  ImportStats& stats_;
  std::optional<Database> db_;

  StringMap strings_;
  std::uint64_t stringsWritten_ = 0;
  std::unordered_map<std::int64_t, std::string> threadNameText_;  // export string id -> text
  std::unordered_map<std::int64_t, std::int64_t> threadNameOf_;   // globalTid -> export string id
  std::unordered_set<std::int64_t> pids_;
  std::unordered_set<std::int64_t> tids_;
  std::int64_t lastPid_ = 0;
  std::int64_t lastTid_ = 0;
  trace::OperationNesting nesting_;
  std::uint64_t rowsRead_ = 0;
  std::uint64_t negativeStarts_ = 0;
  std::uint64_t unterminatedRanges_ = 0;
};

}  // namespace

void importNsys(const std::filesystem::path& input, trace::TraceWriter& writer,
                const ImportOptions& options, ImportStats& stats) {
  NsysImporter(input, writer, options, stats).run();
}

const Format& nsysFormat() {
  static const Format format{.name = "Nsight Systems SQLite export",
                             .files = "an Nsight Systems SQLite export (nsys export --type sqlite)",
                             .match = matchNsys,
                             .import = importNsys};
  return format;
}

}  // namespace rlscope::import
