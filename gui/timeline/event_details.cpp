#include "rlscope/gui_model/event_details.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "rlscope/gui_model/duration_text.h"
#include "rlscope/trace/enum_labels.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::gui {

const std::string* EventDetails::find(std::string_view label) const {
  for (const auto& f : fields)
    if (f.label == label) return &f.value;
  return nullptr;
}

// --- Formatting ----------------------------------------------------------------------------------

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string formatBytes(std::int64_t bytes) {
  std::string out = std::to_string(bytes) + " B";
  if (bytes < 1024) return out;
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) v /= 1024, ++u;
  std::string number = fixed(v, 2);
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  return out + " (" + number + " " + kUnits[u] + ")";
}

std::string formatBandwidth(std::int64_t bytes, std::int64_t ns) {
  if (ns <= 0 || bytes < 0) return std::string(kNoValue);
  double gbPerS = static_cast<double>(bytes) / static_cast<double>(ns);  // bytes/ns = GB/s
  if (gbPerS >= 1) return fixed(gbPerS, 2) + " GB/s";
  if (gbPerS >= 1e-3) return fixed(gbPerS * 1e3, 2) + " MB/s";
  return fixed(gbPerS * 1e6, 2) + " KB/s";
}

// --- Reading -------------------------------------------------------------------------------------

namespace {

using trace::Database;
using trace::Statement;

// Longest text shown for one value: a hostile 256 MB cell must not reach a label widget.
constexpr std::size_t kMaxText = 4096;
// Most args shown of one event.
constexpr int kMaxArgs = 100;
// Most launched activities named for one API call (cudaGraphLaunch can launch thousands).
constexpr int kMaxLaunched = 8;

// Text from the trace, made displayable: at most kMaxText bytes (cut on a UTF-8 boundary) and no
// control characters other than tab and newline.
std::string displayText(std::string_view text) {
  bool cut = text.size() > kMaxText;
  if (cut) {
    std::size_t n = kMaxText;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    text = text.substr(0, n);
  }
  std::string out(text);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') c = ' ';
  if (cut) out += "…";
  return out;
}

// A cell of a row as read: its storage class and value.
struct Cell {
  enum class Type { kMissing, kNull, kInteger, kReal, kText, kBlob };
  Type type = Type::kMissing;
  std::int64_t integer = 0;  // kInteger; the size of a kBlob
  double real = 0;
  std::string text;

  std::optional<std::int64_t> asInt() const {
    return type == Type::kInteger ? std::optional(integer) : std::nullopt;
  }
  // The value as it is stored: "—" for none, numbers as numbers, text made displayable.
  std::string raw() const {
    switch (type) {
      case Type::kMissing:
      case Type::kNull:
        return std::string(kNoValue);
      case Type::kInteger:
        return std::to_string(integer);
      case Type::kReal: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", real);
        return buf;
      }
      case Type::kText:
        return text;
      case Type::kBlob:
        return "(" + std::to_string(integer) + "-byte blob)";
    }
    return std::string(kNoValue);
  }
};

// Reads one cell at (typeof column, value column) of a statement.
Cell readCell(const Statement& st, int typeColumn) {
  Cell c;
  std::string_view type = st.columnText(typeColumn);
  int col = typeColumn + 1;
  if (type == "integer") {
    c.type = Cell::Type::kInteger;
    c.integer = st.columnInt(col);
  } else if (type == "real") {
    c.type = Cell::Type::kReal;
    c.real = st.columnDouble(col);
  } else if (type == "text") {
    c.type = Cell::Type::kText;
    c.text = displayText(st.columnText(col));
  } else if (type == "blob") {
    c.type = Cell::Type::kBlob;
    c.integer = static_cast<std::int64_t>(st.columnText(col).size());
  } else {
    c.type = Cell::Type::kNull;
  }
  return c;
}

