// Nsight Systems export import of arbitrary databases. The input is SQL run into an empty
// database (the seeds build small exports: tables nsys writes, with odd values), which reaches the
// importer's handling of missing tables and columns, NULLs, huge or negative times and dangling
// string ids far more often than mutated file bytes would; SQLite itself is fuzzed upstream. An
// input that starts with the SQLite file header is taken as the database file itself. An error is
// fine (the command prints it as one line); a crash, hang, leak or sanitizer report is a bug.
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "rlscope/import/nsys_importer.h"

namespace {

struct Scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlscope-fuzz-nsys-" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
};

// The script may not reach outside its database (ATTACH writes any file) or run forever.
int denyAttach(void*, int action, const char*, const char*, const char*, const char*) {
  return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}
int stopLongScripts(void* steps) {
  return ++*static_cast<int*>(steps) > 2000 ? 1 : 0;
}

bool buildDatabase(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  static constexpr char kHeader[] = "SQLite format 3";
  if (size >= sizeof kHeader && std::memcmp(data, kHeader, sizeof kHeader) == 0) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return true;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  sqlite3_set_authorizer(db, denyAttach, nullptr);
  int steps = 0;
  sqlite3_progress_handler(db, 1000, stopLongScripts, &steps);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  std::string script(reinterpret_cast<const char*>(data), size);
  sqlite3_exec(db, script.c_str(), nullptr, nullptr, nullptr);  // what ran before an error stays
  sqlite3_close(db);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  const std::filesystem::path input = scratch.dir / "export.sqlite";
  const std::filesystem::path trace = scratch.dir / "trace.sqlite";
  std::filesystem::remove(input);
  if (!buildDatabase(input, data, size)) return 0;
  try {
    rlscope::trace::TraceWriter writer(trace);
    rlscope::import::ImportOptions options;
    rlscope::import::ImportStats stats;
    rlscope::import::importNsys(input, writer, options, stats);
    writer.commit();
  } catch (const std::exception&) {
  }
  std::filesystem::remove(trace);
  return 0;
}
