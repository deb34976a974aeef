// The unit of the timeline: one event of a track (an operation, a CPU category interval, a CUDA
// API call, a kernel, copy or memset), packed into 32 bytes so that a 10 M-event trace takes
// about 320 MB in memory. A track row holds its items sorted by start and never overlapping: the
// level-of-detail query (lod_query.h) relies on that to find the visible ones by binary search,
// and splitIntoRows establishes it for any items, however a trace was made.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "rlscope/trace/records.h"

namespace rlscope::gui {

using trace::TimeNs;

// The trace table an item was read from: with TrackItem::rowId it locates the full record (grid
// size, bytes, args, ...) for a details view.
enum class ItemSource : std::uint8_t {
  kOperation,    // rlscope_operations
  kCpuInterval,  // rlscope_cpu_intervals
  kRuntime,      // CUPTI_ACTIVITY_KIND_RUNTIME
  kDriver,       // CUPTI_ACTIVITY_KIND_DRIVER
  kKernel,       // CUPTI_ACTIVITY_KIND_KERNEL
  kMemcpy,       // CUPTI_ACTIVITY_KIND_MEMCPY
  kMemset,       // CUPTI_ACTIVITY_KIND_MEMSET
};
std::string_view sourceTable(ItemSource source);

struct TrackItem {
  TimeNs start = 0;
  TimeNs end = 0;  // >= start; end == start for an instant
  // Index into TimelineData::strings (the trace's StringIds, plus a few labels the loader adds);
  // 0 = no name.
  std::uint32_t nameId = 0;
  // The item's rowid in its source table (for operations, their id); 0 when it does not fit.
  std::uint32_t rowId = 0;
  // CUPTI correlation id of an API call or GPU activity: a call and the work it launched share it
  // within a process. 0 = none.
  std::uint32_t correlationId = 0;
  ItemSource source = ItemSource::kOperation;
  // A trace::Category value; 0 for operations and for categories the trace library does not know.
  std::uint8_t categoryId = 0;

  std::optional<trace::Category> category() const;
};
static_assert(sizeof(TrackItem) == 32, "TrackItem is sized for 10 M events in memory");

// The order of a track: by start, longer first at one start (an enclosing item before the ones it
// contains), then by table and rowid so that equal items have one order.
bool startsBefore(const TrackItem& a, const TrackItem& b);

// True when items are sorted by startsBefore and each starts at or after the end of the one before:
// what a track row guarantees. (An instant at the start of an interval sorts after it and overlaps
// it; one at its end does not: intervals are half-open.)
bool isRow(std::span<const TrackItem> items);

// Splits items into rows in which no two overlap, each sorted by startsBefore: every item goes to
// the lowest row free at its start. That is the nesting depth for properly nested items (the
// CPU category intervals of a Kineto trace), and uses as few rows as the deepest overlap needs
// for any items (NVTX ranges that overlap without nesting, kernels of one stream that overlap).
// The items may come in pieces, in any order; pieces that are sorted and follow one another (the
// chunks of a table read in start order) are merged without a sort, and the rows are the only
// copy made. Items that are one row already, in one piece, are moved, not copied.
std::vector<std::vector<TrackItem>> splitIntoRows(std::vector<std::vector<TrackItem>> pieces);
std::vector<std::vector<TrackItem>> splitIntoRows(std::vector<TrackItem> items);

}  // namespace rlscope::gui