// One row of a table by rowid, with the columns the table has of those asked for: a trace from
// elsewhere may lack some, and they read as kMissing. Prepared once, reused for every read.
class RowQuery {
 public:
  RowQuery(Database& db, std::string_view table, std::span<const std::string_view> columns)
      : columns_(columns.begin(), columns.end()), cells_(columns.size()) {
    if (!db.hasTable(table)) return;
    std::string sql = "SELECT ";
    int next = 0;
    for (auto column : columns_) {
      if (!db.hasColumn(table, column)) {
        positions_.push_back(-1);
        continue;
      }
      if (next) sql += ", ";
      std::string quoted = trace::quotedIdentifier(column);
      sql += "typeof(" + quoted + "), " + quoted;
      positions_.push_back(next);
      next += 2;
    }
    if (next == 0) sql += "1";
    st_.emplace(db.prepare(sql + " FROM " + trace::quotedIdentifier(table) + " WHERE rowid = ?"));
  }

  bool hasTable() const { return st_.has_value(); }

  // False when the table has no such row.
  bool read(std::int64_t rowid) {
    std::fill(cells_.begin(), cells_.end(), Cell{});
    if (!st_) return false;
    st_->reset();
    st_->bind(1, rowid);
    if (!st_->step()) return false;
    for (std::size_t i = 0; i < columns_.size(); ++i)
      if (positions_[i] >= 0) cells_[i] = readCell(*st_, positions_[i]);
    st_->reset();
    return true;
  }

  const Cell& operator[](std::string_view column) const {
    static const Cell kMissing;
    for (std::size_t i = 0; i < columns_.size(); ++i)
      if (columns_[i] == column) return cells_[i];
    return kMissing;
  }

 private:
  std::vector<std::string_view> columns_;
  std::vector<int> positions_;  // of each column's typeof() in the SELECT; -1 when missing
  std::vector<Cell> cells_;
  std::optional<Statement> st_;
};

// Every column of each source table (trace/src/schema.cpp), start and end first: they check
// that the row is the item's.
constexpr std::string_view kOperationColumns[] = {"start",    "end",   "globalTid", "nameId",
                                                  "parentId", "depth", "source",    "args"};
constexpr std::string_view kCpuIntervalColumns[] = {"start",    "end",    "globalTid",
                                                    "category", "nameId", "args"};
constexpr std::string_view kApiColumns[] = {"start",       "end",           "eventClass",
                                            "globalTid",   "correlationId", "nameId",
                                            "returnValue", "callchainId",   "cbid"};
// clang-format off
constexpr std::string_view kKernelColumns[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "demangledName", "shortName", "mangledName", "launchType", "cacheConfig",
    "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
    "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread", "localMemoryTotal",
    "gridId", "sharedMemoryExecuted", "graphNodeId", "graphId"};
constexpr std::string_view kMemcpyColumns[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
    "copyKind", "deprecatedSrcId", "srcKind", "dstKind", "srcDeviceId", "srcContextId",
    "dstDeviceId", "dstContextId", "migrationCause", "graphNodeId"};
// clang-format on
constexpr std::string_view kMemsetColumns[] = {
    "start",     "end",   "deviceId", "contextId",   "streamId", "correlationId",
    "globalPid", "value", "bytes",    "graphNodeId", "memKind"};

std::span<const std::string_view> columnsOf(ItemSource source) {
  switch (source) {
    case ItemSource::kOperation:
      return kOperationColumns;
    case ItemSource::kCpuInterval:
      return kCpuIntervalColumns;
    case ItemSource::kRuntime:
    case ItemSource::kDriver:
      return kApiColumns;
    case ItemSource::kKernel:
      return kKernelColumns;
    case ItemSource::kMemcpy:
      return kMemcpyColumns;
    case ItemSource::kMemset:
      return kMemsetColumns;
  }
  return {};
}

