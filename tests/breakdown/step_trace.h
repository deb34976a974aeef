// The breakdown suite's small "step" trace and queries on its results, shared by the whole-run
// tests (breakdown_test.cpp) and the time-window tests (window_test.cpp).
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::analysis {

inline constexpr std::int64_t kPid = 42;
inline constexpr std::int64_t kMain = trace::globalTidOf(kPid, 42);
inline constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 43);

struct StepTraceOptions {
  std::int64_t correlation = 0;  // of the launch and its kernel (0: none recorded)
  bool trainingPhase = false;    // a "training" phase over the step
  std::optional<trace::ProcessIdentityRecord> identity;  // who the process is (its globalPid set)
};

// One training step: "step" [0, 100) holds "inference" [10, 40) and "backprop" [50, 90);
// Python on the main thread throughout, Backend [15, 35) and [55, 85), a CUDA launch [60, 62)
// and a kernel [61, 80) on the GPU; a worker thread's Backend [95, 120) after the step. The trace
// spans [0, 120).
inline std::filesystem::path writeStepTrace(const testing::TempDir& dir,
                                            StepTraceOptions options = {}) {
  auto path = dir / "step.sqlite";
  trace::TraceWriter w(path);
  testing::addProcess(w, kPid);
  if (options.identity) {
    auto id = *options.identity;
    id.globalPid = trace::globalPidOf(kPid);
    w.addProcessIdentity(id);
  }
  testing::addCpu(w, 0, 100, trace::Category::kPython, kMain);
  testing::addCpu(w, 15, 35, trace::Category::kBackend, kMain);
  testing::addCpu(w, 55, 85, trace::Category::kBackend, kMain);
  testing::addCpu(w, 95, 120, trace::Category::kBackend, kWorker);
  testing::addApiCall(w, 60, 62, kMain, options.correlation);
  testing::addKernel(
      w,
      {.start = 61, .end = 80, .pid = kPid, .correlation = options.correlation, .mangled = true});
  testing::addOperation(w, 1, 0, 100, "step", kMain);
  testing::addOperation(w, 2, 10, 40, "inference", kMain, 1, 1);
  testing::addOperation(w, 3, 50, 90, "backprop", kMain, 1, 1);
  if (options.trainingPhase) w.addPhase({0, 100, trace::globalPidOf(kPid), w.intern("training")});
  w.commit();
  return path;
}

// The breakdown row of the operation `name` (the first, in a view with several), or nullptr.
inline const OperationBreakdown* findOperation(const Breakdown& b, const std::string& name) {
  for (const auto& o : b.operations)
    if (o.name == name) return &o;
  return nullptr;
}

// The same row, which must be there.
inline const OperationBreakdown& find(const Breakdown& b, const std::string& name) {
  if (const OperationBreakdown* o = findOperation(b, name)) return *o;
  throw std::runtime_error("no operation " + name);
}

// The time of an operation's category set ({"Python", "Backend"}, ...); 0 when it has none.
inline trace::TimeNs setTime(const OperationBreakdown& o, const std::vector<std::string>& set) {
  for (const auto& c : o.categories) {
    if (c.set == set) return c.time;
  }
  return 0;
}

}  // namespace rlscope::analysis
