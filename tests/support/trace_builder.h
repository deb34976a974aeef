// Rows of the constructed traces the tests write: a process and its threads, an A100, CPU
// intervals, operations, CUDA API calls, kernels, copies and memsets, each added to a TraceWriter
// in one call. A helper adds exactly one row and interns its names when it is called, so a trace
// built with them has the rows and string ids of one written record by record. Fields a helper
// does not take keep their record's default (0, no string). Times in ns; pids and tids are OS ids,
// packed into global ids as nsys does (rlscope/trace/global_id.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rlscope/trace/records.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::testing {

// Process `pid` (globalPid = pid << 24).
void addProcess(trace::TraceWriter& w, std::int64_t pid, const char* name = "python");
// Thread `tid` of process `pid`.
void addThread(trace::TraceWriter& w, std::int64_t pid, std::int64_t tid, const char* name);
// GPU 0, an NVIDIA A100-SXM4-40GB; with `predictorProperties` also the compute capability (8) and
// SM count (108) the predictor matches it by.
void addA100(trace::TraceWriter& w, bool predictorProperties = false);

// A CPU interval; `name` (interned) may be null for none.
void addCpu(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end, trace::Category category,
            std::int64_t globalTid, const char* name = nullptr);

struct Operation {
  std::int64_t id = 0;
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
  const char* name = "";
  std::int64_t globalTid = 0;
  std::int64_t parent = 0;  // 0 = outermost
  int depth = 0;
  trace::OperationSource source = trace::OperationSource::kAnnotation;
  std::string args;
};
void addOperation(trace::TraceWriter& w, const Operation& op);
// An annotated operation without args.
void addOperation(trace::TraceWriter& w, std::int64_t id, trace::TimeNs start, trace::TimeNs end,
                  const char* name, std::int64_t globalTid, std::int64_t parent = 0, int depth = 0);

// A CUDA API call (eventClass, return value and cbid 0).
void addApiCall(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end,
                std::int64_t globalTid, std::int64_t correlation,
                const char* name = "cudaLaunchKernel",
                trace::ApiKind kind = trace::ApiKind::kRuntime);

struct Dim3 {
  std::int64_t x = 0, y = 0, z = 0;
};
struct Kernel {
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
  std::int64_t pid = 0;  // of the launching process
  std::int64_t correlation = 0;
  const char* name = "gemm";  // the short and demangled name...
  bool mangled = false;       // ...and the mangled one too when set
  std::int64_t device = 0;
  std::int64_t stream = 0;
  Dim3 grid;  // 0 = unknown, as the record's default
  Dim3 block;
  std::int64_t registersPerThread = 0;
};
void addKernel(trace::TraceWriter& w, const Kernel& k);

// A copy or a memset of process `pid`.
struct GpuActivity {
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
  std::int64_t pid = 0;
  std::int64_t correlation = 0;
  std::int64_t device = 0;
  std::int64_t stream = 0;
};
// A host-to-device copy.
void addMemcpy(trace::TraceWriter& w, const GpuActivity& copy);
void addMemset(trace::TraceWriter& w, const GpuActivity& set);
// A CUPTI synchronisation record of the call with `sync.correlation`.
void addSync(trace::TraceWriter& w, const GpuActivity& sync, trace::SyncType type);

// correctable.sqlite in `dir`, the trace the breakdown's correction tests correct: one operation
// "update" (id 1) [0, 1000) of process 42's thread 42, Python throughout, calling the backend
// [400, 600); a kernel "gemm" [500, 900) launched at [420, 430) by that call (correlation 7).
// Recorded by rlscope-prof with `features` on (the JSON of meta::kFeatures), 2000 ns of command
// wall time and 2 Python transitions.
std::filesystem::path writeCorrectableTrace(const TempDir& dir, std::string_view features);

}  // namespace rlscope::testing
