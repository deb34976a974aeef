// Small RAII wrappers over the SQLite C API: one connection, one prepared statement. Every failure
// becomes a TraceError naming the file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "rlscope/trace/error.h"

namespace rlscope::trace {

class Statement;

class Database {
 public:
  enum class Mode {
    kCreate,             // new file, read-write
    kReadOnlyUntrusted,  // someone else's file: read-only, immutable, defensive flags, limits
  };
  Database(const std::filesystem::path& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  bool hasTable(std::string_view table);
  bool hasColumn(std::string_view table, std::string_view column);
  // SELECT of a single integer; nullopt when no row or NULL.
  std::optional<std::int64_t> queryInt(std::string_view sql);
  void close();

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }
  [[noreturn]] void fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding, 1-based like SQLite.
  void bind(int index, std::int64_t value) { check(sqlite3_bind_int64(stmt_, index, value)); }
  void bind(int index, double value) { check(sqlite3_bind_double(stmt_, index, value)); }
  // TEXT, not copied: `text` must stay alive until the next step() or reset().
  void bind(int index, std::string_view text);
  void bindNull(int index) { check(sqlite3_bind_null(stmt_, index)); }

  // step(): true while rows come; false when done. run(): step to completion, then reset.
  bool step();
  void run();
  void reset();
  // reset() that keeps the bindings: for a caller that binds every parameter before each step,
  // clearing them first is a second pass over all of them.
  void resetKeepingBindings() { sqlite3_reset(stmt_); }

  std::int64_t columnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
  double columnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  bool columnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string_view columnText(int col) const;
  // The value as text whatever its storage class (INTEGER or TEXT), for loosely typed columns.
  std::string columnAsText(int col) const;
  int columnCount() const { return sqlite3_column_count(stmt_); }

 private:
  void check(int rc) const;
  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// SQLite URI for a path (percent-escapes the characters that URIs reserve).
std::string sqliteFileUri(const std::filesystem::path& path, std::string_view query);
// True when the first 16 bytes of the file are SQLite's header.
bool looksLikeSqlite(const std::filesystem::path& path);
// An identifier (a table or column name, perhaps a stranger's) quoted for SQL: "name", with any
// '"' in it doubled.
std::string quotedIdentifier(std::string_view identifier);

}  // namespace rlscope::trace
