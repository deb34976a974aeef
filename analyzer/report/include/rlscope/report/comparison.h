// The regression gate of `rlscope report --baseline OLD NEW --fail-above PCT`: two analysis
// documents compared per operation, per category set and in total.
//
// Rule (docs/report.md):
// - Keys. An operation is (name, phase), summed over processes: pids differ between runs. A
//   name ending in '#' and digits is folded to '#*' ("ProfilerStep#1010" -> "ProfilerStep#*"):
//   PyTorch's profiler numbers every step, so two runs would otherwise share no step row. A
//   category set is its categories joined with "+" ("Backend+GPU kernel"), summed over every
//   operation and process. Sets, not single categories: sets are disjoint slices of time, so
//   their changes add up to the total's change and nothing is counted twice.
// - Total: "total_us" (the run's wall time) when both documents have it, else the sum of every
//   operation's time.
// - A row regresses when it is in both documents, current exceeds baseline by more than
//   failAbovePct percent, and by more than the noise floor in µs. A row only in one document
//   is listed as added or removed and never regresses by itself (its time still moves the
//   total and the sets).
// - Noise floor: minTimeUs when given (>= 0); by default the larger of 100 µs and 1 % of the
//   baseline total, so a tiny operation that doubles from 20 µs to 40 µs cannot fail a build.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rlscope::report {

// Passing this (any negative value) as minTimeUs picks the default noise floor.
inline constexpr double kDefaultNoiseFloor = -1;
inline constexpr double kNoiseFloorMinUs = 100;
inline constexpr double kNoiseFloorTotalFraction = 0.01;

enum class RowKind { Total, Operation, CategorySet };
enum class Presence { Both, Added, Removed };  // Added: only in current; Removed: only in baseline

struct ComparisonRow {
  RowKind kind = RowKind::Operation;
  std::string name;                      // operation name, set label, or "total"
  std::string phase;                     // operations only; may be empty
  double baselineUs = 0, currentUs = 0;  // 0 on the side the row is missing from
  Presence presence = Presence::Both;
  bool regression = false;

  double changeUs() const { return currentUs - baselineUs; }
  // Relative change; none when the baseline is 0 (added rows, empty baselines).
  std::optional<double> changePct() const;
  // "inference [training]" for operations, the name otherwise.
  std::string label() const;
};

struct Comparison {
  std::string baselineTrace, currentTrace;  // "trace" of each document; may be empty
  double failAbovePct = 0;
  double noiseFloorUs = 0;       // the floor applied, after the default was resolved
  bool totalIsWallTime = false;  // total_us of both documents, else the sum of operations
  ComparisonRow total;
  std::vector<ComparisonRow> operations;    // largest |change| first
  std::vector<ComparisonRow> categorySets;  // largest |change| first
  std::vector<std::string> warnings;        // e.g. a corrected document against an uncorrected one

  bool regressed() const;
};

// Throws std::runtime_error for a document that is not rlscope.analysis/1 and
// std::invalid_argument for a negative or non-finite failAbovePct.
Comparison compare(const nlohmann::json& baseline, const nlohmann::json& current,
                   double failAbovePct, double minTimeUs = kDefaultNoiseFloor);

// {"schema": "rlscope.comparison/1", "regressed", "fail_above_pct", "noise_floor_us", "baseline",
// "current", "total", "operations", "category_sets", "warnings"}; a row is {"kind", "name",
// "phase" (operations), "baseline_us", "current_us", "change_us", "change_pct" (null without a
// baseline), "status" ("changed" | "added" | "removed"), "regression"}.
nlohmann::json comparisonToJson(const Comparison& comparison);

// The name an operation is compared under: "ProfilerStep#1010" -> "ProfilerStep#*", any other
// name unchanged.
std::string comparisonName(const std::string& name);

}  // namespace rlscope::report
