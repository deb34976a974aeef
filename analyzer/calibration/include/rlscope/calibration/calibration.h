// Overhead calibration (docs/calibration.md): the profiler's own cost
// per recorded event, measured by running the same command in configurations that switch one
// feature on at a time. This file holds the data and the arithmetic; running the configurations
// is `rlscope calibrate` (cli/calibrate_command.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

// Where a cost comes from: the `source` column of rlscope_calibration and of the JSON file.
namespace cost {
inline constexpr const char* kProcess = "process";        // per process: collector start/end
inline constexpr const char* kAnnotation = "annotation";  // per operation (enter + exit)
inline constexpr const char* kPythonTransition = "python_transition";  // per category push or pop
// Per callback of the Python tracker (profile function or sys.monitoring), tracked call or not.
inline constexpr const char* kPythonEvent = "python_event";
// Per ns of Python time: the interpreter's own slowdown under the tracker, a fraction. Python
// 3.11's profile function makes the interpreter run every bytecode unspecialised, a cost spread
// over the code between callbacks rather than at them (docs/calibration.md, "The interpreter's
// slowdown").
inline constexpr const char* kPythonInterpreter = "python_interpreter";
inline constexpr const char* kCudaApiInterception = "cuda_api_interception";  // per API call
inline constexpr const char* kCupti = "cupti";  // per API call, by API name (`name`)
// Not a cost: the uninstrumented command's wall time, the reference of the bias.
inline constexpr const char* kUninstrumented = "uninstrumented";
}  // namespace cost

// Repeated measurements of one quantity. Correction uses the median and its uncertainty, which
// one disturbed run (another program on the machine) cannot drag along as it drags the mean.
struct Statistic {
  Statistic() = default;
  // One value, or an older calibration's mean and standard deviation: they stand in for the
  // median and the spread.
  Statistic(double meanValue, double stdValue, std::int64_t count)
      : mean(meanValue), std(stdValue), n(count), median(meanValue), spread(stdValue) {}

  double mean = 0;
  double std = 0;  // sample standard deviation; 0 with one value
  std::int64_t n = 0;
  double median = 0;
  // A robust standard deviation: 1.4826 × the median absolute deviation (equal to the standard
  // deviation for normal noise, unmoved by an outlier) from five values on; below five, the
  // standard deviation; 0 with one value.
  double spread = 0;

  // The standard error of the median, 1.2533 × spread / √n; 0 with fewer than two values.
  double uncertainty() const;
};
Statistic statisticOf(const std::vector<double>& values);

struct Cost {
  std::string source;  // one of cost::k*
  std::string name;    // the CUDA API name for cost::kCupti, else empty
  Statistic ns;        // per event
};

// What one row of a run's breakdown (an operation, or the time outside them, summed over the
// processes that have operations) recorded: what calibration fits the interpreter's slowdown to.
struct RowCounts {
  double timeNs = 0;        // own time
  double pythonNs = 0;      // of it, in Python spans
  double pythonEvents = 0;  // the tracker's callbacks in it
};

// What one run recorded, counted from its trace.
struct EventCounts {
  std::int64_t processes = 0;
  std::int64_t operations = 0;
  std::int64_t transitions = 0;   // Python <-> native: category pushes and pops
  std::int64_t pythonEvents = 0;  // the Python tracker's callbacks
  std::int64_t pythonNs = 0;      // the Python spans' time, every thread (kPythonInterpreter)
  std::map<std::string, RowCounts> rows;  // by operation name (rlscope calibrate fills them)
  struct Api {
    std::int64_t calls = 0;
    double totalNs = 0;
  };
  std::map<std::string, Api> apis;  // CUDA runtime and driver calls by name
  std::int64_t apiCalls() const;
};
EventCounts countEvents(trace::TraceReader& reader);

// The configurations a calibration runs, in this order within each repetition. Each switches
// on one more feature than the one it is compared with (`baseline`).
struct CalibrationConfig {
  const char* name;
  const char* baseline;  // the configuration it adds one feature to; "" for none
  bool profiled;         // false: the plain command, no rlscope-prof at all
  bool nvtx, python, cudaApi, gpuActivity;
  bool pythonTransitions;  // with python: record the transitions too, not only count the events
  bool needsGpu;           // skipped when no GPU is usable
};
const std::vector<CalibrationConfig>& calibrationConfigs();

struct RunMeasurement {
  std::string config;
  int repetition = 0;    // from 0
  double elapsedNs = 0;  // the command's wall time, spawn to exit
  EventCounts events;    // empty for the uninstrumented configuration
};

struct Calibration {
  std::string command;
  int repetitions = 0;
  Statistic uninstrumentedNs;  // wall time of the plain command
  std::vector<Cost> costs;
  std::vector<std::string> warnings;  // negative or noisy costs, missing configurations
  std::vector<RunMeasurement> runs;   // what the costs were computed from (JSON file only)

  const Cost* find(std::string_view source, std::string_view name = {}) const;
  // The cost per event used for correction: the median over repetitions, clamped at 0 (a
  // negative calibration is noise, RL-Scope's rule); 0 when not calibrated.
  double costNs(std::string_view source, std::string_view name = {}) const;
};

// The costs from the runs (in the order they ran): per run, a configuration's wall time less
// the uninstrumented time at its place (interpolated between the uninstrumented runs around it,
// so that a drifting machine does not make a cost) and less the costs below it (at their clamped
// prices, times the run's own events), ÷ its events (CUPTI: Δ mean API duration per name against
// cuda_api); their statistics over repetitions. The costs telescope as correction applies them. The
// interpreter's slowdown is fitted per repetition to how much each operation of the python_events
// run grew against the annotations run, given its Python time and events (interpreterSlowdown).
Calibration computeCalibration(const std::vector<RunMeasurement>& runs);

// The slowdown of Python code under the tracker as a fraction of its measured Python time, from
// one repetition's rows: each row's growth (python_events − annotations) is modelled as events ×
// a price + Python time × the slowdown, with the whole's growth shared by the two terms. Rows
// under 1 % of the time are left out, the others weigh by their relative error. 0 when the rows
// cannot tell the two apart (one row, or every row with the same mix); at most what leaves the
// events a price of 0.
double interpreterSlowdown(const std::map<std::string, RowCounts>& annotations,
                           const std::map<std::string, RowCounts>& pythonEvents,
                           const std::map<std::string, RowCounts>& python);

// The variance (ns²) of the overhead correction removes from a run with `events`: per calibrated
// source, (its events × its cost's standard error)², CUPTI per API name. Infinity when a cost that
// applies to some event comes from a single repetition.
double removedVarianceNs2(const Calibration& c, const EventCounts& events);

// How tight the calibration is for a run with `events` (one run's event counts): the standard
// error of the uninstrumented time and of the overhead it would remove, combined, relative to the
// uninstrumented time, in %. More repetitions shrink it; `rlscope calibrate --budget` repeats
// until it is small. Infinity when it cannot be told (fewer than two repetitions).
double calibrationUncertaintyPct(const Calibration& c, const EventCounts& events);

// The calibration file (docs/calibration.md): schema "rlscope.calibration/2" (/1 is read too).
nlohmann::json calibrationToJson(const Calibration& c);
Calibration calibrationFromJson(const nlohmann::json& j);  // throws std::runtime_error
Calibration readCalibrationFile(const std::filesystem::path& path);
// As rows of a trace's rlscope_calibration table, and back.
std::vector<trace::CalibrationRecord> calibrationRecords(const Calibration& c);
Calibration calibrationFromRecords(const std::vector<trace::CalibrationRecord>& rows);

}  // namespace rlscope::analysis
