// Part clock ticks to nanoseconds: interpolation between clock-sync pairs, extrapolation past
// them, and damaged parts (the fuzzer's find: absurd pairs overflowed a double-to-integer
// conversion), which must saturate rather than overflow.
#include "rlscope/merge/tick_converter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace rlscope::merge {
namespace {

constexpr auto kTicks = part::ClockKind::kTicks;

TEST(TickConverter, InterpolatesBetweenPairsAndExtrapolatesPastThem) {
  TickConverter c(kTicks);
  c.add(3000, 2000);  // out of order on purpose: add() keeps them sorted
  c.add(1000, 1000);
  c.add(5000, 2500);
  ASSERT_TRUE(c.calibrated());
  EXPECT_EQ(c.ns(1000), 1000);
  EXPECT_EQ(c.ns(2000), 1500);  // 0.5 ns per tick in the first segment
  EXPECT_EQ(c.ns(4000), 2250);  // 0.25 in the second
  EXPECT_EQ(c.ns(0), 500);      // before the first pair: the first segment's rate
  EXPECT_EQ(c.ns(7000), 3000);  // after the last: the last segment's
}

TEST(TickConverter, OnePairCountsTicksAsNanosecondsAndFails) {
  TickConverter c(kTicks);
  c.add(100, 5000);
  EXPECT_FALSE(c.calibrated());
  EXPECT_EQ(c.ns(150), 5050);
  EXPECT_EQ(c.ns(40), 4940);
}

TEST(TickConverter, MonotonicPartsAreAlreadyNanoseconds) {
  TickConverter c;
  EXPECT_TRUE(c.calibrated());
  EXPECT_EQ(c.ns(123456789), 123456789);
}

TEST(TickConverter, AbsurdPairsStayInRangeInsteadOfOverflowing) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::uint64_t kTickMax = std::numeric_limits<std::uint64_t>::max();
  auto expectInRange = [](const TickConverter& c) {
    for (std::int64_t t : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1'000'000}, kMax, kMin,
                           std::int64_t{-1}}) {
      std::int64_t ns = c.ns(t);  // UBSan (the CI's sanitizer build) fails on any overflow
      EXPECT_LE(ns, TickConverter::kLimitNs) << t;
      EXPECT_GE(ns, -TickConverter::kLimitNs) << t;
    }
  };
  TickConverter steep(kTicks);  // ~1.8e19 ns per tick
  steep.add(0, kMin);
  steep.add(1, kMax);
  ASSERT_TRUE(steep.calibrated());
  expectInRange(steep);
  TickConverter backwards(kTicks);
  backwards.add(0, kMax);
  backwards.add(kTickMax, kMin);
  ASSERT_TRUE(backwards.calibrated());
  expectInRange(backwards);
  TickConverter one(kTicks);
  one.add(kTickMax, kMax);
  ASSERT_FALSE(one.calibrated());
  expectInRange(one);
  EXPECT_EQ(one.ns(0), kMax - TickConverter::kLimitNs);  // the offset saturated, not the sum
}

// A converter remembers the segment of its last conversion; conversions interleaved with added
// pairs (the merge converts while the part grows) must equal those of a converter given every
// pair first, in any order of ticks.
TEST(TickConverter, RememberedSegmentsConvertAsAFreshConverterDoes) {
  TickConverter growing(part::ClockKind::kTicks), whole(part::ClockKind::kTicks);
  std::uint64_t seed = 7;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
  std::vector<std::pair<std::uint64_t, std::int64_t>> pairs;
  for (int i = 0; i < 50; ++i)
    pairs.emplace_back(1000 + 3000 * i + next() % 100, 1'000'000 + 1000 * i + (next() >> 60));
  for (auto [t, ns] : pairs) whole.add(t, ns);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    growing.add(pairs[i].first, pairs[i].second);
    if (i < 2) continue;
    // Ticks inside the pairs so far, mostly increasing, now and then back or beyond the last.
    for (int k = 0; k < 20; ++k) {
      std::uint64_t t = pairs[i - 2].first + next() % 6000;
      if (k % 7 == 0) t = pairs[0].first + next() % (pairs[i].first - pairs[0].first);
      if (t >= pairs[i].first) continue;  // beyond the last pair: extended, may change later
      EXPECT_EQ(growing.ns(static_cast<std::int64_t>(t)), whole.ns(static_cast<std::int64_t>(t)))
          << "tick " << t << " after pair " << i;
    }
  }
}

}  // namespace
}  // namespace rlscope::merge
