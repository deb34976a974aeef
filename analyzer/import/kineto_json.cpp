#include "kineto_json.h"

#include "rlscope/trace/error.h"

namespace rlscope::import::kineto {

using trace::TraceError;

std::string errorText(simdjson::error_code e) {
  switch (e) {
    case simdjson::UTF8_ERROR:
      return "invalid UTF-8 in the JSON text";
    case simdjson::CAPACITY:
      return "JSON document larger than the parser's 4 GiB limit";
    case simdjson::UNCLOSED_STRING:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::TAPE_ERROR:
      return "invalid or truncated JSON (" + std::string(simdjson::error_message(e)) + ")";
    default:
      return "invalid JSON (" + std::string(simdjson::error_message(e)) + ")";
  }
}

std::string Where::str() const {
  std::string s(section);
  if (index != std::string_view::npos) s += "[" + std::to_string(index) + "]";
  for (auto p : {part1, part2}) {
    if (!p.empty()) s += "." + std::string(p);
  }
  return s;
}

[[noreturn]] void fail(const Where& where, const std::string& what) {
  throw TraceError(where.str() + ": " + what);
}

}  // namespace rlscope::import::kineto
