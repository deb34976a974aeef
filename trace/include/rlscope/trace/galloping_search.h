// A binary search that starts from the previous answer: rows read in storage order ask for
// nearby positions one after another (a thread's calls in time order, correlation ids that mostly
// grow), so a lookup is a step or two where a plain binary search over millions of entries takes
// twenty cache misses.
#pragma once

#include <algorithm>
#include <cstddef>

namespace rlscope::trace {

// The first index in [0, n) at which `before(index)` is false, as std::partition_point: `before`
// must be true on a prefix and false after it. The search gallops from `hint` (any index; the
// previous answer, typically) towards the answer, then bisects the bracket it found.
template <class Before>
std::size_t gallopingPartitionPoint(std::size_t n, std::size_t hint, Before before) {
  std::size_t lo = 0, hi = 0, step = 1;
  hint = std::min(hint, n);
  if (hint < n && before(hint)) {  // later: every index below lo is before
    lo = hi = hint + 1;
    while (hi < n && before(hi)) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    hi = std::min(hi, n);
  } else {  // earlier: no index from hi on is before
    lo = hi = hint;
    while (lo > 0 && !before(lo - 1)) {
      hi = lo - 1;
      lo = lo > step ? lo - step : 0;
      step *= 2;
    }
  }
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (before(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace rlscope::trace
