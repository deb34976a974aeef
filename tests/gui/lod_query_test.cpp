// The timeline's level-of-detail query (rlscope/gui_model/lod_query.h): window edges, merging of
// small items, wide items, zoom extremes, the spread index against a plain scan, and a randomized
// comparison with a brute-force reference that applies the documented rule item by item, with its
// own exact column arithmetic.
#include "rlscope/gui_model/lod_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlscope::gui {
namespace {

TrackItem item(TimeNs start, TimeNs end, std::uint32_t rowId = 0) {
  return {.start = start, .end = end, .rowId = rowId};
}

std::vector<LodBlock> query(const std::vector<TrackItem>& items, const LodWindow& window) {
  return queryLod(LodRow(items), window);
}

// Window [0, 1000) over 100 columns: column c is [10 c, 10 c + 10).
constexpr LodWindow kWindow{0, 1000, 100};

struct Expected {
  int firstColumn, lastColumn;
  TimeNs start, end;
  std::size_t firstItem, count;
};

void expectBlocks(const std::vector<LodBlock>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i));
    EXPECT_EQ(got[i].firstColumn, want[i].firstColumn);
    EXPECT_EQ(got[i].lastColumn, want[i].lastColumn);
    EXPECT_EQ(got[i].start, want[i].start);
    EXPECT_EQ(got[i].end, want[i].end);
    EXPECT_EQ(got[i].firstItem, want[i].firstItem);
    EXPECT_EQ(got[i].count, want[i].count);
  }
}

TEST(LodQuery, ARowMustBeSortedAndWithoutOverlaps) {
  EXPECT_THROW(LodRow({item(10, 20), item(0, 5)}), std::invalid_argument);
  EXPECT_THROW(LodRow({item(0, 20), item(10, 30)}), std::invalid_argument);
  EXPECT_THROW(LodRow({item(10, 10), item(10, 30)}), std::invalid_argument);  // inside it
  EXPECT_NO_THROW(LodRow({item(0, 10), item(10, 30), item(30, 30)}));
}

TEST(LodQuery, TheSpreadIndexFindsTheNextLongItemOrGap) {
  // Spreads (the longer of an item's length and the gap before it) against a plain scan, over
  // rows long enough to have several levels of the index.
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<TimeNs> small(0, 20), rare(0, 999);
  for (std::size_t n : {1u, 63u, 64u, 65u, 1000u, 20000u}) {
    std::vector<TrackItem> items;
    TimeNs t = 0;
    for (std::size_t i = 0; i < n; ++i) {
      TimeNs gap = rare(rng) == 0 ? 5000 : small(rng), length = rare(rng) == 1 ? 9000 : small(rng);
      items.push_back(item(t + gap, t + gap + length));
      t += gap + std::max<TimeNs>(length, 1);  // an interval at an instant's time sorts before it
    }
    LodRow row(items);
    for (int q = 0; q < 200; ++q) {
      std::size_t from = std::uniform_int_distribution<std::size_t>(0, n)(rng);
      std::size_t to = std::uniform_int_distribution<std::size_t>(from, n)(rng);
      std::uint64_t atLeast =
          q % 2 ? 4000 : std::uniform_int_distribution<std::uint64_t>(1, 25)(rng);
      std::size_t expected = from;
      while (expected < to && row.spread(expected) < atLeast) ++expected;
      ASSERT_EQ(row.nextSpread(from, to, atLeast), expected) << n << " " << from << " " << to;
    }
  }
}

TEST(LodQuery, EmptyRowsAndEmptyWindowsGiveNoBlocks) {
  std::vector<TrackItem> row = {item(100, 200)};
  EXPECT_TRUE(queryLod(LodRow(), kWindow).empty());
  EXPECT_TRUE(query(row, {0, 1000, 0}).empty());
  EXPECT_TRUE(query(row, {500, 500, 100}).empty());
  EXPECT_TRUE(query(row, {600, 500, 100}).empty());
  EXPECT_TRUE(query(row, {300, 1000, 100}).empty());  // the item is before the window
}

