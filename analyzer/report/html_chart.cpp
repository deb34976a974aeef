#include "html_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "report_text.h"

namespace rlscope::report {

namespace {

// Chart geometry in SVG user units (the SVG scales to the page width).
constexpr double kChartWidth = 960;
constexpr double kLabelWidth = 220;
constexpr double kBarWidth = 580;
constexpr double kRowPitch = 34;
constexpr double kBarTop = 4, kBarHeight = 18, kStripGap = 2, kStripHeight = 4;
constexpr double kAxisHeight = 22;
constexpr std::size_t kLabelChars = 32;
// Segments narrower than this are invisible; leaving them out keeps big traces' pages small.
constexpr double kMinSegmentWidth = 0.05;
constexpr double kStripeWidth = 4;
constexpr const char* kIdleColour = "#e3e6ea";
// Bar pairs: the two bars of a row share the height of one stacked bar and its strip.
constexpr double kPairBarHeight = 11, kPairGap = 2;
constexpr const char* kBeforeColour = "#9aa5b1";
constexpr const char* kAfterColour = "#8057b0";

// Tableau 10: distinct, readable on white, and friendly to the common colour-blindnesses.
const std::map<std::string, std::string>& knownColours() {
  static const std::map<std::string, std::string> colours = {
      {"Python", "#4e79a7"},     {"Backend", "#f28e2b"},    {"Simulator", "#59a14f"},
      {"CUDA API", "#e15759"},   {"Native", "#9c755f"},     {"GPU kernel", "#b07aa1"},
      {"GPU memcpy", "#ff9da7"}, {"GPU memset", "#edc948"},
  };
  return colours;
}

std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  return buf;
}

// Cuts at a character boundary of UTF-8 text, never inside a multi-byte character.
std::string truncated(const std::string& text, std::size_t maxChars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == maxChars - 1) return text.substr(0, i) + "…";
  }
  return text;
}

double idleRemainder(const Operation& op) {
  double ran = 0;
  for (const auto& c : op.categories)
    if (!c.set.empty()) ran += c.timeUs;
  return std::max(0.0, op.timeUs - ran);
}

std::string rect(double x, double y, double w, double h, const std::string& fill,
                 const std::string& title) {
  std::ostringstream out;
  out << "<rect x=\"" << number(x) << "\" y=\"" << number(y) << "\" width=\"" << number(w)
      << "\" height=\"" << number(h) << "\" fill=\"" << fill << "\"><title>" << htmlEscape(title)
      << "</title></rect>";
  return out.str();
}

std::string text(double x, double y, const std::string& anchor, const std::string& cssClass,
                 const std::string& content) {
  std::ostringstream out;
  out << "<text x=\"" << number(x) << "\" y=\"" << number(y) << "\" text-anchor=\"" << anchor
      << "\" class=\"" << cssClass << "\">" << content << "</text>";
  return out.str();
}

// Axis labels of round values, without trailing zeros: "0", "500 µs", "200 ms", "1.5 s".
std::string formatTick(double us) {
  char buf[32];
  if (us == 0) return "0";
  if (us < 1e3)
    std::snprintf(buf, sizeof buf, "%.4g µs", us);
  else if (us < 1e6)
    std::snprintf(buf, sizeof buf, "%.4g ms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", us / 1e6);
  return buf;
}

// The largest 1, 2 or 5 times a power of ten that gives at least four gridlines: ticks read
// "200 ms", not "228.50 ms".
double tickStep(double scaleUs) {
  double raw = scaleUs / 4;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {5.0, 2.0})
    if (m * magnitude <= raw) return m * magnitude;
  return magnitude;
}

