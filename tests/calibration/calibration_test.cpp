// Calibration arithmetic (per-event costs from constructed run measurements), its warnings, and
// the file and trace-table round trips.
#include "rlscope/calibration/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "support/temp_dir.h"

namespace rlscope::analysis {
namespace {

RunMeasurement run(const char* config, int rep, double elapsed, EventCounts events = {}) {
  return {config, rep, elapsed, std::move(events)};
}

EventCounts events(std::int64_t processes, std::int64_t ops, std::int64_t transitions = 0,
                   std::map<std::string, EventCounts::Api> apis = {}) {
  EventCounts e;
  e.processes = processes;
  e.operations = ops;
  e.transitions = transitions;
  e.apis = std::move(apis);
  return e;
}

// Two repetitions of every configuration, with known costs: 200 ns then 400 ns per process,
// 10 / 12 ns per operation, 5 / 7 ns per transition, 20 / 20 ns per API call, and a CUPTI cost
// of 100 / 300 ns on cudaLaunchKernel and 50 / 50 ns on cudaMemcpy.
std::vector<RunMeasurement> twoRepetitions() {
  std::map<std::string, EventCounts::Api> off = {{"cudaLaunchKernel", {100, 100 * 2000.0}},
                                                 {"cudaMemcpy", {10, 10 * 9000.0}}};
  std::map<std::string, EventCounts::Api> on0 = {{"cudaLaunchKernel", {100, 100 * 2100.0}},
                                                 {"cudaMemcpy", {10, 10 * 9050.0}}};
  std::map<std::string, EventCounts::Api> on1 = {{"cudaLaunchKernel", {100, 100 * 2300.0}},
                                                 {"cudaMemcpy", {10, 10 * 9050.0}}};
  return {
      run("uninstrumented", 0, 1'000'000),
      run("collector", 0, 1'000'200, events(1, 0)),
      run("annotations", 0, 1'001'200, events(1, 100)),
      run("python", 0, 1'002'200, events(1, 100, 200)),
      run("cuda_api", 0, 1'003'400, events(1, 100, 0, off)),  // 110 calls × 20 ns
      run("gpu_activity", 0, 1'020'000, events(1, 100, 0, on0)),
      run("uninstrumented", 1, 1'000'000),
      run("collector", 1, 1'000'800, events(2, 0)),
      run("annotations", 1, 1'002'000, events(2, 100)),
      run("python", 1, 1'003'400, events(2, 100, 200)),
      run("cuda_api", 1, 1'004'200, events(2, 100, 0, off)),
      run("gpu_activity", 1, 1'030'000, events(2, 100, 0, on1)),
  };
}

TEST(Calibration, StatisticIsTheMeanAndSampleStandardDeviation) {
  auto s = statisticOf({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.std, std::sqrt(32.0 / 7), 1e-12);
  EXPECT_EQ(s.n, 8);
  EXPECT_EQ(statisticOf({3}).std, 0);
  EXPECT_EQ(statisticOf({}).n, 0);
}

TEST(Calibration, StatisticHasARobustMedianAndSpread) {
  // One disturbed run of five: the mean moves by 20 %, the median and the spread do not.
  auto s = statisticOf({100, 102, 98, 101, 200});
  EXPECT_DOUBLE_EQ(s.median, 101);
  EXPECT_DOUBLE_EQ(s.mean, 120.2);
  EXPECT_DOUBLE_EQ(s.spread, 1.4826 * 1);  // deviations 1, 1, 3, 0, 99: their median is 1
  EXPECT_NEAR(s.uncertainty(), 1.2533 * 1.4826 / std::sqrt(5.0), 1e-12);
  EXPECT_EQ(statisticOf({3}).uncertainty(), 0);
  // Of three, the MAD would be the smaller of two deviations (here 0.1): too tight to trust.
  auto three = statisticOf({100, 100.1, 110});
  EXPECT_DOUBLE_EQ(three.spread, three.std);
  EXPECT_DOUBLE_EQ(statisticOf({1, 2, 3, 4}).median, 2.5);
}

TEST(Calibration, AnOutlierRunDoesNotMoveTheCostOrTheReference) {
  // Five repetitions costing 10 ns per operation; in the third, something else ran during the
  // annotations configuration (+50 000 ns) and during the uninstrumented one (+90 000 ns).
  std::vector<RunMeasurement> runs;
  for (int rep = 0; rep < 5; ++rep) {
    double noise = rep == 2 ? 90'000 : 0;
    runs.push_back(run("uninstrumented", rep, 1'000'000 + noise));
    runs.push_back(run("collector", rep, 1'000'100, events(1, 0)));
    runs.push_back(run("annotations", rep, 1'001'100 + (rep == 2 ? 50'000 : 0), events(1, 100)));
  }
  Calibration c = computeCalibration(runs);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kAnnotation), 10);
  EXPECT_DOUBLE_EQ(c.uninstrumentedNs.median, 1'000'000);
  EXPECT_DOUBLE_EQ(c.uninstrumentedNs.spread, 0);
  EXPECT_LT(c.find(cost::kAnnotation)->ns.mean, 0);  // the disturbed repetition drags a mean
  // Tight: no spread in the typical runs.
  EXPECT_DOUBLE_EQ(calibrationUncertaintyPct(c, events(1, 100)), 0);
}

TEST(Calibration, CostsTelescopeFromTheUninstrumentedRunAsCorrectionApplies) {
  // The collector runs came out faster than the plain ones (noise): the process cost is clamped
  // to 0. Measured from those fast runs, the annotation cost would be (1100 − 800) / 10 = 30 and
  // correction would take 300 off a run that paid 100; measured from where correction stands,
  // it is 10, and the annotations runs correct to the uninstrumented time exactly.
  std::vector<RunMeasurement> runs;
  for (int rep = 0; rep < 3; ++rep) {
    runs.push_back(run("uninstrumented", rep, 1000));
    runs.push_back(run("collector", rep, 800, events(1, 0)));
    runs.push_back(run("annotations", rep, 1100, events(1, 10)));
  }
  Calibration c = computeCalibration(runs);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kProcess), 0);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kAnnotation), 10);
  EXPECT_DOUBLE_EQ(1100 - 1 * c.costNs(cost::kProcess) - 10 * c.costNs(cost::kAnnotation),
                   c.uninstrumentedNs.median);
}

