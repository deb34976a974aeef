// Analyses combined (rlscope.fleet/1) from hand-made documents with exact expected values: the
// slowed rank named, medians of odd and even counts, ranks' collectives, failed inputs, and the
// same trace given twice.
#include "rlscope/report/fleet.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rlscope::report {
namespace {

using nlohmann::json;

json operation(const std::string& name, std::int64_t pid, double us, std::optional<int> rank,
               double cpuUs = -1) {
  json op = {{"name", name},
             {"process", pid},
             {"host", rank ? json("node" + std::to_string(*rank)) : json(nullptr)},
             {"rank", rank ? json(*rank) : json(nullptr)},
             {"time_us", us},
             {"resources", {{"CPU", cpuUs < 0 ? us : cpuUs}, {"GPU", 0.0}, {"CPU+GPU", 0.0}}},
             {"waiting_us", 0.0},
             {"categories", json::array({{{"set", {"Python"}}, {"time_us", us}}})}};
  return op;
}

// Rank r's trace: "step" 1000 µs (1500 on the slowed rank), "(unannotated)" 10 µs.
json rankDocument(int rank, int slowed) {
  return {{"schema", kAnalysisSchema},
          {"trace", "job/rank" + std::to_string(rank) + ".sqlite"},
          {"total_us", 2000.0},
          {"operations",
           {operation("step", 100 + rank, rank == slowed ? 1500.0 : 1000.0, rank),
            operation(kUnannotated, 100 + rank, 10.0, rank)}}};
}

Fleet combineDocuments(const std::vector<json>& documents) {
  std::vector<FleetInput> inputs;
  for (std::size_t i = 0; i < documents.size(); ++i)
    inputs.push_back(fleetInputFromDocument(documents[i], "doc" + std::to_string(i)));
  return combineAnalyses(inputs);
}

TEST(Fleet, TheSlowedRankIsTheSlowestOfItsOperation) {
  std::vector<json> documents;
  for (int r = 7; r >= 0; --r) documents.push_back(rankDocument(r, 5));  // given out of order
  Fleet fleet = combineDocuments(documents);
  ASSERT_EQ(fleet.processes.size(), 8u);
  for (std::int64_t r = 0; r < 8; ++r) EXPECT_EQ(fleet.processes[r].rank, r);  // by rank
  EXPECT_EQ(fleet.hosts.size(), 8u);
  EXPECT_EQ(fleet.failed, 0u);
  EXPECT_DOUBLE_EQ(fleet.medianProcessUs, 1010);

  ASSERT_EQ(fleet.operations.size(), 2u);
  const FleetOperation& step = fleet.operations[0];
  EXPECT_EQ(step.name, "step");
  EXPECT_EQ(step.processes, 8u);
  EXPECT_DOUBLE_EQ(step.totalUs, 8500);
  EXPECT_DOUBLE_EQ(step.minUs, 1000);
  EXPECT_DOUBLE_EQ(step.medianUs, 1000);
  EXPECT_DOUBLE_EQ(step.maxUs, 1500);
  EXPECT_EQ(fleet.processes[step.slowest].rank, 5);
  EXPECT_EQ(fleet.operations[1].name, kUnannotated);  // last, whatever its total

  json j = fleetToJson(fleet);
  EXPECT_EQ(j["schema"], kFleetSchema);
  EXPECT_EQ(j["operations"][0]["slowest"]["rank"], 5);
  EXPECT_EQ(j["operations"][0]["slowest"]["trace"], "job/rank5.sqlite");
  EXPECT_DOUBLE_EQ(j["processes"][5]["vs_median_pct"].get<double>(), 100.0 * 500 / 1010);
  EXPECT_EQ(j["processes"][5]["host"], "node5");

  std::ostringstream table;
  writeFleetTable(fleet, table, 20);
  EXPECT_NE(table.str().find("fleet: 8 traces from 8 hosts, 8 processes (8 ranks: 0–7)"),
            std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("1.50×  rank 5\n"), std::string::npos) << table.str();

  std::ostringstream csv;
  writeFleetCsv(fleet, csv);
  std::string text = csv.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 16);
  EXPECT_NE(text.find("job/rank5.sqlite,node5,5,105,step,1500.000\n"), std::string::npos) << text;
}

