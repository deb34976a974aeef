// The merge's stacks on their own (collector/merge/): NvtxRanges (push/pop and start/end ranges)
// and CategorySpans (the Python hooks' category stacks flattened), checked span by span.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "rlscope/merge/category_spans.h"
#include "rlscope/merge/nvtx_ranges.h"

namespace rlscope::merge {
namespace {

using trace::NvtxEventType;

struct Closed {
  std::string text;
  std::int64_t start, end;
  std::uint32_t tid, endTid;
  NvtxEventType type;
  bool unterminated;
  std::uint32_t pushIndex;
  bool operator==(const Closed&) const = default;
};

struct Ranges {
  std::vector<Closed> closed;
  NvtxRanges ranges{[this](const OpenRange& o, std::int64_t end, std::uint32_t endTid,
                           NvtxEventType type, bool unterminated) {
    closed.push_back({o.text, o.start, end, o.tid, endTid, type, unterminated, o.pushIndex});
  }};
};

OpenRange range(const char* text, std::int64_t start, std::uint32_t tid, std::uint64_t domain = 0) {
  OpenRange o;
  o.text = text;
  o.start = start;
  o.tid = tid;
  o.domain = domain;
  return o;
}

TEST(NvtxRanges, PushPopClosesPerThreadAndDomainAndNumbersPushes) {
  Ranges r;
  r.ranges.push(7, range("outer", 10, 7));
  r.ranges.push(7, range("other domain", 12, 7, 5));
  r.ranges.push(8, range("thread 8", 13, 8));
  r.ranges.push(7, range("inner", 15, 7));
  r.ranges.pop(7, 0, 20);  // inner
  r.ranges.pop(7, 5, 25);  // the other domain's, though pushed before inner
  r.ranges.pop(7, 0, 30);  // outer
  r.ranges.pop(7, 0, 31);  // nothing open: counted
  auto left = r.ranges.finish(100);
  std::vector<Closed> want = {
      {"inner", 15, 20, 7, 7, NvtxEventType::kPushPopRange, false, 3},
      {"other domain", 12, 25, 7, 7, NvtxEventType::kPushPopRange, false, 2},
      {"outer", 10, 30, 7, 7, NvtxEventType::kPushPopRange, false, 1},
      // Still open at the end: closed there, unterminated.
      {"thread 8", 13, 100, 8, 8, NvtxEventType::kPushPopRange, true, 1},
  };
  EXPECT_EQ(r.closed, want);
  EXPECT_EQ(left.stillOpen, 1u);
  EXPECT_EQ(left.popsWithoutPush, (std::map<std::uint32_t, std::uint64_t>{{7, 1}}));
  EXPECT_EQ(left.endsNeverStarted, 0u);
}

TEST(NvtxRanges, StartEndRangesMatchAcrossThreadsAtTheEnd) {
  Ranges r;
  r.ranges.start(1, range("crosses threads", 10, 7));
  r.ranges.start(2, range("never ended", 11, 7));
  r.ranges.end(1, 9, 40);
  r.ranges.end(3, 9, 41);         // never started
  EXPECT_TRUE(r.closed.empty());  // matched only once the part is complete
  auto left = r.ranges.finish(100);
  ASSERT_EQ(r.closed.size(), 2u);
  auto byStart = r.closed;
  std::sort(byStart.begin(), byStart.end(),
            [](const Closed& a, const Closed& b) { return a.start < b.start; });
  EXPECT_EQ(byStart[0],
            (Closed{"crosses threads", 10, 40, 7, 9, NvtxEventType::kStartEndRange, false, 0}));
  EXPECT_EQ(byStart[1],
            (Closed{"never ended", 11, 100, 7, 7, NvtxEventType::kStartEndRange, true, 0}));
  EXPECT_EQ(left.endsNeverStarted, 1u);
  EXPECT_EQ(left.stillOpen, 0u);
}

using Span = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::int64_t, std::int64_t,
                        std::uint64_t>;  // tid, category, name, start, end, Python events

struct Spans {
  std::vector<Span> written;
  CategorySpans spans{[this](const CategorySpans::Span& s) {
    written.emplace_back(s.tid, s.category, s.name, s.start, s.end, s.pythonEvents);
  }};
};

part::CategoryPush push(std::int64_t time, std::uint32_t category, std::uint64_t name,
                        bool nativeWait = false, std::uint64_t events = 0) {
  return {time, category, part::categoryPushFlags(nativeWait, events), name};
}

TEST(CategorySpans, TheInnermostCategoryRunsAndSpansNeverOverlap) {
  Spans s;
  s.spans.push(7, push(10, 1, 0));             // Python
  s.spans.push(7, push(20, 2, 11, false, 3));  // Backend call "11"; 3 Python events before it
  s.spans.pop(7, 30, 0);
  s.spans.pop(7, 40, 5);
  std::vector<Span> want = {{7, 1, 0, 10, 20, 3}, {7, 2, 11, 20, 30, 0}, {7, 1, 0, 30, 40, 5}};
  EXPECT_EQ(s.written, want);
  EXPECT_EQ(s.spans.transitions(), 4u);
  s.spans.pop(7, 50, 0);  // nothing pushed
  EXPECT_EQ(s.spans.unmatchedPops(), 1u);
}

TEST(CategorySpans, AWaitInsideACallKeepsItsNameAndIsNoTransition) {
  Spans s;
  s.spans.push(7, push(10, 2, 11));       // Backend "read"
  s.spans.push(7, push(12, 2, 0, true));  // the collector's wait in libc's read: same category
  s.spans.pop(7, 18, 0);
  s.spans.pop(7, 20, 0);
  std::vector<Span> want = {{7, 2, 11, 10, 12, 0}, {7, 2, 11, 12, 18, 0}, {7, 2, 11, 18, 20, 0}};
  EXPECT_EQ(s.written, want);
  EXPECT_EQ(s.spans.transitions(), 2u);  // the Backend push and pop, not the wait's
}

TEST(CategorySpans, EmptySpansAreSkippedAndTheirEventsCarriedAndTheEndClosesWhatRuns) {
  Spans s;
  s.spans.push(7, push(10, 1, 0));
  s.spans.push(7, push(10, 3, 0, false, 2));  // at the same instant: no span, events kept
  s.spans.push(8, push(15, 1, 0));
  s.spans.threadEnded(8, 25);
  s.spans.finish(40);
  std::vector<Span> want = {{8, 1, 0, 15, 25, 0}, {7, 3, 0, 10, 40, 2}};
  EXPECT_EQ(s.written, want);
}

}  // namespace
}  // namespace rlscope::merge