TEST(Calibration, UncertaintyCombinesTheReferenceAndEveryCostTimesItsEvents) {
  Calibration c;
  c.uninstrumentedNs = statisticOf({1000, 1010, 990, 1000});  // spread 7.413, n = 4
  Cost annotation{cost::kAnnotation, "", statisticOf({1, 2, 3, 2})};
  c.costs.push_back(annotation);
  double t0 = c.uninstrumentedNs.uncertainty();
  double ops = 10 * annotation.ns.uncertainty();
  EXPECT_NEAR(calibrationUncertaintyPct(c, events(1, 10)),
              100 * std::sqrt(t0 * t0 + ops * ops) / 1000, 1e-9);
  // A single repetition cannot say how uncertain it is.
  c.uninstrumentedNs = statisticOf({1000});
  EXPECT_TRUE(std::isinf(calibrationUncertaintyPct(c, events(1, 10))));
}

TEST(Calibration, VersionOneFilesAndTracesStillRead) {
  nlohmann::json v1 = {
      {"schema", "rlscope.calibration/1"},
      {"uninstrumented", {{"mean_ns", 2e9}, {"std_ns", 4e7}, {"n", 5}}},
      {"costs", {{{"source", "annotation"}, {"mean_ns", 180.0}, {"std_ns", 20.0}, {"n", 5}}}}};
  Calibration c = calibrationFromJson(v1);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kAnnotation), 180);  // the mean stands in for the median
  EXPECT_DOUBLE_EQ(c.uninstrumentedNs.spread, 4e7);
  // Rows of a trace written before the median and spread columns existed.
  Calibration rows =
      calibrationFromRecords({{"uninstrumented", "", 2e9, 4e7, 5}, {"annotation", "", 180, 20, 5}});
  EXPECT_DOUBLE_EQ(rows.costNs(cost::kAnnotation), 180);
  EXPECT_DOUBLE_EQ(rows.uninstrumentedNs.median, 2e9);
}

