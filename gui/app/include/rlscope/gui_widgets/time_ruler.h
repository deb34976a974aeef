// The time ruler's ticks: a "nice" step (1, 2 or 5 times a power of ten nanoseconds) that puts
// ticks at least a given number of pixels apart, and labels in the unit that suits the step
// (ns, µs, ms, s), the largest in which every tick is a whole number. No Qt: tested without
// painting.
#pragma once

#include <string>
#include <string_view>

namespace rlscope::gui {

struct TimeUnit {
  std::string_view suffix;  // "ns", "µs", "ms", "s"
  double ns = 1;            // nanoseconds in one unit
};

struct TickStep {
  double ns = 1;  // the step, 1, 2 or 5 × 10^k nanoseconds, k >= 0
  TimeUnit unit;  // the largest unit not longer than the step: labels are whole numbers of it
};

// The smallest nice step whose ticks, over a window `spanNs` long drawn `widthPx` wide, are at
// least minSpacingPx apart.
TickStep chooseTickStep(double spanNs, int widthPx, int minSpacingPx);

// "1250 µs": a tick's time (from the trace's start) in the step's unit.
std::string formatTick(double ns, const TickStep& step);

}  // namespace rlscope::gui