TEST(LodQuery, WideItemsComeOneByOne) {
  std::vector<TrackItem> row = {item(100, 300), item(400, 605), item(700, 710)};
  expectBlocks(query(row, kWindow),
               {{10, 29, 100, 300, 0, 1}, {40, 60, 400, 605, 1, 1}, {70, 70, 700, 710, 2, 1}});
}

TEST(LodQuery, ItemsStraddlingTheWindowEdgesAreClipped) {
  std::vector<TrackItem> row = {item(-50, 35), item(500, 510), item(990, 1500)};
  expectBlocks(query(row, kWindow),
               {{0, 3, 0, 35, 0, 1}, {50, 50, 500, 510, 1, 1}, {99, 99, 990, 1000, 2, 1}});
}

TEST(LodQuery, ItemsExactlyAtTheEdges) {
  // Ends at t0: not visible (intervals are half-open). Starts at t0: visible from column 0.
  // Ends at t1: visible up to column 99. Starts at t1: not visible.
  std::vector<TrackItem> row = {item(-10, 0), item(0, 10), item(990, 1000), item(1000, 1010)};
  expectBlocks(query(row, kWindow), {{0, 0, 0, 10, 1, 1}, {99, 99, 990, 1000, 2, 1}});
  // An instant at t0 is visible, one at t1 is not.
  std::vector<TrackItem> instants = {item(0, 0), item(1000, 1000)};
  expectBlocks(query(instants, kWindow), {{0, 0, 0, 0, 0, 1}});
}

TEST(LodQuery, ManySubPixelItemsBecomeOneBlock) {
  std::vector<TrackItem> row;
  for (TimeNs t = 200; t < 600; t += 2) row.push_back(item(t, t + 1));
  auto blocks = query(row, kWindow);
  expectBlocks(blocks, {{20, 59, 200, 599, 0, 200}});
  EXPECT_TRUE(blocks[0].merged());
}

TEST(LodQuery, AGapOfAColumnEndsARun) {
  // Column 10 holds two small items, 11 and 12 are empty, 13 holds one: two blocks. Columns 20
  // and 21 are neighbours: one block across both.
  std::vector<TrackItem> row = {item(100, 101), item(105, 106), item(131, 132), item(205, 206),
                                item(214, 215)};
  expectBlocks(query(row, kWindow),
               {{10, 10, 100, 106, 0, 2}, {13, 13, 131, 132, 2, 1}, {20, 21, 205, 215, 3, 2}});
}

TEST(LodQuery, WideAndTinyItemsAlternate) {
  // Wide [50 k, 50 k + 45) and tiny [50 k + 45, 50 k + 47): each tiny one starts in the last
  // column of the wide one before it, which leaves it that column; nothing is merged.
  std::vector<TrackItem> row;
  for (TimeNs t = 0; t < 1000; t += 50) {
    row.push_back(item(t, t + 45));
    row.push_back(item(t + 45, t + 47));
  }
  auto blocks = query(row, kWindow);
  ASSERT_EQ(blocks.size(), row.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].firstItem, i);
    EXPECT_EQ(blocks[i].count, 1u);
  }
  EXPECT_EQ(blocks[0].firstColumn, 0);
  EXPECT_EQ(blocks[0].lastColumn, 3);  // [0, 45) touches 0..4 and leaves 4 to [45, 47)
  EXPECT_EQ(blocks[1].firstColumn, 4);
  EXPECT_EQ(blocks[1].lastColumn, 4);
  EXPECT_EQ(blocks[2].firstColumn, 5);  // [50, 95) touches 5..9, leaves 9 to [95, 97)
  EXPECT_EQ(blocks[2].lastColumn, 8);
}