std::string axis(double top, double scaleUs) {
  if (!(scaleUs > 0)) return {};
  std::string out;
  double step = tickStep(scaleUs);
  for (double us = 0; us <= scaleUs * (1 + 1e-9); us += step) {
    double x = kLabelWidth + kBarWidth * us / scaleUs;
    out += "<line x1=\"" + number(x) + "\" y1=\"0\" x2=\"" + number(x) + "\" y2=\"" + number(top) +
           "\" class=\"grid\"></line>";
    out += text(x, top + 15, "middle", "tick", htmlEscape(formatTick(us)));
  }
  return out;
}

// One operation's row: label, category set segments grouped by resource, the resource strip
// under them, and its time and share on the right.
std::string barRow(const Operation& op, double y, double processUs, const SetPalette& palette,
                   double scaleUs) {
  std::string pct = formatPercent(op.timeUs, processUs);
  std::ostringstream out;
  out << "<g class=\"bar\" data-operation=\"" << htmlEscape(op.name) << "\">";
  out << "<title>" << htmlEscape(op.name)
      << (op.phase.empty() ? "" : " [" + htmlEscape(op.phase) + "]") << ": "
      << htmlEscape(formatDuration(op.timeUs)) << ", " << pct << "</title>";
  out << text(kLabelWidth - 8, y + kBarTop + 13, "end", "label",
              htmlEscape(truncated(op.name, kLabelChars)));

  std::map<Resource, double> perResource;
  double x = kLabelWidth;
  auto segment = [&](const std::vector<std::string>& set, double us) {
    double w = scaleUs > 0 ? kBarWidth * us / scaleUs : 0;
    perResource[resourceOf(set)] += us;
    if (w < kMinSegmentWidth) return;
    out << rect(x, y + kBarTop, w, kBarHeight, palette.fill(set),
                setLabel(set) + ": " + formatDuration(us) + " (" + formatPercent(us, op.timeUs) +
                    " of " + op.name + ")");
    x += w;
  };
  // Palette order keeps every set at the same place in every bar.
  for (const auto& set : palette.sets()) {
    if (set.empty()) {
      segment(set, idleRemainder(op));
      continue;
    }
    for (const auto& c : op.categories)
      if (c.set == set) segment(set, c.timeUs);
  }

  double stripX = kLabelWidth;
  for (Resource r : {Resource::Cpu, Resource::CpuGpu, Resource::Gpu, Resource::Idle}) {
    double us = perResource[r];
    double w = scaleUs > 0 ? kBarWidth * us / scaleUs : 0;
    if (w < kMinSegmentWidth) continue;
    out << rect(
        stripX, y + kBarTop + kBarHeight + kStripGap, w, kStripHeight, resourceColour(r),
        resourceName(r) + ": " + formatDuration(us) + " (" + formatPercent(us, op.timeUs) + ")");
    stripX += w;
  }
  out << text(kLabelWidth + kBarWidth + 10, y + kBarTop + 13, "start", "value",
              htmlEscape(formatDuration(op.timeUs)) + " · " + pct);
  out << "</g>";
  return out.str();
}

std::string swatch(const std::string& fill) {
  return "<svg class=\"swatch\" width=\"14\" height=\"14\" viewBox=\"0 0 14 14\" "
         "aria-hidden=\"true\">"
         "<rect width=\"14\" height=\"14\" rx=\"2\" fill=\"" +
         fill + "\"></rect></svg>";
}

