#include "rlscope/merge/launch_ties.h"

#include <algorithm>
#include <tuple>

namespace rlscope::merge {

void LaunchTies::pushed(std::uint64_t part, std::uint32_t tid, std::uint32_t pushIndex,
                        std::int64_t id) {
  auto& ids = idsOfPushes_[partKey(part, tid)];
  if (ids.size() <= pushIndex) ids.resize(pushIndex + 1, kUnknown);
  ids[pushIndex] = id > 0 ? id : kNone;
}

std::int64_t LaunchTies::operationOf(std::uint64_t part, std::uint64_t externalId) const {
  // part::operationIdOf: the thread in the high half, the push in the low.
  auto tid = static_cast<std::uint32_t>(externalId >> 32);
  auto pushIndex = static_cast<std::uint32_t>(externalId);
  auto pushes = idsOfPushes_.find(partKey(part, tid));
  if (pushes == idsOfPushes_.end() || pushIndex >= pushes->second.size()) return kUnknown;
  return pushes->second[pushIndex];
}

void LaunchTies::write(const Launch& l, std::int64_t operationId) {
  write_({l.globalPid, l.correlationId, operationId});
}

bool LaunchTies::tie(const Launch& l, std::uint64_t externalId) {
  std::int64_t op = operationOf(l.part, externalId);
  if (op == kUnknown) return false;
  if (op != kNone) write(l, op);
  return true;
}

void LaunchTies::launched(const Launch& l) {
  std::uint64_t key = partKey(l.part, l.correlationId);
  auto ext = externals_.find(key);
  if (ext == externals_.end()) {
    launches_[key] = l;
    return;
  }
  if (!tie(l, ext->second)) unresolved_.emplace_back(l, ext->second);
  externals_.erase(ext);
}

void LaunchTies::correlated(std::uint64_t part, std::uint32_t correlationId,
                            std::uint64_t externalId) {
  std::uint64_t key = partKey(part, correlationId);
  auto launch = launches_.find(key);
  if (launch == launches_.end()) {
    externals_[key] = externalId;
    return;
  }
  if (!tie(launch->second, externalId)) unresolved_.emplace_back(launch->second, externalId);
  launches_.erase(launch);
}

void LaunchTies::finish(const InnermostAt& innermostAt) {
  for (const auto& [l, externalId] : unresolved_)
    if (!tie(l, externalId))
      if (std::int64_t op = innermostAt(l.globalTid, l.start)) write(l, op);
  // In the order they were made, so that the rows do not depend on the table's layout.
  std::vector<Launch> left;
  left.reserve(launches_.size());
  for (const auto& [key, l] : launches_) left.push_back(l);
  std::sort(left.begin(), left.end(), [](const Launch& a, const Launch& b) {
    return std::tie(a.part, a.start, a.correlationId) < std::tie(b.part, b.start, b.correlationId);
  });
  for (const auto& l : left)
    if (std::int64_t op = innermostAt(l.globalTid, l.start)) write(l, op);
  unresolved_.clear();
  launches_.clear();
  externals_.clear();  // corrections of launches the trace never recorded
}

}  // namespace rlscope::merge
