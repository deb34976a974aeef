// The overlap engine on hand-made cases with exact expected times (docs/analysis.md).
#include "rlscope/overlap/overlap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rlscope::analysis {
namespace {

using Set = std::vector<std::uint32_t>;
// (operation, category set) -> time: what a test expects, in a form that prints well.
using Times = std::map<std::pair<std::uint32_t, Set>, TimeNs>;

Times timesOf(const OverlapResult& r) {
  Times t;
  for (const auto& c : r.cells) t[{c.operation, r.sets.at(c.set)}] += c.time;
  return t;
}

Times overlap(std::vector<CategoryInterval> categories,
              std::vector<OperationSpan> operations = {}) {
  return timesOf(computeOverlap(categories, operations));
}

TEST(Overlap, NothingGivesNothing) {
  auto r = computeOverlap({}, {});
  EXPECT_TRUE(r.cells.empty());
  EXPECT_EQ(r.boundaries, 0u);
}

TEST(Overlap, TwoCategoriesPartlyOverlapping) {
  // A: [0, 10), B: [5, 15): A alone 5, both 5, B alone 5; no operation: unannotated.
  EXPECT_EQ(overlap({{0, 10, 1}, {5, 15, 2}}),
            (Times{{{0, {1}}, 5}, {{0, {1, 2}}, 5}, {{0, {2}}, 5}}));
}

TEST(Overlap, SharedBoundariesAndTiesLeaveNoGapAndNoDoubleCount) {
  // A ends where B starts; C starts and ends with them.
  EXPECT_EQ(overlap({{0, 10, 1}, {10, 20, 2}, {0, 20, 3}}),
            (Times{{{0, {1, 3}}, 10}, {{0, {2, 3}}, 10}}));
}

TEST(Overlap, ZeroLengthEventsCountForNothing) {
  EXPECT_EQ(overlap({{5, 5, 7}, {0, 10, 1}}, {{3, 3, 1}}), (Times{{{0, {1}}, 10}}));
}

TEST(Overlap, OneCategoryFromSeveralThreadsIsUnioned) {
  // Backend on two threads: [0, 10) and [5, 20): the category is active [0, 20), counted once.
  EXPECT_EQ(overlap({{0, 10, 2}, {5, 20, 2}}), (Times{{{0, {2}}, 20}}));
}

TEST(Overlap, TimeInsideAnOperationWithNoCategoryIsTheEmptySet) {
  EXPECT_EQ(overlap({{2, 4, 1}}, {{0, 10, 1}}), (Times{{{1, {}}, 8}, {{1, {1}}, 2}}));
}

TEST(Overlap, TimeWithNothingActiveIsNobodys) {
  // A gap between two categories outside any operation is not reported.
  EXPECT_EQ(overlap({{0, 1, 1}, {9, 10, 1}}), (Times{{{0, {1}}, 2}}));
}

TEST(Overlap, TheInnermostOperationOwnsEachInstant) {
  // outer [0, 100) > middle [10, 60) > inner [20, 30); CPU category throughout.
  auto t = overlap({{0, 100, 1}}, {{0, 100, 1}, {10, 60, 2}, {20, 30, 3}});
  EXPECT_EQ(t, (Times{{{1, {1}}, 50}, {{2, {1}}, 40}, {{3, {1}}, 10}}));
}

TEST(Overlap, NestedOperationsStartingTogetherTheLaterListedIsInside) {
  auto t = overlap({{0, 10, 1}}, {{0, 10, 1}, {0, 4, 2}});
  EXPECT_EQ(t, (Times{{{1, {1}}, 6}, {{2, {1}}, 4}}));
}

TEST(Overlap, UnbalancedNestingOwnerIsTheLastStartedStillActive) {
  // a [0, 30), b [10, 40) (b outlives a), c [20, 25): 0-10 a, 10-20 b, 20-25 c, 25-40 b.
  auto t = overlap({{0, 40, 1}}, {{0, 30, 1}, {10, 40, 2}, {20, 25, 3}});
  EXPECT_EQ(t, (Times{{{1, {1}}, 10}, {{2, {1}}, 25}, {{3, {1}}, 5}}));
}

TEST(Overlap, DeepNesting) {
  // 1000 operations, each inside the previous, each 1 ns shorter on both sides.
  std::vector<OperationSpan> ops;
  for (std::uint32_t i = 0; i < 1000; ++i) ops.push_back({i, 2000 - i, i + 1});
  auto r = computeOverlap(std::vector<CategoryInterval>{{0, 2000, 1}}, ops);
  ASSERT_EQ(r.cells.size(), 1000u);
  for (std::uint32_t i = 0; i < 999; ++i) EXPECT_EQ(r.cells[i].time, 2) << i;
  EXPECT_EQ(r.cells[999].time, 2000 - 2 * 999);
}

TEST(Overlap, HundredsOfCategoriesBeyondSixtyFour) {
  // 300 categories, category k active on [k, 300): the slice [k, k+1) has categories 0..k.
  std::vector<CategoryInterval> cats;
  for (std::uint32_t k = 0; k < 300; ++k) cats.push_back({k, 300, k});
  auto r = computeOverlap(cats, {});
  ASSERT_EQ(r.cells.size(), 300u);
  for (const auto& c : r.cells) {
    const auto& set = r.sets.at(c.set);
    EXPECT_EQ(c.time, 1);
    EXPECT_EQ(set.front(), 0u);
    EXPECT_EQ(set.back() + 1, set.size());
  }
  EXPECT_EQ(r.sets.size(), 301u);  // the empty set and one per slice
}

TEST(Overlap, EveryNanosecondIsCountedOnceInRandomInput) {
  // Random intervals: the total reported equals the length of the union of everything that is
  // not "nothing" (a category active or an operation open), checked against a per-ns count.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> at(0, 999), len(0, 60), cat(0, 9), op(1, 5);
  std::vector<CategoryInterval> cats;
  std::vector<OperationSpan> ops;
  for (int i = 0; i < 200; ++i) {
    TimeNs s = at(rng);
    cats.push_back({s, s + len(rng), static_cast<std::uint32_t>(cat(rng))});
  }
  for (int i = 0; i < 40; ++i) {
    TimeNs s = at(rng);
    ops.push_back({s, s + len(rng), static_cast<std::uint32_t>(op(rng))});
  }
  std::vector<std::vector<std::uint32_t>> expectedSet(1100);
  std::vector<std::uint32_t> owner(1100, kUnannotated);
  std::vector<std::int64_t> ownerStart(1100, -1);
  std::vector<std::size_t> ownerIndex(1100, 0);
  for (TimeNs t = 0; t < 1100; ++t) {
    std::vector<bool> on(10, false);
    for (const auto& c : cats)
      if (c.start <= t && t < c.end) on[c.category] = true;
    for (std::uint32_t k = 0; k < 10; ++k)
      if (on[k]) expectedSet[t].push_back(k);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& o = ops[i];
      // The last started active operation; among equal starts, the later listed.
      if (o.start <= t && t < o.end &&
          (o.start > ownerStart[t] || (o.start == ownerStart[t] && i > ownerIndex[t]))) {
        owner[t] = o.operation;
        ownerStart[t] = o.start;
        ownerIndex[t] = i;
      }
    }
  }
  Times expected;
  for (TimeNs t = 0; t < 1100; ++t)
    if (owner[t] != kUnannotated || !expectedSet[t].empty()) expected[{owner[t], expectedSet[t]}]++;
  EXPECT_EQ(timesOf(computeOverlap(cats, ops)), expected);
}

TEST(Overlap, AnIntervalEndingBeforeItStartsIsRejected) {
  EXPECT_THROW(computeOverlap(std::vector<CategoryInterval>{{10, 5, 1}}, {}),
               std::invalid_argument);
  EXPECT_THROW(computeOverlap({}, std::vector<OperationSpan>{{10, 5, 1}}), std::invalid_argument);
}

}  // namespace
}  // namespace rlscope::analysis
