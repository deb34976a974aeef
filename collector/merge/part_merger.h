// Turns the part files of one profiled run into its SQLite trace (what rlscope-prof does after
// the program ends). Parts of processes that died mid-run are merged as far as they go, and the
// report says what was cut short.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rlscope/trace/records.h"

namespace rlscope::merge {

struct MergeOptions {
  std::string commandLine;     // the profiled command, for the trace's metadata
  std::string job;             // rlscope-prof --job, for the trace's metadata; empty: none
  std::uint32_t features = 0;  // part::FeatureBits rlscope-prof ran with
  // Why GPU activity cannot be recorded at all on this machine (found before the run), or empty.
  std::string gpuUnavailableReason;
  std::function<void(const std::string&)> progress;  // optional progress lines
  // Parts of at least this many bytes in all make a long merge (about 4 s per 100 MiB): it says
  // what it is doing (parts and size, operations to nest, the end of the writing) instead of
  // leaving the terminal silent. Shorter merges print the per-part lines only.
  std::uint64_t progressAboveBytes = 32u << 20;
  // The wall time of the profiled command, spawn to exit, as rlscope-prof measured it (0:
  // unknown): the instrumented total that overhead correction starts from.
  std::int64_t commandElapsedNs = 0;
  // Per-event overhead costs measured for this command (rlscope-prof --calibrate).
  std::vector<trace::CalibrationRecord> calibration;
};

struct MergeReport {
  int processes = 0;
  int threads = 0;
  std::uint64_t rows = 0;
  std::map<std::string, std::uint64_t> rowsPerTable;
  std::string gpuActivity;            // the trace's gpu_activity metadata value
  std::vector<std::string> warnings;  // one line each: cut-short parts, unmatched NVTX pops, ...
};

// Reads every *.part file in partDir and writes the trace to `out` (atomically: nothing is left
// at `out` on error). Throws std::runtime_error with one line on failure.
MergeReport mergeParts(const std::filesystem::path& partDir, const std::filesystem::path& out,
                       const MergeOptions& options);

}  // namespace rlscope::merge
