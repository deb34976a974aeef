// `rlscope import`: turns a trace from another profiler into an rlscope trace. The format is
// chosen by content (gzip and SQLite magic, what the first bytes or tables show), never by file
// name. Each format is one entry of formats() (import_formats.cpp): a name, a test of a sample
// of the input, and its importer, which writes through trace::TraceWriter. A new format is its
// own file and a line in that table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/sqlite.h"
#include "rlscope/trace/writer.h"

namespace rlscope::import {

struct ImportOptions {
  // Inputs (after decompression) larger than this are refused: a stranger's file must not be
  // able to exhaust memory. 16 GiB by default.
  std::uint64_t maxInputBytes = std::uint64_t{16} << 30;
  // Keep the trace's indexes up to date while loading (the writer thread has time to spare
  // while the source is read) rather than building them at the end.
  bool indexDuringLoad = true;
  // Kineto JSON: events are parsed in chunks of about this many bytes, on a second thread when
  // there are several; 0 parses the document in one piece (the result is the same).
  std::size_t kinetoChunkBytes = std::size_t{64} << 10;
  // Called with short human-readable progress lines on long imports; may be empty.
  std::function<void(std::string_view)> progress;
};

struct ImportStats {
  std::string_view format;       // Format::name of the input's format
  std::uint64_t inputBytes = 0;  // after decompression
  std::uint64_t events = 0;      // source events read
  std::map<std::string, std::uint64_t> rowsPerTable;
  std::vector<std::string> warnings;  // things kept but worth telling (one line each)
};

// What format detection shows a format of an input.
struct InputSample {
  std::string_view head;              // the first kSampleBytes, gunzipped when `gzip`
  bool gzip = false;                  // the file is gzip (head may be short if it is corrupt)
  trace::Database* sqlite = nullptr;  // the file opened read-only when it is an SQLite database
};
inline constexpr std::size_t kSampleBytes = std::size_t{1} << 20;

// How sure a format is that a sample is its own. kMaybe: the family fits (JSON, SQLite) but not
// the content; the first kYes wins, else the first kMaybe, whose importer then says what is
// wrong with the file in its own terms.
enum class Match { kNo, kMaybe, kYes };

struct Format {
  std::string_view name;   // as users read it: "Kineto JSON"
  std::string_view files;  // what its files are, for the error on an unrecognised input
  Match (*match)(const InputSample& sample);
  // Reads `input` into `writer` and fills `stats` (not its format); throws TraceError.
  void (*import)(const std::filesystem::path& input, trace::TraceWriter& writer,
                 const ImportOptions& options, ImportStats& stats);
};

// Every format `rlscope import` reads, in the order they are asked.
std::span<const Format* const> formats();

// The format of `input` by its content, or nullptr when it is an rlscope trace already. Throws
// TraceError for unreadable, corrupt or unrecognised files.
const Format* detectFormat(const std::filesystem::path& input);

// Detects the format of `input` and writes the trace at `output` atomically: on any error a
// trace::TraceError is thrown, no file is left at `output`, and `input` is never modified.
ImportStats importFile(const std::filesystem::path& input, const std::filesystem::path& output,
                       const ImportOptions& options = {});

}  // namespace rlscope::import
