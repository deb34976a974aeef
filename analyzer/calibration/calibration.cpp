#include "rlscope/calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "rlscope/trace/median.h"
#include "rlscope/trace/schema.h"

namespace rlscope::analysis {

namespace {

constexpr const char* kSchema = "rlscope.calibration/2";
constexpr const char* kSchemaV1 = "rlscope.calibration/1";  // mean and std only

}  // namespace

Statistic statisticOf(const std::vector<double>& values) {
  Statistic s;
  s.n = static_cast<std::int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.median = trace::median(values);
  if (values.size() > 1) {
    double squares = 0;
    std::vector<double> deviations;
    deviations.reserve(values.size());
    for (double v : values) {
      squares += (v - s.mean) * (v - s.mean);
      deviations.push_back(std::abs(v - s.median));
    }
    s.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
    // Normal noise: MAD = 0.6745 σ. Below five values the MAD says too little (of three, one
    // deviation is the median's own 0 and the MAD is the smaller of the other two): the standard
    // deviation stands in, larger rather than falsely tight.
    s.spread = values.size() < 5 ? s.std : 1.4826 * trace::median(std::move(deviations));
  }
  return s;
}

double Statistic::uncertainty() const {
  // The median's standard error for normal noise is √(π/2) ≈ 1.2533 times the mean's.
  return n > 1 ? 1.2533 * spread / std::sqrt(static_cast<double>(n)) : 0;
}

std::int64_t EventCounts::apiCalls() const {
  std::int64_t n = 0;
  for (const auto& [name, api] : apis) n += api.calls;
  return n;
}

EventCounts countEvents(trace::TraceReader& reader) {
  EventCounts c;
  c.processes = reader.rowCount(trace::table::kProcesses);
  c.operations = reader.rowCount(trace::table::kOperations);
  if (auto t = reader.metaValue(trace::meta::kPythonTransitions)) c.transitions = std::stoll(*t);
  if (auto e = reader.metaValue(trace::meta::kPythonEvents)) c.pythonEvents = std::stoll(*e);
  trace::EventFilter all;
  all.storageOrder = true;
  for (auto kind : {trace::ApiKind::kRuntime, trace::ApiKind::kDriver})
    reader.forEachApiCall(kind, all, [&](const trace::ApiCallRecord& r) {
      auto& api = c.apis[std::string(reader.string(r.nameId))];
      ++api.calls;
      api.totalNs += static_cast<double>(r.end - r.start);
    });
  return c;
}

const std::vector<CalibrationConfig>& calibrationConfigs() {
  // name, baseline, profiled, nvtx, python, cudaApi, gpuActivity, pythonTransitions, needsGpu
  static const std::vector<CalibrationConfig> configs = {
      {"uninstrumented", "", false, false, false, false, false, false, false},
      {"collector", "uninstrumented", true, false, false, false, false, false, false},
      {"annotations", "collector", true, true, false, false, false, false, false},
      {"python_events", "annotations", true, true, true, false, false, false, false},
      {"python", "python_events", true, true, true, false, false, true, false},
      {"cuda_api", "annotations", true, true, false, true, false, false, true},
      {"gpu_activity", "cuda_api", true, true, false, true, true, false, true},
  };
  return configs;
}

const Cost* Calibration::find(std::string_view source, std::string_view name) const {
  for (const auto& c : costs)
    if (c.source == source && c.name == name) return &c;
  return nullptr;
}

double Calibration::costNs(std::string_view source, std::string_view name) const {
  const Cost* c = find(source, name);
  return c && c->ns.median > 0 ? c->ns.median : 0;
}

double removedVarianceNs2(const Calibration& c, const EventCounts& events) {
  double variance = 0;
  auto add = [&](const char* source, const std::string& name, std::int64_t n) {
    if (const Cost* cost = c.find(source, name); cost && n > 0) {
      if (cost->ns.n < 2) variance = std::numeric_limits<double>::infinity();
      double u = static_cast<double>(n) * cost->ns.uncertainty();
      variance += u * u;
    }
  };
  add(cost::kProcess, "", events.processes);
  add(cost::kAnnotation, "", events.operations);
  add(cost::kPythonEvent, "", events.pythonEvents);
  add(cost::kPythonInterpreter, "", events.pythonNs);
  add(cost::kPythonTransition, "", events.transitions);
  add(cost::kCudaApiInterception, "", events.apiCalls());
  for (const auto& [name, api] : events.apis) add(cost::kCupti, name, api.calls);
  return variance;
}

double calibrationUncertaintyPct(const Calibration& c, const EventCounts& events) {
  const Statistic& t0 = c.uninstrumentedNs;
  if (t0.n < 2 || t0.median <= 0) return std::numeric_limits<double>::infinity();
  double variance = t0.uncertainty() * t0.uncertainty() + removedVarianceNs2(c, events);
  return 100.0 * std::sqrt(variance) / t0.median;
}

namespace {

// The runs of one configuration, by repetition.
std::map<int, const RunMeasurement*> runsOf(const std::vector<RunMeasurement>& runs,
                                            std::string_view config) {
  std::map<int, const RunMeasurement*> out;
  for (const auto& r : runs)
    if (r.config == config) out[r.repetition] = &r;
  return out;
}

using EventsOf = std::int64_t (*)(const EventCounts&);
std::int64_t processesOf(const EventCounts& e) {
  return e.processes;
}
std::int64_t operationsOf(const EventCounts& e) {
  return e.operations;
}
std::int64_t transitionsOf(const EventCounts& e) {
  return e.transitions;
}
std::int64_t pythonEventsOf(const EventCounts& e) {
  return e.pythonEvents;
}
std::int64_t pythonNsOf(const EventCounts& e) {
  return e.pythonNs;
}
std::int64_t apiCallsOf(const EventCounts& e) {
  return e.apiCalls();
}

// A cost already priced, as correction will use it (clamped at 0), and the events it is per.
struct Priced {
  double ns = 0;
  EventsOf events = nullptr;
};

// The uninstrumented time at each run's place in the calibration (runs are kept in the order
// they ran): interpolated between the nearest uninstrumented runs before and after it, the
// nearest one where there is only one side, NaN without any. A machine whose speed drifts during
// the calibration (one 2-core VM slowed by 16 % over the 10 minutes of a calibration) then
// drifts the reference with the run it is compared with, and where it does not drift the
// reference is the mean of two runs rather than one.
std::vector<double> uninstrumentedAt(const std::vector<RunMeasurement>& runs) {
  std::vector<std::size_t> plain;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].config == "uninstrumented") plain.push_back(i);
  std::vector<double> at(runs.size(), std::numeric_limits<double>::quiet_NaN());
  if (plain.empty()) return at;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto next = std::lower_bound(plain.begin(), plain.end(), i);
    if (next == plain.end()) {
      at[i] = runs[plain.back()].elapsedNs;
    } else if (*next == i || next == plain.begin()) {
      at[i] = runs[*next].elapsedNs;
    } else {
      std::size_t before = *(next - 1), after = *next;
      double w = static_cast<double>(i - before) / static_cast<double>(after - before);
      at[i] = (1 - w) * runs[before].elapsedNs + w * runs[after].elapsedNs;
    }
  }
  return at;
}