TEST(LodQuery, RunsOfTinyItemsBetweenWideOnesAreMergedApart) {
  // A wide item, five tiny ones in its last column and the next, another wide item.
  std::vector<TrackItem> row = {item(0, 45),  item(45, 46), item(47, 48), item(49, 50),
                                item(51, 52), item(53, 54), item(60, 200)};
  expectBlocks(query(row, kWindow),
               {{0, 3, 0, 45, 0, 1}, {4, 5, 45, 54, 1, 5}, {6, 19, 60, 200, 6, 1}});
}

TEST(LodQuery, AnItemUnderTwoColumnsInsideARunJoinsIt) {
  // [95, 110) is a column and a half long, but ends by column 11: it joins the run of [91, 92),
  // and [112, 114) in column 11 joins after it.
  std::vector<TrackItem> row = {item(91, 92), item(95, 110), item(112, 114)};
  auto blocks = query(row, kWindow);
  expectBlocks(blocks, {{9, 11, 91, 114, 0, 3}});
  EXPECT_EQ(blocks[0].representative, 1u);
}

TEST(LodQuery, OneHugeItemCoversTheWindow) {
  std::vector<TrackItem> row = {item(-1'000'000'000'000, 1'000'000'000'000)};
  expectBlocks(query(row, kWindow), {{0, 99, 0, 1000, 0, 1}});
}

TEST(LodQuery, ZoomedFarInOneNanosecondSpansManyColumns) {
  // 10 ns over 2000 columns: 200 columns per nanosecond.
  LodWindow window{1000, 1010, 2000};
  std::vector<TrackItem> row = {item(0, 1001), item(1001, 1005), item(1005, 1005),
                                item(1009, 5000)};
  expectBlocks(query(row, window), {{0, 199, 1000, 1001, 0, 1},
                                    {200, 999, 1001, 1005, 1, 1},
                                    {1000, 1000, 1005, 1005, 2, 1},
                                    {1800, 1999, 1009, 1010, 3, 1}});
  std::vector<TrackItem> longer = {item(0, 5000)};
  expectBlocks(query(longer, window), {{0, 1999, 1000, 1010, 0, 1}});
}

TEST(LodQuery, ExtremeTimesDoNotOverflow) {
  constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min();
  constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
  std::vector<TrackItem> whole = {item(kMin, kMax)};
  expectBlocks(query(whole, {kMin, kMax, 2000}), {{0, 1999, kMin, kMax, 0, 1}});
  // Over 4 columns of 2^62 ns: [-5, 5) straddles the middle, columns 1 and 2; all three items
  // are tiny, and close enough to make one run.
  std::vector<TrackItem> row = {item(kMin, kMin + 10), item(-5, 5), item(kMax - 10, kMax)};
  expectBlocks(query(row, {kMin, kMax, 4}), {{0, 3, kMin, kMax, 0, 3}});
}

TEST(LodQuery, TheRepresentativeIsTheLongestItem) {
  std::vector<TrackItem> row = {item(100, 101), item(102, 108), item(110, 111)};
  auto blocks = query(row, kWindow);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].count, 3u);
  EXPECT_EQ(blocks[0].representative, 1u);
}

TEST(LodQuery, ADenseRowIsOneBlock) {
  // A thousand items per column, crossed by galloping search.
  std::vector<TrackItem> row;
  for (TimeNs t = 0; t < 4'000'000; t += 2) row.push_back(item(t, t + 1));
  expectBlocks(query(row, {0, 4'000'000, 2000}), {{0, 1999, 0, 3'999'999, 0, 2'000'000}});
}

// --- The brute-force reference -------------------------------------------------------------------

__extension__ typedef __int128 Big;

// The rule's columns, computed on their own: exact rationals by cross-multiplication.
struct Columns {
  TimeNs t0, t1;
  int width;

