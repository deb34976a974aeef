// Trace times (integer nanoseconds) as microsecond text with exactly three decimals: every
// output format that writes microseconds (Chrome export, CSV) writes them exactly, where a
// double would round (3744422.26 as "3.74442e+06").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rlscope::trace {

// Longest text formatMicros writes: sign, 16 integer digits, point, 3 decimals.
inline constexpr std::size_t kMaxMicrosChars = 21;

// Integer nanoseconds as microseconds with exactly three decimals ("1.500", "-0.001"), computed
// with integer arithmetic so that every int64 value survives a round trip. Writes into `out`
// (at least kMaxMicrosChars bytes) and returns the number of characters written.
std::size_t formatMicros(std::int64_t ns, char* out);
std::string microsText(std::int64_t ns);

// Integer nanoseconds as signed seconds exact to the nanosecond: "+1234.567890123 s", a clock
// offset as `rlscope merge` and `rlscope info` say it.
std::string signedSecondsText(std::int64_t ns);

// How a merged host's clock was put on the reference's, as `rlscope merge` and `rlscope info`
// say it: "-0.005000123 s by clock exchange (within ±12.3 µs)", "... by collectives (40, ±1.2 µs)".
std::string clockOffsetText(const std::string& method, std::int64_t offsetNs,
                            std::int64_t collectives, std::int64_t uncertaintyNs);

}  // namespace rlscope::trace