TEST(Calibration, CostsAreDeltasPerEventFromTheUninstrumentedRuns) {
  Calibration c = computeCalibration(twoRepetitions());
  EXPECT_DOUBLE_EQ(c.uninstrumentedNs.mean, 1'000'000);
  EXPECT_EQ(c.repetitions, 2);
  // Process: (200 / 1 + 800 / 2) / 2. Each cost above it is measured from the uninstrumented run
  // less the costs below at their price (300 ns per process, then 11.5 per operation).
  EXPECT_DOUBLE_EQ(c.find(cost::kProcess)->ns.mean, 300);
  EXPECT_DOUBLE_EQ(c.find(cost::kAnnotation)->ns.median,
                   ((1200 - 1 * 300) / 100.0 + (2000 - 2 * 300) / 100.0) / 2);
  EXPECT_DOUBLE_EQ(c.find(cost::kPythonTransition)->ns.median,
                   ((2200 - 300 - 1150) / 200.0 + (3400 - 600 - 1150) / 200.0) / 2);
  EXPECT_NEAR(c.find(cost::kCudaApiInterception)->ns.median,
              ((3400 - 300 - 1150) / 110.0 + (4200 - 600 - 1150) / 110.0) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(c.find(cost::kCupti, "cudaLaunchKernel")->ns.mean, 200);
  EXPECT_NEAR(c.find(cost::kCupti, "cudaLaunchKernel")->ns.std, std::sqrt(2 * 100.0 * 100), 1e-9);
  EXPECT_DOUBLE_EQ(c.find(cost::kCupti, "cudaMemcpy")->ns.mean, 50);
  EXPECT_EQ(c.find(cost::kCupti, "cudaMemcpy")->ns.n, 2);
  EXPECT_EQ(c.find(cost::kCupti, "cudaFree"), nullptr);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kCupti, "cudaFree"), 0);
}

// A machine that slows down during the calibration (each run 0.1 % slower than the one before:
// as much as the collector costs) slows the uninstrumented runs with the others: each run is
// compared with the uninstrumented time interpolated at its place, so the drift does not become
// a cost. Paired with its own repetition's uninstrumented run instead, the collector cost came
// out twice what it is, and the annotation cost 20 times.
TEST(Calibration, AMachineThatDriftsDoesNotMakeACost) {
  std::vector<RunMeasurement> runs;
  double speed = 1;
  auto add = [&](const char* config, int rep, double ns, EventCounts e = {}) {
    runs.push_back(run(config, rep, ns * speed, std::move(e)));
    speed *= 1.001;
  };
  // The calibration's turning order: rep 0 from uninstrumented, rep 1 from collector, rep 2
  // from annotations.
  add("uninstrumented", 0, 1e9);
  add("collector", 0, 1e9 + 1e6, events(1, 0));
  add("annotations", 0, 1e9 + 1e6 + 1e5, events(1, 1000));
  add("collector", 1, 1e9 + 1e6, events(1, 0));
  add("annotations", 1, 1e9 + 1e6 + 1e5, events(1, 1000));
  add("uninstrumented", 1, 1e9);
  add("annotations", 2, 1e9 + 1e6 + 1e5, events(1, 1000));
  add("uninstrumented", 2, 1e9);
  add("collector", 2, 1e9 + 1e6, events(1, 0));
  Calibration c = computeCalibration(runs);
  // Between two uninstrumented runs the drift is followed; after the last one it is not (one
  // run's drift: as much as the cost again), and the median keeps that run out.
  EXPECT_NEAR(c.costNs(cost::kProcess), 1e6, 0.02e6);
  EXPECT_NEAR(c.costNs(cost::kAnnotation), 100, 3);  // costs slow down with the machine too
}

