// The inline SVG of the HTML report: one stacked horizontal bar per operation, in the style of
// the RL-Scope paper's breakdown plots. A bar is split into CPU-only, CPU+GPU and GPU-only
// segments (then idle time), and each segment into the category sets that ran there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

// The fill of every category set of one document. A single category has its own fixed colour
// in every report (Python is always blue); a set of several is drawn as diagonal stripes of its
// categories' colours, so "Backend+GPU kernel" reads as orange and purple without a lookup.
class SetPalette {
 public:
  explicit SetPalette(const Analysis& analysis);
  // A colour ("#4e79a7") or a pattern reference ("url(#rls-set-3)").
  std::string fill(const std::vector<std::string>& set) const;
  // <svg> holding the stripe patterns, to be placed once near the top of the page.
  std::string patternDefs() const;
  // The document's sets, grouped by resource (CPU, CPU+GPU, GPU, idle), then by name.
  const std::vector<std::vector<std::string>>& sets() const { return sets_; }

 private:
  std::vector<std::vector<std::string>> sets_;
};

std::string categoryColour(const std::string& category);
std::string resourceColour(Resource resource);
// compute, memory, communication (the analyzer's kernel classes).
std::string kernelClassColour(const std::string& kernelClass);
std::string resourceName(Resource resource);

// The bars of one process's operations, all drawn to `scaleUs` (the longest operation of the
// document) so that bars of different processes compare by length.
std::string renderOperationBars(const Analysis& analysis, std::int64_t process,
                                const SetPalette& palette, double scaleUs);
// Swatches of every set, grouped under their resource.
std::string renderLegend(const SetPalette& palette);
// One thin bar of parts that add up to a whole (the GPU idle split); parts are (label, µs,
// colour).
struct BarPart {
  std::string label;
  double us = 0;
  std::string colour;
};
std::string renderProportionBar(const std::vector<BarPart>& parts);

// Two thin bars per row, drawn to one scale: a time before and after (an operation on the
// origin GPU and predicted on the target), with a legend naming both.
struct BarPair {
  std::string label;  // the whole text; the chart truncates it and keeps it in the tooltip
  double beforeUs = 0, afterUs = 0;
  std::string afterNote;  // after the second time, e.g. "-35.0%"
};
std::string renderBarPairs(const std::vector<BarPair>& rows, const std::string& beforeName,
                           const std::string& afterName);

}  // namespace rlscope::report
