// OperationStream writes operations as they close and must nest them exactly as
// trace::OperationNesting nests the same ranges all at once (the definition every producer
// follows), while holding nothing where one domain's push/pop ranges are all that is open.
#include "rlscope/merge/operation_stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "rlscope/trace/operation_nesting.h"

namespace rlscope {
namespace {

using merge::OperationStream;
using Kind = OperationStream::Kind;
constexpr Kind kOurs{1, true};
constexpr Kind kTheirs{2, true};
constexpr Kind kStartEnd{1, false};

trace::OperationRecord closing(std::int64_t id, std::int64_t start, std::int64_t end,
                               std::int64_t tid = 7) {
  trace::OperationRecord op;
  op.id = id;
  op.start = start;
  op.end = end;
  op.globalTid = tid;
  return op;
}

struct Written {
  std::vector<trace::OperationRecord> ops;
  OperationStream::Write sink() {
    return [this](const trace::OperationRecord& op) { ops.push_back(op); };
  }
};

TEST(OperationStream, OneDomainsRangesAreWrittenAsTheyCloseWithTheirFinalNesting) {
  Written w;
  OperationStream s(w.sink(), false);
  const OperationStream::ThreadKey t = merge::partKey(1, 7);
  std::int64_t outer = s.open(t, kOurs);
  std::int64_t a = s.open(t, kOurs);
  s.close(t, closing(a, 20, 30));
  ASSERT_EQ(w.ops.size(), 1u);  // written while `outer` is still open
  EXPECT_EQ(w.ops[0].parentId, outer);
  EXPECT_EQ(w.ops[0].depth, 1);
  std::int64_t b = s.open(t, kOurs);
  std::int64_t c = s.open(t, kOurs);
  s.close(t, closing(c, 45, 50));
  s.close(t, closing(b, 40, 60));
  EXPECT_EQ(s.held(), 0u);
  s.close(t, closing(outer, 10, 100));
  ASSERT_EQ(w.ops.size(), 4u);
  EXPECT_EQ(w.ops[1].id, c);
  EXPECT_EQ(w.ops[1].parentId, b);
  EXPECT_EQ(w.ops[1].depth, 2);
  EXPECT_EQ(w.ops[3].id, outer);
  EXPECT_EQ(w.ops[3].parentId, 0);
  EXPECT_EQ(w.ops[3].depth, 0);
  EXPECT_LT(outer, a);  // ids in the order ranges opened
  EXPECT_LT(b, c);
}

TEST(OperationStream, MixedRangesAreHeldUntilTheThreadsRangesCloseThenNestedByContainment) {
  Written w;
  OperationStream s(w.sink(), false);
  const OperationStream::ThreadKey t = merge::partKey(1, 7);
  // Ours [10, 50] and theirs [20, 80] overlap without nesting: theirs is no child of ours.
  std::int64_t ours = s.open(t, kOurs);
  std::int64_t theirs = s.open(t, kTheirs);
  std::int64_t inner = s.open(t, kOurs);
  s.close(t, closing(inner, 30, 40));
  s.close(t, closing(ours, 10, 50));
  EXPECT_TRUE(w.ops.empty());
  EXPECT_EQ(s.held(), 2u);
  s.close(t, closing(theirs, 20, 80));
  ASSERT_EQ(w.ops.size(), 3u);
  EXPECT_EQ(s.held(), 0u);
  std::map<std::int64_t, trace::OperationRecord> byId;
  for (const auto& op : w.ops) byId[op.id] = op;
  EXPECT_EQ(byId[ours].parentId, 0);
  EXPECT_EQ(byId[theirs].parentId, 0);
  EXPECT_EQ(byId[inner].parentId, theirs);  // the innermost that contains it
  EXPECT_EQ(byId[inner].depth, 1);
  // Once nothing is open the thread streams again.
  std::int64_t next = s.open(t, kOurs);
  s.close(t, closing(next, 90, 95));
  EXPECT_EQ(w.ops.size(), 4u);
}

TEST(OperationStream, APhaseClosedWithoutAnOperationLeavesTheNestingAlone) {
  Written w;
  OperationStream s(w.sink(), false);
  const OperationStream::ThreadKey t = merge::partKey(1, 7);
  std::int64_t outer = s.open(t, kOurs);
  std::int64_t phase = s.open(t, kTheirs);  // its domain's name came later: a phase
  s.cancel(t, phase);
  std::int64_t inner = s.open(t, kOurs);
  s.close(t, closing(inner, 20, 30));
  s.close(t, closing(outer, 10, 40));
  ASSERT_EQ(w.ops.size(), 2u);
  const auto& first = w.ops[0].id == inner ? w.ops[0] : w.ops[1];
  EXPECT_EQ(first.parentId, outer);
  EXPECT_EQ(first.depth, 1);
}

// Random runs of push/pop ranges of two domains and start/end ranges on two threads, closed as a
// part's merge closes them (start/end ranges and unterminated push/pop ranges at the process's
// end, innermost first); every operation's parent and depth must be those OperationNesting
// gives the same ranges.
TEST(OperationStream, NestsAsOperationNestingDoesOnRandomRuns) {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Written w;
    OperationStream s(w.sink(), true);
    trace::OperationNesting reference;
    struct Opened {
      std::int64_t id, start;
    };
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<Opened>> stacks;
    std::vector<std::pair<std::uint32_t, Opened>> startEnd;
    std::map<std::int64_t, std::int64_t> tidOf;
    std::int64_t now = 0;
    auto close = [&](std::uint32_t tid, Opened o, std::int64_t end) {
      auto op = closing(o.id, o.start, end, tid);
      reference.add(op);
      s.close(merge::partKey(1, tid), op);
    };
    bool mixDomains = seed % 3 != 0, useStartEnd = seed % 4 == 0;
    for (int step = 0; step < 200; ++step) {
      now += 1 + static_cast<std::int64_t>(rng() % 5);
      std::uint32_t tid = 1 + rng() % 2;
      std::uint64_t domain = mixDomains && rng() % 4 == 0 ? 2 : 1;
      auto& stack = stacks[{tid, domain}];
      unsigned roll = rng() % 10;
      if (roll < 5) {
        stack.push_back({s.open(merge::partKey(1, tid), {domain, true}), now});
      } else if (roll < 9) {
        if (stack.empty()) continue;
        close(tid, stack.back(), now);
        stack.pop_back();
      } else if (useStartEnd) {
        startEnd.push_back({tid, {s.open(merge::partKey(1, tid), kStartEnd), now}});
      }
    }
    const std::int64_t end = now + 10;
    for (auto& [tid, o] : startEnd) close(tid, o, end);
    for (auto& [key, stack] : stacks)
      for (auto o = stack.rbegin(); o != stack.rend(); ++o) close(key.first, *o, end);
    EXPECT_EQ(s.held(), 0u);

    std::vector<std::int64_t> inputIds;
    auto expected = reference.build(&inputIds);
    ASSERT_EQ(w.ops.size(), expected.size()) << "seed " << seed;
    std::map<std::int64_t, std::int64_t> inputIdOf;  // build's ids -> ours
    for (std::size_t i = 0; i < expected.size(); ++i) inputIdOf[expected[i].id] = inputIds[i];
    std::map<std::int64_t, trace::OperationRecord> got;
    for (const auto& op : w.ops) got[op.id] = op;
    for (const auto& e : expected) {
      const auto& g = got.at(inputIdOf.at(e.id));
      EXPECT_EQ(g.parentId, e.parentId ? inputIdOf.at(e.parentId) : 0) << "seed " << seed;
      EXPECT_EQ(g.depth, e.depth) << "seed " << seed;
    }
    // The innermost operation at an instant, from the kept records: of those containing it, the
    // one that started last (starts here are distinct).
    for (std::int64_t t = 0; t < end; t += 7) {
      for (std::int64_t tid = 1; tid <= 2; ++tid) {
        std::int64_t want = 0;
        for (const auto& [id, op] : got)
          if (op.globalTid == tid && op.start <= t && t < op.end &&
              (want == 0 || op.start > got.at(want).start))
            want = id;
        EXPECT_EQ(s.innermostAt(tid, t), want) << "seed " << seed << " t " << t;
      }
    }
  }
}

}  // namespace
}  // namespace rlscope