// The tracker's callbacks are priced first (python_events counts them and records nothing), then
// the transitions on top of them: each run's events at their price come off before the
// transitions are priced.
TEST(Calibration, PythonEventsArePricedBeforeTheTransitionsThatAddToThem) {
  auto withEvents = [](EventCounts e, std::int64_t pythonEvents) {
    e.pythonEvents = pythonEvents;
    return e;
  };
  std::vector<RunMeasurement> runs = {
      run("uninstrumented", 0, 100'000),
      run("collector", 0, 100'000, events(1, 0)),
      run("annotations", 0, 101'000, events(1, 100)),                      // 10 ns per operation
      run("python_events", 0, 111'000, withEvents(events(1, 100), 1000)),  // 10 ns per event
      run("python", 0, 121'000, withEvents(events(1, 100, 200), 1100)),    // + 11 000 - 1000 events
  };
  Calibration c = computeCalibration(runs);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kPythonEvent), 10);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kPythonTransition), (21'000 - 1000 - 1100 * 10) / 200.0);
  // The file keeps the counts.
  Calibration back = calibrationFromJson(nlohmann::json::parse(calibrationToJson(c).dump()));
  EXPECT_EQ(back.runs[4].events.pythonEvents, 1100);
}

// Rows of one repetition made with a known price per event (100 ns) and slowdown (25 % of the
// Python time): inference is mostly native (few Python ns per event), simulation mostly Python.
struct PythonRows {
  std::map<std::string, RowCounts> annotations, pythonEvents, python;
};
PythonRows pythonRows(double price, double slowdown) {
  PythonRows r;
  auto add = [&](const char* name, double time, double pythonNs, double events) {
    r.annotations[name] = {time, 0, 0};
    r.pythonEvents[name] = {time + price * events + slowdown * pythonNs, 0, 0};
    r.python[name] = {time * 1.5, pythonNs, events};
  };
  add("inference", 4e9, 1e9, 2e7);
  add("simulation", 2e9, 1.6e9, 4e6);
  add("(unannotated)", 3e9, 2e9, 1e7);
  add("tiny", 1e6, 1e6, 1e6);  // under 1 % of the time: left out, whatever it says
  r.pythonEvents["tiny"].timeNs = 1e12;
  return r;
}

// Python 3.11's profile function slows the interpreter itself, in proportion to the Python
// code that runs, besides each callback's price: rows with different mixes tell the two apart.
TEST(Calibration, TheInterpretersSlowdownIsFittedToTheRowsMixOfPythonTimeAndEvents) {
  PythonRows r = pythonRows(100, 0.25);
  EXPECT_NEAR(interpreterSlowdown(r.annotations, r.pythonEvents, r.python), 0.25, 1e-9);
  // Without a slowdown the rows say so.
  r = pythonRows(100, 0);
  EXPECT_NEAR(interpreterSlowdown(r.annotations, r.pythonEvents, r.python), 0, 1e-9);
  // One row, or rows of one mix, cannot tell a slowdown from a price: none.
  std::map<std::string, RowCounts> one = {{"a", {1e9, 0, 0}}};
  std::map<std::string, RowCounts> oneGrew = {{"a", {1.2e9, 0, 0}}};
  std::map<std::string, RowCounts> onePython = {{"a", {1e9, 5e8, 1e6}}};
  EXPECT_EQ(interpreterSlowdown(one, oneGrew, onePython), 0);
  std::map<std::string, RowCounts> same = {{"a", {1e9, 0, 0}}, {"b", {1e9, 0, 0}}};
  std::map<std::string, RowCounts> sameGrew = {{"a", {1.3e9, 0, 0}}, {"b", {1.1e9, 0, 0}}};
  std::map<std::string, RowCounts> sameMix = {{"a", {1e9, 5e8, 1e6}}, {"b", {1e9, 5e8, 1e6}}};
  EXPECT_EQ(interpreterSlowdown(same, sameGrew, sameMix), 0);
  // Noise that points the other way is no negative slowdown.
  r = pythonRows(300, -0.25);
  EXPECT_EQ(interpreterSlowdown(r.annotations, r.pythonEvents, r.python), 0);
}

// The slowdown comes off the python_events run (at the Python time of its repetition's python
// run) before the events are priced, and off the python run before the transitions are.
TEST(Calibration, TheSlowdownAndTheEventsTogetherAccountForTheWholeRun) {
  PythonRows r = pythonRows(100, 0.25);
  auto counted = [](EventCounts e, std::int64_t pythonEvents, std::int64_t pythonNs,
                    std::map<std::string, RowCounts> rows) {
    e.pythonEvents = pythonEvents;
    e.pythonNs = pythonNs;
    e.rows = std::move(rows);
    return e;
  };
  const std::int64_t callbacks = 34'000'000, pythonNs = 4'600'000'000;
  std::vector<RunMeasurement> runs = {
      run("uninstrumented", 0, 9e9),
      run("collector", 0, 9e9, events(1, 0)),
      run("annotations", 0, 9e9, counted(events(1, 0), 0, 0, r.annotations)),
      // Recorded nothing of Python: its Python time is the python run's.
      run("python_events", 0, 9e9 + 100.0 * callbacks + 0.25 * pythonNs,
          counted(events(1, 0), callbacks, 0, r.pythonEvents)),
      run("python", 0, 9e9 + 100.0 * callbacks + 0.25 * pythonNs + 1e6 * 40,
          counted(events(1, 0, 1'000'000), callbacks, pythonNs, r.python)),
  };
  Calibration c = computeCalibration(runs);
  EXPECT_NEAR(c.costNs(cost::kPythonInterpreter), 0.25, 1e-9);
  EXPECT_NEAR(c.costNs(cost::kPythonEvent), 100, 1e-6);
  EXPECT_NEAR(c.costNs(cost::kPythonTransition), 40, 1e-6);
  // The file keeps the rows, and recomputes the same costs from them.
  Calibration back = calibrationFromJson(nlohmann::json::parse(calibrationToJson(c).dump()));
  EXPECT_DOUBLE_EQ(back.runs[4].events.rows.at("simulation").pythonNs, 1.6e9);
  EXPECT_EQ(back.runs[4].events.pythonNs, pythonNs);
  EXPECT_NEAR(computeCalibration(back.runs).costNs(cost::kPythonInterpreter), 0.25, 1e-9);
  // Its variance counts the Python time.
  EventCounts one;
  one.pythonNs = pythonNs;
  EXPECT_TRUE(std::isinf(removedVarianceNs2(c, one)));  // a single repetition
}

TEST(Calibration, NegativeCostsWarnAndCountAsZeroNoisyOnesWarn) {
  std::vector<RunMeasurement> runs = {
      run("uninstrumented", 0, 1000),
      run("collector", 0, 900, events(1, 0)),
      run("annotations", 0, 1900, events(1, 10)),
      run("uninstrumented", 1, 1000),
      run("collector", 1, 1000, events(1, 0)),
      run("annotations", 1, 1010, events(1, 10)),
  };
  Calibration c = computeCalibration(runs);
  EXPECT_DOUBLE_EQ(c.find(cost::kProcess)->ns.mean, -50);
  EXPECT_DOUBLE_EQ(c.costNs(cost::kProcess), 0);  // clamped, as RL-Scope does
  // Annotation, from the uninstrumented runs (the process cost is 0): (900 / 10, 10 / 10):
  // 45.5 ± 59 ns is noise-dominated.
  EXPECT_DOUBLE_EQ(c.costNs(cost::kAnnotation), 45.5);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("process cost is negative"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("annotation cost is noisy"), std::string::npos) << c.warnings[1];
  // No configuration, no cost; runs without events are skipped.
  EXPECT_EQ(c.find(cost::kPythonTransition), nullptr);
}

TEST(Calibration, FileAndTraceRowsRoundTrip) {
  Calibration c = computeCalibration(twoRepetitions());
  c.command = "python train.py";
  Calibration back = calibrationFromJson(nlohmann::json::parse(calibrationToJson(c).dump()));
  EXPECT_EQ(back.command, c.command);
  EXPECT_EQ(back.runs.size(), c.runs.size());
  EXPECT_EQ(back.runs[4].events.apis.at("cudaMemcpy").calls, 10);
  ASSERT_EQ(back.costs.size(), c.costs.size());
  for (std::size_t i = 0; i < c.costs.size(); ++i) {
    EXPECT_EQ(back.costs[i].source, c.costs[i].source);
    EXPECT_EQ(back.costs[i].name, c.costs[i].name);
    EXPECT_DOUBLE_EQ(back.costs[i].ns.mean, c.costs[i].ns.mean);
    EXPECT_DOUBLE_EQ(back.costs[i].ns.std, c.costs[i].ns.std);
  }
  Calibration rows = calibrationFromRecords(calibrationRecords(c));
  EXPECT_DOUBLE_EQ(rows.uninstrumentedNs.mean, c.uninstrumentedNs.mean);
  EXPECT_DOUBLE_EQ(rows.uninstrumentedNs.median, c.uninstrumentedNs.median);
  EXPECT_DOUBLE_EQ(rows.uninstrumentedNs.spread, c.uninstrumentedNs.spread);
  EXPECT_DOUBLE_EQ(back.uninstrumentedNs.spread, c.uninstrumentedNs.spread);
  EXPECT_DOUBLE_EQ(rows.costNs(cost::kCupti, "cudaLaunchKernel"), 200);
  EXPECT_EQ(rows.costs.size(), c.costs.size());
}

TEST(Calibration, BadFilesGiveOneClearError) {
  testing::TempDir dir;
  auto write = [&](const char* name, const char* text) {
    auto p = dir / name;
    std::ofstream(p) << text;
    return p;
  };
  auto message = [](const std::filesystem::path& p) {
    try {
      readCalibrationFile(p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(dir / "missing.json").find("cannot read"), std::string::npos);
  EXPECT_NE(message(write("a.json", "{not json")).find("is not JSON"), std::string::npos);
  EXPECT_NE(message(write("b.json", R"({"schema": "rlscope.analysis/1"})")).find("not an rlscope"),
            std::string::npos);
  EXPECT_NE(message(write("c.json", R"({"schema": "rlscope.calibration/1", "costs": []})"))
                .find("malformed"),
            std::string::npos);
}

}  // namespace
}  // namespace rlscope::analysis
