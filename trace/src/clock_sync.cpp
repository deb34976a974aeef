#include "rlscope/trace/clock_sync.h"

#include <nlohmann/json.hpp>

namespace rlscope::trace {

namespace {

constexpr std::string_view kReference = "reference";
constexpr std::string_view kMeasured = "measured";
// A hostile trace cannot make the merge hold more than this many bursts.
constexpr std::size_t kMaxBursts = 100000;

std::int64_t integer(const nlohmann::json& o, const char* key) {
  const auto& v = o.at(key);
  if (!v.is_number_integer()) throw std::invalid_argument(std::string(key) + " is not an integer");
  return v.get<std::int64_t>();
}

std::string text(const nlohmann::json& o, const char* key) {
  const auto& v = o.at(key);
  if (!v.is_string()) throw std::invalid_argument(std::string(key) + " is not a string");
  return v.get<std::string>();
}

}  // namespace

std::string clockSyncToJson(const ClockSync& s) {
  nlohmann::json bursts = nlohmann::json::array();
  for (const auto& b : s.bursts)
    bursts.push_back({{"at_ns", b.atNs}, {"offset_ns", b.offsetNs}, {"delay_ns", b.delayNs}});
  return nlohmann::json{
      {"role", s.role == ClockSync::Role::kReference ? kReference : kMeasured},
      {"endpoint", s.endpoint},
      {"session", s.session},
      {"offset_ns", s.offsetNs},
      {"bound_ns", s.boundNs},
      {"exchanges", s.exchanges},
      {"bursts", std::move(bursts)},
  }
      .dump();
}

std::optional<ClockSync> clockSyncFromJson(std::string_view textIn, std::string* error) {
  try {
    auto o = nlohmann::json::parse(textIn);
    if (!o.is_object()) throw std::invalid_argument("not a JSON object");
    ClockSync s;
    auto role = text(o, "role");
    if (role == kReference) {
      s.role = ClockSync::Role::kReference;
    } else if (role == kMeasured) {
      s.role = ClockSync::Role::kMeasured;
    } else {
      throw std::invalid_argument("role is neither reference nor measured");
    }
    s.endpoint = text(o, "endpoint");
    s.session = text(o, "session");
    s.offsetNs = integer(o, "offset_ns");
    s.boundNs = integer(o, "bound_ns");
    s.exchanges = integer(o, "exchanges");
    if (s.boundNs < 0) throw std::invalid_argument("bound_ns is negative");
    const auto& bursts = o.at("bursts");
    if (!bursts.is_array() || bursts.size() > kMaxBursts)
      throw std::invalid_argument("bursts is not an array of at most 100000");
    for (const auto& b : bursts) {
      if (!b.is_object()) throw std::invalid_argument("a burst is not an object");
      s.bursts.push_back({integer(b, "at_ns"), integer(b, "offset_ns"), integer(b, "delay_ns")});
    }
    return s;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

}  // namespace rlscope::trace
