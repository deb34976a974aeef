#include "rlscope/distributed/clock_alignment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "rlscope/distributed/collectives.h"
#include "rlscope/trace/clock_sync.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/schema.h"

namespace rlscope::analysis {

namespace {

std::optional<std::int64_t> metaInt(trace::TraceReader& r, std::string_view key) {
  auto text = r.metaValue(key);
  if (!text) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::optional<trace::ClockSync> clockSyncOf(trace::TraceReader& r) {
  auto text = r.metaValue(trace::kClockSyncMetaKey);
  if (!text) return std::nullopt;
  std::string why;
  auto s = trace::clockSyncFromJson(*text, &why);
  if (!s) throw trace::TraceError("rlscope_meta.clock_sync is not rlscope-prof's: " + why);
  return s;
}

}  // namespace

std::optional<ClockOffset> exchangeOffset(trace::TraceReader& reference,
                                          trace::TraceReader& other) {
  auto r = clockSyncOf(reference), o = clockSyncOf(other);
  if (!r || !o || r->session.empty() || r->session != o->session) return std::nullopt;
  using Role = trace::ClockSync::Role;
  auto measured = [](const trace::ClockSync& s) {
    return s.role == Role::kMeasured && !s.bursts.empty();
  };
  // reference clock = local + offsetNs on a measured host.
  ClockOffset c{.method = "clock exchange"};
  if (r->role == Role::kReference && measured(*o)) {
    c.offset = o->offsetNs;
    c.uncertainty = o->boundNs;
  } else if (measured(*r) && o->role == Role::kReference) {
    c.offset = -r->offsetNs;
    c.uncertainty = r->boundNs;
  } else if (measured(*r) && measured(*o)) {
    c.offset = o->offsetNs - r->offsetNs;
    c.uncertainty = o->boundNs + r->boundNs;
  } else {
    return std::nullopt;
  }
  return c;
}

std::vector<CollectiveCall> lowestRankCollectives(trace::TraceReader& r) {
  auto ids = r.processIdentities();
  std::sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) {
    return std::tuple(!a.rank, a.rank.value_or(0), a.globalPid) <
           std::tuple(!b.rank, b.rank.value_or(0), b.globalPid);
  });
  for (const auto& id : ids) {
    if (!id.rank) break;
    auto calls = findCollectives(r, id.globalPid);
    if (!calls.empty()) return calls;
  }
  return {};
}

std::optional<ClockOffset> wallClockOffset(trace::TraceReader& reference,
                                           trace::TraceReader& other) {
  auto hostR = reference.metaValue(trace::meta::kHost);
  auto hostO = other.metaValue(trace::meta::kHost);
  if (hostR && hostO && !hostR->empty() && *hostR == *hostO) {
    return ClockOffset{.method = "same host"};
  }
  auto wallR = metaInt(reference, trace::meta::kStartWallNs);
  auto wallO = metaInt(other, trace::meta::kStartWallNs);
  if (!wallR || !wallO) return std::nullopt;
  // Without start_monotonic_ns the trace's clock starts at 0 at start_wall_ns (nsys's session
  // start, Kineto's baseTimeNanoseconds).
  auto monoR = metaInt(reference, trace::meta::kStartMonotonicNs).value_or(0);
  auto monoO = metaInt(other, trace::meta::kStartMonotonicNs).value_or(0);
  // wall(t) = wall0 + (t - mono0) on each host; equal walls give t_ref = t_other + offset.
  return ClockOffset{.offset = (*wallO - monoO) - (*wallR - monoR), .method = "wall clock"};
}

std::optional<ClockOffset> collectiveOffset(trace::TraceReader& reference,
                                            trace::TraceReader& other) {
  return collectiveOffset(lowestRankCollectives(reference), lowestRankCollectives(other));
}

std::optional<ClockOffset> collectiveOffset(const std::vector<CollectiveCall>& r,
                                            const std::vector<CollectiveCall>& o) {
  std::size_t n = std::min(r.size(), o.size());
  std::vector<trace::TimeNs> offsets;
  // Causality: neither rank has its result before the other entered.
  trace::TimeNs lower = std::numeric_limits<trace::TimeNs>::min();
  trace::TimeNs upper = std::numeric_limits<trace::TimeNs>::max();
  for (std::size_t k = 0; k < n; ++k) {
    if (r[k].kind != o[k].kind && r[k].kind != "nccl" && o[k].kind != "nccl") break;
    offsets.push_back(r[k].completion - o[k].completion);
    upper = std::min(upper, r[k].completion - o[k].entry);
    lower = std::max(lower, r[k].entry - o[k].completion);
  }
  if (offsets.empty()) return std::nullopt;
  // A completion is seen late, never early (the waiting thread must be scheduled again; on a
  // host with more busy threads than cores, a scheduler period later), so the differences are
  // the offset plus delays of either rank, in clusters. The half-sample mode (Bickel and
  // Fruhwirth, 2006: narrowing to the densest half, repeatedly) finds the main cluster; the
  // estimate is the median of the differences within four times the densest half's width of it.
  std::sort(offsets.begin(), offsets.end());
  std::size_t first = 0, count = offsets.size();
  trace::TimeNs halfWidth = 0;
  while (count > 2) {
    std::size_t half = (count + 1) / 2, best = first;
    for (std::size_t i = first; i + half <= first + count; ++i) {
      if (offsets[i + half - 1] - offsets[i] < offsets[best + half - 1] - offsets[best]) best = i;
    }
    if (count == offsets.size()) halfWidth = offsets[best + half - 1] - offsets[best];
    first = best;
    count = half;
  }
  trace::TimeNs mode = offsets[first] + (offsets[first + count - 1] - offsets[first]) / 2;
  std::vector<trace::TimeNs> cluster;
  for (auto d : offsets) {
    if (d >= mode - 4 * halfWidth && d <= mode + 4 * halfWidth) cluster.push_back(d);
  }
  trace::TimeNs estimate = cluster[cluster.size() / 2];
  if (lower <= upper) estimate = std::clamp(estimate, lower, upper);
  // The median's standard error from the cluster's spread (1.4826 MAD, x 1.2533 / sqrt(n)).
  std::vector<trace::TimeNs> deviations;
  for (auto d : cluster) deviations.push_back(d > estimate ? d - estimate : estimate - d);
  std::sort(deviations.begin(), deviations.end());
  double sigma = 1.4826 * static_cast<double>(deviations[deviations.size() / 2]);
  auto uncertainty = static_cast<trace::TimeNs>(
      1.2533 * sigma / std::sqrt(static_cast<double>(cluster.size())) + 0.5);
  return ClockOffset{
      .offset = estimate,
      .uncertainty = uncertainty,
      .collectives = offsets.size(),
      .method = "collectives",
  };
}

}  // namespace rlscope::analysis
