#include "rlscope/report/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

namespace {

using Key = std::pair<std::string, std::string>;  // (name, phase); phase empty for sets

std::map<Key, double> operationTimes(const Analysis& a) {
  std::map<Key, double> out;
  for (const auto& op : a.operations) out[{comparisonName(op.name), op.phase}] += op.timeUs;
  return out;
}

std::map<Key, double> setTimes(const Analysis& a) {
  std::map<Key, double> out;
  for (const auto& op : a.operations)
    for (const auto& c : op.categories) out[{setLabel(c.set), ""}] += c.timeUs;
  return out;
}

double operationsTotal(const Analysis& a) {
  double total = 0;
  for (const auto& op : a.operations) total += op.timeUs;
  return total;
}

bool isRegression(const ComparisonRow& row, double failAbovePct, double floorUs) {
  if (row.presence != Presence::Both) return false;
  auto pct = row.changePct();
  return pct && *pct > failAbovePct && row.changeUs() > floorUs;
}

// The union of both sides' keys, each as one row.
std::vector<ComparisonRow> rowsOf(RowKind kind, const std::map<Key, double>& baseline,
                                  const std::map<Key, double>& current) {
  std::map<Key, ComparisonRow> rows;
  for (const auto& [key, us] : baseline) {
    ComparisonRow& r = rows[key];
    r.baselineUs = us;
    r.presence = Presence::Removed;
  }
  for (const auto& [key, us] : current) {
    auto [it, inserted] = rows.try_emplace(key);
    it->second.currentUs = us;
    it->second.presence = inserted ? Presence::Added : Presence::Both;
  }
  std::vector<ComparisonRow> out;
  for (auto& [key, r] : rows) {
    r.kind = kind;
    r.name = key.first;
    r.phase = key.second;
    out.push_back(std::move(r));
  }
  return out;
}

void sortByChange(std::vector<ComparisonRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.changeUs()) > std::fabs(b.changeUs());
  });
}

const char* presenceName(Presence p) {
  switch (p) {
    case Presence::Both:
      return "changed";
    case Presence::Added:
      return "added";
    case Presence::Removed:
      return "removed";
  }
  return "changed";
}

const char* kindName(RowKind k) {
  switch (k) {
    case RowKind::Total:
      return "total";
    case RowKind::Operation:
      return "operation";
    case RowKind::CategorySet:
      return "category_set";
  }
  return "operation";
}

nlohmann::json rowJson(const ComparisonRow& r) {
  nlohmann::json out = {{"kind", kindName(r.kind)}, {"name", r.name}};
  if (r.kind == RowKind::Operation) out["phase"] = r.phase;
  auto pct = r.changePct();
  out["baseline_us"] = r.baselineUs;
  out["current_us"] = r.currentUs;
  out["change_us"] = r.changeUs();
  out["change_pct"] = pct ? nlohmann::json(*pct) : nlohmann::json(nullptr);
  out["status"] = presenceName(r.presence);
  out["regression"] = r.regression;
  return out;
}

}  // namespace

std::string comparisonName(const std::string& name) {
  auto hash = name.rfind('#');
  if (hash == std::string::npos || hash + 1 == name.size()) return name;
  bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(hash) + 1, name.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, hash + 1) + "*" : name;
}

std::optional<double> ComparisonRow::changePct() const {
  if (!(baselineUs > 0)) return std::nullopt;
  return 100.0 * (currentUs - baselineUs) / baselineUs;
}

std::string ComparisonRow::label() const {
  return kind == RowKind::Operation && !phase.empty() ? name + " [" + phase + "]" : name;
}

bool Comparison::regressed() const {
  auto any = [](const std::vector<ComparisonRow>& rows) {
    return std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.regression; });
  };
  return total.regression || any(operations) || any(categorySets);
}

Comparison compare(const nlohmann::json& baselineDocument, const nlohmann::json& currentDocument,
                   double failAbovePct, double minTimeUs) {
  if (!std::isfinite(failAbovePct) || failAbovePct < 0)
    throw std::invalid_argument("--fail-above must be a percentage of 0 or more");
  Analysis baseline = parseAnalysis(baselineDocument);
  Analysis current = parseAnalysis(currentDocument);

  Comparison c;
  c.baselineTrace = baseline.trace;
  c.currentTrace = current.trace;
  c.failAbovePct = failAbovePct;
  c.totalIsWallTime = baseline.totalUs && current.totalUs;
  c.total.kind = RowKind::Total;
  c.total.name = "total";
  c.total.baselineUs = c.totalIsWallTime ? *baseline.totalUs : operationsTotal(baseline);
  c.total.currentUs = c.totalIsWallTime ? *current.totalUs : operationsTotal(current);
  c.noiseFloorUs = minTimeUs >= 0
                       ? minTimeUs
                       : std::max(kNoiseFloorMinUs, kNoiseFloorTotalFraction * c.total.baselineUs);

  c.operations = rowsOf(RowKind::Operation, operationTimes(baseline), operationTimes(current));
  c.categorySets = rowsOf(RowKind::CategorySet, setTimes(baseline), setTimes(current));
  c.total.regression = isRegression(c.total, failAbovePct, c.noiseFloorUs);
  for (auto* rows : {&c.operations, &c.categorySets}) {
    for (auto& r : *rows) r.regression = isRegression(r, failAbovePct, c.noiseFloorUs);
    sortByChange(*rows);
  }

  if (baseline.corrected != current.corrected)
    c.warnings.push_back(std::string("the baseline is ") +
                         (baseline.corrected ? "overhead corrected" : "uncorrected") +
                         " and the current analysis is " +
                         (current.corrected ? "overhead corrected" : "uncorrected") +
                         ": their times differ by the profiler's overhead");
  if (!c.totalIsWallTime && (baseline.totalUs || current.totalUs))
    c.warnings.push_back(
        "only one document has the run's wall time (total_us): the total compares the sums of "
        "operation times");
  return c;
}

nlohmann::json comparisonToJson(const Comparison& c) {
  nlohmann::json operations = nlohmann::json::array(), sets = nlohmann::json::array();
  for (const auto& r : c.operations) operations.push_back(rowJson(r));
  for (const auto& r : c.categorySets) sets.push_back(rowJson(r));
  return {{"schema", "rlscope.comparison/1"},
          {"regressed", c.regressed()},
          {"fail_above_pct", c.failAbovePct},
          {"noise_floor_us", c.noiseFloorUs},
          {"baseline", c.baselineTrace},
          {"current", c.currentTrace},
          {"total_is_wall_time", c.totalIsWallTime},
          {"total", rowJson(c.total)},
          {"operations", operations},
          {"category_sets", sets},
          {"warnings", c.warnings}};
}

}  // namespace rlscope::report