  Big span() const { return Big{t1} - t0; }
  bool visible(const TrackItem& x) const {
    return x.start < t1 && (x.end > t0 || (x.end == x.start && x.start >= t0));
  }
  TimeNs cs(const TrackItem& x) const { return std::max(x.start, t0); }
  TimeNs ce(const TrackItem& x) const { return std::min(x.end, t1); }
  int first(const TrackItem& x) const {
    return static_cast<int>((Big{cs(x)} - t0) * width / span());
  }
  int last(const TrackItem& x) const {
    if (x.end == x.start) return first(x);
    Big scaled = (Big{ce(x)} - t0) * width;
    return static_cast<int>((scaled + span() - 1) / span()) - 1;
  }
  bool wide(const TrackItem& x) const { return (Big{ce(x)} - cs(x)) * width >= span(); }
};

// The rule of lod_query.h applied item by item (no search, no skipping).
std::vector<LodBlock> reference(const std::vector<TrackItem>& row, const LodWindow& w) {
  Columns c{w.start, w.end, w.width};
  std::vector<std::size_t> visible;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (c.visible(row[i])) visible.push_back(i);
  std::vector<LodBlock> out;
  bool mergedOpen = false;
  for (std::size_t v = 0; v < visible.size(); ++v) {
    const TrackItem& x = row[visible[v]];
    if (mergedOpen) {  // rule 2: does it join the merged block?
      LodBlock& b = out.back();
      if ((!c.wide(x) && c.first(x) <= b.lastColumn + 1) || c.last(x) <= b.lastColumn + 1) {
        ++b.count;
        b.end = c.ce(x);
        b.lastColumn = std::max(b.lastColumn, c.last(x));
        continue;
      }
    }
    int firstFree = out.empty() ? 0 : out.back().lastColumn + 1;
    LodBlock b{.firstColumn = std::max(c.first(x), firstFree),
               .lastColumn = c.last(x),
               .start = c.cs(x),
               .end = c.ce(x),
               .firstItem = visible[v],
               .count = 1};
    mergedOpen = !c.wide(x);
    if (!mergedOpen && v + 1 < visible.size() && b.lastColumn > b.firstColumn &&
        c.first(row[visible[v + 1]]) == b.lastColumn) {
      --b.lastColumn;
    }
    out.push_back(b);
  }
  return out;
}

// A random row: items of lengths and gaps over several scales, instants included, never
// overlapping.
std::vector<TrackItem> randomRow(std::mt19937_64& rng, std::size_t n, TimeNs scale) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_int_distribution<TimeNs> unit(0, scale);
  std::vector<TrackItem> row;
  TimeNs t = unit(rng) - scale / 2;
  for (std::size_t i = 0; i < n; ++i) {
    int k = kind(rng);
    TimeNs length = k == 0 ? 0 : k < 6 ? unit(rng) / 50 : k < 9 ? unit(rng) / 5 : unit(rng) * 3;
    TimeNs gap = kind(rng) < 5 ? 0 : unit(rng) / (kind(rng) < 7 ? 40 : 3);
    t += gap;
    row.push_back(item(t, t + length, static_cast<std::uint32_t>(i + 1)));
    t += length == 0 ? 1 : length;  // an interval at an instant's time would sort before it
  }
  return row;
}

