// TraceReader: opens a trace read-only (untrusted-input settings), checks its schema version, and
// streams the events of one table in start order, filtered by process, thread, stream, category
// or time window. The SQL handle is there too, for queries the API does not cover.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/process_identity.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::trace {

// Which events a for-each visits. Unset fields do not filter. A window keeps the events that
// overlap [windowStart, windowEnd) (zero-length events at windowStart included).
struct EventFilter {
  std::optional<std::int64_t> globalPid;
  std::optional<std::int64_t> globalTid;
  std::optional<std::int64_t> deviceId;
  std::optional<std::int64_t> streamId;
  std::optional<Category> category;  // rlscope_cpu_intervals only
  std::optional<TimeNs> windowStart;
  std::optional<TimeNs> windowEnd;
  // Visit rows in storage (insertion) order instead of start order: no sort, about twice as fast
  // on big tables, for consumers to which the order does not matter (exporters, counters).
  bool storageOrder = false;
};

struct TimeSpan {
  TimeNs start = 0;
  TimeNs end = 0;
};

class TraceReader {
 public:
  // Throws TraceError with one clear line for a missing file, a file that is not SQLite, a corrupt
  // database, or a schema version this build does not read.
  explicit TraceReader(const std::filesystem::path& path);
  ~TraceReader();

  int schemaVersion() const { return schemaVersion_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  std::optional<std::string> metaValue(std::string_view key) const;

  // The text of an interned string; empty for kNoString or an unknown id.
  std::string_view string(StringId id);
  std::int64_t rowCount(std::string_view table);
  // Earliest start and latest end over every event table; nullopt for a trace without events.
  std::optional<TimeSpan> timeSpan();

  std::vector<ProcessRecord> processes();
  std::vector<ThreadRecord> threads();
  // Who each process of rlscope_processes is, in globalPid order: its rlscope_process_identity row,
  // or, where it has none (version-1 traces, imports that could not tell), its host from
  // rlscope_meta and no rank.
  std::vector<ProcessIdentityRecord> processIdentities();
  std::vector<GpuInfoRecord> gpus();
  std::vector<ThreadNameRecord> threadNames();
  std::vector<CalibrationRecord> calibration();
  std::vector<ExternalCorrelationRecord> externalCorrelations();

  // Streaming, in start order (ties broken by insertion order).
  void forEachCpuInterval(const EventFilter& f,
                          const std::function<void(const CpuIntervalRecord&)>& fn);
  void forEachOperation(const EventFilter& f,
                        const std::function<void(const OperationRecord&)>& fn);
  // An operation's timing and nesting, without `source` and `args`: the columns, for a scan
  // (rlscope/trace/scan.h) of kOperations that wants only those, and their decoding.
  static constexpr std::string_view kOperationTimingColumns =
      "id, start, end, globalTid, nameId, parentId, depth";
  static void readOperationTiming(Statement& st, OperationRecord& r);
  void forEachPhase(const EventFilter& f, const std::function<void(const PhaseRecord&)>& fn);
  void forEachApiCall(ApiKind kind, const EventFilter& f,
                      const std::function<void(const ApiCallRecord&)>& fn);
  void forEachKernel(const EventFilter& f, const std::function<void(const KernelRecord&)>& fn);
  void forEachMemcpy(const EventFilter& f, const std::function<void(const MemcpyRecord&)>& fn);
  void forEachMemset(const EventFilter& f, const std::function<void(const MemsetRecord&)>& fn);
  void forEachSync(const EventFilter& f, const std::function<void(const SyncRecord&)>& fn);
  void forEachNvtx(const EventFilter& f, const std::function<void(const NvtxRecord&)>& fn);
  void forEachPlainEvent(const std::function<void(const PlainEventRecord&)>& fn);

  Database& db() { return *db_; }

 private:
  // SELECT <columns> FROM <table> WHERE <filter> ORDER BY start, rowid (or rowid alone for
  // storageOrder); calls fn per row.
  void query(std::string_view table, std::string_view columns, const EventFilter& f,
             const std::function<void(Statement&)>& fn);
  TimeNs maxDuration(std::string_view table);

  std::unique_ptr<Database> db_;
  int schemaVersion_ = 0;
  std::map<std::string, std::string> meta_;
  std::vector<std::string> strings_;  // index = StringId, loaded on first use
  bool stringsLoaded_ = false;
  std::map<std::string, TimeNs, std::less<>> maxDuration_;
};

}  // namespace rlscope::trace
