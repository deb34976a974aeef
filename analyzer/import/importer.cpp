#include "rlscope/import/importer.h"

#include <chrono>
#include <cstdio>

#include "rlscope/import/input_file.h"
#include "rlscope/import/kineto_importer.h"
#include "rlscope/import/nsys_importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/input_path.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::import {

using trace::TraceError;

namespace {

// Reading the source (parsing JSON, or querying an nsys export) is slower than SQLite's inserts,
// so the writer thread has time to keep the indexes up to date during the load instead of
// building them at the end.
trace::WriterOptions writerOptions(const ImportOptions& options) {
  trace::WriterOptions w;
  w.indexing = options.indexDuringLoad ? trace::WriterOptions::Indexing::kDuringLoad
                                       : trace::WriterOptions::Indexing::kAtCommit;
  return w;
}

bool onlyWhitespace(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

const Format* pick(const InputSample& sample) {
  const Format* maybe = nullptr;
  for (const Format* f : formats()) {
    Match m = f->match(sample);
    if (m == Match::kYes) return f;
    if (m == Match::kMaybe && !maybe) maybe = f;
  }
  return maybe;
}

[[noreturn]] void unrecognised(const std::filesystem::path& input) {
  std::string expected = "an rlscope trace";
  for (const Format* f : formats()) expected += ", " + std::string(f->files);
  throw TraceError(input.string() + ": unrecognised format (expected " + expected + ")");
}

}  // namespace

const Format* detectFormat(const std::filesystem::path& input) {
  trace::requireInputFile(input);
  if (trace::looksLikeSqlite(input)) {
    trace::Database db(input, trace::Database::Mode::kReadOnlyUntrusted);
    try {
      if (db.hasTable(trace::table::kMeta)) return nullptr;
    } catch (const TraceError&) {
      throw TraceError(input.string() + ": corrupt SQLite database");
    }
    if (const Format* f = pick({.sqlite = &db})) return f;
    unrecognised(input);
  }
  InputSample sample;
  std::string head = readSample(input, kSampleBytes, &sample.gzip);
  sample.head = head;
  if (!sample.gzip && head.empty()) throw TraceError(input.string() + ": empty file");
  if (!sample.gzip && onlyWhitespace(head) && head.size() < kSampleBytes)
    throw TraceError(input.string() + ": file holds only whitespace");
  if (const Format* f = pick(sample)) return f;
  unrecognised(input);
}

ImportStats importFile(const std::filesystem::path& input, const std::filesystem::path& output,
                       const ImportOptions& options) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::exists(input, ec) &&
      std::filesystem::equivalent(input, output, ec)) {
    throw TraceError(output.string() + ": output would overwrite the input");
  }
  ImportStats stats;
  const Format* format = detectFormat(input);
  if (!format)
    throw TraceError(input.string() + ": is already an rlscope trace; nothing to import");
  stats.format = format->name;
  // Progress lines with the time each phase took, for imports that run for seconds.
  auto t0 = std::chrono::steady_clock::now();
  auto phaseDone = [&](const std::string& what) {
    if (!options.progress) return;
    auto now = std::chrono::steady_clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.2f s)", std::chrono::duration<double>(now - t0).count());
    options.progress(what + buf);
    t0 = now;
  };
  trace::TraceWriter writer(output, writerOptions(options));
  writer.setMeta(trace::meta::kSourceFile, input.filename().string());
  format->import(input, writer, options, stats);
  phaseDone("read " + std::to_string(stats.events) + " events");
  writer.commit();
  phaseDone("wrote and indexed " + std::to_string(writer.rowsWritten()) + " rows");
  return stats;
}

}  // namespace rlscope::import
