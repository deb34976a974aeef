// Kineto writes times as JSON numbers in microseconds ("1695835542514261", "4458676522690.655").
// A double cannot hold 1.7e15 µs with nanosecond precision, so the token is converted digit by
// digit instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rlscope::import {

// Integer nanoseconds of a JSON number token in microseconds: exact for up to 3 fractional
// digits, rounded half up beyond. Exponent forms go through double. nullopt when the token is not
// a number or the value does not fit in int64 nanoseconds.
std::optional<std::int64_t> microsecondsToNs(std::string_view token);

}  // namespace rlscope::import
