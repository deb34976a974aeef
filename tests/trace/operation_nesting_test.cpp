// OperationNesting (rlscope/trace/operation_nesting.h): ids in (thread, start) order, parents and
// depths, and the ids operations had when added; checked against the definition (a stable sort of
// the records, then a stack per thread) on random ranges, in the orders producers add them.
#include "rlscope/trace/operation_nesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace rlscope::trace {
namespace {

std::vector<OperationRecord> reference(std::vector<OperationRecord> ops,
                                       std::vector<std::int64_t>& inputIds) {
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    if (a.globalTid != b.globalTid) return a.globalTid < b.globalTid;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  inputIds.clear();
  std::vector<std::size_t> stack;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    inputIds.push_back(ops[i].id);
    ops[i].id = static_cast<std::int64_t>(i) + 1;
    if (i > 0 && ops[i - 1].globalTid != ops[i].globalTid) stack.clear();
    while (!stack.empty()) {
      const auto& top = ops[stack.back()];
      bool contains = top.start <= ops[i].start && ops[i].end <= top.end;
      bool endsHere = top.end == ops[i].start && top.start < top.end;
      if (contains && !endsHere) break;
      stack.pop_back();
    }
    ops[i].parentId = stack.empty() ? 0 : ops[stack.back()].id;
    ops[i].depth = static_cast<int>(stack.size());
    stack.push_back(i);
  }
  return ops;
}

auto fields(const OperationRecord& o) {
  return std::tuple(o.id, o.start, o.end, o.globalTid, o.nameId, o.parentId, o.depth, o.args);
}

void expectSameAsReference(const std::vector<OperationRecord>& input) {
  OperationNesting nesting;
  for (const auto& op : input) nesting.add(op);
  std::vector<std::int64_t> ids, wantIds;
  auto got = nesting.build(&ids);
  auto want = reference(input, wantIds);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(fields(got[i]), fields(want[i])) << "operation " << i;
  EXPECT_EQ(ids, wantIds);
  EXPECT_TRUE(nesting.empty());
}

// Random ranges with ties in start and end, on `threads` threads; ids 1..n in input order.
std::vector<OperationRecord> randomRanges(std::size_t n, int threads, std::mt19937& rng) {
  std::uniform_int_distribution<int> thread(1, threads), start(0, 200), length(0, 50);
  std::vector<OperationRecord> ops(n);
  for (std::size_t i = 0; i < n; ++i) {
    ops[i].id = static_cast<std::int64_t>(i) + 1;
    ops[i].globalTid = thread(rng);
    ops[i].start = start(rng);
    ops[i].end = ops[i].start + length(rng);
    ops[i].nameId = static_cast<StringId>(i % 7);
    ops[i].args = i % 5 == 0 ? "{\"unterminated\":true}" : "";
  }
  return ops;
}

TEST(OperationNesting, NestsByContainmentOnEachThread) {
  OperationNesting nesting;
  // Added as they close: the inner one first. A range ending where the next starts is its
  // predecessor, not its parent.
  nesting.add({.id = 10, .start = 20, .end = 30, .globalTid = 1});
  nesting.add({.id = 11, .start = 0, .end = 100, .globalTid = 1});
  nesting.add({.id = 12, .start = 30, .end = 40, .globalTid = 1});
  nesting.add({.id = 13, .start = 5, .end = 6, .globalTid = 2});
  std::vector<std::int64_t> ids;
  auto ops = nesting.build(&ids);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{11, 10, 12, 13}));
  EXPECT_EQ(std::tuple(ops[0].id, ops[0].parentId, ops[0].depth), std::tuple(1, 0, 0));
  EXPECT_EQ(std::tuple(ops[1].id, ops[1].parentId, ops[1].depth), std::tuple(2, 1, 1));
  EXPECT_EQ(std::tuple(ops[2].id, ops[2].parentId, ops[2].depth), std::tuple(3, 1, 1));
  EXPECT_EQ(std::tuple(ops[3].id, ops[3].parentId, ops[3].depth), std::tuple(4, 0, 0));
}

TEST(OperationNesting, MatchesTheDefinitionInAnyInputOrder) {
  std::mt19937 rng(11);
  for (int threads : {1, 3, 16}) {
    for (std::size_t n : {0u, 1u, 2u, 17u, 500u}) {
      SCOPED_TRACE(testing::Message() << n << " ranges on " << threads << " threads");
      expectSameAsReference(randomRanges(n, threads, rng));
    }
  }
}

// The two ways records are moved: a short way (one thread's ranges added as they close) and far
// (many threads interleaved), and input already in order.
TEST(OperationNesting, MatchesTheDefinitionWhetherRecordsMoveNearOrFar) {
  std::mt19937 rng(5);
  std::vector<OperationRecord> closing;  // iterations of a parent closed after two children
  for (std::int64_t k = 0; k < 20'000; ++k) {
    std::int64_t t = k * 100;
    closing.push_back({.id = 3 * k + 1, .start = t + 10, .end = t + 40, .globalTid = 1});
    closing.push_back({.id = 3 * k + 2, .start = t + 50, .end = t + 90, .globalTid = 1});
    closing.push_back({.id = 3 * k + 3, .start = t, .end = t + 100, .globalTid = 1});
  }
  expectSameAsReference(closing);
  std::vector<OperationRecord> far = randomRanges(60'000, 16, rng);
  std::shuffle(far.begin(), far.end(), rng);
  expectSameAsReference(far);
  std::vector<std::int64_t> ignored;
  expectSameAsReference(reference(far, ignored));
}

// Inputs made of a few sorted runs, which are merged rather than sorted: one range around all the
// others added last (the C++ sample's training loop), and sorted blocks of several threads in an
// odd number of pieces.
TEST(OperationNesting, MatchesTheDefinitionOnInputsOfAFewSortedRuns) {
  std::vector<OperationRecord> aroundAll;
  for (std::int64_t k = 0; k < 50'000; ++k)
    aroundAll.push_back({.id = k + 1, .start = 10 * k + 1, .end = 10 * k + 9, .globalTid = 1});
  aroundAll.push_back({.id = 50'001, .start = 0, .end = 500'000, .globalTid = 1});
  expectSameAsReference(aroundAll);

  std::mt19937 rng(3);
  std::vector<std::int64_t> ignored;
  std::vector<OperationRecord> sorted = reference(randomRanges(30'000, 4, rng), ignored);
  std::vector<OperationRecord> pieces;
  for (std::size_t cut : {3u, 1u, 4u, 0u, 2u, 6u, 5u}) {  // seven pieces, shuffled
    std::size_t begin = cut * sorted.size() / 7, end = (cut + 1) * sorted.size() / 7;
    pieces.insert(pieces.end(), sorted.begin() + static_cast<std::ptrdiff_t>(begin),
                  sorted.begin() + static_cast<std::ptrdiff_t>(end));
  }
  expectSameAsReference(pieces);
}

}  // namespace
}  // namespace rlscope::trace