// A helper query that is optional to the details: a table or column it needs may be missing in
// a trace from elsewhere, and then its field reads "—". Prepared on first use; a failure to
// prepare is remembered, not retried on every click.
class OptionalQuery {
 public:
  explicit OptionalQuery(std::string sql) : sql_(std::move(sql)) {}
  // The statement, reset and unbound; null when it cannot be prepared on this trace.
  Statement* get(Database& db) {
    if (!tried_) {
      tried_ = true;
      try {
        st_.emplace(db.prepare(sql_));
      } catch (const std::exception&) {
        st_.reset();
      }
    }
    if (st_) st_->reset();
    return st_ ? &*st_ : nullptr;
  }

 private:
  std::string sql_;
  bool tried_ = false;
  std::optional<Statement> st_;
};

std::string dim3(const Cell& x, const Cell& y, const Cell& z, const char* what) {
  std::string out = "(" + x.raw() + ", " + y.raw() + ", " + z.raw() + ")";
  auto a = x.asInt(), b = y.asInt(), c = z.asInt();
  std::int64_t n = 0;
  if (a && b && c && *a >= 0 && *b >= 0 && *c >= 0 && !__builtin_mul_overflow(*a, *b, &n) &&
      !__builtin_mul_overflow(n, *c, &n)) {
    out += " = " + std::to_string(n) + " " + what;
  }
  return out;
}

}  // namespace

struct EventDetailsReader::Impl {
  std::filesystem::path path;
  std::unique_ptr<Database> owned;
  Database* db = nullptr;
  std::map<ItemSource, std::unique_ptr<RowQuery>> rows;
  std::map<std::string, std::map<std::int64_t, std::string>, std::less<>> enums;

  OptionalQuery stringById{"SELECT value FROM StringIds WHERE id = ?"};
  OptionalQuery operationName{
      "SELECT s.value FROM rlscope_operations AS o LEFT JOIN StringIds AS s ON s.id = o.nameId "
      "WHERE o.id = ?"};
  OptionalQuery launchOperation{
      "SELECT x.externalId, s.value FROM rlscope_external_correlation AS x "
      "LEFT JOIN rlscope_operations AS o ON o.id = x.externalId "
      "LEFT JOIN StringIds AS s ON s.id = o.nameId "
      "WHERE x.globalPid = ?1 AND x.correlationId = ?2 LIMIT 1"};
  // The API call of a GPU activity: same correlation id, a thread of the same process.
  OptionalQuery launchedBy{
      "SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r LEFT JOIN StringIds AS s "
      "ON s.id = r.nameId WHERE r.correlationId = ?1 AND r.globalTid >= ?2 AND r.globalTid < ?3 "
      "UNION ALL "
      "SELECT s.value FROM CUPTI_ACTIVITY_KIND_DRIVER AS r LEFT JOIN StringIds AS s "
      "ON s.id = r.nameId WHERE r.correlationId = ?1 AND r.globalTid >= ?2 AND r.globalTid < ?3 "
      "LIMIT 4"};
  // The GPU activities of an API call.
  OptionalQuery launched{
      "SELECT 'kernel ' || COALESCE(s.value, k.shortName) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
      "LEFT JOIN StringIds AS s ON s.id = k.shortName "
      "WHERE k.correlationId = ?1 AND k.globalPid = ?2 "
      "UNION ALL "
      "SELECT 'memcpy ' || COALESCE(e.label, m.copyKind) || ', ' || m.bytes || ' B' "
      "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS e "
      "ON e.id = m.copyKind WHERE m.correlationId = ?1 AND m.globalPid = ?2 "
      "UNION ALL "
      "SELECT 'memset, ' || m.bytes || ' B' FROM CUPTI_ACTIVITY_KIND_MEMSET AS m "
      "WHERE m.correlationId = ?1 AND m.globalPid = ?2 "
      "LIMIT " +
      std::to_string(kMaxLaunched + 1)};
  // The NVTX range an NVTX operation was made from: same thread, start and end.
  OptionalQuery nvtxRange{
      "SELECT typeof(domainId), domainId, typeof(category), category, typeof(color), color, "
      "typeof(uint64Value), uint64Value, typeof(int64Value), int64Value, "
      "typeof(doubleValue), doubleValue, typeof(uint32Value), uint32Value, "
      "typeof(int32Value), int32Value, typeof(floatValue), floatValue "
      "FROM NVTX_EVENTS WHERE globalTid = ?1 AND start = ?2 AND end = ?3 "
      "AND eventType IN (59, 60) LIMIT 1"};
  // A domain's name: its domain-create row (eventType 75) in the same process.
  OptionalQuery nvtxDomain{
      "SELECT COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) FROM NVTX_EVENTS "
      "WHERE eventType = 75 AND domainId = ?1 AND globalTid >= ?2 AND globalTid < ?3 LIMIT 1"};
  // The members of an args object (json_each fails on malformed JSON).
  OptionalQuery operationArgs{
      "SELECT j.key, j.type, j.value FROM rlscope_operations AS t, json_each(t.args) AS j "
      "WHERE t.rowid = ?"};
  OptionalQuery cpuIntervalArgs{
      "SELECT j.key, j.type, j.value FROM rlscope_cpu_intervals AS t, json_each(t.args) AS j "
      "WHERE t.rowid = ?"};

