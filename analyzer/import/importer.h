// `rlscope import`: turns a trace from another profiler into an rlscope trace. The format is
// chosen by content (gzip and SQLite magic, JSON shape), never by file name. One importer per
// format (Kineto JSON, Nsight Systems SQLite), all writing through trace::TraceWriter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/writer.h"

namespace rlscope::import {

enum class InputFormat { kKinetoJson, kNsysSqlite, kRlscopeTrace };
std::string_view formatName(InputFormat f);

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
  InputFormat format = InputFormat::kKinetoJson;
  std::uint64_t inputBytes = 0;  // after decompression
  std::uint64_t events = 0;      // source events read
  std::map<std::string, std::uint64_t> rowsPerTable;
  std::vector<std::string> warnings;  // things kept but worth telling (one line each)
};

// Detects the format of `input` and writes the trace at `output` atomically: on any error a
// trace::TraceError is thrown, no file is left at `output`, and `input` is never modified.
ImportStats importFile(const std::filesystem::path& input, const std::filesystem::path& output,
                       const ImportOptions& options = {});

// Format detection by content. Throws TraceError for unreadable or unrecognised files.
InputFormat detectFormat(const std::filesystem::path& input);

}  // namespace rlscope::import
