#include "kineto_json.h"

#include <charconv>
#include <system_error>

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

std::string_view trimmed(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string_view rawKey(od::raw_json_string key) {
  const char* begin = key.raw();
  const char* p = begin;
  while (*p != '"') p += (*p == '\\') ? 2 : 1;  // the parser has validated the string
  return {begin, static_cast<std::size_t>(p - begin)};
}

std::string_view rawValue(od::value v, const Where& where) {
  od::json_type type = need(v.type(), where);
  if (type == od::json_type::object) return need(need(v.get_object(), where).raw_json(), where);
  if (type == od::json_type::array) return need(need(v.get_array(), where).raw_json(), where);
  return trimmed(v.raw_json_token());
}

std::optional<std::int64_t> integerOfText(std::string_view text) {
  bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* first = text.data() + (hex ? 2 : 0);
  const char* last = text.data() + text.size();
  if (hex) {
    std::uint64_t u = 0;
    auto [end, ec] = std::from_chars(first, last, u, 16);
    if (ec != std::errc() || end != last) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  std::int64_t i = 0;
  auto [end, ec] = std::from_chars(first, last, i);
  if (ec != std::errc() || end != last || first == last) return std::nullopt;
  return i;
}

std::int64_t integerOf(od::value v, const Where& where) {
  od::json_type type = need(v.type(), where);
  if (type == od::json_type::string) {
    std::string_view text = need(v.get_string(), where);
    auto i = integerOfText(text);
    if (!i) fail(where, "expected an integer, got \"" + std::string(text) + "\"");
    return *i;
  }
  if (type != od::json_type::number) fail(where, "expected a number");
  std::int64_t i = 0;
  if (!v.get_int64().get(i)) return i;
  double d = need(v.get_double(), where);
  if (!(d >= -9.2e18 && d <= 9.2e18) || d != static_cast<double>(static_cast<std::int64_t>(d))) {
    fail(where,
         "number " + std::string(trimmed(v.raw_json_token())) + " is not an integer in range");
  }
  return static_cast<std::int64_t>(d);
}

LooseId looseIdOf(od::value v, const Where& where) {
  LooseId id;
  od::json_type type = need(v.type(), where);
  if (type == od::json_type::number) {
    id.isInt = true;
    id.value = integerOf(v, where);
  } else if (type == od::json_type::string) {
    id.text = std::string(need(v.get_string(), where));
  } else {
    fail(where, "expected a number or a string");
  }
  return id;
}

}  // namespace rlscope::import::kineto