  Database& connection() {
    if (!db) {
      owned = std::make_unique<Database>(path, Database::Mode::kReadOnlyUntrusted);
      db = owned.get();
    }
    return *db;
  }

  RowQuery& rowQuery(ItemSource source) {
    auto& q = rows[source];
    if (!q) q = std::make_unique<RowQuery>(connection(), sourceTable(source), columnsOf(source));
    return *q;
  }

  // id -> label (or name) of an enum table; empty when the table is not there or unreadable.
  const std::map<std::int64_t, std::string>& enumTable(std::string_view table) {
    auto it = enums.find(table);
    if (it != enums.end()) return it->second;
    auto& out = enums[std::string(table)];
    try {
      for (auto& [id, label] : trace::readEnumLabels(connection(), table))
        out[id] = displayText(label);
    } catch (const std::exception&) {
      out.clear();
    }
    return out;
  }

  // An enum cell as its label; an id the table does not list as its number.
  std::string enumText(std::string_view table, const Cell& cell) {
    auto id = cell.asInt();
    if (!id) return cell.raw();
    const auto& names = enumTable(table);
    auto it = names.find(*id);
    return it == names.end() ? std::to_string(*id) : it->second;
  }

  // A StringIds reference as its text; "—" for none, the number for an id the table lacks.
  std::string stringText(const Cell& cell) {
    auto id = cell.asInt();
    if (!id) return cell.raw();
    if (*id == trace::kNoString) return std::string(kNoValue);
    Statement* st = stringById.get(connection());
    if (!st) return std::to_string(*id);
    st->bind(1, *id);
    std::string out = st->step() ? displayText(st->columnText(0)) : std::to_string(*id);
    st->reset();
    return out;
  }

  std::string operationText(std::int64_t id) {
    Statement* st = operationName.get(connection());
    std::string name;
    if (st) {
      st->bind(1, id);
      if (st->step()) name = displayText(st->columnText(0));
      st->reset();
    }
    return name.empty() ? "id " + std::to_string(id) : name + " (id " + std::to_string(id) + ")";
  }

  EventDetails read(const TimelineData& data, const Track& track, const TrackItem& item);
  void readRow(const Track& track, const TrackItem& item, EventDetails& out);
  void addLaunchFields(std::int64_t globalPid, const Cell& correlation, bool isCall,
                       EventDetails& out);
  void addNvtxFields(const RowQuery& row, std::int64_t globalTid, EventDetails& out);
  void addArgs(ItemSource source, std::int64_t rowid, const Cell& args, EventDetails& out);
};

