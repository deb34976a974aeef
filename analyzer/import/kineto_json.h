// Reading the values of a Kineto (Chrome trace) JSON document with simdjson's on-demand API,
// each error naming where in the document it is ("traceEvents[12].args.grid").
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

std::string_view trimmed(std::string_view s);

// A member's key as written in the input, escapes not decoded, read straight from the input
// rather than unescaped into the parser's buffer: the per-field hot path of the importer. The
// keys it looks for contain no escapes, so comparing the raw text is exact for them; a key
// spelled with escapes is treated as an unknown one and kept as written.
std::string_view rawKey(od::raw_json_string key);

// Raw JSON text of any value (object, array or scalar), consuming it.
std::string_view rawValue(od::value v, const Where& where);

// An integer written as text: decimal, or hexadecimal after "0x" (ROCm's Kineto writes stream
// handles as "0x7f3a2c000000" and sizes as "1024"). Hexadecimal keeps the 64 bits of a pointer.
std::optional<std::int64_t> integerOfText(std::string_view text);

// A number, or a string holding an integer; an integral double in range is accepted.
std::int64_t integerOf(od::value v, const Where& where);

LooseId looseIdOf(od::value v, const Where& where);

}  // namespace rlscope::import::kineto
