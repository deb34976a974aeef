// Builds small Nsight Systems SQLite exports (`nsys export --type sqlite`, schema 3.x) for the
// importer's tests. NVIDIA publishes no sample export, so the DDL here is written from the
// documented column lists (shared/reference/ecosystem.md §2.2), including columns rlscope does not
// read. Like nsys, a table is created on its first row (exports create tables lazily); a test can
// create one earlier with its own column set to mimic another schema version, and rows then fill
// only the columns that table has.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "rlscope/trace/records.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::testing {

struct NsysFixtureOptions {
  // META_DATA_EXPORT's EXPORT_SCHEMA_VERSION; nullopt leaves the row (and the table) out.
  std::optional<std::string> schemaVersion = "3.11.0";
  // StringIds ids handed out by string(): first, first + step, ... (nsys ids need not match ours).
  std::int64_t firstStringId = 1;
  std::int64_t stringIdStep = 1;
};

// A value of one column: NULL, INTEGER or TEXT.
using NsysValue = std::variant<std::monostate, std::int64_t, std::string>;

class NsysFixture {
 public:
  explicit NsysFixture(const std::filesystem::path& path, NsysFixtureOptions options = {});
  ~NsysFixture();
  NsysFixture(const NsysFixture&) = delete;
  NsysFixture& operator=(const NsysFixture&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // The export's id of `text` in StringIds, adding it the first time.
  std::int64_t string(std::string_view text);

  // Creates `table` with the given column definitions ("start INTEGER NOT NULL, ...") instead of
  // the documented DDL. Call before the table's first row.
  void createTable(std::string_view table, std::string_view columnDefinitions);
  // Creates `table` with its documented DDL and no rows.
  void createEmptyTable(std::string_view table);
  void exec(std::string_view sql);

  // Rows, in export terms: string-id fields hold ids from string(); a zero mangledName, textId,
  // endGlobalTid or callchainId is written as NULL, as nsys does.
  void kernel(const trace::KernelRecord& r);
  void runtime(const trace::ApiCallRecord& r);
  void driver(const trace::ApiCallRecord& r);
  void memcpy(const trace::MemcpyRecord& r);
  void memset(const trace::MemsetRecord& r);
  void sync(const trace::SyncRecord& r);
  void nvtx(const trace::NvtxRecord& r);
  void threadName(std::int64_t globalTid, std::string_view name, std::int64_t priority = 0);
  void gpu(const trace::GpuInfoRecord& r);
  void process(std::int64_t globalPid, std::int64_t pid, std::string_view name);
  void sessionStart(std::int64_t utcEpochNs);

  // `count` CUDA runtime rows in one statement, for imports too big to build row by row: row i
  // spans [10 i, 10 i + 5) with correlationId i + 1.
  void runtimeRows(std::int64_t count, std::int64_t globalTid, std::int64_t nameId);

  // Any row: columns the table lacks are skipped.
  void insert(std::string_view table,
              const std::vector<std::pair<std::string_view, NsysValue>>& values);

  // Commits and closes the file; the destructor does it too.
  void close();

 private:
  void ensureTable(std::string_view table);
  void apiCall(std::string_view table, const trace::ApiCallRecord& r);

  std::filesystem::path path_;
  NsysFixtureOptions options_;
  std::unique_ptr<trace::Database> db_;
  std::map<std::string, std::vector<std::string>, std::less<>> columns_;  // created tables
  std::map<std::string, std::int64_t, std::less<>> strings_;
  std::int64_t nextStringId_ = 0;
};

}  // namespace rlscope::testing
