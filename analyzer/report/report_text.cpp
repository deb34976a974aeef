#include "report_text.h"

#include <cmath>
#include <cstdio>
#include <string_view>

namespace rlscope::report {

namespace {

std::string printf1(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

std::string htmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdownEscape(const std::string& text) {
  constexpr std::string_view kSpecial = "\\|*_`[]<>";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (kSpecial.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string formatDuration(double us) {
  if (us == 0) return "0";  // reads better than "0.0 µs" in a column of durations
  double magnitude = std::fabs(us);
  if (magnitude < 1e3) return printf1("%.1f µs", us);
  if (magnitude < 1e6) return printf1("%.2f ms", us / 1e3);
  return printf1("%.3f s", us / 1e6);
}

std::string formatSignedDuration(double us) {
  return (us > 0 ? "+" : "") + formatDuration(us);
}

std::string formatPercent(double part, double whole) {
  if (!(whole > 0)) return "n/a";
  return formatPct(100.0 * part / whole);
}

std::string formatPct(double pct, bool withSign) {
  return printf1(withSign ? "%+.1f%%" : "%.1f%%", pct);
}

std::string formatCount(double value) {
  return printf1("%.0f", value);
}

std::string formatDuration(const std::optional<double>& us) {
  return us ? formatDuration(*us) : "n/a";
}

std::string formatCount(const std::optional<double>& value) {
  return value ? formatCount(*value) : "n/a";
}

}  // namespace rlscope::report