// Per run of the configuration that saw events: its wall time less the uninstrumented time at
// its place (uninstrumentedAt) and less what the costs priced before it cost this run (its own
// counts of their events, at their clamped prices), ÷ its events. The costs telescope from the
// uninstrumented run, as correction applies them: when noise makes a lower step negative (the
// collector run faster than the plain one) and correction takes it as 0, the step above is
// measured from where correction stands, not from the fast run, so the noise is not removed
// twice.
std::vector<double> perEventDeltas(const std::vector<RunMeasurement>& runs, std::string_view config,
                                   EventsOf events, const std::vector<Priced>& below) {
  std::vector<double> deltas;
  std::vector<double> reference = uninstrumentedAt(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunMeasurement& run = runs[i];
    std::int64_t n = events(run.events);
    if (run.config != config || std::isnan(reference[i]) || n <= 0) continue;
    double delta = run.elapsedNs - reference[i];
    for (const auto& p : below) delta -= static_cast<double>(p.events(run.events)) * p.ns;
    deltas.push_back(delta / static_cast<double>(n));
  }
  return deltas;
}

// CUPTI's cost per API name: how much longer the mean call of that API is with GPU activity
// recording on than off (both with the API calls recorded, so their interception cancels).
std::map<std::string, std::vector<double>> cuptiDeltas(const std::vector<RunMeasurement>& runs) {
  std::map<std::string, std::vector<double>> deltas;
  auto with = runsOf(runs, "gpu_activity");
  auto without = runsOf(runs, "cuda_api");
  for (const auto& [rep, run] : with) {
    auto base = without.find(rep);
    if (base == without.end()) continue;
    for (const auto& [name, api] : run->events.apis) {
      auto b = base->second->events.apis.find(name);
      if (api.calls == 0 || b == base->second->events.apis.end() || b->second.calls == 0) continue;
      deltas[name].push_back(api.totalNs / static_cast<double>(api.calls) -
                             b->second.totalNs / static_cast<double>(b->second.calls));
    }
  }
  return deltas;
}

