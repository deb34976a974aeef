// The HTML report of one analysis (`rlscope analyze --format html`, `rlscope report`): one
// self-contained file, inline CSS and SVG, no scripts, nothing fetched from the network.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rlscope::report {

// Sections: header (trace, corrected or not, wall time), the time per operation as stacked bars
// with a legend and a table per process, GPU kernels, GPU idle time, kernel launches, language
// transitions, overhead correction; a section the document lacks says "not available". Throws
// std::runtime_error for a document that is not rlscope.analysis/1.
std::string renderHtml(const nlohmann::json& analysis);

}  // namespace rlscope::report
