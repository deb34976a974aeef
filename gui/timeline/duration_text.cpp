#include "rlscope/gui_model/duration_text.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace rlscope::gui {

namespace {

std::string threeDigits(double v, const char* unit) {
  if (v == 0) return std::string("0 ") + unit;
  char text[64];
  const double a = std::abs(v);
  std::snprintf(text, sizeof text, a >= 100 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s", v, unit);
  return text;
}

// |v| without overflow for INT64_MIN.
std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? ~static_cast<std::uint64_t>(v) + 1 : static_cast<std::uint64_t>(v);
}

// whole.fraction with `digits` fraction digits, trailing zeros (and a bare point) dropped.
std::string decimal(std::uint64_t whole, std::uint64_t fraction, int digits) {
  std::string out = std::to_string(whole);
  if (fraction == 0) return out;
  std::string f = std::to_string(fraction);
  f.insert(0, static_cast<std::size_t>(digits) - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return out + "." + f;
}

}  // namespace

std::string durationText(double ns) {
  const double a = std::abs(ns);
  if (a < 999.5) return threeDigits(ns, "ns");
  if (a < 999.5e3) return threeDigits(ns / 1e3, "µs");
  if (a < 999.5e6) return threeDigits(ns / 1e6, "ms");
  return threeDigits(ns / 1e9, "s");
}

std::string exactDurationText(std::int64_t ns) {
  struct Unit {
    const char* name;
    std::uint64_t ns;
    int digits;
  };
  static constexpr std::array<Unit, 4> kUnits{
      {{"ns", 1, 0}, {"µs", 1'000, 3}, {"ms", 1'000'000, 6}, {"s", 1'000'000'000, 9}}};
  const std::uint64_t m = magnitude(ns);
  const Unit* unit = &kUnits[0];
  for (const auto& u : kUnits) {
    if (m >= u.ns) unit = &u;
  }
  // Appended piece by piece: `"-" + std::string` draws a false -Wrestrict from g++ 12.
  std::string out = ns < 0 ? "-" : "";
  out += decimal(m / unit->ns, m % unit->ns, unit->digits);
  out += ' ';
  out += unit->name;
  return out;
}

}  // namespace rlscope::gui