void addCost(Calibration& c, const char* source, const std::string& name,
             const std::vector<double>& deltas) {
  if (deltas.empty()) return;
  Cost cost{source, name, statisticOf(deltas)};
  std::string what = std::string(source) + (name.empty() ? "" : " " + name);
  // The interpreter's slowdown is a fraction of Python time, the other costs ns per event.
  bool fraction = std::string_view(source) == cost::kPythonInterpreter;
  double scale = fraction ? 100 : 1;
  const char* unit = fraction ? "%" : "ns";
  char line[256];
  if (cost.ns.median < 0) {
    std::snprintf(line, sizeof line,
                  "the %s cost is negative (median %.1f %s ± %.1f over %lld runs): run-to-run "
                  "noise is larger than the cost; it is taken as 0 (more --repetitions, or a "
                  "longer run)",
                  what.c_str(), scale * cost.ns.median, unit, scale * cost.ns.uncertainty(),
                  static_cast<long long>(cost.ns.n));
    c.warnings.emplace_back(line);
  } else if (cost.ns.n > 1 && cost.ns.uncertainty() > 0.5 * cost.ns.median) {
    std::snprintf(line, sizeof line,
                  "the %s cost is noisy (median %.1f %s ± %.1f over %lld runs): more "
                  "--repetitions, or a longer run, would make it more trustworthy",
                  what.c_str(), scale * cost.ns.median, unit, scale * cost.ns.uncertainty(),
                  static_cast<long long>(cost.ns.n));
    c.warnings.emplace_back(line);
  }
  c.costs.push_back(std::move(cost));
}

// The python_events configuration records no Python spans; its Python time is that of its
// repetition's python run, which ran the same code.
std::vector<RunMeasurement> withPythonTime(std::vector<RunMeasurement> runs) {
  auto python = runsOf(runs, "python");
  for (auto& r : runs)
    if (auto p = python.find(r.repetition); r.config == "python_events" && p != python.end())
      r.events.pythonNs = p->second->events.pythonNs;
  return runs;
}

// Per repetition with the three Python-related runs and their rows: interpreterSlowdown.
std::vector<double> slowdowns(const std::vector<RunMeasurement>& runs) {
  std::vector<double> out;
  auto annotations = runsOf(runs, "annotations"), python = runsOf(runs, "python");
  for (const auto& [rep, events] : runsOf(runs, "python_events")) {
    auto a = annotations.find(rep);
    auto p = python.find(rep);
    if (a == annotations.end() || p == python.end() || events->events.rows.empty() ||
        a->second->events.rows.empty() || p->second->events.rows.empty())
      continue;
    out.push_back(
        interpreterSlowdown(a->second->events.rows, events->events.rows, p->second->events.rows));
  }
  return out;
}

}  // namespace