TEST(Fleet, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  std::vector<json> documents;
  for (int i = 0; i < 4; ++i) {
    documents.push_back({{"schema", kAnalysisSchema},
                         {"operations", {operation("op", 10 + i, 100.0 * (i + 1), std::nullopt)}}});
  }
  Fleet fleet = combineDocuments(documents);
  EXPECT_DOUBLE_EQ(fleet.operations[0].medianUs, 250);
  EXPECT_DOUBLE_EQ(fleet.medianProcessUs, 250);
  // Without ranks, processes keep the order of their traces and are named by pid and file.
  EXPECT_EQ(processLabel(fleet.processes[0]), "pid 10 in doc0");
  EXPECT_EQ(fleet.processes[3].process, 13);
  EXPECT_TRUE(fleet.hosts.empty());
}

TEST(Fleet, CollectivesComeFromTheRanksOfAnAnalysisByRank) {
  json document = rankDocument(3, -1);
  document["ranks"] = {
      {{"rank", 3},
       {"host", "node3"},
       {"pid", 103},
       {"time_us", 1010.0},
       {"collectives",
        {{"count", 4}, {"time_us", 400.0}, {"waiting_us", 250.0}, {"transferring_us", 150.0}}}}};
  Fleet fleet = combineDocuments({document, rankDocument(4, -1)});
  ASSERT_EQ(fleet.processes.size(), 2u);
  EXPECT_EQ(fleet.processes[0].collectivesUs, 400.0);
  EXPECT_EQ(fleet.processes[0].waitingForOthersUs, 250.0);
  EXPECT_FALSE(fleet.processes[1].collectivesUs);  // analysed without --by rank
  std::ostringstream table;
  writeFleetTable(fleet, table, 20);
  EXPECT_NE(table.str().find("collectives ms  waiting ms"), std::string::npos) << table.str();
}

TEST(Fleet, FailedInputsAreCountedAndSaidAndTheOthersCombined) {
  json error = {{"schema", kAnalysisSchema}, {"trace", "job/rank1.sqlite"}, {"error", "boom"}};
  Fleet fleet = combineDocuments({rankDocument(0, -1), error, json{{"schema", "other/1"}}});
  EXPECT_EQ(fleet.failed, 2u);
  ASSERT_EQ(fleet.traces.size(), 3u);
  EXPECT_EQ(fleet.traces[1].trace, "job/rank1.sqlite");
  EXPECT_EQ(fleet.traces[1].error, "boom");
  EXPECT_EQ(fleet.traces[2].trace, "doc2");
  EXPECT_NE(fleet.traces[2].error.find("is not \"rlscope.analysis/1\""), std::string::npos);
  EXPECT_EQ(fleet.processes.size(), 1u);
  std::ostringstream table;
  writeFleetTable(fleet, table, 20);
  EXPECT_NE(table.str().find("could not analyse 2 traces:\n  job/rank1.sqlite: boom\n"),
            std::string::npos)
      << table.str();
  EXPECT_EQ(fleetToJson(fleet)["traces"][1]["error"], "boom");
}

TEST(Fleet, AKinetoTraceAmongTheDocumentsSaysToImportIt) {
  FleetInput in = fleetInputFromDocument(json{{"traceEvents", json::array()}}, "rank0.json");
  EXPECT_FALSE(in.analysis);
  EXPECT_EQ(in.trace, "rank0.json");
  EXPECT_EQ(in.error,
            "a Kineto (Chrome trace) file, not an analysis document: `rlscope import` it, then "
            "analyze the trace");
}

TEST(Fleet, TheSameTraceTwiceIsTwoSetsOfProcesses) {
  json document = {{"schema", kAnalysisSchema},
                   {"trace", "same.sqlite"},
                   {"operations", {operation("op", 7, 100.0, std::nullopt)}}};
  Fleet fleet = combineDocuments({document, document});
  ASSERT_EQ(fleet.processes.size(), 2u);
  EXPECT_EQ(fleet.operations[0].processes, 2u);
  EXPECT_DOUBLE_EQ(fleet.operations[0].totalUs, 200);
}

TEST(Fleet, NothingToCombineSaysSo) {
  Fleet fleet = combineAnalyses({});
  std::ostringstream table;
  writeFleetTable(fleet, table, 20);
  EXPECT_EQ(table.str(), "fleet: 0 traces, 0 processes; median process time 0.000 ms\n");
  EXPECT_TRUE(fleetToJson(fleet)["operations"].empty());
}

}  // namespace
}  // namespace rlscope::report
