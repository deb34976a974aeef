// The timeline's model: a whole trace read into memory as tracks, the rows the GUI draws. Per
// process and thread: the operations, one track per nesting depth, and the CPU categories
// (Python, Backend, Simulator, CUDA API, Native; CUDA runtime and driver calls included). Per GPU
// device and stream: the kernels, copies and memsets. Items are 32 bytes (track_item.h), sorted,
// and never overlap within a track, so a 10 M-event trace takes about 320 MB, and what to draw of
// any window of any track is a query of O(log n) per block (lod_query.h). Names stay string ids
// into one shared table. No Qt here: the widgets are views over this model, which is tested
// without a window.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/gui_model/lod_query.h"
#include "rlscope/gui_model/track_item.h"
#include "rlscope/trace/reader.h"

namespace rlscope::gui {

// The trace's StringIds, each string stored once in one buffer, plus the labels the loader adds
// (copy directions); TrackItem::nameId indexes it.
class StringTable {
 public:
  // The text of an id; empty for 0 and for ids the table does not have.
  std::string_view operator[](std::uint32_t id) const;
  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  // Adds the text of `id`. Ids come in increasing order: one below size() is there already and is
  // left as it is; ids skipped read as empty.
  void add(std::uint32_t id, std::string_view text);

 private:
  std::string text_;
  std::vector<std::uint64_t> offsets_;  // string i is text_[offsets_[i], offsets_[i + 1])
};

enum class TrackKind : std::uint8_t {
  kOperations,  // rlscope_operations of a thread at one depth
  kCategories,  // rlscope_cpu_intervals and CUDA API calls of a thread
  kGpuStream,   // kernels, copies and memsets of a device's stream
};

struct Track {
  TrackKind kind = TrackKind::kOperations;
  std::string label;  // "Operations", "Operations, depth 2", "CPU categories", "Stream 7", ...
  std::int64_t globalPid = 0;  // the thread's process, or the process that launched the GPU work
  std::int64_t globalTid = 0;  // CPU tracks
  std::int64_t deviceId = 0;   // GPU tracks
  std::int64_t streamId = 0;
  int depth = 0;  // operation tracks: the operations' depth
  // 0, or the row (1, 2, ...) that holds items overlapping others of the same depth, thread or
  // stream: for CPU categories, their nesting level.
  int subRow = 0;
  LodRow row;  // the items, sorted by start, no two overlapping, indexed for the LOD query
};

struct ThreadTracks {
  std::int64_t globalTid = 0;
  std::int64_t tid = 0;       // as recorded (rlscope_threads.tid when the trace has it)
  std::string label;          // its name and tid
  std::vector<Track> tracks;  // operations by depth, then CPU categories by level
};

struct ProcessTracks {
  std::int64_t globalPid = 0;
  std::int64_t pid = 0;               // as recorded (rlscope_processes.pid when the trace has it)
  std::optional<std::int64_t> rank;   // its rank in a distributed job (rlscope_process_identity)
  std::string label;                  // "rank 1 of 2 · python3.11 (pid 4242)"
  std::vector<ThreadTracks> threads;  // the main thread (tid == pid) first, then by tid
};

struct DeviceTracks {
  std::int64_t deviceId = 0;
  std::string label;           // "GPU 0: NVIDIA A100-SXM4-40GB"
  std::vector<Track> streams;  // by stream id, then process
};

struct TimelineData {
  StringTable strings;
  std::vector<ProcessTracks> processes;  // by pid; only those with events on a thread
  std::vector<DeviceTracks> devices;     // by device id
  trace::TimeSpan span;                  // earliest start and latest end of all items
  std::int64_t itemCount = 0;
  std::int64_t damagedRows = 0;  // rows left out because they end before they start

  std::string_view name(const TrackItem& item) const { return strings[item.nameId]; }
  // Every track, processes' threads first, then devices' streams.
  void forEachTrack(const std::function<void(const Track&)>& fn) const;
};

// What loadTimeline reports while it reads: the fraction of rows read so far (0 to 1), on the
// calling thread. Returning false stops the load: loadTimeline then throws LoadCancelled.
using LoadProgress = std::function<bool(double fraction)>;

class LoadCancelled : public std::runtime_error {
 public:
  LoadCancelled() : std::runtime_error("loading the trace was cancelled") {}
};

// Reads the trace's operations, CPU category intervals, CUDA API calls, kernels, copies and
// memsets into tracks, on two threads (the reader's connection and a second one), each scanning
// half of every table in storage order. Throws TraceError for a damaged file.
TimelineData loadTimeline(trace::TraceReader& reader, const LoadProgress& progress = {});

}  // namespace rlscope::gui