double interpreterSlowdown(const std::map<std::string, RowCounts>& annotations,
                           const std::map<std::string, RowCounts>& pythonEvents,
                           const std::map<std::string, RowCounts>& python) {
  struct Row {
    double growth, events, python, weight;
  };
  double total = 0;
  for (const auto& [name, a] : annotations) total += a.timeNs;
  std::vector<Row> rows;
  double growth = 0, events = 0, pythonNs = 0;
  for (const auto& [name, a] : annotations) {
    auto e = pythonEvents.find(name);
    auto p = python.find(name);
    if (e == pythonEvents.end() || p == python.end() || a.timeNs <= 0 || a.timeNs < 0.01 * total)
      continue;
    // Weighed by 1/time²: each row's relative error counts alike, as the breakdown is read.
    rows.push_back({e->second.timeNs - a.timeNs, p->second.pythonEvents, p->second.pythonNs,
                    1 / (a.timeNs * a.timeNs)});
    growth += rows.back().growth;
    events += rows.back().events;
    pythonNs += rows.back().python;
  }
  if (rows.size() < 2 || events <= 0 || pythonNs <= 0) return 0;
  // With the rows' growth G = price × N + s × P, a row's is G × n + s × q, where n = its share of
  // the events and q = its Python time less that share of P: least squares in s.
  double num = 0, den = 0, scale = 0;
  for (const auto& r : rows) {
    double n = r.events / events, q = r.python - pythonNs * n;
    num += r.weight * (r.growth - growth * n) * q;
    den += r.weight * q * q;
    scale += r.weight * r.python * r.python;
  }
  // Rows whose Python time follows their events cannot tell the two terms apart.
  if (den <= 1e-6 * scale) return 0;
  return std::clamp(num / den, 0.0, std::max(0.0, growth / pythonNs));
}

Calibration computeCalibration(const std::vector<RunMeasurement>& runs) {
  Calibration c;
  c.runs = runs;
  std::vector<double> plain;
  for (const auto& [rep, run] : runsOf(runs, "uninstrumented")) plain.push_back(run->elapsedNs);
  c.uninstrumentedNs = statisticOf(plain);
  for (const auto& r : runs) c.repetitions = std::max(c.repetitions, r.repetition + 1);

  // Each configuration adds one feature to its baseline (calibrationConfigs); its cost is what
  // the run paid beyond the uninstrumented one and the features below it.
  addCost(c, cost::kProcess, "", perEventDeltas(runs, "collector", processesOf, {}));
  Priced process{c.costNs(cost::kProcess), processesOf};
  addCost(c, cost::kAnnotation, "", perEventDeltas(runs, "annotations", operationsOf, {process}));
  Priced annotation{c.costNs(cost::kAnnotation), operationsOf};
  // The tracker's callbacks first (python_events: counted, nothing recorded), then what recording
  // the transitions adds. A calibration from before python_events prices transitions alone. The
  // interpreter's slowdown, fitted to the rows, is taken off before the events are priced, so the
  // two together account for the whole run's growth.
  auto timed = withPythonTime(runs);
  addCost(c, cost::kPythonInterpreter, "", slowdowns(timed));
  Priced interpreter{c.costNs(cost::kPythonInterpreter), pythonNsOf};
  addCost(
      c, cost::kPythonEvent, "",
      perEventDeltas(timed, "python_events", pythonEventsOf, {process, annotation, interpreter}));
  Priced event{c.costNs(cost::kPythonEvent), pythonEventsOf};
  addCost(
      c, cost::kPythonTransition, "",
      perEventDeltas(timed, "python", transitionsOf, {process, annotation, event, interpreter}));
  addCost(c, cost::kCudaApiInterception, "",
          perEventDeltas(runs, "cuda_api", apiCallsOf, {process, annotation}));
  for (const auto& [name, deltas] : cuptiDeltas(runs)) addCost(c, cost::kCupti, name, deltas);
  return c;
}

namespace {

nlohmann::json statisticJson(const Statistic& s) {
  return {{"median_ns", s.median}, {"uncertainty_ns", s.uncertainty()},
          {"spread_ns", s.spread}, {"mean_ns", s.mean},
          {"std_ns", s.std},       {"n", s.n}};
}

// Version 1 files have the mean and standard deviation only: they stand in for the median and
// the spread.
Statistic statisticFrom(const nlohmann::json& j) {
  Statistic s{j.at("mean_ns").get<double>(), j.value("std_ns", 0.0), j.value("n", std::int64_t{0})};
  s.median = j.value("median_ns", s.mean);
  s.spread = j.value("spread_ns", s.std);
  return s;
}

}  // namespace

