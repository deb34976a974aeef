#include "rlscope/gui_model/lod_query.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <utility>

namespace rlscope::gui {

namespace {

// Times are 64-bit; a time difference times the width needs up to 96 bits.
__extension__ typedef __int128 Wide;

constexpr TimeNs kEndOfTime = std::numeric_limits<TimeNs>::max();

// b − a for a <= b, exact over the whole range of times.
std::uint64_t distance(TimeNs a, TimeNs b) {
  return static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
}

}  // namespace

// --- LodRow --------------------------------------------------------------------------------------

LodRow::LodRow(std::vector<TrackItem> items) : items_(std::move(items)) {
  if (!isRow(items_))
    throw std::invalid_argument("LodRow: items are not sorted, or overlap (see splitIntoRows)");
  std::size_t blocks = (items_.size() + kBlock - 1) / kBlock;
  leaves_ = std::bit_ceil(std::max<std::size_t>(blocks, 1));
  longest_.assign(2 * leaves_, 0);  // a spread of 0 never ends a block: padding
  for (std::size_t i = 0; i < items_.size(); ++i) {
    auto& leaf = longest_[leaves_ + i / kBlock];
    leaf = std::max(leaf, spread(i));
  }
  for (std::size_t node = leaves_ - 1; node >= 1; --node)
    longest_[node] = std::max(longest_[2 * node], longest_[2 * node + 1]);
}

std::uint64_t LodRow::spread(std::size_t i) const {
  const TrackItem& item = items_[i];
  std::uint64_t length = distance(item.start, item.end);
  return i == 0 ? length : std::max(length, distance(items_[i - 1].end, item.start));
}

std::size_t LodRow::nextSpread(std::size_t from, std::size_t to, std::uint64_t atLeast) const {
  auto scan = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      if (spread(i) >= atLeast) return i;
    return to;
  };
  // The rest of from's block item by item, then the next block that holds one, item by item.
  std::size_t blockEnd = std::min(to, (from / kBlock + 1) * kBlock);
  std::size_t found = scan(from, blockEnd);
  if (found != to || blockEnd == to) return found;
  std::size_t first = nextBlock(blockEnd / kBlock, atLeast) * kBlock;
  return first >= to ? to : scan(first, std::min(to, first + kBlock));
}

std::size_t LodRow::nextBlock(std::size_t block, std::uint64_t atLeast) const {
  std::size_t none = (items_.size() + kBlock - 1) / kBlock;
  if (block >= none) return none;
  std::size_t node = leaves_ + block;
  if (longest_[node] < atLeast) {
    // Up until a right sibling holds one, then down to its leftmost leaf that does.
    for (;;) {
      if (node == 1) return none;
      if (node % 2 == 0 && longest_[node + 1] >= atLeast) {
        ++node;
        break;
      }
      node /= 2;
    }
    while (node < leaves_) node = longest_[2 * node] >= atLeast ? 2 * node : 2 * node + 1;
  }
  return node - leaves_;
}

// --- PixelGrid -----------------------------------------------------------------------------------

// A time t sits at position (t − t0)·width / (t1 − t0) in columns. The columns of the items the
// query returns are found by dividing that out; its searches compare times with a column's left
// edge, computed once per search as the integers either side of it.

PixelGrid::PixelGrid(const LodWindow& window)
    : t0_(window.start),
      t1_(window.end),
      width_(window.width),
      span_(distance(t0_, t1_)),
      perColumn_(span_ / static_cast<std::uint64_t>(width_)),
      perColumnRest_(span_ % static_cast<std::uint64_t>(width_)) {}

bool PixelGrid::visible(const TrackItem& item) const {
  return item.start < t1_ && !endsBefore(item, edge(0));
}

int PixelGrid::column(TimeNs t) const {
  return static_cast<int>((Wide{t} - t0_) * width_ / span_);
}

int PixelGrid::firstColumn(const TrackItem& item) const {
  return column(clippedStart(item));
}

int PixelGrid::lastColumn(const TrackItem& item) const {
  TimeNs start = clippedStart(item), end = clippedEnd(item);
  if (end == start) return column(start);
  // The last column whose left edge lies before the end.
  Wide scaled = (Wide{end} - t0_) * width_;
  return static_cast<int>((scaled + span_ - 1) / span_) - 1;
}

bool PixelGrid::isWide(const TrackItem& item) const {
  return Wide{distance(clippedStart(item), clippedEnd(item))} * width_ >= span_;
}

TimeNs PixelGrid::clippedStart(const TrackItem& item) const {
  return std::max(item.start, t0_);
}

TimeNs PixelGrid::clippedEnd(const TrackItem& item) const {
  return std::clamp(item.end, clippedStart(item), t1_);
}

