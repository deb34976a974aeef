#include "rlscope/report/comparison_output.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "report_text.h"

namespace rlscope::report {

namespace {

using Row = std::vector<std::string>;

constexpr std::size_t kTerminalNameChars = 48;

std::string changePctText(const ComparisonRow& r) {
  auto pct = r.changePct();
  if (!pct) return "n/a";
  return *pct == 0 ? formatPct(0) : formatPct(*pct, true);
}

// The side a row is missing from shows a dash, not a duration of 0 it never had.
std::string baselineText(const ComparisonRow& r) {
  return r.presence == Presence::Added ? "—" : formatDuration(r.baselineUs);
}

std::string currentText(const ComparisonRow& r) {
  return r.presence == Presence::Removed ? "—" : formatDuration(r.currentUs);
}

std::string statusText(const ComparisonRow& r) {
  if (r.regression) return "REGRESSION";
  if (r.presence == Presence::Added) return "added";
  if (r.presence == Presence::Removed) return "removed";
  return "";
}

std::string markdownStatus(const ComparisonRow& r) {
  if (r.regression) return "❌ **regression**";
  if (r.presence == Presence::Added) return "added";
  if (r.presence == Presence::Removed) return "removed";
  return "";
}

std::string ruleText(const Comparison& c) {
  return "fail above " + formatPct(c.failAbovePct) + " slower and " +
         formatDuration(c.noiseFloorUs) + " (noise floor); total = " +
         (c.totalIsWallTime ? "run wall time" : "sum of operation times");
}

// --- Markdown ---------------------------------------------------------------------------------

std::string markdownRows(const std::string& firstHeader, const std::vector<ComparisonRow>& rows) {
  std::ostringstream out;
  out << "| " << firstHeader << " | Baseline | Current | Change | Change % | Status |\n"
      << "| --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const auto& r : rows)
    out << "| " << markdownEscape(r.label()) << " | " << baselineText(r) << " | " << currentText(r)
        << " | " << formatSignedDuration(r.changeUs()) << " | " << changePctText(r) << " | "
        << markdownStatus(r) << " |\n";
  return out.str() + "\n";
}

// --- Terminal ---------------------------------------------------------------------------------

// Display width of UTF-8 text: one column per character (µ is two bytes, one column).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string clip(const std::string& s, std::size_t maxChars) {
  if (width(s) <= maxChars) return s;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars++ == maxChars - 1) return s.substr(0, i) + "…";
  }
  return s;
}

Row terminalRow(const ComparisonRow& r) {
  return {r.regression ? "!" : " ",
          clip(r.label(), kTerminalNameChars),
          baselineText(r),
          currentText(r),
          formatSignedDuration(r.changeUs()),
          changePctText(r),
          statusText(r)};
}

// Left-aligned text columns (marker, name, status), right-aligned numbers.
void writeAligned(const std::vector<Row>& rows, std::ostream& out) {
  static const std::vector<bool> kRight = {false, false, true, true, true, true, false};
  std::vector<std::size_t> widths(kRight.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], width(row[i]));
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::string pad(widths[i] - width(row[i]), ' ');
      line += (i ? "  " : "") + (kRight[i] ? pad + row[i] : row[i] + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

void writeSection(const std::string& title, const std::vector<ComparisonRow>& rows,
                  std::ostream& out) {
  out << "\n" << title << "\n";
  std::vector<Row> lines = {{" ", "name", "baseline", "current", "change", "change %", ""}};
  for (const auto& r : rows) lines.push_back(terminalRow(r));
  writeAligned(lines, out);
}

}  // namespace

std::string renderComparisonMarkdown(const Comparison& c) {
  std::ostringstream out;
  out << "## rlscope regression check: " << (c.regressed() ? "❌ regression" : "✅ no regression")
      << "\n\n";
  out << "Baseline "
      << (c.baselineTrace.empty() ? "(no trace name)"
                                  : "**" + markdownEscape(c.baselineTrace) + "**")
      << " → current "
      << (c.currentTrace.empty() ? "(no trace name)" : "**" + markdownEscape(c.currentTrace) + "**")
      << " · " << markdownEscape(ruleText(c)) << "\n\n";
  for (const auto& w : c.warnings) out << "> **Warning:** " << markdownEscape(w) << "\n\n";
  out << markdownRows("Total", {c.total});
  out << "### Operations\n\n";
  if (c.operations.empty())
    out << "_no operations in either document_\n\n";
  else
    out << markdownRows("Operation", c.operations);
  out << "### Category sets\n\n";
  if (c.categorySets.empty())
    out << "_no category sets in either document_\n\n";
  else
    out << markdownRows("Category set", c.categorySets);
  return out.str();
}

void writeComparisonTable(const Comparison& c, std::ostream& out) {
  out << "rlscope regression check: " << (c.regressed() ? "REGRESSION" : "no regression") << "\n";
  out << "  baseline: " << (c.baselineTrace.empty() ? "(no trace name)" : c.baselineTrace) << "\n";
  out << "  current:  " << (c.currentTrace.empty() ? "(no trace name)" : c.currentTrace) << "\n";
  out << "  rule:     " << ruleText(c) << "\n";
  for (const auto& w : c.warnings) out << "  warning:  " << w << "\n";
  writeSection("total", {c.total}, out);
  writeSection("operations", c.operations, out);
  writeSection("category sets", c.categorySets, out);
}

}  // namespace rlscope::report
