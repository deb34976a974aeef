// What a details view shows for one timeline item: a title and every field a user wants when
// clicking it, as (label, text) pairs in display order. The timeline keeps only 32 bytes per item
// (track_item.h); the rest (grid and block of a kernel, bytes and copy kind of a memcpy, an
// operation's parent and args, ...) is read back from the item's row of its source table, by rowid,
// with prepared statements. No Qt: the widget lays the pairs out.
//
// Args: rlscope_operations.args and rlscope_cpu_intervals.args (JSON objects) give one field per
// member, "args.Input Dims". The CUDA tables have no args column: the Kineto importer keeps the
// args it knows as columns (grid, block, registers, ...) and drops the others ("warps per SM",
// "est. achieved occupancy %"), so there is nothing more to show for kernels, copies and calls.
//
// The trace is untrusted input: a column that is missing, NULL or of the wrong type, an unknown
// enum id, malformed args or an unreadable file give "—", the raw value or a `problem` line, never
// an exception out of read().
//
// Threads: TraceReader, and every trace::Database, is one SQLite connection opened without SQLite's
// mutexes: usable from one thread at a time. The GUI's TraceReader is gone once the timeline is
// loaded (and lived on the loader's thread), so EventDetailsReader opens a read-only connection of
// its own, with TraceReader's untrusted-input settings, on its first read. Use one reader from one
// thread at a time (the GUI thread: a read is a handful of primary-key and index lookups, 20 µs
// on average on the 10 M-event benchmark trace, under 1 ms for the first, which prepares them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

struct DetailField {
  std::string label;
  std::string value;
};

struct EventDetails {
  std::string title;                // the item's name as the timeline shows it
  std::vector<DetailField> fields;  // in display order
  // Empty, or why some fields are missing (no row for the item, a damaged or replaced file): the
  // fields then hold what the timeline itself knows.
  std::string problem;

  // The value of the first field with this label; null when there is none.
  const std::string* find(std::string_view label) const;
};

// The text of an absent value (NULL, missing column, unknown id).
inline constexpr std::string_view kNoValue = "—";

class EventDetailsReader {
 public:
  // Keeps the path; the connection is opened on the first read (a failure is then a `problem`).
  explicit EventDetailsReader(std::filesystem::path trace);
  // Borrows a connection of the caller (e.g. TraceReader::db(), on the reader's thread), which
  // must outlive this reader.
  explicit EventDetailsReader(trace::Database& db);
  ~EventDetailsReader();
  EventDetailsReader(const EventDetailsReader&) = delete;
  EventDetailsReader& operator=(const EventDetailsReader&) = delete;

  // The details of `item`, an item of `track` of `data` (the timeline loaded from this trace).
  // Never throws: the worst case is the timeline's own fields and a `problem`.
  EventDetails read(const TimelineData& data, const Track& track, const TrackItem& item) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A one-off read with the caller's connection (prepares its statements again on every call).
EventDetails readEventDetails(trace::Database& db, const TimelineData& data, const Track& track,
                              const TrackItem& item) noexcept;

// Bytes, with the binary unit when it is at least 1 KiB: "512 B", "49152 B (48 KiB)".
std::string formatBytes(std::int64_t bytes);
// bytes per nanosecond = GB/s (decimal, as Nsight Systems): "12.35 GB/s"; "—" for no duration.
std::string formatBandwidth(std::int64_t bytes, std::int64_t ns);

}  // namespace rlscope::gui
