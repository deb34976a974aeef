// GPU metrics of a trace, after Holistic Trace Analysis (docs/gpu-metrics.md): the kernel
// breakdown (time per kernel name and per class), the GPU idle time breakdown (host wait, kernel
// wait, other, per stream) and kernel launch statistics (launch delay, short kernels). Computed per
// process and for the whole trace, from compact per-activity rows: the trace's records are
// streamed, never kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/reader.h"

namespace rlscope::analysis {

// HTA's kernel types: NCCL kernels communicate, copies and sets move memory, the rest computes.
enum class KernelClass { kCompute, kMemory, kCommunication };
std::string_view kernelClassName(KernelClass c);
// The class of a kernel (a CUPTI_ACTIVITY_KIND_KERNEL row) by its name: communication for NCCL
// kernels, compute otherwise (memcpy and memset rows are memory by their table, not their name).
KernelClass classifyKernel(std::string_view name);
// The pseudo-kernel name nsys gives a memcpy of this ENUM_CUDA_MEMCPY_OPER kind, e.g.
// "[CUDA memcpy HtoD]"; "[CUDA memcpy]" for a kind without its own name.
std::string_view memcpyName(std::int64_t copyKind);
inline constexpr std::string_view kMemsetName = "[CUDA memset]";
inline constexpr std::string_view kUnnamedKernel = "(unnamed kernel)";

// HTA's consecutive_kernel_delay default: 30, compared with gaps in microseconds.
inline constexpr trace::TimeNs kDefaultKernelWaitThreshold = 30'000;

struct GpuMetricsOptions {
  // A gap shorter than this between two activities of one stream, not explained by a late launch,
  // is "kernel wait" (launch overhead). HTA's consecutive_kernel_delay (30 µs by default).
  trace::TimeNs kernelWaitThreshold = kDefaultKernelWaitThreshold;
  // Above this many activities, a process's are joined to their launches and grouped by stream
  // in two halves at once (the same figures as one pass).
  std::size_t joinInHalvesAbove = 500'000;
};

// Durations of one kernel name. Mean and spread use Welford's update, so per-process statistics
// merge exactly into the whole trace's.
struct KernelStats {
  std::string name;
  KernelClass kernelClass = KernelClass::kCompute;
  std::uint64_t count = 0;
  trace::TimeNs total = 0, min = 0, max = 0;
  double mean = 0;  // ns
  double m2 = 0;    // sum of squared deviations from the mean

