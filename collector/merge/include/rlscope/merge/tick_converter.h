// Converts a part's clock ticks to CLOCK_MONOTONIC nanoseconds (part/format.h): piecewise linear
// between the part's kClockSync pairs, extended past the first and last pair with the nearest
// segment's rate. Pairs are a flush apart (25 ms by default), so the rate is re-measured as it
// drifts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rlscope/part/format.h"

namespace rlscope::merge {

class TickConverter {
 public:
  explicit TickConverter(part::ClockKind kind = part::ClockKind::kMonotonicNs) : kind_(kind) {}

  // Pairs may be added while ticks are converted (the merge reads a part as it is written): a
  // tick between two pairs converts the same whatever is added after them. A pair with the tick
  // count of one already added is ignored.
  void add(std::uint64_t ticks, std::int64_t ns) {
    auto byTicks = [](const part::ClockSync& a, const part::ClockSync& b) {
      return a.ticks < b.ticks;
    };
    part::ClockSync p{ticks, ns};
    auto it = std::lower_bound(points_.begin(), points_.end(), p, byTicks);
    if (it != points_.end() && it->ticks == ticks) return;
    points_.insert(it, p);  // at the end, but for a damaged part's
    segment_ = 0;
  }

  // False when ticks cannot be converted (fewer than two pairs with distinct tick counts): ns()
  // then treats a tick as a nanosecond from the first pair.
  bool calibrated() const { return kind_ == part::ClockKind::kMonotonicNs || points_.size() >= 2; }

  // A part is the collector's own, but a damaged one may hold any numbers: results saturate at
  // ±kLimitNs (which leaves room for differences of two of them) instead of overflowing.
  std::int64_t ns(std::int64_t rawTicks) const {
    if (kind_ == part::ClockKind::kMonotonicNs) return rawTicks;
    auto t = static_cast<std::uint64_t>(rawTicks);
    if (points_.empty()) return rawTicks;
    if (points_.size() == 1) {
      const auto& p = points_[0];
      return offset(p.monotonicNs, t >= p.ticks ? double(t - p.ticks) : -double(p.ticks - t));
    }
    // Ticks come in nearly increasing order: most fall in the segment of the one before.
    if (segment_ && points_[segment_ - 1].ticks <= t && t < points_[segment_].ticks)
      return offset(points_[segment_ - 1].monotonicNs,
                    double(t - points_[segment_ - 1].ticks) * segmentRate_);
    // The segment [a, b] holding t, or the first/last one.
    auto it =
        std::upper_bound(points_.begin(), points_.end(), t,
                         [](std::uint64_t v, const part::ClockSync& p) { return v < p.ticks; });
    std::size_t i = static_cast<std::size_t>(it - points_.begin());
    bool inside = i >= 1 && i < points_.size();
    i = std::clamp<std::size_t>(i, 1, points_.size() - 1);
    const auto& a = points_[i - 1];
    const auto& b = points_[i];
    double rate = (double(b.monotonicNs) - double(a.monotonicNs)) / double(b.ticks - a.ticks);
    // A segment between two pairs converts the same whatever is added later; the first and
    // last are extended and may not, so they are not remembered.
    if (inside) {
      segment_ = i;
      segmentRate_ = rate;
    }
    double dt = t >= a.ticks ? double(t - a.ticks) : -double(a.ticks - t);
    return offset(a.monotonicNs, dt * rate);
  }

  static constexpr std::int64_t kLimitNs = std::int64_t{1} << 62;

 private:
  // base + delta, rounded, within ±kLimitNs.
  static std::int64_t offset(std::int64_t base, double delta) {
    constexpr double kLimit = double(kLimitNs);
    if (!(delta > -kLimit)) delta = -kLimit;  // NaN included
    if (delta > kLimit) delta = kLimit;
    std::int64_t sum = 0;
    if (__builtin_add_overflow(base, static_cast<std::int64_t>(delta + (delta >= 0 ? 0.5 : -0.5)),
                               &sum))
      return delta > 0 ? kLimitNs : -kLimitNs;
    return std::clamp(sum, -kLimitNs, kLimitNs);
  }

  part::ClockKind kind_;
  std::vector<part::ClockSync> points_;
  // The segment [segment_ - 1, segment_] of the last conversion inside one (0: none), its rate.
  mutable std::size_t segment_ = 0;
  mutable double segmentRate_ = 0;
};

}  // namespace rlscope::merge