void checkAgainstReference(const std::vector<TrackItem>& row, const LodWindow& w) {
  SCOPED_TRACE("window [" + std::to_string(w.start) + ", " + std::to_string(w.end) + ") width " +
               std::to_string(w.width));
  auto got = query(row, w);
  auto want = reference(row, w);
  ASSERT_EQ(got.size(), want.size());
  Columns c{w.start, w.end, w.width};
  std::set<int> touched, owned;
  std::size_t represented = 0, visible = 0, nextItem = 0;
  for (const auto& x : row)
    if (c.visible(x)) {
      ++visible;
      for (int col = c.first(x); col <= c.last(x); ++col) touched.insert(col);
    }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const LodBlock& b = got[i];
    SCOPED_TRACE("block " + std::to_string(i));
    EXPECT_EQ(b.firstColumn, want[i].firstColumn);
    EXPECT_EQ(b.lastColumn, want[i].lastColumn);
    EXPECT_EQ(b.firstItem, want[i].firstItem);
    EXPECT_EQ(b.count, want[i].count);
    // It covers exactly the items it claims: consecutive, visible, and its span is theirs.
    ASSERT_GE(b.count, 1u);
    if (i > 0) {
      EXPECT_GT(b.firstItem, got[i - 1].firstItem);
    }
    for (std::size_t k = nextItem; k < b.firstItem; ++k) EXPECT_FALSE(c.visible(row[k]));
    for (std::size_t k = b.firstItem; k < b.firstItem + b.count; ++k)
      EXPECT_TRUE(c.visible(row[k]));
    nextItem = b.firstItem + b.count;
    EXPECT_EQ(b.start, c.cs(row[b.firstItem]));
    EXPECT_EQ(b.end, c.ce(row[nextItem - 1]));
    EXPECT_GE(b.representative, b.firstItem);
    EXPECT_LT(b.representative, nextItem);
    // Its columns: within the window, after the previous block's, inside its items' columns.
    EXPECT_LE(b.firstColumn, b.lastColumn);
    EXPECT_GE(b.firstColumn, i == 0 ? 0 : got[i - 1].lastColumn + 1);
    EXPECT_LT(b.lastColumn, w.width);
    EXPECT_GE(b.firstColumn, c.first(row[b.firstItem]));
    for (int col = b.firstColumn; col <= b.lastColumn; ++col) owned.insert(col);
    // Never merged: an item two columns long or more.
    for (std::size_t k = b.firstItem; k < nextItem && b.count > 1; ++k) {
      EXPECT_LT((Big{c.ce(row[k])} - c.cs(row[k])) * w.width, 2 * c.span()) << "item " << k;
    }
    represented += b.count;
  }
  for (std::size_t k = nextItem; k < row.size(); ++k) EXPECT_FALSE(c.visible(row[k]));
  EXPECT_EQ(represented, visible);
  EXPECT_EQ(owned, touched);  // every column an item touches is drawn, and no other
}

TEST(LodQuery, RandomRowsMatchTheBruteForceReference) {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    TimeNs scale = TimeNs{1} << std::uniform_int_distribution<int>(4, 40)(rng);
    auto row = randomRow(rng, std::uniform_int_distribution<std::size_t>(0, 400)(rng), scale);
    ASSERT_TRUE(isRow(row));
    TimeNs first = row.empty() ? 0 : row.front().start, last = row.empty() ? 1 : row.back().end;
    TimeNs extent = std::max<TimeNs>(last - first, 1);
    for (int q = 0; q < 10; ++q) {
      std::uniform_int_distribution<TimeNs> at(first - extent / 10, last + extent / 10);
      TimeNs t0 = at(rng);
      TimeNs length = std::max<TimeNs>(1, extent >> std::uniform_int_distribution<int>(0, 20)(rng));
      int width = std::uniform_int_distribution<int>(1, 400)(rng);
      checkAgainstReference(row, {t0, t0 + length, width});
      if (HasFatalFailure()) return;
    }
    checkAgainstReference(row, {first, last, 97});  // the whole row
  }
}

TEST(LodQuery, DenseRandomRowsMatchTheBruteForceReference) {
  // Thousands of items per column: the galloping path.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<TimeNs> small(0, 3);
  std::vector<TrackItem> row;
  TimeNs t = 0;
  for (int i = 0; i < 200'000; ++i) {
    t += small(rng) == 0 ? 400 : small(rng);
    TimeNs length = i % 5000 == 0 ? 30'000 : small(rng);
    row.push_back(item(t, t + length, static_cast<std::uint32_t>(i + 1)));
    t += std::max<TimeNs>(length, 1);
  }
  for (int width : {1, 7, 50, 333, 2000})
    checkAgainstReference(row, {row.front().start, row.back().end, width});
  checkAgainstReference(row, {t / 3, t / 3 + t / 100, 500});
}

}  // namespace
}  // namespace rlscope::gui
