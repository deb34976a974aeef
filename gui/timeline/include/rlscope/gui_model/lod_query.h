// The timeline's level-of-detail query: what to draw of one track row in a visible window [t0, t1)
// that is `width` pixels wide. A 10 M-event trace has far more events than a screen has pixels, and
// a frame must take well under 16 ms (docs/performance.md), so the query returns at most one block
// per pixel column: an item on its own where it is wide enough to see, one merged block "N events"
// where many small items share a few columns. It finds the first visible item by binary search, and
// crosses runs of small items with a small index (LodRow) that leads from one item able to end a
// run to the next: its cost grows with the blocks it returns and the columns they span, by O(log n)
// each, not with the number of items in the window or the row. Pure computation: the painter draws
// the blocks, the model (timeline_data.h) owns the rows.
//
// The rule, exactly:
// - Column c of the window covers [t0 + c·(t1 − t0)/width, t0 + (c + 1)·(t1 − t0)/width), in
//   exact arithmetic. An item touches the columns its interval clipped to the window meets; an
//   instant (start == end) touches the column it is in. An item is visible when it overlaps
//   [t0, t1); an instant when t0 <= start < t1. An item is wide when its clipped length is at
//   least one column.
// - The visible items, in row order, are cut into blocks of consecutive items. Each block owns a
//   range of columns; the ranges are disjoint, in increasing order, and together they are exactly
//   the columns that visible items touch. Taking the items in order:
//   1. A wide item is a block of its own, owning the columns it touches that are still free. It
//      leaves its last column to the next item when that item starts there: small items right
//      after a long one are not drawn into it.
//   2. Any other item starts a merged block. Each next item joins it while it is narrower than a
//      column and starts in the block's last column or the one after, or touches no column beyond
//      the one after the block's last. So a run of small items with gaps of less than a column is
//      one block; an item under two columns long inside such a run joins it; an item two columns
//      long or more is never merged.
// - A block's representative names and colours it: its longest item (the earliest of equals)
//   among those the query looks at: every item of a block whose stretches between items able to
//   end it hold at most 16 items; of a longer stretch, only its last item.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rlscope/gui_model/track_item.h"

namespace rlscope::gui {

// A row ready for the query: its items, and an index of where a merged block can end. An item
// ends a merged block only if it, or the gap before it, is at least a column long (the item's
// "spread"); the index keeps the longest spread of each 64 items in a tree of maxima, so that the
// query finds the next such item in O(log n) and joins everything before it at once. The index
// takes at most half a byte per item.
class LodRow {
 public:
  LodRow() = default;
  // Throws std::invalid_argument unless the items are a row (isRow).
  explicit LodRow(std::vector<TrackItem> items);

  const std::vector<TrackItem>& items() const { return items_; }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const TrackItem& operator[](std::size_t i) const { return items_[i]; }

  // The longer of item i's length and the gap since the item before it.
  std::uint64_t spread(std::size_t i) const;
  // The first item in [from, to) whose spread is at least `atLeast`; `to` if there is none.
  std::size_t nextSpread(std::size_t from, std::size_t to, std::uint64_t atLeast) const;

 private:
  static constexpr std::size_t kBlock = 64;
  // The first block at or after `block` whose longest spread is at least `atLeast`; the number of
  // blocks if there is none.
  std::size_t nextBlock(std::size_t block, std::uint64_t atLeast) const;

  std::vector<TrackItem> items_;
  // A tree of maxima: node k holds the larger of nodes 2k and 2k + 1; leaf b, the longest spread
  // of items [64 b, 64 b + 64), is node leaves_ + b.
  std::vector<std::uint64_t> longest_;
  std::size_t leaves_ = 0;
};

struct LodWindow {
  TimeNs start = 0;  // t0
  TimeNs end = 0;    // t1, excluded
  int width = 0;     // pixel columns
};

// The mapping between a window's times and its pixel columns, exact for any times (128-bit
// arithmetic where 64 bits could overflow): the query and a painter's hit testing must agree to
// the column.
class PixelGrid {
 public:
  // The window must be non-empty: start < end and width > 0.
  explicit PixelGrid(const LodWindow& window);

  int width() const { return width_; }
  bool visible(const TrackItem& item) const;
  // The column of an instant t0 <= t < t1.
  int column(TimeNs t) const;
  // The first and last column a visible item touches.
  int firstColumn(const TrackItem& item) const;
  int lastColumn(const TrackItem& item) const;
  bool isWide(const TrackItem& item) const;
  // The item's interval clipped to the window.
  TimeNs clippedStart(const TrackItem& item) const;
  TimeNs clippedEnd(const TrackItem& item) const;
  // A column's length in nanoseconds, rounded up: no shorter length or gap spans a column.
  std::uint64_t columnLength() const { return perColumn_ + (perColumnRest_ != 0); }

  // The left edge of column c (0 <= c), t0 + c·(t1 − t0)/width, as the integers either side of it
  // (equal when it is one). Past the last column, the end of time.
  struct Edge {
    TimeNs floor;
    TimeNs ceil;
  };
  Edge edge(int c) const;
  // True when the item touches no column at or after the one of the edge: it lies before it. Along
  // a row it is true for a prefix of the items, so it can be searched.
  static bool endsBefore(const TrackItem& item, const Edge& e) {
    return item.end > item.start ? item.end <= e.floor : item.start < e.ceil;
  }

 private:
  TimeNs t0_;
  TimeNs t1_;
  int width_;
  std::uint64_t span_;           // t1 − t0
  std::uint64_t perColumn_;      // span / width
  std::uint64_t perColumnRest_;  // span % width
};

struct LodBlock {
  int firstColumn = 0;  // the pixel columns it owns, both included
  int lastColumn = 0;
  TimeNs start = 0;  // from its first item's start to its last item's end, clipped to the window
  TimeNs end = 0;
  std::size_t firstItem = 0;  // its items are row[firstItem, firstItem + count)
  std::size_t count = 0;
  std::size_t representative = 0;  // index in the row of the item that names and colours it

  bool merged() const { return count > 1; }
};

// The blocks to draw of a row in the window, replacing the contents of `out` (a painter keeps one
// vector per track, so a frame allocates nothing). An empty window or row gives no blocks.
void queryLod(const LodRow& row, const LodWindow& window, std::vector<LodBlock>& out);
std::vector<LodBlock> queryLod(const LodRow& row, const LodWindow& window);

}  // namespace rlscope::gui
