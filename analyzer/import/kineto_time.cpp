#include "rlscope/import/kineto_time.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace rlscope::import {

namespace {

std::optional<std::int64_t> viaDouble(std::string_view token) {
  std::string copy(token);
  char* end = nullptr;
  double us = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(us)) return std::nullopt;
  double ns = us * 1000.0;
  // 2^63 is exactly representable; anything at or beyond it does not fit.
  if (!(ns > -9.2233720368547758e18 && ns < 9.2233720368547758e18)) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(ns));
}

}  // namespace

std::optional<std::int64_t> microsecondsToNs(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return std::nullopt;
  for (char c : token) {
    if (c == 'e' || c == 'E') return viaDouble(token);
  }
  std::size_t i = 0;
  bool negative = false;
  if (token[0] == '-') {
    negative = true;
    i = 1;
  }
  // Accumulated in unsigned 64 bits: the int64 limit times 10 plus a digit still fits.
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t ns = 0;
  std::size_t digits = 0;
  for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i, ++digits) {
    ns = ns * 10 + static_cast<unsigned>(token[i] - '0');
    if (ns > kMax / 1000) return std::nullopt;  // whole microseconds must fit after * 1000
  }
  if (digits == 0) return std::nullopt;
  ns *= 1000;
  if (i < token.size()) {
    if (token[i] != '.') return std::nullopt;
    ++i;
    unsigned scale = 100;
    std::size_t fraction = 0;
    bool roundUp = false;
    for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i, ++fraction) {
      unsigned d = static_cast<unsigned>(token[i] - '0');
      if (fraction < 3) {
        ns += d * scale;
        scale /= 10;
      } else if (fraction == 3) {
        roundUp = d >= 5;
      }
    }
    if (fraction == 0 || i != token.size()) return std::nullopt;
    if (roundUp) ns += 1;
  }
  if (ns > kMax) return std::nullopt;
  auto value = static_cast<std::int64_t>(ns);
  return negative ? -value : value;
}

}  // namespace rlscope::import
