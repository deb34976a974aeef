#include "rlscope/export/json_object_text.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

#include <string>

namespace rlscope::exporter {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void skipSpace(std::string_view s, std::size_t& i) {
  while (i < s.size() && isSpace(s[i])) ++i;
}

// s[i] is an opening quote; moves i past the closing one.
void skipString(std::string_view s, std::size_t& i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      ++i;
      return;
    }
  }
}

// Moves i past the value that starts at s[i]. Iterative, so deep nesting costs no stack.
void skipValue(std::string_view s, std::size_t& i) {
  if (s[i] == '"') {
    skipString(s, i);
    return;
  }
  if (s[i] != '{' && s[i] != '[') {
    while (i < s.size() && !isSpace(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
    return;
  }
  std::size_t depth = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      skipString(s, i);
      continue;
    }
    ++i;
    if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return;
    }
  }
}

}  // namespace

struct JsonObjectValidator::Impl {
  simdjson::dom::parser parser;
  std::string padded;  // the text plus the zero padding simdjson reads past its end
};

JsonObjectValidator::JsonObjectValidator() : impl_(std::make_unique<Impl>()) {}
JsonObjectValidator::~JsonObjectValidator() = default;

bool JsonObjectValidator::isObject(std::string_view text) {
  std::size_t i = 0;
  skipSpace(text, i);
  if (i == text.size() || text[i] != '{') return false;
  impl_->padded.assign(text);
  impl_->padded.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element root;
  // Validates the whole text: structure, UTF-8, numbers, nothing after the object.
  auto error = impl_->parser.parse(impl_->padded.data(), text.size(), false).get(root);
  if (!error) return root.is_object();
  // simdjson refuses numbers beyond 64 bits or double range, which JSON allows: the slower
  // nlohmann parser decides those.
  if (error == simdjson::NUMBER_ERROR || error == simdjson::NUMBER_OUT_OF_RANGE) {
    return nlohmann::json::accept(text);
  }
  return false;
}

void splitMembers(std::string_view object, std::vector<JsonMember>& out) {
  out.clear();
  std::size_t i = 0;
  skipSpace(object, i);
  ++i;  // '{'
  while (true) {
    skipSpace(object, i);
    if (i >= object.size() || object[i] != '"') return;  // '}' of an empty object
    std::size_t keyStart = i;
    skipString(object, i);
    std::string_view key = object.substr(keyStart, i - keyStart);
    skipSpace(object, i);
    ++i;  // ':'
    skipSpace(object, i);
    std::size_t valueStart = i;
    skipValue(object, i);
    out.push_back({key, object.substr(valueStart, i - valueStart)});
    skipSpace(object, i);
    if (i >= object.size() || object[i] != ',') return;
    ++i;
  }
}

bool keyEquals(std::string_view quotedKey, std::string_view name) {
  if (quotedKey.size() < 2) return false;
  std::string_view inner = quotedKey.substr(1, quotedKey.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner == name;
  std::string padded(quotedKey);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::parser parser;
  std::string_view decoded;
  if (parser.parse(padded.data(), quotedKey.size(), false).get_string().get(decoded)) return false;
  return decoded == name;
}

}  // namespace rlscope::exporter