std::string pairRow(const BarPair& row, double y, const std::string& beforeName,
                    const std::string& afterName, double scaleUs) {
  auto width = [&](double us) {
    double w = scaleUs > 0 ? kBarWidth * std::max(0.0, us) / scaleUs : 0;
    return w < kMinSegmentWidth ? 0.0 : w;
  };
  std::string after = formatDuration(row.afterUs);
  if (!row.afterNote.empty()) after += " (" + row.afterNote + ")";
  double afterY = y + kBarTop + kPairBarHeight + kPairGap;
  std::ostringstream out;
  out << "<g class=\"pair\"><title>" << htmlEscape(row.label) << ": "
      << htmlEscape(formatDuration(row.beforeUs)) << " → " << htmlEscape(after) << "</title>";
  out << text(kLabelWidth - 8, y + kBarTop + 13, "end", "label",
              htmlEscape(truncated(row.label, kLabelChars)));
  out << rect(kLabelWidth, y + kBarTop, width(row.beforeUs), kPairBarHeight, kBeforeColour,
              beforeName + ": " + formatDuration(row.beforeUs));
  out << rect(kLabelWidth, afterY, width(row.afterUs), kPairBarHeight, kAfterColour,
              afterName + ": " + after);
  out << text(kLabelWidth + kBarWidth + 10, y + kBarTop + 9, "start", "value",
              htmlEscape(formatDuration(row.beforeUs)));
  out << text(kLabelWidth + kBarWidth + 10, afterY + 9, "start", "value", htmlEscape(after));
  out << "</g>";
  return out.str();
}

}  // namespace

std::string categoryColour(const std::string& category) {
  auto it = knownColours().find(category);
  if (it != knownColours().end()) return it->second;
  // A category this version does not know still gets the same colour in every report: FNV-1a of
  // its name picks from the rest of the palette.
  static constexpr std::array<const char*, 4> kOthers = {"#76b7b2", "#bab0ac", "#8cd17d",
                                                         "#a0cbe8"};
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : category) hash = (hash ^ c) * 16777619u;
  return kOthers[hash % kOthers.size()];
}

std::string resourceColour(Resource resource) {
  switch (resource) {
    case Resource::Cpu:
      return "#5b6b7c";
    case Resource::CpuGpu:
      return "#8057b0";
    case Resource::Gpu:
      return "#2f8f5b";
    case Resource::Idle:
      return "#c8ccd1";
  }
  return kIdleColour;
}

std::string kernelClassColour(const std::string& kernelClass) {
  if (kernelClass == "compute") return "#4e79a7";
  if (kernelClass == "memory") return "#edc948";
  if (kernelClass == "communication") return "#e15759";
  return categoryColour(kernelClass);
}

std::string resourceName(Resource resource) {
  switch (resource) {
    case Resource::Cpu:
      return "CPU only";
    case Resource::CpuGpu:
      return "CPU+GPU";
    case Resource::Gpu:
      return "GPU only";
    case Resource::Idle:
      return "idle";
  }
  return "idle";
}

SetPalette::SetPalette(const Analysis& analysis) : sets_(categorySetsOf(analysis)) {
  for (const auto& op : analysis.operations)
    if (idleRemainder(op) > 0) {
      sets_.push_back({});
      break;
    }
}

std::string SetPalette::fill(const std::vector<std::string>& set) const {
  if (set.empty()) return kIdleColour;
  if (set.size() == 1) return categoryColour(set.front());
  auto it = std::find(sets_.begin(), sets_.end(), set);
  if (it == sets_.end()) return kIdleColour;
  return "url(#rls-set-" + std::to_string(it - sets_.begin()) + ")";
}

std::string SetPalette::patternDefs() const {
  std::ostringstream out;
  out << "<svg class=\"defs\" width=\"0\" height=\"0\" aria-hidden=\"true\"><defs>";
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    const auto& set = sets_[i];
    if (set.size() < 2) continue;
    double period = kStripeWidth * static_cast<double>(set.size());
    out << "<pattern id=\"rls-set-" << i << "\" patternUnits=\"userSpaceOnUse\" width=\""
        << number(period) << "\" height=\"8\" patternTransform=\"rotate(45)\">";
    for (std::size_t k = 0; k < set.size(); ++k)
      out << "<rect x=\"" << number(kStripeWidth * static_cast<double>(k)) << "\" y=\"0\" width=\""
          << number(kStripeWidth) << "\" height=\"8\" fill=\"" << categoryColour(set[k])
          << "\"></rect>";
    out << "</pattern>";
  }
  out << "</defs></svg>";
  return out.str();
}

