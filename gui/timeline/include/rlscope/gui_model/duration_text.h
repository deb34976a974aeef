// Durations written for people, one way across the viewer: the rounded form for labels (the
// range on the ruler, the analysis panel, the status bar) and the exact one for an event's details.
#pragma once

#include <cstdint>
#include <string>

namespace rlscope::gui {

// "12.3 ms", "850 µs", "1.20 s", "42.0 ns": three significant digits; a value that rounds to 1000
// of a unit is written in the next one.
std::string durationText(double ns);

// Exact, trailing zeros dropped: "850 ns", "12.5 µs", "3.000001 ms", "1.25 s" (any int64).
std::string exactDurationText(std::int64_t ns);

}  // namespace rlscope::gui
