// The Markdown report of one analysis: GitHub-flavoured tables for a CI job summary
// (`>> $GITHUB_STEP_SUMMARY`), with the HTML report's content without its charts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rlscope::report {

// Throws std::runtime_error for a document that is not rlscope.analysis/1.
std::string renderMarkdown(const nlohmann::json& analysis);

}  // namespace rlscope::report
