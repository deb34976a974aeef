// The regression gate's result for people: a GitHub Markdown section (CI job summary) and an
// aligned text table (terminal). Both list the total, then operations and category sets by
// largest absolute change, with regressions marked.
#pragma once

#include <ostream>
#include <string>

#include "rlscope/report/comparison.h"

namespace rlscope::report {

std::string renderComparisonMarkdown(const Comparison& comparison);
void writeComparisonTable(const Comparison& comparison, std::ostream& out);

}  // namespace rlscope::report