PixelGrid::Edge PixelGrid::edge(int c) const {
  if (c >= width_) return {kEndOfTime, kEndOfTime};  // every visible item lies before it
  // c·span/width = c·perColumn + c·rest/width, where c·rest < width² fits in 64 bits.
  auto column = static_cast<std::uint64_t>(c);
  auto width = static_cast<std::uint64_t>(width_);
  std::uint64_t rest = column * perColumnRest_;
  auto floor =
      static_cast<TimeNs>(static_cast<std::uint64_t>(t0_) + column * perColumn_ + rest / width);
  return {floor, rest % width == 0 ? floor : floor + 1};
}

// --- The query -----------------------------------------------------------------------------------

namespace {

// Builds the blocks of one query, following the rule in lod_query.h item by item, except that a
// merged block takes every item up to the next one able to end it (LodRow::nextSpread) at once.
class LodBuilder {
 public:
  LodBuilder(const LodRow& row, const LodWindow& window, std::vector<LodBlock>& out)
      : row_(row), grid_(window), out_(out) {}

  void run(TimeNs windowEnd) {
    const auto& items = row_.items();
    const PixelGrid::Edge windowStart = grid_.edge(0);
    auto endedBefore = [&](const TrackItem& item) {
      return PixelGrid::endsBefore(item, windowStart);
    };
    auto startsBeforeEnd = [&](const TrackItem& item) { return item.start < windowEnd; };
    auto first = std::partition_point(items.begin(), items.end(), endedBefore);
    end_ = static_cast<std::size_t>(std::partition_point(first, items.end(), startsBeforeEnd) -
                                    items.begin());
    auto i = static_cast<std::size_t>(first - items.begin());
    while (i < end_) i = grid_.isWide(row_[i]) ? addWide(i) : addMerged(i);
  }

 private:
  int firstFreeColumn() const { return out_.empty() ? 0 : out_.back().lastColumn + 1; }

  LodBlock startBlock(std::size_t i) const {
    const TrackItem& item = row_[i];
    return {.firstColumn = std::max(grid_.firstColumn(item), firstFreeColumn()),
            .lastColumn = grid_.lastColumn(item),
            .start = grid_.clippedStart(item),
            .end = grid_.clippedEnd(item),
            .firstItem = i,
            .count = 1,
            .representative = i};
  }

  std::uint64_t length(const TrackItem& item) const {
    return distance(grid_.clippedStart(item), grid_.clippedEnd(item));
  }

  // Adds row[from, to) to the block. A short stretch is looked at item by item for the
  // representative; of a long one, only its last item is.
  void extend(LodBlock& block, std::size_t from, std::size_t to) const {
    constexpr std::size_t kLookedAt = 16;
    block.count += to - from;
    block.end = grid_.clippedEnd(row_[to - 1]);
    block.lastColumn = std::max(block.lastColumn, grid_.lastColumn(row_[to - 1]));
    for (std::size_t i = to - from <= kLookedAt ? from : to - 1; i < to; ++i)
      if (length(row_[i]) > length(row_[block.representative])) block.representative = i;
  }

  // Rule 2's test for the item after a merged block.
  bool joins(const LodBlock& block, const TrackItem& item) const {
    return PixelGrid::endsBefore(item, grid_.edge(block.lastColumn + 2)) ||
           (!grid_.isWide(item) && grid_.firstColumn(item) <= block.lastColumn + 1);
  }

  // Rule 1: a wide item on its own.
  std::size_t addWide(std::size_t i) {
    LodBlock block = startBlock(i);
    std::size_t next = i + 1;
    // (Keeping a column of its own, always: the guard only makes that plain.)
    if (next < end_ && block.lastColumn > block.firstColumn &&
        grid_.firstColumn(row_[next]) == block.lastColumn) {
      --block.lastColumn;
    }
    out_.push_back(block);
    return next;
  }

  // Rule 2: a merged block from a narrow item. An item that fails rule 2's test is either wide or
  // starts a column or more after the block's last item ends, so its spread is a column or more:
  // everything before the next such item joins.
  std::size_t addMerged(std::size_t i) {
    LodBlock block = startBlock(i);
    std::size_t next = i + 1;
    while (next < end_) {
      std::size_t able = row_.nextSpread(next, end_, grid_.columnLength());
      if (able > next) extend(block, next, able);
      if (able == end_ || !joins(block, row_[able])) {
        next = able;
        break;
      }
      extend(block, able, able + 1);
      next = able + 1;
    }
    out_.push_back(block);
    return next;
  }

  const LodRow& row_;
  PixelGrid grid_;
  std::vector<LodBlock>& out_;
  std::size_t end_ = 0;  // the first item that starts at or after t1
};

}  // namespace

void queryLod(const LodRow& row, const LodWindow& window, std::vector<LodBlock>& out) {
  out.clear();
  if (row.empty() || window.width <= 0 || window.end <= window.start) return;
  LodBuilder(row, window, out).run(window.end);
}

std::vector<LodBlock> queryLod(const LodRow& row, const LodWindow& window) {
  std::vector<LodBlock> out;
  queryLod(row, window, out);
  return out;
}

}  // namespace rlscope::gui
