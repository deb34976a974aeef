// One CSV field as RFC 4180 writes it, for every CSV output (analyze, fleet).
#pragma once

#include <string>

namespace rlscope::trace {

// The text as it is, or in double quotes (inner quotes doubled) when it holds a comma, a quote
// or a line break.
std::string csvField(const std::string& text);

}  // namespace rlscope::trace
