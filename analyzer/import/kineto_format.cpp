// Kineto JSON as a format of `rlscope import`: which files are Kineto (or Chrome trace) JSON, and
// reading one (plain or gzip) before importKineto parses it.
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "rlscope/import/input_file.h"
#include "rlscope/import/kineto_importer.h"
#include "rlscope/trace/error.h"

namespace rlscope::import {

namespace {

using trace::TraceError;

constexpr std::string_view kFiles = "Kineto/Chrome trace JSON (.json, .json.gz)";

// First non-blank byte of a text, skipping a UTF-8 byte-order mark.
char firstSignificantByte(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  auto at = text.find_first_not_of(" \t\r\n");
  return at == std::string_view::npos ? '\0' : text[at];
}

bool looksLikeJson(std::string_view text) {
  char c = firstSignificantByte(text);
  return c == '{' || c == '[';
}

// Chrome's trace format is an object with traceEvents or an array of events, each with a phase
// ("ph"); other JSON is only the family. Gzip is read as Kineto's: it is the one compressed format.
Match matchKineto(const InputSample& s) {
  if (s.sqlite) return Match::kNo;
  bool json = looksLikeJson(s.head);
  if (json && (s.head.find("\"traceEvents\"") != std::string_view::npos ||
               s.head.find("\"ph\"") != std::string_view::npos)) {
    return Match::kYes;
  }
  return json || s.gzip ? Match::kMaybe : Match::kNo;
}

void importKinetoFile(const std::filesystem::path& input, trace::TraceWriter& writer,
                      const ImportOptions& options, ImportStats& stats) {
  auto t0 = std::chrono::steady_clock::now();
  auto in = readInput(input, options.maxInputBytes);
  std::string_view text = in.text();
  if (text.empty()) throw TraceError(input.string() + ": empty file");
  if (!looksLikeJson(text)) {
    throw TraceError(input.string() +
                     ": unrecognised format (gunzipped, it is not JSON; expected " +
                     std::string(kFiles) + ")");
  }
  stats.inputBytes = text.size();
  if (options.progress) {
    char took[64];
    std::snprintf(took, sizeof took, " (%.2f s)",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    options.progress("loaded " + std::to_string(text.size() >> 20) + " MiB" +
                     (in.wasGzip() ? " (gunzipped)" : "") + took);
  }
  try {
    importKineto(text, writer, options, stats);
  } catch (const TraceError& e) {
    throw TraceError(input.string() + ": " + e.what());
  }
}

}  // namespace

const Format& kinetoFormat() {
  static const Format format{
      .name = "Kineto JSON", .files = kFiles, .match = matchKineto, .import = importKinetoFile};
  return format;
}

}  // namespace rlscope::import
