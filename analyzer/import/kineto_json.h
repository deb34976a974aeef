// Reading the values of a Kineto (Chrome trace) JSON document with simdjson's on-demand API,
// each error naming where in the document it is ("traceEvents[12].args.grid"). The readers of
// values are inline: they run for every member of every event, and simdjson's on-demand values
// are only fast where the compiler sees through them (out of line, the import of 1 M events took
// 25 % longer).
#pragma once

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace rlscope::import::kineto {

namespace od = simdjson::ondemand;

// A pid or tid as Kineto wrote it: usually an integer, sometimes text ("Spans", "Traces").
struct LooseId {
  bool isInt = false;
  std::int64_t value = 0;
  std::string text;  // JSON text form, for plain events

  std::string asText() const { return isInt ? std::to_string(value) : text; }
};

// Where a value sits in the input ("traceEvents[12].args.grid"). Kept as views and formatted
// only when an error is reported: the hot path must not build strings per field.
struct Where {
  std::string_view section;
  std::size_t index = std::string_view::npos;
  std::string_view part1;
  std::string_view part2;

  Where(const char* s) : section(s) {}  // NOLINT: literals name whole sections
  Where(std::string_view s, std::size_t i) : section(s), index(i) {}
  Where field(std::string_view f) const {
    Where w = *this;
    (w.part1.empty() ? w.part1 : w.part2) = f;
    return w;
  }
  Where arg(std::string_view key) const {
    Where w = *this;
    w.part1 = "args";
    w.part2 = key;
    return w;
  }
  std::string str() const;
};

// Throws TraceError: "<where>: <what>".
[[noreturn]] void fail(const Where& where, const std::string& what);

// A simdjson error as users read it.
std::string errorText(simdjson::error_code e);

// simdjson result -> value, or a TraceError that says where.
template <typename T>
T need(simdjson::simdjson_result<T>&& r, const Where& where) {
  T value;
  auto err = std::move(r).get(value);
  if (err) fail(where, errorText(err));
  return value;
}

inline std::string_view trimmed(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// A member's key as written in the input, escapes not decoded, read straight from the input
// rather than unescaped into the parser's buffer: the per-field hot path of the importer. The
// keys it looks for contain no escapes, so comparing the raw text is exact for them; a key
// spelled with escapes is treated as an unknown one and kept as written.
inline std::string_view rawKey(od::raw_json_string key) {
  const char* begin = key.raw();
  const char* p = begin;
  while (*p != '"') p += (*p == '\\') ? 2 : 1;  // the parser has validated the string
  return {begin, static_cast<std::size_t>(p - begin)};
}

// Raw JSON text of any value (object, array or scalar), consuming it.
inline std::string_view rawValue(od::value v, const Where& where) {
  od::json_type type = need(v.type(), where);
  if (type == od::json_type::object) return need(need(v.get_object(), where).raw_json(), where);
  if (type == od::json_type::array) return need(need(v.get_array(), where).raw_json(), where);
  return trimmed(v.raw_json_token());
}

// An integer written as text: decimal, or hexadecimal after "0x" (ROCm's Kineto writes stream
// handles as "0x7f3a2c000000" and sizes as "1024"). Hexadecimal keeps the 64 bits of a pointer.
inline std::optional<std::int64_t> integerOfText(std::string_view text) {
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

// A number, or a string holding an integer; an integral double in range is accepted.
inline std::int64_t integerOf(od::value v, const Where& where) {
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

inline LooseId looseIdOf(od::value v, const Where& where) {
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
