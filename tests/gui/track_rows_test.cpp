// Splitting a track's items into rows that do not overlap (rlscope/gui_model/track_item.h): nesting
// becomes depth, overlaps without nesting take as few rows as they must, nothing is lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "rlscope/gui_model/track_item.h"

namespace rlscope::gui {
namespace {

TrackItem item(TimeNs start, TimeNs end, std::uint32_t rowId) {
  return {.start = start, .end = end, .rowId = rowId};
}

std::vector<std::vector<std::uint32_t>> rowIds(const std::vector<std::vector<TrackItem>>& rows) {
  std::vector<std::vector<std::uint32_t>> ids;
  for (const auto& r : rows) {
    ids.emplace_back();
    for (const auto& x : r) ids.back().push_back(x.rowId);
  }
  return ids;
}

TEST(TrackRows, TheItemIsThirtyTwoBytes) {
  EXPECT_EQ(sizeof(TrackItem), 32u);
}

TEST(TrackRows, ItemsThatDoNotOverlapStayInOneRow) {
  // Touching intervals and instants at their ends do not overlap.
  std::vector<TrackItem> items = {item(20, 30, 3), item(0, 10, 1), item(10, 10, 2),
                                  item(30, 30, 4)};
  auto rows = splitIntoRows(items);
  EXPECT_EQ(rowIds(rows), (std::vector<std::vector<std::uint32_t>>{{1, 2, 3, 4}}));
  EXPECT_TRUE(splitIntoRows(std::vector<TrackItem>{}).empty());
}

TEST(TrackRows, NestedItemsGoToTheirDepth) {
  // Python [0, 100) holds Backend [10, 50) and [60, 90); the first holds a CUDA call [20, 30), and
  // an instant at 60 sits at the start of the second Backend interval.
  std::vector<TrackItem> items = {item(0, 100, 1), item(10, 50, 2), item(20, 30, 3),
                                  item(60, 90, 4), item(60, 60, 5)};
  EXPECT_EQ(rowIds(splitIntoRows(items)),
            (std::vector<std::vector<std::uint32_t>>{{1}, {2, 4}, {3, 5}}));
}

TEST(TrackRows, OverlapsWithoutNestingUseTheLowestFreeRow) {
  // A chain where each item overlaps only the next needs two rows, not one per item.
  std::vector<TrackItem> items;
  for (std::uint32_t i = 0; i < 10; ++i) items.push_back(item(10 * i, 10 * i + 15, i + 1));
  auto rows = splitIntoRows(items);
  EXPECT_EQ(rowIds(rows),
            (std::vector<std::vector<std::uint32_t>>{{1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}}));
}

// The deepest overlap: the most items that all contain one instant (an interval's start).
std::size_t deepestOverlap(std::vector<TrackItem> items) {
  std::sort(items.begin(), items.end(), startsBefore);
  std::size_t deepest = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::size_t containing = 1;
    for (std::size_t j = 0; j < i; ++j) containing += items[j].end > items[i].start;
    deepest = std::max(deepest, containing);
  }
  return deepest;
}

TEST(TrackRows, RandomItemsKeepEveryItemInAsFewRowsAsPossible) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 200; ++round) {
    std::uniform_int_distribution<TimeNs> at(0, 1000), length(0, 200);
    std::vector<TrackItem> items;
    std::size_t n = std::uniform_int_distribution<std::size_t>(0, 120)(rng);
    for (std::uint32_t i = 0; i < n; ++i) {
      TimeNs s = at(rng);
      items.push_back(item(s, s + (i % 7 == 0 ? 0 : length(rng)), i + 1));
    }
    auto rows = splitIntoRows(items);
    std::vector<std::uint32_t> seen;
    for (const auto& r : rows) {
      EXPECT_FALSE(r.empty());
      EXPECT_TRUE(isRow(r));
      for (const auto& x : r) seen.push_back(x.rowId);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::uint32_t> all(n);
    for (std::uint32_t i = 0; i < n; ++i) all[i] = i + 1;
    EXPECT_EQ(seen, all);
    EXPECT_EQ(rows.size(), deepestOverlap(items));
  }
}

TEST(TrackRows, ItemsInPiecesGiveTheSameRows) {
  // Pieces as a loader reads them: sorted chunks of tables (which chain into runs), and pieces
  // out of order with one another (more runs than are merged: everything is sorted).
  std::mt19937_64 rng(5);
  for (int round = 0; round < 100; ++round) {
    std::uniform_int_distribution<TimeNs> at(0, 5000), length(0, 300);
    std::vector<TrackItem> items;
    for (std::uint32_t i = 0; i < 300; ++i) {
      TimeNs s = at(rng);
      items.push_back(item(s, s + length(rng), i + 1));
    }
    auto expected = splitIntoRows(items);
    std::sort(items.begin(), items.end(), startsBefore);
    if (round % 2 == 1) std::shuffle(items.begin(), items.end(), rng);
    std::vector<std::vector<TrackItem>> pieces;
    for (std::size_t i = 0; i < items.size();) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
      pieces.emplace_back(
          items.begin() + static_cast<std::ptrdiff_t>(i),
          items.begin() + static_cast<std::ptrdiff_t>(std::min(i + n, items.size())));
      i += n;
    }
    auto rows = splitIntoRows(std::move(pieces));
    ASSERT_EQ(rowIds(rows), rowIds(expected)) << "round " << round;
  }
}

}  // namespace
}  // namespace rlscope::gui