nlohmann::json calibrationToJson(const Calibration& c) {
  nlohmann::json costs = nlohmann::json::array();
  for (const auto& cost : c.costs) {
    auto j = statisticJson(cost.ns);
    j["source"] = cost.source;
    if (!cost.name.empty()) j["name"] = cost.name;
    costs.push_back(std::move(j));
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : c.runs) {
    nlohmann::json apis = nlohmann::json::object(), rows = nlohmann::json::object();
    for (const auto& [name, api] : r.events.apis)
      apis[name] = {{"calls", api.calls}, {"total_ns", api.totalNs}};
    for (const auto& [name, row] : r.events.rows)
      rows[name] = {{"time_ns", row.timeNs},
                    {"python_ns", row.pythonNs},
                    {"python_events", row.pythonEvents}};
    runs.push_back({{"config", r.config},
                    {"repetition", r.repetition},
                    {"elapsed_ns", r.elapsedNs},
                    {"processes", r.events.processes},
                    {"operations", r.events.operations},
                    {"transitions", r.events.transitions},
                    {"python_events", r.events.pythonEvents},
                    {"python_ns", r.events.pythonNs},
                    {"apis", apis},
                    {"rows", rows}});
  }
  return {{"schema", kSchema},
          {"command", c.command},
          {"repetitions", c.repetitions},
          {"uninstrumented", statisticJson(c.uninstrumentedNs)},
          {"costs", costs},
          {"warnings", c.warnings},
          {"runs", runs}};
}

Calibration calibrationFromJson(const nlohmann::json& j) {
  if (!j.is_object() || (j.value("schema", "") != kSchema && j.value("schema", "") != kSchemaV1))
    throw std::runtime_error(std::string("not an rlscope calibration (expected schema \"") +
                             kSchema + "\")");
  try {
    Calibration c;
    c.command = j.value("command", "");
    c.repetitions = j.value("repetitions", 0);
    c.uninstrumentedNs = statisticFrom(j.at("uninstrumented"));
    for (const auto& cost : j.at("costs"))
      c.costs.push_back(
          {cost.at("source").get<std::string>(), cost.value("name", ""), statisticFrom(cost)});
    if (j.contains("warnings"))
      for (const auto& w : j.at("warnings")) c.warnings.push_back(w.get<std::string>());
    const nlohmann::json noRuns = nlohmann::json::array();
    for (const auto& r : j.contains("runs") ? j.at("runs") : noRuns) {
      RunMeasurement m;
      m.config = r.at("config").get<std::string>();
      m.repetition = r.at("repetition").get<int>();
      m.elapsedNs = r.at("elapsed_ns").get<double>();
      m.events.processes = r.value("processes", std::int64_t{0});
      m.events.operations = r.value("operations", std::int64_t{0});
      m.events.transitions = r.value("transitions", std::int64_t{0});
      m.events.pythonEvents = r.value("python_events", std::int64_t{0});
      m.events.pythonNs = r.value("python_ns", std::int64_t{0});
      if (r.contains("rows"))
        for (const auto& [name, row] : r.at("rows").items())
          m.events.rows[name] = {row.value("time_ns", 0.0), row.value("python_ns", 0.0),
                                 row.value("python_events", 0.0)};
      if (r.contains("apis"))  // items() of a temporary would dangle
        for (const auto& [name, api] : r.at("apis").items())
          m.events.apis[name] = {api.at("calls").get<std::int64_t>(),
                                 api.at("total_ns").get<double>()};
      c.runs.push_back(std::move(m));
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed calibration: ") + e.what());
  }
}

Calibration readCalibrationFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read calibration " + path.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path.string() + " is not JSON (expected an rlscope calibration)");
  }
  try {
    return calibrationFromJson(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
}

std::vector<trace::CalibrationRecord> calibrationRecords(const Calibration& c) {
  std::vector<trace::CalibrationRecord> rows;
  auto row = [](const std::string& source, const std::string& name, const Statistic& s) {
    return trace::CalibrationRecord{source, name, s.mean, s.std, s.n, s.median, s.spread};
  };
  rows.push_back(row(cost::kUninstrumented, "", c.uninstrumentedNs));
  for (const auto& cost : c.costs) rows.push_back(row(cost.source, cost.name, cost.ns));
  return rows;
}

Calibration calibrationFromRecords(const std::vector<trace::CalibrationRecord>& rows) {
  Calibration c;
  for (const auto& r : rows) {
    Statistic s{r.meanNs, r.stdNs, r.count};
    s.median = r.medianNs.value_or(r.meanNs);
    s.spread = r.spreadNs.value_or(r.stdNs);
    if (r.source == cost::kUninstrumented) {
      c.uninstrumentedNs = s;
      c.repetitions = static_cast<int>(r.count);
    } else {
      c.costs.push_back({r.source, r.name, s});
    }
  }
  return c;
}

}  // namespace rlscope::analysis
