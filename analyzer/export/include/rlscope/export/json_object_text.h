// Works on the JSON object text that trace tables store in their `args` columns without building
// a document: validate it, list its top-level members as slices of the text, compare keys. The
// exporter embeds members verbatim, so numbers keep their exact text and nothing is allocated per
// event.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

namespace rlscope::exporter {

// Says whether a text is exactly one well-formed JSON object (RFC 8259, strings valid UTF-8).
// Keeps its parser and buffer from call to call; one per thread.
class JsonObjectValidator {
 public:
  JsonObjectValidator();
  ~JsonObjectValidator();
  JsonObjectValidator(const JsonObjectValidator&) = delete;
  JsonObjectValidator& operator=(const JsonObjectValidator&) = delete;

  bool isObject(std::string_view text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct JsonMember {
  std::string_view key;    // as written, quotes and escapes included
  std::string_view value;  // as written
};

// The top-level members of `object`, which JsonObjectValidator must have accepted, in their
// order. Clears and refills `out` (so its storage can be reused).
void splitMembers(std::string_view object, std::vector<JsonMember>& out);

// Whether a member key as written (quoted, maybe with escapes) is the string `name`.
bool keyEquals(std::string_view quotedKey, std::string_view name);

}  // namespace rlscope::exporter
