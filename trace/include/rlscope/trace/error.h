// The one exception type of the trace library and the importers: its message is the one line a
// command prints before exiting non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace rlscope::trace {

class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace rlscope::trace
