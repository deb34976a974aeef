// `rlscope merge` aligning hosts by what rlscope-prof --clock-sync stored in their traces
// (rlscope_meta.clock_sync): with the reference, between two measured hosts, across sessions, and
// a stranger's malformed record.
#include <gtest/gtest.h>

#include "rlscope/distributed/job_merge.h"
#include "rlscope/trace/clock_sync.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {
namespace {

using trace::ClockSync;

constexpr std::int64_t kPid = 77;

std::filesystem::path writeHost(const rlscope::testing::TempDir& dir, const std::string& host,
                                trace::TimeNs clock, trace::TimeNs wall,
                                const std::string& syncJson) {
  auto path = dir / (host + ".sqlite");
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kHost, host);
  w.setMeta(trace::meta::kStartMonotonicNs, std::to_string(clock));
  w.setMeta(trace::meta::kStartWallNs, std::to_string(wall));
  if (!syncJson.empty()) w.setMeta(trace::kClockSyncMetaKey, syncJson);
  w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
  rlscope::testing::addCpu(w, clock + 1'000, clock + 2'000, trace::Category::kPython,
                           trace::globalTidOf(kPid, kPid), "step");
  w.commit();
  return path;
}

std::string referenceOf(const std::string& session) {
  return trace::clockSyncToJson(
      {.role = ClockSync::Role::kReference, .endpoint = "a:1", .session = session});
}

std::string measuredOf(const std::string& session, std::int64_t offset, std::int64_t bound) {
  return trace::clockSyncToJson(
      {.role = ClockSync::Role::kMeasured,
       .endpoint = "a:1",
       .session = session,
       .offsetNs = offset,
       .boundNs = bound,
       .exchanges = 16,
       .bursts = {{.atNs = 0, .offsetNs = offset, .delayNs = 2 * bound}}});
}

// Host b's monotonic clock is 1000 s ahead of host a's and its wall clock 3 ms off (NTP): the
// wall clocks say -1000 s + 3 ms, the exchange -1000 s, which the merge takes.
TEST(JobMergeByClockExchange, TheExchangeAlignsHostsWithoutCollectives) {
  constexpr trace::TimeNs kAhead = 1'000'000'000'000, kWallError = 3'000'000;
  constexpr trace::TimeNs kWall = 1'700'000'000'000'000'000;
  rlscope::testing::TempDir dir;
  auto a = writeHost(dir, "a", 10'000, kWall, referenceOf("s1"));
  // On b, reference = local - kAhead (+ 40 ns of measurement error), within ±15 µs.
  auto b = writeHost(dir, "b", 10'000 + kAhead, kWall + kWallError,
                     measuredOf("s1", -kAhead + 40, 15'000));
  auto report = mergeJob({a, b}, dir / "job.sqlite");
  EXPECT_EQ(report.traces[1].clock.method, "clock exchange");
  EXPECT_EQ(report.traces[1].clock.offset, -kAhead + 40);
  EXPECT_EQ(report.traces[1].clock.uncertainty, 15'000);

  auto wallOnly = mergeJob({a, b}, dir / "wall.sqlite",
                           {.useClockExchange = false, .alignByCollectives = false});
  EXPECT_EQ(wallOnly.traces[1].clock.method, "wall clock");
  EXPECT_EQ(wallOnly.traces[1].clock.offset, -kAhead + kWallError);

  // Reversed: the measured host is the merge's reference.
  auto reversed = mergeJob({b, a}, dir / "reversed.sqlite");
  EXPECT_EQ(reversed.traces[1].clock.offset, kAhead - 40);

  // Two hosts measured against a third: the difference of their offsets, bounds added.
  auto c = writeHost(dir, "c", 10'000 + 2 * kAhead, kWall, measuredOf("s1", -2 * kAhead, 5'000));
  auto twoMeasured = mergeJob({b, c}, dir / "two.sqlite");
  EXPECT_EQ(twoMeasured.traces[1].clock.method, "clock exchange");
  EXPECT_EQ(twoMeasured.traces[1].clock.offset, -kAhead - 40);
  EXPECT_EQ(twoMeasured.traces[1].clock.uncertainty, 20'000);

  // Another job's reference (another session): not comparable, the wall clocks decide.
  auto d =
      writeHost(dir, "d", 10'000 + kAhead, kWall + kWallError, measuredOf("s2", -kAhead, 15'000));
  auto otherSession = mergeJob({a, d}, dir / "other.sqlite");
  EXPECT_EQ(otherSession.traces[1].clock.method, "wall clock");
}

TEST(JobMergeByClockExchange, AStrangersClockSyncIsOneLine) {
  rlscope::testing::TempDir dir;
  auto a = writeHost(dir, "a", 0, 1, referenceOf("s1"));
  auto b = writeHost(dir, "b", 0, 1, R"({"role": "measured", "session": "s1"})");
  try {
    mergeJob({a, b}, dir / "job.sqlite");
    FAIL() << "merged with a broken clock_sync";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("clock_sync"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--align wall-clock"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(mergeJob({a, b}, dir / "wall.sqlite",
                           {.useClockExchange = false, .alignByCollectives = false}));
}

}  // namespace
}  // namespace rlscope::analysis
