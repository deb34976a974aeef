// trace::gallopingPartitionPoint (rlscope/trace/galloping_search.h): the answer of
// std::partition_point from any hint, on random sorted arrays with runs of equal values.
#include "rlscope/trace/galloping_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace rlscope::trace {
namespace {

TEST(GallopingSearch, EmptyAndOneElement) {
  auto never = [](std::size_t) { return false; };
  EXPECT_EQ(gallopingPartitionPoint(0, 0, never), 0u);
  EXPECT_EQ(gallopingPartitionPoint(0, 7, never), 0u);
  EXPECT_EQ(gallopingPartitionPoint(1, 0, [](std::size_t) { return true; }), 1u);
  EXPECT_EQ(gallopingPartitionPoint(1, 5, never), 0u);
}

TEST(GallopingSearch, SameAnswerAsPartitionPointFromEveryKindOfHint) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::uniform_int_distribution<std::size_t> size(0, 300);
    std::vector<int> v(size(rng));
    std::uniform_int_distribution<int> value(0, 40);  // many equal values
    for (auto& x : v) x = value(rng);
    std::sort(v.begin(), v.end());
    std::uniform_int_distribution<std::size_t> hintAt(0, v.size() + 3);  // past the end too
    for (int query = 0; query < 50; ++query) {
      int t = value(rng) - 1;  // below, among and above the values
      auto expected = static_cast<std::size_t>(
          std::partition_point(v.begin(), v.end(), [&](int x) { return x <= t; }) - v.begin());
      std::size_t hint = hintAt(rng);
      EXPECT_EQ(gallopingPartitionPoint(v.size(), hint, [&](std::size_t i) { return v[i] <= t; }),
                expected)
          << "size " << v.size() << ", hint " << hint << ", value " << t;
    }
  }
}

}  // namespace
}  // namespace rlscope::trace