namespace {

const ProcessTracks* processOf(const TimelineData& data, std::int64_t globalPid) {
  for (const auto& p : data.processes)
    if (p.globalPid == globalPid) return &p;
  return nullptr;
}

std::string processLabel(const TimelineData& data, std::int64_t globalPid) {
  if (const ProcessTracks* p = processOf(data, globalPid)) return p->label;
  return "process " + std::to_string(trace::pidOfGlobalId(globalPid));
}

std::string threadLabel(const TimelineData& data, std::int64_t globalTid) {
  if (const ProcessTracks* p = processOf(data, trace::globalPidOfTid(globalTid)))
    for (const auto& t : p->threads)
      if (t.globalTid == globalTid) return t.label;
  return "thread " + std::to_string(trace::tidOfGlobalId(globalTid));
}

std::string deviceLabel(const TimelineData& data, std::int64_t deviceId) {
  for (const auto& d : data.devices)
    if (d.deviceId == deviceId) return d.label;
  return "GPU " + std::to_string(deviceId);
}

std::string categoryText(const TrackItem& item) {
  if (item.source == ItemSource::kOperation) return "operation";
  if (auto c = item.category()) return std::string(trace::categoryName(*c));
  return std::string(kNoValue);
}

std::string relative(TimeNs t, TimeNs origin) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(t, origin, &d)) return std::string(kNoValue);
  return (d >= 0 ? "+" : "") + exactDurationText(d);
}

bool isGpu(ItemSource s) {
  return s == ItemSource::kKernel || s == ItemSource::kMemcpy || s == ItemSource::kMemset;
}

}  // namespace

EventDetails EventDetailsReader::Impl::read(const TimelineData& data, const Track& track,
                                            const TrackItem& item) {
  EventDetails out;
  std::string_view name = data.name(item);
  out.title = name.empty() ? "(no name)" : displayText(name);
  auto add = [&](std::string label, std::string value) {
    out.fields.push_back({std::move(label), std::move(value)});
  };
  // What the timeline knows: always there, whatever the row holds.
  add("Name", name.empty() ? std::string(kNoValue) : displayText(name));
  add("Category", categoryText(item));
  add("Source table", std::string(sourceTable(item.source)));
  add("Start", relative(item.start, data.span.start));
  add("End", relative(item.end, data.span.start));
  add("Duration", exactDurationText(item.end - item.start));
  add("Start (ns)", std::to_string(item.start));
  add("End (ns)", std::to_string(item.end));
  if (track.kind == TrackKind::kGpuStream) {
    add("Device", deviceLabel(data, track.deviceId));
    add("Stream", std::to_string(track.streamId));
    add("Process", processLabel(data, track.globalPid));
  } else {
    add("Process", processLabel(data, track.globalPid));
    add("Thread", threadLabel(data, track.globalTid));
  }

  if (item.rowId == 0) {
    out.problem = "the item's row id is not known (it does not fit 32 bits)";
    return out;
  }
  try {
    readRow(track, item, out);
  } catch (const std::exception& e) {
    out.problem = e.what();
  }
  return out;
}

