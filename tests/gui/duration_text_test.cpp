// Durations for people (rlscope/gui_model/duration_text.h): rounded to three significant digits for
// labels, exact for an event's details, with the unit that fits.
#include "rlscope/gui_model/duration_text.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace rlscope::gui {
namespace {

TEST(DurationText, Rounded) {
  EXPECT_EQ(durationText(850e3), "850 µs");
  EXPECT_EQ(durationText(12.34e6), "12.3 ms");
  EXPECT_EQ(durationText(1.2e9), "1.20 s");
  EXPECT_EQ(durationText(42), "42.0 ns");
  EXPECT_EQ(durationText(0), "0 ns");
  EXPECT_EQ(durationText(999'700), "1.00 ms");
}

TEST(DurationText, Exact) {
  EXPECT_EQ(exactDurationText(0), "0 ns");
  EXPECT_EQ(exactDurationText(850), "850 ns");
  EXPECT_EQ(exactDurationText(12'500), "12.5 µs");
  EXPECT_EQ(exactDurationText(3'000'001), "3.000001 ms");
  EXPECT_EQ(exactDurationText(1'250'000'000), "1.25 s");
  EXPECT_EQ(exactDurationText(-2'000), "-2 µs");
  EXPECT_EQ(exactDurationText(INT64_MIN), "-9223372036.854775808 s");
}

}  // namespace
}  // namespace rlscope::gui
