#include "rlscope/trace/process_identity.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "rlscope/trace/launcher_variables.h"

namespace rlscope::trace {

namespace {

const std::string* find(std::span<const EnvironmentVariable> vars, std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& [k, v] : vars) {
    if (k == name) return &v;
  }
  return nullptr;
}

// A non-negative decimal integer, nothing else (a launcher's value, or a stranger's text).
std::optional<std::int64_t> parseCount(const std::string* text) {
  if (!text || text->empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

ProcessIdentityRecord identityFromEnvironment(std::span<const EnvironmentVariable> variables) {
  ProcessIdentityRecord id;
  for (const auto& s : kLauncherSchemes) {
    auto rank = parseCount(find(variables, s.rank));
    if (!rank) continue;
    id.rank = rank;
    id.worldSize = parseCount(find(variables, s.worldSize));
    id.localRank = parseCount(find(variables, s.localRank));
    id.localWorldSize = parseCount(find(variables, s.localWorldSize));
    id.nodeRank = parseCount(find(variables, s.nodeRank));
    bool elastic = s.rank == "RANK" && find(variables, kTorchElasticRunId);
    id.launcher = elastic ? "torchrun" : s.launcher;
    break;
  }
  // A Ray worker (a task's or an actor's process, started by a raylet) without a rank of its own.
  if (id.launcher.empty() && (find(variables, kRayJobId) || find(variables, kRayRayletPid)))
    id.launcher = "ray";
  if (!variables.empty()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : variables) j[k] = v;
    // A value that is not UTF-8 is kept with replacement characters rather than refused.
    id.variables = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return id;
}

std::vector<std::string> hostsOf(const std::vector<ProcessIdentityRecord>& identities) {
  std::set<std::string> hosts;
  for (const auto& id : identities) {
    if (!id.host.empty()) hosts.insert(id.host);
  }
  return {hosts.begin(), hosts.end()};
}

std::string rankLabel(const ProcessIdentityRecord& identity, bool withHost) {
  if (!identity.rank) return {};
  std::string label = "rank " + std::to_string(*identity.rank);
  if (identity.worldSize) label += " of " + std::to_string(*identity.worldSize);
  if (withHost && !identity.host.empty()) label += " on " + identity.host;
  return label;
}

}  // namespace rlscope::trace
