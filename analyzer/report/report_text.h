// Text helpers the report renderers share: escaping for HTML and GitHub Markdown, and the one
// way durations, percentages and counts are written, so HTML, Markdown and the terminal table
// agree digit for digit.
#pragma once

#include <optional>
#include <string>

namespace rlscope::report {

// & < > " ' as entities: safe in element content and in quoted attribute values.
std::string htmlEscape(const std::string& text);
// Backslash before the characters GitHub Markdown would act on inside a table cell (| * _ ` [ ]
// < > \), newlines as spaces, so a name stays one cell and renders literally.
std::string markdownEscape(const std::string& text);

// 850.0 µs, 12.35 ms, 3.142 s, 0; negative values keep their sign.
std::string formatDuration(double us);
// Same, with an explicit + for positive values (changes).
std::string formatSignedDuration(double us);
// "12.3%"; "n/a" when whole is not positive.
std::string formatPercent(double part, double whole);
// "12.3%" of a value already in percent; signed adds + for positive values.
std::string formatPct(double pct, bool withSign = false);
// Integers without a fraction: 1234567 -> "1234567".
std::string formatCount(double value);

// For optional values: the formatted value, or "n/a".
std::string formatDuration(const std::optional<double>& us);
std::string formatCount(const std::optional<double>& value);

inline constexpr const char* kNotAvailable = "not available";

}  // namespace rlscope::report
