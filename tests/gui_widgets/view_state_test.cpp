// The timeline's navigation arithmetic (rlscope/gui_widgets/view_state.h) and ruler ticks
// (rlscope/gui_widgets/time_ruler.h), without painting.
#include "rlscope/gui_widgets/view_state.h"

#include <gtest/gtest.h>

#include "rlscope/gui_widgets/time_ruler.h"

namespace rlscope::gui {
namespace {

ViewState viewOf(TimeNs start, TimeNs end) {
  ViewState v;
  v.setBounds(start, end);
  return v;
}

TEST(ViewState, StartsFittedToTheTrace) {
  ViewState v = viewOf(1000, 5000);
  EXPECT_EQ(v.start(), 1000);
  EXPECT_EQ(v.end(), 5000);
  EXPECT_EQ(v.windowStart(), 1000);
  EXPECT_EQ(v.windowEnd(), 5000);
  EXPECT_DOUBLE_EQ(v.timeAt(500, 1000), 3000);
  EXPECT_DOUBLE_EQ(v.xOf(3000, 1000), 500);
}

TEST(ViewState, RevealCentresAndZoomsOnlyWhenItMust) {
  ViewState v = viewOf(0, 1'000'000);
  v.setWindow(0, 100'000);
  // 10 µs in a 100 µs window: centred at the same zoom.
  v.reveal(500'000, 510'000);
  EXPECT_DOUBLE_EQ(v.span(), 100'000);
  EXPECT_DOUBLE_EQ(v.start(), 455'000);
  // 80 µs: more than half of it, so zoomed out to 100 µs × 1.25.
  v.reveal(200'000, 280'000);
  EXPECT_DOUBLE_EQ(v.span(), 100'000);
  v.reveal(200'000, 300'000);
  EXPECT_DOUBLE_EQ(v.span(), 125'000);
  EXPECT_DOUBLE_EQ(v.start() + v.span() / 2, 250'000);
  // 100 ns in a 125 µs window would be a pixel: zoomed in to 20 times its length.
  v.reveal(600'000, 600'100);
  EXPECT_DOUBLE_EQ(v.span(), 2'000);
  EXPECT_DOUBLE_EQ(v.start(), 599'050);
  // Near the trace's end the window stays inside it, the event off centre but in view.
  v.setWindow(0, 100'000);
  v.reveal(990'000, 995'000);
  EXPECT_DOUBLE_EQ(v.end(), 1'000'000);
  EXPECT_DOUBLE_EQ(v.span(), 100'000);
}

TEST(ViewState, SetWindowShowsItNearTheTrace) {
  ViewState v = viewOf(0, 1'000'000);
  v.setWindow(250'000, 260'000);
  EXPECT_DOUBLE_EQ(v.start(), 250'000);
  EXPECT_DOUBLE_EQ(v.end(), 260'000);
  v.setWindow(5'000'000, 5'000'005);  // past the end, narrower than the narrowest: clamped
  EXPECT_DOUBLE_EQ(v.span(), ViewState::kMinSpan);
  EXPECT_LE(v.start(), 1'000'000);
}

TEST(ViewState, ZoomKeepsTheTimeUnderTheCursor) {
  ViewState v = viewOf(0, 1'000'000);
  for (double x : {0.0, 137.0, 500.0, 999.0}) {
    for (double factor : {0.5, 0.8, 0.01, 1.25}) {
      ViewState z = v;
      z.zoomAt(200, 1000, 0.3);  // somewhere inside first, so that zooming out is not clamped
      const double before = z.timeAt(x, 1000);
      const double span = z.span();
      z.zoomAt(x, 1000, factor);
      EXPECT_NEAR(z.timeAt(x, 1000), before, 1e-6) << x << " " << factor;
      EXPECT_NEAR(z.span(), span * factor, 1e-6);
    }
  }
}

TEST(ViewState, ZoomStopsAtTheLimits) {
  ViewState v = viewOf(0, 1000);
  for (int i = 0; i < 100; ++i) v.zoomAt(300, 800, 0.5);
  EXPECT_DOUBLE_EQ(v.span(), ViewState::kMinSpan);
  EXPECT_LT(v.windowStart(), v.windowEnd());
  for (int i = 0; i < 100; ++i) v.zoomAt(300, 800, 2);
  EXPECT_DOUBLE_EQ(v.span(), 2000);  // twice the trace
}

TEST(ViewState, PanMovesByPixelsAndStaysNearTheTrace) {
  ViewState v = viewOf(0, 10'000);
  v.zoomAt(0, 1000, 0.1);  // [0, 1000)
  v.panPixels(250, 1000);
  EXPECT_DOUBLE_EQ(v.start(), 250);
  EXPECT_DOUBLE_EQ(v.end(), 1250);
  v.panFraction(-0.5);
  EXPECT_DOUBLE_EQ(v.start(), -250);
  for (int i = 0; i < 100; ++i) v.panFraction(1);
  EXPECT_DOUBLE_EQ(v.start(), 10'000 - 500);  // half the window still shows the trace
  for (int i = 0; i < 100; ++i) v.panFraction(-1);
  EXPECT_DOUBLE_EQ(v.end(), 500);
}

TEST(ViewState, FitShowsTheWholeTraceAgain) {
  ViewState v = viewOf(-50, 950);
  v.zoomAt(10, 100, 0.01);
  v.panFraction(3);
  v.fit();
  EXPECT_EQ(v.start(), -50);
  EXPECT_EQ(v.end(), 950);
}

TEST(ViewState, ScrollStaysWithinTheContent) {
  ViewState v;
  v.scrollBy(-10, 500, 200);
  EXPECT_EQ(v.scrollY(), 0);
  v.scrollBy(250, 500, 200);
  EXPECT_EQ(v.scrollY(), 250);
  v.scrollBy(100, 500, 200);
  EXPECT_EQ(v.scrollY(), 300);
  v.scrollBy(10, 100, 200);  // content shorter than the view
  EXPECT_EQ(v.scrollY(), 0);
}

TEST(TimeRuler, PicksNiceStepsAndUnits) {
  struct Case {
    double span;
    int width;
    double step;
    const char* unit;
  };
  // Ticks at least 100 px apart.
  for (const Case& c :
       {Case{1000, 1000, 100, "ns"}, Case{1001, 1000, 200, "ns"}, Case{45'000, 1000, 5000, "µs"},
        Case{3e6, 1200, 500'000, "µs"}, Case{7e8, 1000, 1e8, "ms"}, Case{42e9, 1000, 5e9, "s"},
        Case{5, 1000, 1, "ns"}}) {
    const TickStep s = chooseTickStep(c.span, c.width, 100);
    EXPECT_DOUBLE_EQ(s.ns, c.step) << c.span;
    EXPECT_EQ(s.unit.suffix, c.unit) << c.span;
    EXPECT_GE(s.ns / c.span * c.width, 100 * (1 - 1e-9)) << c.span;
  }
}

TEST(TimeRuler, LabelsInTheStepsUnit) {
  EXPECT_EQ(formatTick(0, chooseTickStep(1e6, 1000, 100)), "0 µs");
  EXPECT_EQ(formatTick(2e6, chooseTickStep(1e7, 1000, 100)), "2 ms");
  EXPECT_EQ(formatTick(1.5e6, chooseTickStep(1e6, 1000, 100)), "1500 µs");
  EXPECT_EQ(formatTick(3e9, chooseTickStep(1e10, 1000, 100)), "3 s");
  EXPECT_EQ(formatTick(700, chooseTickStep(1000, 1000, 100)), "700 ns");
}

}  // namespace
}  // namespace rlscope::gui
