// The overlap engine whatever order its input is listed in: intervals in start order (read as
// they are), in runs in start order such as threads' buffers (merged), in any order (sorted, in
// chunks of time when large), checked against a direct implementation of the definition
// (docs/analysis.md) on random inputs, and against each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "rlscope/overlap/overlap.h"

namespace rlscope::analysis {
namespace {

// Everything a result says, in a form that compares and prints.
using Flat = std::tuple<std::vector<std::vector<std::uint32_t>>,
                        std::vector<std::tuple<std::uint32_t, std::uint32_t, TimeNs>>, TimeNs,
                        TimeNs, std::uint64_t>;

Flat flat(const OverlapResult& r) {
  std::vector<std::tuple<std::uint32_t, std::uint32_t, TimeNs>> cells;
  for (const auto& c : r.cells) cells.emplace_back(c.operation, c.set, c.time);
  return {r.sets, cells, r.start, r.end, r.boundaries};
}

template <class Interval>
bool covers(const Interval& i, TimeNs t) {
  return i.start <= t && t < i.end;
}

// The definition, slice by slice: each slice between two consecutive boundaries goes to the set
// of categories with an interval over it and to the operation that started last among those
// over it (the later listed among equal starts). Sets are numbered in the order they first
// receive time, as the engine numbers them.
OverlapResult reference(const std::vector<CategoryInterval>& categories,
                        const std::vector<OperationSpan>& operations) {
  OverlapResult r;
  std::vector<TimeNs> times;
  for (const auto& c : categories)
    if (c.end > c.start) times.insert(times.end(), {c.start, c.end});
  for (const auto& o : operations)
    if (o.end > o.start) times.insert(times.end(), {o.start, o.end});
  if (times.empty()) return r;
  r.boundaries = times.size();
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  r.start = times.front();
  r.end = times.back();
  r.sets.push_back({});
  std::map<std::pair<std::uint32_t, std::uint32_t>, TimeNs> cells;
  for (std::size_t s = 0; s + 1 < times.size(); ++s) {
    TimeNs t = times[s];
    std::vector<std::uint32_t> set;
    for (const auto& c : categories)
      if (covers(c, t)) set.push_back(c.category);
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    const OperationSpan* owner = nullptr;
    for (const auto& o : operations)
      if (covers(o, t) && (!owner || o.start >= owner->start)) owner = &o;
    std::uint32_t operation = owner ? owner->operation : kUnannotated;
    if (operation == kUnannotated && set.empty()) continue;
    auto id =
        static_cast<std::uint32_t>(std::find(r.sets.begin(), r.sets.end(), set) - r.sets.begin());
    if (id == r.sets.size()) r.sets.push_back(set);
    cells[{operation, id}] += times[s + 1] - t;
  }
  for (const auto& [key, time] : cells) r.cells.push_back({key.first, key.second, time});
  return r;
}

enum class Layout {
  kStartOrder,     // as a trace of one thread lists them: read as they are
  kSortedRuns,     // 2 to 8 runs each in start order, one after the other: merged
  kThreadBuffers,  // 2 to 4 threads' buffers as they flush: many runs, few open at once: merged
  kAnyOrder,       // random, in hundreds of runs open at once: sorted
};

// Random intervals over [0, horizon), zero-length ones and equal starts included, ids from
// `first` to `last`.
template <class Interval>
std::vector<Interval> randomIntervals(std::mt19937& rng, std::size_t count, TimeNs horizon,
                                      std::uint32_t first, std::uint32_t last) {
  std::uniform_int_distribution<TimeNs> at(0, horizon - 1), length(0, 30);
  std::uniform_int_distribution<std::uint32_t> id(first, last);
  std::vector<Interval> out;
  for (std::size_t i = 0; i < count; ++i) {
    TimeNs start = at(rng);
    out.push_back({start, start + length(rng), id(rng)});
  }
  return out;
}

// Each of 2 to 4 threads' intervals in start order, cut in buffers of 1 to 3, listed in the order
// the buffers fill (by their last start), as a collector writes them.
template <class Interval>
void asThreadBuffers(std::vector<Interval>& intervals, std::mt19937& rng) {
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const Interval& x, const Interval& y) { return x.start < y.start; });
  std::uniform_int_distribution<std::size_t> threads(2, 4), size(1, 3);
  std::uniform_int_distribution<std::size_t> thread(0, threads(rng) - 1);
  std::vector<std::vector<Interval>> perThread(thread.max() + 1);
  for (const auto& i : intervals) perThread[thread(rng)].push_back(i);
  std::vector<std::vector<Interval>> buffers;
  for (const auto& t : perThread)
    for (std::size_t at = 0; at < t.size();) {
      std::size_t n = std::min(size(rng), t.size() - at);
      buffers.emplace_back(t.begin() + static_cast<std::ptrdiff_t>(at),
                           t.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
    }
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const auto& x, const auto& y) { return x.back().start < y.back().start; });
  intervals.clear();
  for (const auto& b : buffers) intervals.insert(intervals.end(), b.begin(), b.end());
}

