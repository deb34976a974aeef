// Trace format v2: the SQLite schema every part of rlscope shares (docs/trace-format.md).
#pragma once

#include <span>
#include <string_view>

#include "rlscope/trace/sqlite.h"

namespace rlscope::trace {

inline constexpr int kSchemaVersion = 2;
// The oldest version readers still read: version 1 lacks rlscope_process_identity, nothing else.
inline constexpr int kOldestReadableSchemaVersion = 1;

// Table names. The upper-case ones are Nsight Systems' export tables (same columns and units for
// the subset rlscope records); the rlscope_* ones are rlscope's own.
namespace table {
inline constexpr std::string_view kStringIds = "StringIds";
inline constexpr std::string_view kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kDriver = "CUPTI_ACTIVITY_KIND_DRIVER";
inline constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
inline constexpr std::string_view kNvtx = "NVTX_EVENTS";
inline constexpr std::string_view kGpuInfo = "TARGET_INFO_GPU";
inline constexpr std::string_view kThreadNames = "ThreadNames";
inline constexpr std::string_view kMeta = "rlscope_meta";
inline constexpr std::string_view kProcesses = "rlscope_processes";
inline constexpr std::string_view kThreads = "rlscope_threads";
inline constexpr std::string_view kProcessIdentity = "rlscope_process_identity";
inline constexpr std::string_view kCpuIntervals = "rlscope_cpu_intervals";
inline constexpr std::string_view kOperations = "rlscope_operations";
inline constexpr std::string_view kPhases = "rlscope_phases";
inline constexpr std::string_view kPlainEvents = "rlscope_events";
inline constexpr std::string_view kExternalCorrelation = "rlscope_external_correlation";
inline constexpr std::string_view kCalibration = "rlscope_calibration";
}  // namespace table

// The tables that hold timed events, in the order `rlscope info` lists them.
std::span<const std::string_view> eventTables();

// Creates every table (empty) and the enum tables with their rows.
void createSchema(Database& db);
// Creates the indexes that make per-thread / per-stream time-window queries fast. Done after the
// bulk load, which is faster than maintaining them row by row.
void createIndexes(Database& db);

// Well-known rlscope_meta keys.
namespace meta {
inline constexpr std::string_view kSchemaVersion = "schema_version";
inline constexpr std::string_view kRlscopeVersion = "rlscope_version";
inline constexpr std::string_view kSourceFormat = "source_format";  // rlscope-prof | kineto | nsys
inline constexpr std::string_view kSourceFile = "source_file";
inline constexpr std::string_view kCommandLine = "command_line";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kJob = "job";  // rlscope-prof --job: the job this host's part of
inline constexpr std::string_view kStartWallNs = "start_wall_ns";  // Unix epoch ns at trace t0
inline constexpr std::string_view kStartMonotonicNs = "start_monotonic_ns";
inline constexpr std::string_view kFeatures = "features";         // JSON object: feature -> bool
inline constexpr std::string_view kGpuActivity = "gpu_activity";  // "recorded" | "unavailable: ..."
inline constexpr std::string_view kCreatedAt = "created_at";      // ISO 8601 UTC
// Python <-> native transitions the collector's Python hooks recorded (rlscope-prof runs with
// Python tracking only): calibration subtracts their cost.
inline constexpr std::string_view kPythonTransitions = "python_transitions";
// The Python tracker's callbacks in all processes (every thread, untracked calls included):
// calibration prices each (docs/calibration.md, "Python events").
inline constexpr std::string_view kPythonEvents = "python_events";
// Wall time of the profiled command, spawn to exit, in ns (rlscope-prof): the instrumented total
// that overhead correction starts from.
inline constexpr std::string_view kCommandElapsedNs = "command_elapsed_ns";
// Who made the trace's GPUs, when an importer could tell: "NVIDIA" (CUDA calls) or "AMD" (HIP
// calls, an AMD device). Absent: NVIDIA (rlscope-prof and nsys record CUDA only).
inline constexpr std::string_view kGpuVendor = "gpu_vendor";
}  // namespace meta

}  // namespace rlscope::trace
