// Searching the timeline by name (rlscope/gui_model/event_search.h): exact, substring and regular
// expression queries, case folding, time order across tracks, next/previous with wrapping, the
// highlight predicate, invalid expressions, and a name too long for the regex engine's recursion
// on an ordinary stack.
#include "rlscope/gui_model/event_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rlscope/trace/global_id.h"

namespace rlscope::gui {
namespace {

enum Name : std::uint32_t {
  kLaunch = 1,  // "cudaLaunchKernel"
  kGemm,        // "sgemm_128x64_nn"
  kRelu,        // "relu_kernel"
  kCopy,        // "Memcpy HtoD"
  kAddmm,       // "aten::addmm"
  kStep,        // "train.py:step"
  kUnused,      // "RELU_KERNEL_UNUSED": a matching name no item has
  kLong,        // 100 000 'a's
};

TrackItem item(TimeNs start, TimeNs end, std::uint32_t name) {
  return {.start = start, .end = end, .nameId = name};
}

Track track(TrackKind kind, std::vector<TrackItem> items) {
  Track t{.kind = kind, .globalPid = trace::globalPidOf(42)};
  t.row = LodRow(std::move(items));
  return t;
}

// A thread's CPU categories (two rows) and two GPU streams.
TimelineData makeTimeline() {
  TimelineData data;
  const char* names[] = {"",
                         "cudaLaunchKernel",
                         "sgemm_128x64_nn",
                         "relu_kernel",
                         "Memcpy HtoD",
                         "aten::addmm",
                         "train.py:step",
                         "RELU_KERNEL_UNUSED"};
  for (std::uint32_t id = 1; id < std::size(names); ++id) data.strings.add(id, names[id]);
  data.strings.add(kLong, std::string(100'000, 'a'));
  ThreadTracks thread{.globalTid = trace::globalTidOf(42, 42)};
  thread.tracks.push_back(track(
      TrackKind::kCategories, {item(0, 100, kStep), item(100, 200, kStep), item(300, 400, kLong)}));
  thread.tracks.push_back(
      track(TrackKind::kCategories, {item(10, 30, kAddmm), item(40, 50, kLaunch),
                                     item(110, 130, kAddmm), item(140, 150, kLaunch)}));
  data.processes.push_back({.globalPid = trace::globalPidOf(42), .threads = {std::move(thread)}});
  DeviceTracks device{.deviceId = 0};
  device.streams.push_back(track(
      TrackKind::kGpuStream, {item(45, 60, kGemm), item(140, 150, kRelu), item(160, 170, kGemm)}));
  device.streams.push_back(
      track(TrackKind::kGpuStream, {item(40, 44, kCopy), item(150, 155, kRelu)}));
  data.devices.push_back(std::move(device));
  return data;
}

struct Hit {
  TimeNs start;
  std::string name;
  bool operator==(const Hit&) const = default;
};

std::vector<Hit> hits(const TimelineData& data, const EventSearch& s) {
  std::vector<Hit> out;
  for (std::size_t i = 0; i < s.count(); ++i)
    out.push_back({s.match(i).item().start, std::string(data.name(s.match(i).item()))});
  return out;
}

SearchQuery query(std::string text, SearchQuery::Mode mode = SearchQuery::Mode::kSubstring,
                  bool caseSensitive = false) {
  return {.text = std::move(text), .mode = mode, .caseSensitive = caseSensitive};
}

TEST(EventSearch, SubstringIgnoringCaseFindsEveryItemInTimeOrderAcrossTracks) {
  TimelineData data = makeTimeline();
  EventSearch s(data, query("KERNEL"));
  // At 140 the launch (thread track, earlier in forEachTrack order) comes before the kernel.
  EXPECT_EQ(hits(data, s), (std::vector<Hit>{{40, "cudaLaunchKernel"},
                                             {140, "cudaLaunchKernel"},
                                             {140, "relu_kernel"},
                                             {150, "relu_kernel"}}));
  EXPECT_EQ(s.count(), 4u);
  // Matched once per distinct name: the unused name matches too, no item has it.
  EXPECT_EQ(s.matchedNameCount(), 3u);
  EXPECT_TRUE(s.matchesName(kLaunch));
  EXPECT_TRUE(s.matchesName(kRelu));
  EXPECT_TRUE(s.matchesName(kUnused));
  EXPECT_FALSE(s.matchesName(kGemm));
  EXPECT_FALSE(s.matchesName(0));
  EXPECT_FALSE(s.matchesName(1'000'000));  // beyond the string table
  EXPECT_TRUE(s.matches(item(0, 1, kRelu)));

  // A merged block of items [first, first + count) of a track: launches at 1 and 3.
  const Track& calls = data.processes[0].threads[0].tracks[1];
  EXPECT_FALSE(s.matchesAny(calls, 0, 1));
  EXPECT_TRUE(s.matchesAny(calls, 0, 2));
  EXPECT_FALSE(s.matchesAny(calls, 2, 1));
  EXPECT_TRUE(s.matchesAny(calls, 2, 2));
  EXPECT_TRUE(s.matchesAny(calls, 0, SIZE_MAX));
  EXPECT_FALSE(s.matchesAny(calls, 4, 10));
  EXPECT_FALSE(s.matchesAny(calls, 1, 0));
  EXPECT_FALSE(s.matchesAny(data.processes[0].threads[0].tracks[0], 0, 3));
  Track stranger = calls;
  EXPECT_FALSE(s.matchesAny(stranger, 0, 4));
}

TEST(EventSearch, CaseSensitiveExactAndRegexQueries) {
  TimelineData data = makeTimeline();
  using Mode = SearchQuery::Mode;
  EXPECT_EQ(EventSearch(data, query("Kernel", Mode::kSubstring, true)).count(), 2u);
  EXPECT_EQ(EventSearch(data, query("kernel", Mode::kSubstring, true)).count(), 2u);  // relu
  EXPECT_EQ(EventSearch(data, query("relu_kernel", Mode::kExact)).count(), 2u);
  EXPECT_EQ(EventSearch(data, query("RELU_kernel", Mode::kExact)).count(), 2u);
  EXPECT_EQ(EventSearch(data, query("RELU_kernel", Mode::kExact, true)).count(), 0u);
  EXPECT_EQ(EventSearch(data, query("relu", Mode::kExact)).count(), 0u);  // not the whole name

  EventSearch re(data, query("^(sgemm|relu)_", Mode::kRegex, true));
  EXPECT_EQ(hits(data, re), (std::vector<Hit>{{45, "sgemm_128x64_nn"},
                                              {140, "relu_kernel"},
                                              {150, "relu_kernel"},
                                              {160, "sgemm_128x64_nn"}}));
  EXPECT_EQ(EventSearch(data, query("^SGEMM", Mode::kRegex)).count(), 2u);
  EXPECT_EQ(EventSearch(data, query("^SGEMM", Mode::kRegex, true)).count(), 0u);
  EXPECT_EQ(EventSearch(data, query("::", Mode::kRegex)).count(), 2u);  // found anywhere
}

TEST(EventSearch, NextAndPreviousWrapAround) {
  TimelineData data = makeTimeline();
  EventSearch s(data, query("aten::addmm", SearchQuery::Mode::kExact));
  ASSERT_EQ(s.count(), 2u);  // at 10 and 110
  EXPECT_EQ(s.next(-5), 0u);
  EXPECT_EQ(s.next(10), 1u);       // strictly after
  EXPECT_EQ(s.next(110), 0u);      // wraps
  EXPECT_EQ(s.previous(110), 0u);  // strictly before
  EXPECT_EQ(s.previous(111), 1u);
  EXPECT_EQ(s.previous(10), 1u);  // wraps
  EXPECT_EQ(s.nextAfter(0), 1u);
  EXPECT_EQ(s.nextAfter(1), 0u);
  EXPECT_EQ(s.previousBefore(1), 0u);
  EXPECT_EQ(s.previousBefore(0), 1u);

  // From a selected item to its place among the matches.
  const Track& cpu = data.processes[0].threads[0].tracks[1];
  EXPECT_EQ(s.indexOf({&cpu, 2}), 1u);
  EXPECT_EQ(s.indexOf({&cpu, 1}), std::nullopt);  // a launch, not a match
  EXPECT_EQ(s.indexOf({&cpu, 99}), std::nullopt);
  EXPECT_EQ(s.match(1), (ItemLocation{&cpu, 2}));

  // Two matches at one start: index order, not time, steps between them.
  EventSearch k(data, query("kernel"));
  ASSERT_EQ(k.count(), 4u);
  EXPECT_EQ(k.next(40), 1u);      // the first at 140
  EXPECT_EQ(k.nextAfter(1), 2u);  // the second at 140
  EXPECT_EQ(k.indexOf(k.match(2)), 2u);
  EXPECT_EQ(k.previous(150), 2u);
}

TEST(EventSearch, NoMatchAndEmptyQuery) {
  TimelineData data = makeTimeline();
  for (const auto& q : {query("no such event"), query(""), query("", SearchQuery::Mode::kRegex),
                        query("^$", SearchQuery::Mode::kRegex)}) {
    EventSearch s(data, q);
    EXPECT_EQ(s.count(), 0u) << q.text;
    EXPECT_TRUE(s.empty());
    EXPECT_EQ(s.next(0), std::nullopt);
    EXPECT_EQ(s.previous(0), std::nullopt);
    EXPECT_EQ(s.nextAfter(0), std::nullopt);
    EXPECT_EQ(s.previousBefore(0), std::nullopt);
    EXPECT_FALSE(s.matchesName(kLaunch));
  }
  EventSearch none;
  EXPECT_EQ(none.count(), 0u);
  EXPECT_EQ(EventSearch(TimelineData{}, query("x")).count(), 0u);
}

TEST(EventSearch, AnInvalidRegexIsAClearError) {
  TimelineData data = makeTimeline();
  for (const char* bad : {"(", "[a-", "a{2,1}", "*x", "\\"}) {
    try {
      EventSearch s(data, query(bad, SearchQuery::Mode::kRegex));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidSearch& e) {
      EXPECT_NE(std::string(e.what()).find("invalid regular expression '" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
  // The same text is a plain substring in the other modes.
  EXPECT_EQ(EventSearch(data, query("(")).count(), 0u);
}

// libstdc++'s regex recursion goes one level per character: 100 000 characters overflow an
// ordinary 8 MiB stack. The search matches on its own large stack, and on the first 16 KiB.
TEST(EventSearch, ARegexOverAVeryLongNameDoesNotOverflowTheStack) {
#if defined(__SANITIZE_THREAD__)
  // libstdc++'s regex recurses several frames per character: more than ThreadSanitizer's
  // per-thread shadow stack of 64 K frames holds, whatever the thread's own stack.
  GTEST_SKIP() << "ThreadSanitizer's shadow stack is too shallow for libstdc++'s regex recursion";
#endif
  TimelineData data = makeTimeline();
  EventSearch s(data, query("^(a|b)*$", SearchQuery::Mode::kRegex));
  EXPECT_EQ(hits(data, s), (std::vector<Hit>{{300, std::string(100'000, 'a')}}));
  EXPECT_EQ(EventSearch(data, query("(a|b)+", SearchQuery::Mode::kRegex)).count(), 7u);
}

}  // namespace
}  // namespace rlscope::gui