template <class Interval>
void arrange(std::vector<Interval>& intervals, Layout layout, std::mt19937& rng) {
  auto byStart = [](const Interval& x, const Interval& y) { return x.start < y.start; };
  if (layout == Layout::kStartOrder) {
    std::stable_sort(intervals.begin(), intervals.end(), byStart);
  } else if (layout == Layout::kThreadBuffers) {
    asThreadBuffers(intervals, rng);
  } else if (layout == Layout::kSortedRuns) {
    std::uniform_int_distribution<int> runs(2, 8);
    std::uniform_int_distribution<int> run(0, runs(rng) - 1);
    std::vector<std::pair<int, Interval>> labelled;
    for (const auto& i : intervals) labelled.push_back({run(rng), i});
    std::stable_sort(labelled.begin(), labelled.end(), [&](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : byStart(x.second, y.second);
    });
    for (std::size_t k = 0; k < intervals.size(); ++k) intervals[k] = labelled[k].second;
  }
}

// Thousands of small random cases in `layout`, each against the definition. Thread buffers need
// a few hundred intervals to make many runs; any order, more than 64 runs open at once on average
// in both arrays (past which the engine sorts), and fewer cases for the time the definition takes.
struct Sizes {
  std::size_t fewest, most, fewestOperations, mostOperations;
  int rounds;
};

Sizes sizesFor(Layout layout) {
  switch (layout) {
    case Layout::kAnyOrder:
      return {600, 800, 600, 800, 60};
    case Layout::kThreadBuffers:
      return {100, 300, 25, 75, 500};
    default:
      return {0, 60, 0, 15, 2000};
  }
}

void expectTheDefinition(Layout layout, unsigned seed) {
  std::mt19937 rng(seed);
  Sizes sizes = sizesFor(layout);
  std::uniform_int_distribution<std::size_t> categoryCount(sizes.fewest, sizes.most);
  std::uniform_int_distribution<std::size_t> operationCount(sizes.fewestOperations,
                                                            sizes.mostOperations);
  std::uniform_int_distribution<std::uint32_t> categoryIds(1, 100);  // beyond 64 at times
  for (int round = 0; round < sizes.rounds; ++round) {
    std::size_t n = categoryCount(rng), m = operationCount(rng);
    TimeNs horizon = static_cast<TimeNs>(2 * (n + m) + 10);  // dense: shared boundaries, ties
    auto categories = randomIntervals<CategoryInterval>(rng, n, horizon, 0, categoryIds(rng));
    auto operations = randomIntervals<OperationSpan>(rng, m, horizon, 1, 6);
    arrange(categories, layout, rng);
    arrange(operations, layout, rng);
    Flat expected = flat(reference(categories, operations));
    ASSERT_EQ(flat(computeOverlap(categories, operations)), expected) << "round " << round;
    // In slices of time at once, each starting with what was open at its cut.
    for (unsigned parts : {2u, 3u, 5u})
      ASSERT_EQ(flat(computeOverlap(categories, operations, {.parts = parts, .parallelAbove = 0})),
                expected)
          << "round " << round << ", " << parts << " slices";
  }
}

TEST(OverlapOrder, InputInStartOrderGivesTheDefinition) {
  expectTheDefinition(Layout::kStartOrder, 1);
}

TEST(OverlapOrder, InputInAFewSortedRunsGivesTheDefinition) {
  expectTheDefinition(Layout::kSortedRuns, 2);
}

TEST(OverlapOrder, InputInThreadBuffersGivesTheDefinition) {
  expectTheDefinition(Layout::kThreadBuffers, 8);
}

TEST(OverlapOrder, InputInAnyOrderGivesTheDefinition) {
  expectTheDefinition(Layout::kAnyOrder, 3);
}

