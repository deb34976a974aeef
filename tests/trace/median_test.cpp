// trace::median (rlscope/trace/median.h), which the calibration and the fleet report take of
// repeated measurements.
#include "rlscope/trace/median.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace rlscope::trace {
namespace {

TEST(Median, OddCountIsTheMiddleValueWhateverTheOrder) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({5}), 5);
  EXPECT_DOUBLE_EQ(median({9, -1, 4, 4, 100}), 4);
}

TEST(Median, EvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({10, 20}), 15);
  EXPECT_DOUBLE_EQ(median({7, 7, 7, 7}), 7);
}

TEST(Median, NoValuesGiveZero) {
  EXPECT_DOUBLE_EQ(median({}), 0);
}

// Against a full sort on shuffled inputs of every length up to 40.
TEST(Median, MatchesTheSortedDefinition) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-100, 100);
  for (std::size_t n = 1; n <= 40; ++n) {
    std::vector<double> v(n);
    for (auto& x : v) x = value(rng);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    double want = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    EXPECT_DOUBLE_EQ(median(v), want) << n;
  }
}

}  // namespace
}  // namespace rlscope::trace
