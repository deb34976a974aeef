// LaunchTies ties each CUDA launch to its operation as soon as its API call, CUPTI's external
// correlation record and the push it names have been read, in whatever order they come, and keeps
// nothing of a launch once it is tied; the rest is tied by time at the end.
#include "rlscope/merge/launch_ties.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "rlscope/part/format.h"

namespace rlscope {
namespace {

using merge::LaunchTies;

struct Rows {
  std::map<std::int64_t, std::int64_t> operationOf;  // correlation id -> operation
  LaunchTies::Write sink() {
    return [this](const trace::ExternalCorrelationRecord& r) {
      EXPECT_EQ(operationOf.count(r.correlationId), 0u) << "tied twice";
      operationOf[r.correlationId] = r.externalId;
    };
  }
};

LaunchTies::Launch launch(std::uint32_t correlation, std::int64_t start = 0) {
  return {.part = 1, .globalPid = 5, .globalTid = 50, .start = start, .correlationId = correlation};
}

TEST(LaunchTies, TiedAsSoonAsBothRecordsAndThePushAreReadInEitherOrder) {
  Rows rows;
  LaunchTies ties(rows.sink());
  ties.pushed(1, 7, 1, 100);
  ties.launched(launch(11));
  ties.correlated(1, 11, part::operationIdOf(7, 1));  // the correlation after its launch
  ties.correlated(1, 12, part::operationIdOf(7, 1));  // and before
  ties.launched(launch(12));
  EXPECT_EQ(rows.operationOf, (std::map<std::int64_t, std::int64_t>{{11, 100}, {12, 100}}));
  EXPECT_EQ(ties.waiting(), 0u);
}

TEST(LaunchTies, ALaunchWhosePushBelongsToNoOperationIsDoneWith) {
  Rows rows;
  LaunchTies ties(rows.sink());
  ties.pushed(1, 7, 1, 0);  // a phase outside every operation
  ties.launched(launch(11));
  ties.correlated(1, 11, part::operationIdOf(7, 1));
  EXPECT_EQ(ties.waiting(), 0u);
  ties.finish([](std::int64_t, std::int64_t) { return std::int64_t{999}; });
  EXPECT_TRUE(rows.operationOf.empty());
}

TEST(LaunchTies, APushReadAfterItsLaunchIsFoundAtTheEnd) {
  Rows rows;
  LaunchTies ties(rows.sink());
  ties.launched(launch(11));
  ties.correlated(1, 11, part::operationIdOf(7, 3));
  EXPECT_TRUE(rows.operationOf.empty());
  ties.pushed(1, 7, 3, 300);
  ties.finish([](std::int64_t, std::int64_t) { return std::int64_t{999}; });
  EXPECT_EQ(rows.operationOf.at(11), 300);
}

TEST(LaunchTies, LaunchesWithoutACorrelationAreTiedByTimeAtTheEnd) {
  Rows rows;
  LaunchTies ties(rows.sink());
  ties.launched(launch(11, 2500));
  ties.launched(launch(12, 9000));
  std::vector<std::pair<std::int64_t, std::int64_t>> asked;
  ties.finish([&](std::int64_t tid, std::int64_t t) {
    asked.emplace_back(tid, t);
    return t < 5000 ? std::int64_t{42} : std::int64_t{0};  // none open at 9000
  });
  EXPECT_EQ(asked, (std::vector<std::pair<std::int64_t, std::int64_t>>{{50, 2500}, {50, 9000}}));
  EXPECT_EQ(rows.operationOf, (std::map<std::int64_t, std::int64_t>{{11, 42}}));
  EXPECT_EQ(ties.waiting(), 0u);
}

// What the merge holds does not grow with the launches: a long run's launches, each read with its
// correlation, leave nothing waiting.
TEST(LaunchTies, NothingWaitsOnceLaunchesAreTied) {
  Rows rows;
  LaunchTies ties(rows.sink());
  for (std::uint32_t push = 1; push <= 1000; ++push) {
    ties.pushed(1, 7, push, push);
    for (std::uint32_t k = 0; k < 100; ++k) {
      std::uint32_t correlation = push * 100 + k;
      if (k % 2)
        ties.launched(launch(correlation));
      else
        ties.correlated(1, correlation, part::operationIdOf(7, push));
      EXPECT_LE(ties.waiting(), 1u);
      if (k % 2)
        ties.correlated(1, correlation, part::operationIdOf(7, push));
      else
        ties.launched(launch(correlation));
    }
  }
  EXPECT_EQ(ties.waiting(), 0u);
  EXPECT_EQ(rows.operationOf.size(), 100000u);
  EXPECT_EQ(rows.operationOf.at(500 * 100 + 7), 500);
}

}  // namespace
}  // namespace rlscope
