#include "rlscope/trace/micros_text.h"

#include <cstdio>

#include <charconv>

namespace rlscope::trace {

std::size_t formatMicros(std::int64_t ns, char* out) {
  char* p = out;
  auto magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    *p++ = '-';
    magnitude = 0 - magnitude;  // also right for INT64_MIN
  }
  p = std::to_chars(p, out + kMaxMicrosChars, magnitude / 1000).ptr;
  auto fraction = static_cast<unsigned>(magnitude % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + fraction / 100);
  p[2] = static_cast<char>('0' + fraction / 10 % 10);
  p[3] = static_cast<char>('0' + fraction % 10);
  return static_cast<std::size_t>(p + 4 - out);
}

std::string microsText(std::int64_t ns) {
  char buf[kMaxMicrosChars];
  return std::string(buf, formatMicros(ns, buf));
}

std::string signedSecondsText(std::int64_t ns) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64.
  std::uint64_t magnitude =
      ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char text[48];
  std::snprintf(text, sizeof text, "%c%llu.%09llu s", ns < 0 ? '-' : '+',
                static_cast<unsigned long long>(magnitude / 1'000'000'000),
                static_cast<unsigned long long>(magnitude % 1'000'000'000));
  return text;
}

std::string clockOffsetText(const std::string& method, std::int64_t offsetNs,
                            std::int64_t collectives, std::int64_t uncertaintyNs) {
  std::string text = signedSecondsText(offsetNs) + " by " + method;
  char detail[96] = "";
  double us = static_cast<double>(uncertaintyNs) / 1000.0;
  if (method == "collectives") {
    std::snprintf(detail, sizeof detail, " (%lld, ±%.1f µs)", static_cast<long long>(collectives),
                  us);
  } else if (method == "clock exchange") {
    std::snprintf(detail, sizeof detail, " (within ±%.1f µs)", us);
  }
  return text + detail;
}

}  // namespace rlscope::trace