void EventDetailsReader::Impl::readRow(const Track& track, const TrackItem& item,
                                       EventDetails& out) {
  auto add = [&](std::string label, std::string value) {
    out.fields.push_back({std::move(label), std::move(value)});
  };
  std::string table(sourceTable(item.source));
  RowQuery& row = rowQuery(item.source);
  if (!row.hasTable()) {
    out.problem = "the trace has no table " + table;
    return;
  }
  if (!row.read(item.rowId)) {
    out.problem = table + " has no row " + std::to_string(item.rowId);
    return;
  }
  // The file at the path may have been replaced since the timeline was loaded.
  if (row["start"].asInt() != item.start || row["end"].asInt() != item.end) {
    out.problem = "row " + std::to_string(item.rowId) + " of " + table +
                  " is not this item (was the trace file replaced?)";
    return;
  }
  auto bytes = [](const Cell& c) { return c.asInt() ? formatBytes(*c.asInt()) : c.raw(); };
  std::int64_t globalPid = track.globalPid;

  switch (item.source) {
    case ItemSource::kOperation: {
      add("Operation id", std::to_string(item.rowId));
      add("Depth", row["depth"].raw());
      const Cell& parent = row["parentId"];
      add("Parent", parent.asInt() == 0 ? std::string("none (outermost)")
                    : parent.asInt()    ? operationText(*parent.asInt())
                                        : parent.raw());
      const Cell& source = row["source"];
      using trace::OperationSource;
      auto is = [&](OperationSource s) { return source.asInt() == static_cast<std::int64_t>(s); };
      static const std::map<std::int64_t, std::string> kSources = {
          {static_cast<std::int64_t>(OperationSource::kAnnotation), "rlscope annotation"},
          {static_cast<std::int64_t>(OperationSource::kNvtx), "NVTX"},
          {static_cast<std::int64_t>(OperationSource::kKinetoUserAnnotation),
           "Kineto user_annotation"}};
      auto known = source.asInt() ? kSources.find(*source.asInt()) : kSources.end();
      add("Source", known != kSources.end() ? known->second
                                            : enumText("ENUM_RLSCOPE_OPERATION_SOURCE", source));
      if (is(OperationSource::kAnnotation)) {
        add("Domain", "rlscope");  // the collector's domain for rlscope annotations
      } else if (is(OperationSource::kNvtx)) {
        addNvtxFields(row, row["globalTid"].asInt().value_or(track.globalTid), out);
      } else {
        add("Domain", std::string(kNoValue));
      }
      addArgs(item.source, item.rowId, row["args"], out);
      break;
    }
    case ItemSource::kCpuInterval: {
      // A category the trace library does not know: the trace's own name for it, or its number.
      if (!item.category()) add("Category id", enumText("ENUM_RLSCOPE_CATEGORY", row["category"]));
      addArgs(item.source, item.rowId, row["args"], out);
      break;
    }
    case ItemSource::kRuntime:
    case ItemSource::kDriver: {
      add("API", stringText(row["nameId"]));
      add("Event class", enumText("ENUM_NSYS_EVENT_CLASS", row["eventClass"]));
      add("Correlation id", row["correlationId"].raw());
      const Cell& rv = row["returnValue"];
      add("Return value", rv.asInt() == 0 ? std::string("0 (success)") : rv.raw());
      add("Callback id", row["cbid"].raw());
      add("Call chain id", row["callchainId"].raw());
      if (auto tid = row["globalTid"].asInt()) globalPid = trace::globalPidOfTid(*tid);
      addLaunchFields(globalPid, row["correlationId"], true, out);
      break;
    }
    case ItemSource::kKernel: {
      add("Demangled name", stringText(row["demangledName"]));
      add("Short name", stringText(row["shortName"]));
      add("Mangled name", stringText(row["mangledName"]));
      add("Grid", dim3(row["gridX"], row["gridY"], row["gridZ"], "blocks"));
      add("Block", dim3(row["blockX"], row["blockY"], row["blockZ"], "threads"));
      add("Registers per thread", row["registersPerThread"].raw());
      add("Static shared memory", bytes(row["staticSharedMemory"]));
      add("Dynamic shared memory", bytes(row["dynamicSharedMemory"]));
      add("Shared memory executed", bytes(row["sharedMemoryExecuted"]));
      add("Local memory per thread", bytes(row["localMemoryPerThread"]));
      add("Local memory total", bytes(row["localMemoryTotal"]));
      add("Launch type", row["launchType"].raw());
      add("Cache config", row["cacheConfig"].raw());
      add("Grid id", row["gridId"].raw());
      break;
    }
    case ItemSource::kMemcpy: {
      const Cell& b = row["bytes"];
      add("Copy kind", enumText("ENUM_CUDA_MEMCPY_OPER", row["copyKind"]));
      add("Bytes", bytes(b));
      add("Bandwidth",
          b.asInt() ? formatBandwidth(*b.asInt(), item.end - item.start) : std::string(kNoValue));
      add("Source kind", enumText("ENUM_CUDA_MEM_KIND", row["srcKind"]));
      add("Destination kind", enumText("ENUM_CUDA_MEM_KIND", row["dstKind"]));
      add("Source device", row["srcDeviceId"].raw());
      add("Destination device", row["dstDeviceId"].raw());
      // nsys columns rlscope never writes: shown only when an nsys import filled them.
      for (auto [column, label] : {std::pair{"srcContextId", "Source context"},
                                   {"dstContextId", "Destination context"},
                                   {"migrationCause", "Migration cause"},
                                   {"deprecatedSrcId", "Deprecated source id"}}) {
        const Cell& c = row[column];
        if (c.type != Cell::Type::kNull && c.type != Cell::Type::kMissing) add(label, c.raw());
      }
      break;
    }
    case ItemSource::kMemset: {
      const Cell& b = row["bytes"];
      add("Bytes", bytes(b));
      add("Bandwidth",
          b.asInt() ? formatBandwidth(*b.asInt(), item.end - item.start) : std::string(kNoValue));
      add("Value", row["value"].raw());
      add("Memory kind", enumText("ENUM_CUDA_MEM_KIND", row["memKind"]));
      break;
    }
  }
  if (isGpu(item.source)) {
    add("Context", row["contextId"].raw());
    add("Correlation id", row["correlationId"].raw());
    add("Graph node id", row["graphNodeId"].raw());
    if (item.source == ItemSource::kKernel) add("Graph id", row["graphId"].raw());
    if (auto pid = row["globalPid"].asInt()) globalPid = *pid;
    addLaunchFields(globalPid, row["correlationId"], false, out);
  }
}