  void add(trace::TimeNs duration);
  void merge(const KernelStats& other);
  // Sample standard deviation (pandas' std, as HTA reports it); 0 for fewer than two runs.
  double stdDev() const;
};

struct ClassTotals {
  trace::TimeNs compute = 0, memory = 0, communication = 0;
  trace::TimeNs& operator[](KernelClass c);
  trace::TimeNs sum() const { return compute + memory + communication; }
};

// Idle time of one stream: the gaps between its consecutive activities, each gap classified by the
// activity that ends it.
struct StreamIdle {
  std::int64_t pid = 0;
  std::int64_t deviceId = 0;
  std::int64_t streamId = 0;
  std::uint64_t activities = 0;
  trace::TimeNs span = 0;  // first activity start -> last activity end on this stream
  trace::TimeNs busy = 0;  // union of its activities
  trace::TimeNs idle = 0;  // span - busy = hostWait + kernelWait + other
  trace::TimeNs hostWait = 0, kernelWait = 0, other = 0;
};

// Idle time of one device within one process: the span minus the union of all its streams.
struct DeviceIdle {
  std::int64_t pid = 0;
  std::int64_t deviceId = 0;
  trace::TimeNs span = 0, busy = 0, idle = 0;
};

struct IdleBreakdown {
  trace::TimeNs span = 0, busy = 0, idle = 0;             // device level, summed over devices
  trace::TimeNs hostWait = 0, kernelWait = 0, other = 0;  // stream level, summed over streams
  std::vector<DeviceIdle> devices;                        // by pid, device
  std::vector<StreamIdle> streams;                        // by pid, device, stream
  // Summed stream idle time; at least `idle` since a stream may wait while another one runs.
  trace::TimeNs streamIdle() const { return hostWait + kernelWait + other; }
};

// Launch delay = activity start - end of its launching CUDA API call (HTA's definition).
struct LaunchStats {
  std::uint64_t count = 0;           // activities joined to their launching API call
  std::uint64_t withoutApiCall = 0;  // activities whose correlation id matched no API call
  std::uint64_t negativeDelays = 0;  // started before their API call returned
  double delayMean = 0, delayP50 = 0, delayP95 = 0;  // ns; percentiles interpolate linearly
  trace::TimeNs delayMin = 0, delayMax = 0;
  // Activities that ran on the GPU for less time than their launching call took on the CPU.
  std::uint64_t shortKernels = 0;
  trace::TimeNs shortKernelTime = 0;  // their GPU time
};

struct GpuSummary {
  std::uint64_t activities = 0;      // kernels, memcpys and memsets
  std::vector<KernelStats> kernels;  // every name, longest total first
  ClassTotals classes;               // over all of `kernels`
  IdleBreakdown idle;
  LaunchStats launch;        // kernels, memcpys and memsets
  LaunchStats kernelLaunch;  // kernels only, as HTA's launch statistics (no synchronous copies)
};

struct ProcessGpuMetrics {
  std::int64_t pid = 0;
  GpuSummary metrics;
};

struct GpuMetrics {
  // The whole trace: kernels merged by name, times summed over processes (a device two processes
  // share counts once per process, as HTA counts it once per rank), launch delays pooled.
  GpuSummary total;
  std::vector<ProcessGpuMetrics> processes;  // processes with GPU activity, by pid
  bool available() const { return total.activities > 0; }
};

// The GPU metrics of rows handed in while a caller streams the trace's tables: for a caller that
// reads them for an analysis of its own too (rlscope analyze's breakdown), so that each table is
// read once. Hand in the runtime API calls before the driver's (where both carry an id, the
// runtime call is the one the application made) and each table's rows in storage order; rows read
// in parts, on threads of their own, go to builders of their own, appended in rowid order.
class GpuMetricsBuilder {
 public:
  enum class Table { kKernel, kMemcpy, kMemset };
  static constexpr Table kTables[] = {Table::kKernel, Table::kMemcpy, Table::kMemset};
  static std::string_view tableName(Table table);
  // The columns addRow decodes, for `SELECT <columns> FROM <tableName>`: `start, end, globalPid,
  // correlationId` first, in that order (a caller may decode them too), then the table's own.
  static std::string columns(Table table);

  explicit GpuMetricsBuilder(GpuMetricsOptions options = {});
  ~GpuMetricsBuilder();
  GpuMetricsBuilder(GpuMetricsBuilder&&) noexcept;
  GpuMetricsBuilder& operator=(GpuMetricsBuilder&&) noexcept;
  const GpuMetricsOptions& options() const { return options_; }

  // Room for this many API calls and GPU rows of the first process seen (a caller's bound on
  // what the tables hold: never grown by copying; room not filled is address space, not memory).
  void reserve(std::size_t apiCalls, std::size_t gpuRows);
  void addApiCall(std::int64_t globalTid, std::int64_t correlationId, trace::TimeNs start,
                  trace::TimeNs end);
  // One row of `table`, selected with columns(table).
  void addRow(Table table, trace::Statement& row);
  // Takes the rows of a builder that read the rows after this one's.
  void append(GpuMetricsBuilder&& later);
  // Joins the activities to their launches and sums them up: all of finish()'s work but naming
  // the kernels, for a caller to run on a thread of its own once every row is in.
  void summarize();
  // The metrics, summarized first where summarize() was not called; kernel names come from
  // `reader`. The builder is empty afterwards.
  GpuMetrics finish(trace::TraceReader& reader);

 private:
  struct Rows;
  GpuMetricsOptions options_;
  std::unique_ptr<Rows> rows_;
};

// Reads the CUDA API calls (runtime and driver) and the GPU activity (kernels, memcpys, memsets)
// of every process. A trace without GPU activity gives empty metrics, not an error.
GpuMetrics computeGpuMetrics(trace::TraceReader& reader, const GpuMetricsOptions& options = {});

}  // namespace rlscope::analysis
