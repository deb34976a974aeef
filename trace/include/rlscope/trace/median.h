// The median the analysis and the reports take of repeated measurements (calibration runs, a
// fleet's processes): the middle value, or the mean of the middle two.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rlscope::trace {

// 0 for no values. O(n): nth_element, not a sort.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  double upper = *middle;
  if (values.size() % 2) return upper;
  return (*std::max_element(values.begin(), middle) + upper) / 2;
}

}  // namespace rlscope::trace