// The call and GPU work on either side of a correlation id, and the operation it was launched in.
void EventDetailsReader::Impl::addLaunchFields(std::int64_t globalPid, const Cell& correlation,
                                               bool isCall, EventDetails& out) {
  auto id = correlation.asInt();
  std::string names;
  if (id && *id != 0) {
    Statement* st = isCall ? launched.get(connection()) : launchedBy.get(connection());
    if (st) {
      st->bind(1, *id);
      st->bind(2, globalPid);
      if (!isCall) st->bind(3, globalPid + trace::kGlobalIdFieldLimit);
      int n = 0;
      while (st->step()) {
        if (++n > (isCall ? kMaxLaunched : 3)) {
          names += ", …";
          break;
        }
        names += (names.empty() ? "" : ", ") + displayText(st->columnText(0));
      }
      st->reset();
    }
  }
  out.fields.push_back(
      {isCall ? "Launched" : "Launched by", names.empty() ? std::string(kNoValue) : names});
  std::string operation(kNoValue);
  if (id && *id != 0) {
    if (Statement* st = launchOperation.get(connection())) {
      st->bind(1, globalPid);
      st->bind(2, *id);
      if (st->step()) {
        std::string name = displayText(st->columnText(1));
        std::string opId = std::to_string(st->columnInt(0));
        operation = name.empty() ? "id " + opId : name + " (id " + opId + ")";
      }
      st->reset();
    }
  }
  out.fields.push_back({"Launched in operation", operation});
}

