#include "importer.h"

#include <chrono>
#include <cstdio>
#include <fstream>

#include "input_file.h"
#include "kineto_importer.h"
#include "nsys_importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/input_path.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/sqlite.h"

namespace rlscope::import {

using trace::TraceError;

std::string_view formatName(InputFormat f) {
  switch (f) {
    case InputFormat::kKinetoJson:
      return "Kineto JSON";
    case InputFormat::kNsysSqlite:
      return "Nsight Systems SQLite export";
    case InputFormat::kRlscopeTrace:
      return "rlscope trace";
  }
  return "unknown";
}

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

// First non-blank byte of a text, skipping a UTF-8 byte-order mark.
char firstSignificantByte(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
  }
  return '\0';
}

InputFormat detectFromText(const std::filesystem::path& input, std::string_view text) {
  if (text.empty()) throw TraceError(input.string() + ": empty file");
  char c = firstSignificantByte(text);
  if (c == '{' || c == '[') return InputFormat::kKinetoJson;
  if (c == '\0') throw TraceError(input.string() + ": file holds only whitespace");
  throw TraceError(input.string() +
                   ": unrecognised format (expected Kineto/Chrome trace JSON, .json.gz, or an "
                   "Nsight Systems SQLite export)");
}

InputFormat detectSqlite(const std::filesystem::path& input) {
  trace::Database db(input, trace::Database::Mode::kReadOnlyUntrusted);
  try {
    if (db.hasTable(trace::table::kMeta)) return InputFormat::kRlscopeTrace;
  } catch (const TraceError&) {
    throw TraceError(input.string() + ": corrupt SQLite database");
  }
  return InputFormat::kNsysSqlite;
}

}  // namespace

InputFormat detectFormat(const std::filesystem::path& input) {
  trace::requireInputFile(input);
  if (trace::looksLikeSqlite(input)) return detectSqlite(input);
  if (isGzipFile(input)) return InputFormat::kKinetoJson;  // content checked after inflating
  std::ifstream in(input, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return detectFromText(input, head);
}

ImportStats importFile(const std::filesystem::path& input, const std::filesystem::path& output,
                       const ImportOptions& options) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::exists(input, ec) &&
      std::filesystem::equivalent(input, output, ec)) {
    throw TraceError(output.string() + ": output would overwrite the input");
  }
  ImportStats stats;
  stats.format = detectFormat(input);
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
  auto commit = [&](trace::TraceWriter& writer) {
    phaseDone("read " + std::to_string(stats.events) + " events");
    writer.commit();
    phaseDone("wrote and indexed " + std::to_string(writer.rowsWritten()) + " rows");
  };
  switch (stats.format) {
    case InputFormat::kRlscopeTrace:
      throw TraceError(input.string() + ": is already an rlscope trace; nothing to import");
    case InputFormat::kKinetoJson: {
      auto in = readInput(input, options.maxInputBytes);
      detectFromText(input, in.text());
      stats.inputBytes = in.text().size();
      phaseDone("loaded " + std::to_string(in.text().size() >> 20) + " MiB" +
                (in.wasGzip() ? " (gunzipped)" : ""));
      trace::TraceWriter writer(output, writerOptions(options));
      writer.setMeta(trace::meta::kSourceFile, input.filename().string());
      try {
        importKineto(in.text(), writer, options, stats);
      } catch (const TraceError& e) {
        throw TraceError(input.string() + ": " + e.what());
      }
      commit(writer);
      break;
    }
    case InputFormat::kNsysSqlite: {
      stats.inputBytes = std::filesystem::file_size(input, ec);
      trace::TraceWriter writer(output, writerOptions(options));
      writer.setMeta(trace::meta::kSourceFile, input.filename().string());
      importNsys(input, writer, options, stats);
      commit(writer);
      break;
    }
  }
  return stats;
}

}  // namespace rlscope::import