std::string renderOperationBars(const Analysis& analysis, std::int64_t process,
                                const SetPalette& palette, double scaleUs) {
  auto ops = operationsOf(analysis, process);
  double processUs = processTimeUs(analysis, process);
  double height = kRowPitch * static_cast<double>(ops.size()) + kAxisHeight;
  std::ostringstream out;
  out << "<svg class=\"bars\" viewBox=\"0 0 " << number(kChartWidth) << " " << number(height)
      << "\" role=\"img\" aria-label=\"Time per operation of process " << process << "\">";
  out << axis(kRowPitch * static_cast<double>(ops.size()), scaleUs);
  double y = 0;
  for (const Operation* op : ops) {
    out << barRow(*op, y, processUs, palette, scaleUs);
    y += kRowPitch;
  }
  out << "</svg>";
  return out.str();
}

std::string renderLegend(const SetPalette& palette) {
  std::ostringstream out;
  out << "<div class=\"legend\">";
  for (Resource r : {Resource::Cpu, Resource::CpuGpu, Resource::Gpu, Resource::Idle}) {
    // Idle time has no categories: its group is the label alone.
    bool present = false;
    std::string items;
    for (const auto& set : palette.sets()) {
      if (resourceOf(set) != r) continue;
      present = true;
      if (!set.empty())
        items += "<span class=\"item\">" + swatch(palette.fill(set)) + htmlEscape(setLabel(set)) +
                 "</span>";
    }
    if (!present) continue;
    out << "<div class=\"legend-group\"><span class=\"resource\">" << swatch(resourceColour(r))
        << htmlEscape(resourceName(r)) << "</span>" << items << "</div>";
  }
  out << "</div>";
  return out.str();
}

std::string renderProportionBar(const std::vector<BarPart>& parts) {
  double total = 0;
  for (const auto& p : parts) total += std::max(0.0, p.us);
  std::ostringstream out;
  out << "<svg class=\"split\" viewBox=\"0 0 " << number(kChartWidth)
      << " 20\" role=\"img\" aria-label=\"proportions\">";
  double x = 0;
  for (const auto& p : parts) {
    double w = total > 0 ? kChartWidth * std::max(0.0, p.us) / total : 0;
    if (w < kMinSegmentWidth) continue;
    out << rect(x, 0, w, 20, p.colour,
                p.label + ": " + formatDuration(p.us) + " (" + formatPercent(p.us, total) + ")");
    x += w;
  }
  out << "</svg><div class=\"legend\"><div class=\"legend-group\">";
  for (const auto& p : parts)
    out << "<span class=\"item\">" << swatch(p.colour) << htmlEscape(p.label) << " "
        << htmlEscape(formatPercent(p.us, total)) << "</span>";
  out << "</div></div>";
  return out.str();
}

std::string renderBarPairs(const std::vector<BarPair>& rows, const std::string& beforeName,
                           const std::string& afterName) {
  double scaleUs = 0;
  for (const auto& r : rows) scaleUs = std::max({scaleUs, r.beforeUs, r.afterUs});
  double height = kRowPitch * static_cast<double>(rows.size()) + kAxisHeight;
  std::ostringstream out;
  out << "<div class=\"legend\"><div class=\"legend-group\"><span class=\"item\">"
      << swatch(kBeforeColour) << htmlEscape(beforeName) << "</span><span class=\"item\">"
      << swatch(kAfterColour) << htmlEscape(afterName) << "</span></div></div>";
  out << "<svg class=\"pairs\" viewBox=\"0 0 " << number(kChartWidth) << " " << number(height)
      << "\" role=\"img\" aria-label=\"" << htmlEscape(beforeName) << " and "
      << htmlEscape(afterName) << " per row\">";
  out << axis(kRowPitch * static_cast<double>(rows.size()), scaleUs);
  double y = 0;
  for (const auto& r : rows) {
    out << pairRow(r, y, beforeName, afterName, scaleUs);
    y += kRowPitch;
  }
  out << "</svg>";
  return out.str();
}

}  // namespace rlscope::report
