// Record times arrive in a part's clock ticks (part/format.h); the merge converts every payload
// with times to CLOCK_MONOTONIC nanoseconds as it reads it (TickConverter).
#pragma once

#include "rlscope/merge/tick_converter.h"

namespace rlscope::merge {

// The format's rule: every payload field named time, start or end is a time in ticks, so every
// payload is converted whole, including one added later.
template <class P>
void toNs(const TickConverter& c, P& x) {
  if constexpr (requires { x.time; }) x.time = c.ns(x.time);
  if constexpr (requires { x.start; }) x.start = c.ns(x.start);
  if constexpr (requires { x.end; }) x.end = c.ns(x.end);
}

}  // namespace rlscope::merge
