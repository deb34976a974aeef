#include "rlscope/trace/sqlite.h"

#include <array>
#include <cstdio>
#include <fstream>

namespace rlscope::trace {

namespace {

// Limits for files from strangers: no single value or SQL text larger than this.
constexpr int kMaxLength = 256 * 1024 * 1024;
constexpr int kMaxSqlLength = 1024 * 1024;

void configureUntrusted(sqlite3* db) {
  // https://www.sqlite.org/security.html: defensive mode, no trust in schema-defined functions,
  // no triggers or views that could run code on read, bounded sizes.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxLength);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlLength);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
}

// SQLite's global memory statistics take a mutex on every allocation; rlscope never reads them.
// Must run before SQLite initialises; later calls are refused harmlessly.
void configureProcessOnce() {
  static const bool done = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)done;
}

}  // namespace

std::string sqliteFileUri(const std::filesystem::path& path, std::string_view query) {
  std::string out = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (!query.empty()) {
    out += '?';
    out += query;
  }
  return out;
}

bool looksLikeSqlite(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 16> header{};
  if (!in.read(header.data(), header.size())) return false;
  return std::string_view(header.data(), header.size()) ==
         std::string_view("SQLite format 3\0", 16);
}

Database::Database(const std::filesystem::path& path, Mode mode) : path_(path) {
  configureProcessOnce();
  int flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  std::string uri;
  if (mode == Mode::kCreate) {
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    uri = sqliteFileUri(path, "");
  } else {
    flags |= SQLITE_OPEN_READONLY;
    // immutable=1: no locks, no -wal/-shm files, the input is never touched.
    uri = sqliteFileUri(path, "mode=ro&immutable=1");
  }
  int rc = sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw TraceError(path.string() + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  if (mode == Mode::kReadOnlyUntrusted) {
    configureUntrusted(db_);
    exec("PRAGMA cell_size_check=ON");
    exec("PRAGMA mmap_size=0");
  }
}

Database::~Database() {
  close();
}

void Database::close() {
  if (db_) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

void Database::fail(std::string_view what) const {
  std::string msg = db_ ? sqlite3_errmsg(db_) : "database closed";
  int code = db_ ? sqlite3_errcode(db_) : 0;
  if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT) {
    throw TraceError(path_.string() + ": not a valid SQLite database or corrupt (" + msg + ")");
  }
  throw TraceError(path_.string() + ": " + std::string(what) + ": " + msg);
}

void Database::exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);
    fail("SQL failed");
  }
}

Statement Database::prepare(std::string_view sql) {
  return Statement(*this, sql);
}

bool Database::hasTable(std::string_view table) {
  Statement st(*this, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  st.bind(1, table);
  return st.step();
}

bool Database::hasColumn(std::string_view table, std::string_view column) {
  Statement st(*this, "SELECT 1 FROM pragma_table_info(?) WHERE name=?");
  st.bind(1, table);
  st.bind(2, column);
  return st.step();
}

std::optional<std::int64_t> Database::queryInt(std::string_view sql) {
  Statement st(*this, sql);
  if (!st.step() || st.columnIsNull(0)) return std::nullopt;
  return st.columnInt(0);
}

Statement::Statement(Database& db, std::string_view sql) : db_(&db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    db.fail("cannot prepare '" + std::string(sql.substr(0, 60)) + "'");
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

void Statement::check(int rc) const {
  if (rc != SQLITE_OK) db_->fail("cannot bind a value");
}

void Statement::bind(int index, std::string_view text) {
  // SQLITE_STATIC: no copy. Callers keep the text alive until the statement is stepped, which
  // every caller here does right after binding (the writer's hot path binds millions of names).
  check(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8));
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("query failed");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string_view Statement::columnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p),
          static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::string Statement::columnAsText(int col) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_NULL:
      return {};
    case SQLITE_INTEGER:
      return std::to_string(columnInt(col));
    default:
      return std::string(columnText(col));
  }
}

std::string quotedIdentifier(std::string_view identifier) {
  // Appended piece by piece: `"\"" + std::string(...)` trips GCC 12's -Wrestrict at -O3.
  std::string out;
  out.reserve(identifier.size() + 2);
  out += '"';
  for (char c : identifier) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace rlscope::trace
