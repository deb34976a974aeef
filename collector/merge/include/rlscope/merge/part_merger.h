// Turns the part files of one profiled run into its SQLite trace: while the run goes on
// (rlscope-prof merges each flush of the collectors' writers as it lands, so that only the last
// moments are left when the program exits), or all at once afterwards. Parts of processes that
// died mid-run are merged as far as they go, and the report says what was cut short.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/trace/clock_sync.h"
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
  // What rlscope-prof --clock-sync learnt of this host's clock (rlscope_meta.clock_sync).
  std::optional<trace::ClockSync> clockSync;
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

// The merge of one run's parts into the trace at `out`, which appears there only when finish()
// commits it (nothing is left at `out` on error). Every call throws std::runtime_error with one
// line on failure. Not thread-safe: one thread at a time.
class PartMerge {
 public:
  PartMerge(const std::filesystem::path& partDir, const std::filesystem::path& out,
            const MergeOptions& options);
  ~PartMerge();
  PartMerge(const PartMerge&) = delete;
  PartMerge& operator=(const PartMerge&) = delete;

  // Merges what the parts in partDir hold now, except each process's last writer flush, whose
  // times are converted with the clock pair of the next one. At most about budgetPerPart bytes
  // of each part, so that one busy process does not hold up the others. Returns the bytes read.
  std::uint64_t mergeAvailable(std::uint64_t budgetPerPart = 64u << 20);

  // The run is over: merges the rest of every part and commits the trace.
  MergeReport finish();

  // What finish() reads may still be set until then (commandElapsedNs, progress).
  MergeOptions& options();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads every *.part file in partDir and writes the trace to `out` (PartMerge, all at once).
MergeReport mergeParts(const std::filesystem::path& partDir, const std::filesystem::path& out,
                       const MergeOptions& options);

}  // namespace rlscope::merge
