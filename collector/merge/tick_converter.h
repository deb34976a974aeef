// Converts a part's clock ticks to CLOCK_MONOTONIC nanoseconds (part/format.h): piecewise linear
// between the part's kClockSync pairs, extended past the first and last pair with the nearest
// segment's rate. Pairs are ~100 ms apart, so the rate is re-measured as it drifts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rlscope/part/format.h"

namespace rlscope::merge {

class TickConverter {
 public:
  explicit TickConverter(part::ClockKind kind = part::ClockKind::kMonotonicNs) : kind_(kind) {}

  void add(std::uint64_t ticks, std::int64_t ns) { points_.push_back({ticks, ns}); }

  // Call once all pairs are added. False when ticks cannot be converted (fewer than two pairs
  // with distinct tick counts): ns() then treats a tick as a nanosecond from the first pair.
  bool finish() {
    std::sort(points_.begin(), points_.end(),
              [](const part::ClockSync& a, const part::ClockSync& b) { return a.ticks < b.ticks; });
    points_.erase(std::unique(points_.begin(), points_.end(),
                              [](const part::ClockSync& a, const part::ClockSync& b) {
                                return a.ticks == b.ticks;
                              }),
                  points_.end());
    return kind_ == part::ClockKind::kMonotonicNs || points_.size() >= 2;
  }

  std::int64_t ns(std::int64_t rawTicks) const {
    if (kind_ == part::ClockKind::kMonotonicNs) return rawTicks;
    auto t = static_cast<std::uint64_t>(rawTicks);
    if (points_.empty()) return rawTicks;
    if (points_.size() == 1)
      return points_[0].monotonicNs + static_cast<std::int64_t>(t - points_[0].ticks);
    // The segment [a, b] holding t, or the first/last one.
    auto it =
        std::upper_bound(points_.begin(), points_.end(), t,
                         [](std::uint64_t v, const part::ClockSync& p) { return v < p.ticks; });
    std::size_t i = static_cast<std::size_t>(it - points_.begin());
    i = std::clamp<std::size_t>(i, 1, points_.size() - 1);
    const auto& a = points_[i - 1];
    const auto& b = points_[i];
    double rate = double(b.monotonicNs - a.monotonicNs) / double(b.ticks - a.ticks);
    double dt = t >= a.ticks ? double(t - a.ticks) : -double(a.ticks - t);
    return a.monotonicNs + static_cast<std::int64_t>(dt * rate + (dt >= 0 ? 0.5 : -0.5));
  }

 private:
  part::ClockKind kind_;
  std::vector<part::ClockSync> points_;
};

}  // namespace rlscope::merge
