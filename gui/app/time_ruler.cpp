#include "rlscope/gui_widgets/time_ruler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace rlscope::gui {

namespace {

constexpr std::array<TimeUnit, 4> kUnits{{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}};

}  // namespace

TickStep chooseTickStep(double spanNs, int widthPx, int minSpacingPx) {
  const double least = std::max(1.0, spanNs * minSpacingPx / std::max(widthPx, 1));
  double power = std::pow(10.0, std::floor(std::log10(least)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    // A relative tolerance: log10 and pow can land a hair off an exact power of ten.
    if (step >= least * (1 - 1e-9)) break;
  }
  TickStep out;
  out.ns = step;
  out.unit = kUnits[0];
  for (const TimeUnit& u : kUnits) {
    if (step >= u.ns) out.unit = u;
  }
  return out;
}

std::string formatTick(double ns, const TickStep& step) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.0f %.*s", ns / step.unit.ns,
                static_cast<int>(step.unit.suffix.size()), step.unit.suffix.data());
  return buffer;
}

}  // namespace rlscope::gui
