// The links between CUDA API calls and the GPU work they launched, for the timeline's arrows and
// "go to kernel / go to launch": a call (runtime or driver) and its kernels, copies and memsets
// share a CUPTI correlation id within one process (ids repeat across processes; a GPU track
// carries the globalPid of the launching process, a CPU track that of its thread).
//
// Built once per loaded timeline from the items themselves (no SQL): two vectors of 12-byte
// entries (process, correlation id, item), one of the calls and one of the GPU activities, each
// sorted by (process, correlation id) with a radix sort; a lookup is a binary search in the other
// vector. Memory: 12 bytes per item that has a correlation id (calls and GPU activities only), plus
// as much again for one of the two vectors while it is sorted; no per-item hash map. On the
// 10 M-event benchmark trace (bench_gui, BM_CorrelationIndex, Release, shared 2-core VM): 3.7 M
// linked items, 43 MiB (4.5 bytes per event of the trace), built in 70 ms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "rlscope/gui_model/item_location.h"
#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

class CorrelationIndex {
 public:
  CorrelationIndex() = default;
  // Indexes every API call and GPU activity of `data` that has a correlation id. Keeps pointers to
  // the tracks: `data` must outlive the index and not change (moving a TimelineData is fine: its
  // tracks stay where they are).
  explicit CorrelationIndex(const TimelineData& data);

  // The GPU activities a CUDA API call launched, or the API calls that launched a GPU activity,
  // in time order; at most `limit` of them. Empty for other items, for items without a correlation
  // id, for a call that launched nothing (cudaStreamSynchronize) and for tracks not of the
  // indexed timeline.
  std::vector<ItemLocation> linked(const Track& track, std::size_t item,
                                   std::size_t limit = SIZE_MAX) const;
  // How many linked() would return, without building the list.
  std::size_t linkedCount(const Track& track, std::size_t item) const;

  std::size_t calls() const { return calls_.size(); }            // indexed API calls
  std::size_t activities() const { return activities_.size(); }  // indexed GPU activities
  std::size_t memoryBytes() const;                               // what the index holds

  // One indexed item. `ordinal` numbers the items of all tracks in forEachTrack order.
  struct Entry {
    std::uint32_t process = 0;  // dense index of the globalPid
    std::uint32_t correlation = 0;
    std::uint32_t ordinal = 0;
  };

 private:
  // The entries on the other side of the item's link: the activities of a call, the calls of an
  // activity; an empty range when there are none.
  std::pair<const Entry*, const Entry*> linkedRange(const Track& track, std::size_t item) const;
  ItemLocation locate(std::uint32_t ordinal) const;

  std::vector<const Track*> tracks_;         // forEachTrack order
  std::vector<std::uint64_t> firstOrdinal_;  // of each track's first item; one past the end last
  std::vector<std::uint32_t> process_;       // each track's dense process index
  std::vector<std::pair<const Track*, std::uint32_t>> trackIndex_;  // by pointer, for lookups
  std::vector<Entry> calls_;  // sorted by (process, correlation), then ordinal
  std::vector<Entry> activities_;
};

}  // namespace rlscope::gui