TEST(OverlapOrder, EmptyIntervalsAnywhereChangeNothing) {
  // Zero-length intervals out of start order, at the head of a run, before and after all the
  // others: skipped wherever they are, they break no run and misplace nothing.
  std::mt19937 rng(4);
  std::uniform_int_distribution<TimeNs> anywhere(-1000, 1000);
  for (Layout layout :
       {Layout::kStartOrder, Layout::kSortedRuns, Layout::kThreadBuffers, Layout::kAnyOrder}) {
    for (int round = 0; round < 300; ++round) {
      auto categories = randomIntervals<CategoryInterval>(rng, 100, 200, 0, 9);
      auto operations = randomIntervals<OperationSpan>(rng, 100, 200, 1, 6);
      arrange(categories, layout, rng);
      arrange(operations, layout, rng);
      Flat expected = flat(computeOverlap(categories, operations));
      for (int k = 0; k < 20; ++k) {
        TimeNs t = anywhere(rng);
        std::uniform_int_distribution<std::size_t> c(0, categories.size()), o(0, operations.size());
        categories.insert(categories.begin() + static_cast<std::ptrdiff_t>(c(rng)), {t, t, 1});
        operations.insert(operations.begin() + static_cast<std::ptrdiff_t>(o(rng)), {t, t, 1});
      }
      ASSERT_EQ(flat(computeOverlap(categories, operations)), expected) << "round " << round;
    }
  }
}

// A large process: categories 0 to 9 with random overlapping intervals, operations at distinct
// starts (so that their listing order does not matter), each array in start order.
struct Large {
  std::vector<CategoryInterval> categories;
  std::vector<OperationSpan> operations;
};

Large largeProcess(std::size_t categories, std::size_t operations) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<TimeNs> at(0, 1'000'000'000), length(0, 20'000);
  std::uniform_int_distribution<std::uint32_t> category(0, 9), operation(1, 50);
  Large l;
  for (std::size_t i = 0; i < categories; ++i) {
    TimeNs start = at(rng);
    l.categories.push_back({start, start + length(rng), category(rng)});
  }
  TimeNs step = 1'000'000'000 / static_cast<TimeNs>(operations);
  for (std::size_t i = 0; i < operations; ++i) {
    TimeNs start = static_cast<TimeNs>(i) * step + at(rng) % step;
    l.operations.push_back({start, start + 50 * length(rng), operation(rng)});
  }
  std::sort(l.categories.begin(), l.categories.end(),
            [](const auto& x, const auto& y) { return x.start < y.start; });
  return l;
}

TEST(OverlapOrder, ListingOrderChangesNothingInALargeProcess) {
  // In start order (read as is), per category (ten runs, merged), shuffled (sorted): the
  // same result, sets numbered alike.
  Large l = largeProcess(200'000, 5'000);
  Flat inStartOrder = flat(computeOverlap(l.categories, l.operations));
  EXPECT_TRUE(flat(computeOverlap(l.categories, l.operations, {.parts = 1, .parallelAbove = 0})) ==
              inStartOrder);
  auto perCategory = l.categories;
  std::stable_sort(perCategory.begin(), perCategory.end(),
                   [](const auto& x, const auto& y) { return x.category < y.category; });
  EXPECT_TRUE(flat(computeOverlap(perCategory, l.operations)) == inStartOrder);
  std::mt19937 rng(6);
  std::shuffle(l.categories.begin(), l.categories.end(), rng);
  std::shuffle(l.operations.begin(), l.operations.end(), rng);
  EXPECT_TRUE(flat(computeOverlap(l.categories, l.operations)) == inStartOrder);
  // Sliced, in each order: merged runs and sorted chunks cut at the slices' starts.
  for (unsigned parts : {2u, 4u}) {
    OverlapOptions sliced{.parts = parts, .parallelAbove = 0};
    EXPECT_TRUE(flat(computeOverlap(l.categories, l.operations, sliced)) == inStartOrder) << parts;
    EXPECT_TRUE(flat(computeOverlap(perCategory, l.operations, sliced)) == inStartOrder) << parts;
  }
}

TEST(OverlapOrder, ShuffledInputSortedInSeveralChunksOfTimeGivesTheSameResult) {
  // More intervals than the engine sorts at once (2^21, shared by the two arrays in
  // proportion), so that both arrays are sorted a chunk of time at a time.
  Large l = largeProcess(2'300'000, 30'000);
  Flat inStartOrder = flat(computeOverlap(l.categories, l.operations));
  std::mt19937 rng(7);
  std::shuffle(l.categories.begin(), l.categories.end(), rng);
  std::shuffle(l.operations.begin(), l.operations.end(), rng);
  EXPECT_TRUE(flat(computeOverlap(l.categories, l.operations)) == inStartOrder);
}

}  // namespace
}  // namespace rlscope::analysis