// An NVTX operation's domain, category, colour and payload, from the NVTX range it was made of.
void EventDetailsReader::Impl::addNvtxFields(const RowQuery& row, std::int64_t globalTid,
                                             EventDetails& out) {
  auto add = [&](std::string label, std::string value) {
    out.fields.push_back({std::move(label), std::move(value)});
  };
  Statement* st = nvtxRange.get(connection());
  auto start = row["start"].asInt(), end = row["end"].asInt();
  if (!st || !start || !end) return add("Domain", std::string(kNoValue));
  st->bind(1, globalTid);
  st->bind(2, *start);
  st->bind(3, *end);
  if (!st->step()) {
    st->reset();
    return add("Domain", std::string(kNoValue));
  }
  Cell domain = readCell(*st, 0), category = readCell(*st, 2), color = readCell(*st, 4);
  std::optional<Cell> payload;
  for (int col = 6; col < 18 && !payload; col += 2) {
    Cell c = readCell(*st, col);
    if (c.type != Cell::Type::kNull) payload = c;
  }
  st->reset();

  std::string domainName(kNoValue);
  if (domain.asInt() == 0) {
    domainName = "default";
  } else if (auto d = domain.asInt()) {
    domainName = "domain " + std::to_string(*d);
    if (Statement* q = nvtxDomain.get(connection())) {
      std::int64_t globalPid = trace::globalPidOfTid(globalTid);
      q->bind(1, *d);
      q->bind(2, globalPid);
      q->bind(3, globalPid + trace::kGlobalIdFieldLimit);
      if (q->step() && !q->columnText(0).empty()) domainName = displayText(q->columnText(0));
      q->reset();
    }
  }
  add("Domain", domainName);
  add("NVTX category", category.raw());
  if (auto argb = color.asInt()) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%08" PRIX32, static_cast<std::uint32_t>(*argb));
    add("NVTX color", buf);
  } else {
    add("NVTX color", color.raw());
  }
  add("NVTX payload", payload ? payload->raw() : std::string(kNoValue));
}

// The args JSON object, one field per top-level member ("args.Input Dims"), parsed by SQLite's
// json_each from the row itself (the cell read for display is cut to kMaxText). Text that is not a
// JSON object is shown as it is.
void EventDetailsReader::Impl::addArgs(ItemSource source, std::int64_t rowid, const Cell& args,
                                       EventDetails& out) {
  if (args.type == Cell::Type::kMissing || args.type == Cell::Type::kNull) return;
  std::string_view text = args.text;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  if (args.type != Cell::Type::kText || !text.starts_with('{'))
    return out.fields.push_back({"args", args.raw()});
  auto& query = source == ItemSource::kOperation ? operationArgs : cpuIntervalArgs;
  Statement* st = query.get(connection());
  std::vector<DetailField> members;
  try {
    if (!st) throw std::runtime_error("no JSON support");
    st->bind(1, rowid);
    while (st->step()) {
      if (members.size() == kMaxArgs) {
        members.push_back({"args", "… (more not shown)"});
        break;
      }
      std::string_view type = st->columnText(1);
      std::string value = type == "true"    ? "true"
                          : type == "false" ? "false"
                          : type == "null"  ? "null"
                                            : displayText(st->columnText(2));
      members.push_back({"args." + displayText(st->columnText(0)), std::move(value)});
    }
    st->reset();
  } catch (const std::exception&) {
    return out.fields.push_back({"args", args.raw()});  // malformed JSON
  }
  for (auto& m : members) out.fields.push_back(std::move(m));
}

EventDetailsReader::EventDetailsReader(std::filesystem::path trace)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(trace);
}

EventDetailsReader::EventDetailsReader(trace::Database& db) : impl_(std::make_unique<Impl>()) {
  impl_->path = db.path();
  impl_->db = &db;
}

EventDetailsReader::~EventDetailsReader() = default;

EventDetails EventDetailsReader::read(const TimelineData& data, const Track& track,
                                      const TrackItem& item) noexcept {
  try {
    return impl_->read(data, track, item);
  } catch (const std::exception& e) {
    // Opening the connection, or a failure outside the row's part.
    EventDetails out;
    out.title = std::string(data.name(item));
    out.problem = e.what();
    return out;
  }
}

EventDetails readEventDetails(trace::Database& db, const TimelineData& data, const Track& track,
                              const TrackItem& item) noexcept {
  try {
    EventDetailsReader reader(db);
    return reader.read(data, track, item);
  } catch (const std::exception& e) {
    EventDetails out;
    out.problem = e.what();
    return out;
  }
}

}  // namespace rlscope::gui
