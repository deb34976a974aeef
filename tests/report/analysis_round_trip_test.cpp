// The analysis document's round trip: what the analyzer writes (breakdown, correction, ranks,
// prediction) is what the report reads back, value for value. Every value differs from every
// other, so a key written under one name and read under another fails here instead of silently
// dropping a figure from the reports (the keys: rlscope/document/analysis_json.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rlscope/breakdown/breakdown_output.h"
#include "rlscope/distributed/rank_analysis.h"
#include "rlscope/document/analysis_json.h"
#include "rlscope/predictor/what_if_output.h"
#include "rlscope/report/analysis_document.h"

namespace rlscope::report {
namespace {

analysis::Breakdown breakdown() {
  analysis::Breakdown b;
  b.totalNs = 9'000'000;
  analysis::OperationBreakdown op;
  op.process = 41;
  op.name = "inference";
  op.phase = "rollout";
  op.instances = 7;
  op.time = 5'000'000;
  op.cpu = 1'000'000;
  op.gpu = 2'000'000;
  op.cpuGpu = 500'000;
  op.waiting = 250'000;
  op.launchedGpu = 2'700'000;
  op.launchedGpuActivities = 13;
  op.gpuWait = 125'000;
  op.pythonEvents = 17;
  op.transitions = {.pythonToBackend = 19, .pythonToSimulator = 23, .toCudaApi = 29};
  op.categories = {{{"Python"}, 1'000'000}, {{"CUDA API", "GPU kernel"}, 500'000}};
  b.operations.push_back(op);
  b.identities[41] = trace::ProcessIdentityRecord{.globalPid = 41, .host = "node-a", .rank = 3};
  analysis::Correction c;
  c.calibrationOrigin = "calibration.json";
  c.sources["python_transition"] = {.events = 31, .costNs = 37, .removedNs = 1'147'000};
  c.uncorrectedTotalNs = 9'000'000;
  c.correctedTotalNs = 7'853'000;
  c.uninstrumentedNs = 7'700'000;
  c.uninstrumentedNoisePct = 1.5;
  c.biasPct = 1.98;
  c.biasUncertaintyPct = 0.75;
  c.verdict = analysis::Correction::Verdict::kWithinTarget;
  b.correction = c;
  return b;
}

analysis::RankAnalysis ranks() {
  analysis::RankAnalysis a;
  analysis::RankSummary r;
  r.rank = 3;
  r.host = "node-a";
  r.pid = 41;
  r.time = 5'000'000;
  r.collectives = 43;
  r.inCollectives = 600'000;
  r.waitingForOthers = 200'000;
  r.transferring = 400'000;
  r.collectivesLast = 47;
  r.othersWaited = 350'000;
  r.doing = {{"inference", "Python", 90'000}};
  a.ranks.push_back(r);
  a.matched = 43;
  a.source = "NCCL kernels";
  a.notes = {"a note on the collectives"};
  return a;
}

predictor::RunPrediction prediction() {
  predictor::RunPrediction p;
  p.origin = "A100";
  p.originFrom = "trace";
  p.target = "H100";
  p.originNs = 9'000'000;
  p.predictedNs = 6'000'000;
  p.predictedLowNs = 5'500'000;
  p.predictedHighNs = 6'600'000;
  p.gpuBoundNs = 3'000'000;
  p.gpuOriginNs = 2'700'000;
  p.gpuPredictedNs = 1'200'000;
  p.gpuExpectedErrorNs = 120'000;
  p.kernelLaunches = 53;
  p.cannotPredict = 2;
  p.kernels.push_back({.name = "gemm",
                       .launches = 51,
                       .cannotPredict = 1,
                       .originNs = 2'000'000,
                       .predictedNs = 800'000,
                       .gamma = 0.625,
                       .expectedError = 0.125});
  p.operations.push_back({.process = 41,
                          .name = "inference",
                          .phase = "rollout",
                          .originNs = 5'000'000,
                          .predictedNs = 3'500'000,
                          .gpuScale = 0.4,
                          .expectedErrorNs = 61'000});
  p.notes = {"a note on the prediction"};
  return p;
}

// The document as `rlscope analyze --json --by rank --target` puts it together.
nlohmann::json document() {
  nlohmann::json d = analysis::toJson(breakdown());
  d[analysis::json_keys::kTrace] = "run.sqlite";
  d.update(analysis::ranksToJson(ranks()));
  d[analysis::json_keys::kPrediction] = predictor::toJson(prediction());
  return d;
}

TEST(AnalysisRoundTrip, TheReportReadsBackEveryOperationValue) {
  Analysis a = parseAnalysis(document());
  EXPECT_EQ(a.trace, "run.sqlite");
  EXPECT_TRUE(a.corrected);
  EXPECT_DOUBLE_EQ(a.totalUs.value_or(-1), 9000);
  ASSERT_EQ(a.operations.size(), 1u);
  const Operation& o = a.operations[0];
  EXPECT_EQ(o.name, "inference");
  EXPECT_EQ(o.process, 41);
  EXPECT_EQ(o.host, "node-a");
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.phase, "rollout");
  EXPECT_EQ(o.instances, 7);
  EXPECT_DOUBLE_EQ(o.timeUs, 5000);
  EXPECT_DOUBLE_EQ(o.cpuUs, 1000);
  EXPECT_DOUBLE_EQ(o.gpuUs, 2000);
  EXPECT_DOUBLE_EQ(o.cpuGpuUs, 500);
  EXPECT_DOUBLE_EQ(o.waitingUs, 250);
  EXPECT_DOUBLE_EQ(o.gpuBoundUs, 2500);
  EXPECT_DOUBLE_EQ(o.launchedGpuUs.value_or(-1), 2700);
  ASSERT_EQ(o.categories.size(), 2u);
  EXPECT_EQ(o.categories[0].set, std::vector<std::string>{"Python"});
  EXPECT_DOUBLE_EQ(o.categories[0].timeUs, 1000);
  EXPECT_EQ(o.categories[1].set, (std::vector<std::string>{"CUDA API", "GPU kernel"}));
  EXPECT_DOUBLE_EQ(o.categories[1].timeUs, 500);
  EXPECT_EQ(o.transitions,
            (std::map<std::string, double>{
                {"Backend->CUDA API", 29}, {"Python->Backend", 19}, {"Python->Simulator", 23}}));
}

TEST(AnalysisRoundTrip, TheReportReadsBackTheCorrection) {
  Analysis a = parseAnalysis(document());
  ASSERT_TRUE(a.correction.has_value());
  const Correction& c = *a.correction;
  EXPECT_EQ(c.calibration, "calibration.json");
  EXPECT_DOUBLE_EQ(c.uncorrectedTotalUs.value_or(-1), 9000);
  EXPECT_DOUBLE_EQ(c.correctedTotalUs.value_or(-1), 7853);
  EXPECT_DOUBLE_EQ(c.uninstrumentedTotalUs.value_or(-1), 7700);
  EXPECT_DOUBLE_EQ(c.uninstrumentedNoisePct.value_or(-1), 1.5);
  EXPECT_DOUBLE_EQ(c.biasPct.value_or(-1), 1.98);
  EXPECT_DOUBLE_EQ(c.biasUncertaintyPct.value_or(-1), 0.75);
  EXPECT_EQ(c.biasVerdict, "within_target");
  EXPECT_EQ(c.removedUs, (std::map<std::string, double>{{"python_transition", 1147}}));
}

TEST(AnalysisRoundTrip, TheReportReadsBackTheRanks) {
  Analysis a = parseAnalysis(document());
  ASSERT_TRUE(a.ranks.has_value());
  ASSERT_EQ(a.ranks->ranks.size(), 1u);
  const RankRow& r = a.ranks->ranks[0];
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.host, "node-a");
  EXPECT_EQ(r.pid, 41);
  EXPECT_DOUBLE_EQ(r.timeUs, 5000);
  EXPECT_DOUBLE_EQ(r.collectives, 43);
  EXPECT_DOUBLE_EQ(r.collectivesUs, 600);
  EXPECT_DOUBLE_EQ(r.waitingForOthersUs, 200);
  EXPECT_DOUBLE_EQ(r.transferringUs, 400);
  EXPECT_DOUBLE_EQ(r.collectivesLast, 47);
  EXPECT_DOUBLE_EQ(r.othersWaitedUs, 350);
  ASSERT_EQ(r.doing.size(), 1u);
  EXPECT_EQ(r.doing[0].operation, "inference");
  EXPECT_EQ(r.doing[0].category, "Python");
  EXPECT_DOUBLE_EQ(r.doing[0].timeUs, 90);
  EXPECT_DOUBLE_EQ(a.ranks->matched, 43);
  EXPECT_EQ(a.ranks->source, "NCCL kernels");
  EXPECT_EQ(a.ranks->notes, std::vector<std::string>{"a note on the collectives"});
}

TEST(AnalysisRoundTrip, TheReportReadsBackThePrediction) {
  Analysis a = parseAnalysis(document());
  ASSERT_TRUE(a.prediction.has_value());
  const PredictionSection& p = *a.prediction;
  predictor::RunPrediction want = prediction();
  EXPECT_EQ(p.schema, kPredictionSchema);
  EXPECT_EQ(p.origin, "A100");
  EXPECT_EQ(p.originFrom, "trace");
  EXPECT_EQ(p.target, "H100");
  EXPECT_EQ(p.verdict, want.verdict());
  EXPECT_DOUBLE_EQ(p.originUs.value_or(-1), 9000);
  EXPECT_DOUBLE_EQ(p.predictedUs.value_or(-1), 6000);
  EXPECT_DOUBLE_EQ(p.predictedLowUs.value_or(-1), 5500);
  EXPECT_DOUBLE_EQ(p.predictedHighUs.value_or(-1), 6600);
  EXPECT_DOUBLE_EQ(p.speedup.value_or(-1), 1.5);
  EXPECT_DOUBLE_EQ(p.gpuBoundUs.value_or(-1), 3000);
  EXPECT_DOUBLE_EQ(p.maxSpeedup.value_or(-1), 1.5);
  EXPECT_FALSE(p.cpuBound);
  EXPECT_DOUBLE_EQ(p.gpuOriginUs.value_or(-1), 2700);
  EXPECT_DOUBLE_EQ(p.gpuPredictedUs.value_or(-1), 1200);
  EXPECT_DOUBLE_EQ(p.gpuExpectedError.value_or(-1), 0.1);
  EXPECT_DOUBLE_EQ(p.kernelLaunches.value_or(-1), 53);
  EXPECT_DOUBLE_EQ(p.cannotPredict.value_or(-1), 2);
  ASSERT_EQ(p.operations.size(), 1u);
  const PredictedOperation& o = p.operations[0];
  EXPECT_EQ(o.name, "inference");
  EXPECT_EQ(o.process, 41);
  EXPECT_EQ(o.phase, "rollout");
  EXPECT_DOUBLE_EQ(o.originUs, 5000);
  EXPECT_DOUBLE_EQ(o.predictedUs, 3500);
  EXPECT_DOUBLE_EQ(o.gpuScale.value_or(-1), 0.4);
  EXPECT_DOUBLE_EQ(o.expectedErrorUs.value_or(-1), 61);
  ASSERT_EQ(p.kernels.size(), 1u);
  const PredictedKernel& k = p.kernels[0];
  EXPECT_EQ(k.name, "gemm");
  EXPECT_EQ(k.method, predictor::methodName(want.kernels[0].method));
  EXPECT_DOUBLE_EQ(k.launches.value_or(-1), 51);
  EXPECT_DOUBLE_EQ(k.cannotPredict.value_or(-1), 1);
  EXPECT_DOUBLE_EQ(k.originUs.value_or(-1), 2000);
  EXPECT_DOUBLE_EQ(k.predictedUs.value_or(-1), 800);
  EXPECT_DOUBLE_EQ(k.gamma.value_or(-1), 0.625);
  EXPECT_DOUBLE_EQ(k.expectedError.value_or(-1), 0.125);
  EXPECT_EQ(p.notes, std::vector<std::string>{"a note on the prediction"});
}

// Every key the analyzer writes and the report reads is in the document under the name both
// take from analysis_json.h: the writer's JSON, not a literal of this test, is the reference.
TEST(AnalysisRoundTrip, TheDocumentHasTheKeysOfItsContract) {
  namespace key = analysis::json_keys;
  nlohmann::json d = document();
  EXPECT_EQ(d[key::kSchema], key::kAnalysisSchema);
  for (const char* member :
       {key::kView, key::kTrace, key::kCorrected, key::kTotalUs, key::kOperations, key::kCorrection,
        key::kPrediction, key::kRanks, key::kStragglers, key::kCollectives})
    EXPECT_TRUE(d.contains(member)) << member;
  EXPECT_EQ(d[key::kPrediction][key::prediction::kSchema], key::prediction::kPredictionSchema);
}

}  // namespace
}  // namespace rlscope::report
