// Constructed traces for the analysis panel's tests (the model's here, the widget's in
// tests/gui_widgets/): small ones with exact expected times, and a synthetic one of any size.
#pragma once

#include <filesystem>
#include <vector>

#include "rlscope/calibration/calibration.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/trace_builder.h"

namespace rlscope::testing {

inline constexpr std::int64_t kAnalysisPid = 42;
inline constexpr std::int64_t kAnalysisMain = trace::globalTidOf(kAnalysisPid, 42);
inline constexpr std::int64_t kAnalysisWorker = trace::globalTidOf(kAnalysisPid, 43);

inline void addAnalysisProcess(trace::TraceWriter& w, bool onA100 = false) {
  addProcess(w, kAnalysisPid);
  if (onA100) addA100(w, /*predictorProperties=*/true);
}

// A memory-bound kernel: 5400 blocks of 256 threads, 47 registers (the predictor can scale it).
inline void addAnalysisKernel(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end,
                              std::int64_t correlation) {
  addKernel(w, {.start = start,
                .end = end,
                .pid = kAnalysisPid,
                .correlation = correlation,
                .name = "void at::native::vectorized_elementwise_kernel<4>",
                .mangled = true,
                .grid = {5400, 1, 1},
                .block = {256, 1, 1},
                .registersPerThread = 47});
}

// One training step (ns): "step" [0, 100) (id 1) holds "inference" [10, 40) (id 2) and
// "backprop" [50, 90) (id 3); Python on the main thread throughout, Backend [15, 35) and
// [55, 85), a launch [60, 62) of a kernel [61, 80); a worker thread's Backend [95, 120). On an
// A100 when asked (the what-if needs the GPU's properties).
inline void writeAnalysisStep(const std::filesystem::path& path, bool onA100 = false) {
  using trace::Category;
  trace::TraceWriter w(path);
  addAnalysisProcess(w, onA100);
  addCpu(w, 0, 100, Category::kPython, kAnalysisMain);
  addCpu(w, 15, 35, Category::kBackend, kAnalysisMain);
  addCpu(w, 55, 85, Category::kBackend, kAnalysisMain);
  addCpu(w, 95, 120, Category::kBackend, kAnalysisWorker);
  addApiCall(w, 60, 62, kAnalysisMain, 7);
  addAnalysisKernel(w, 61, 80, 7);
  addOperation(w, 1, 0, 100, "step", kAnalysisMain);
  addOperation(w, 2, 10, 40, "inference", kAnalysisMain, 1, 1);
  addOperation(w, 3, 50, 90, "backprop", kAnalysisMain, 1, 1);
  w.addPhase({0, 100, trace::globalPidOf(kAnalysisPid), w.intern("training")});
  w.commit();
}

// One operation "update" [0, 1000) of a Python thread that calls the backend [400, 600) and
// launches a kernel [500, 900) at [420, 430); recorded by rlscope-prof (features on, 2000 ns of
// command wall time, 2 Python transitions) with its calibration stored in the trace.
inline void writeAnalysisCalibrated(const std::filesystem::path& path) {
  using trace::Category;
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kFeatures,
            R"({"nvtx": true, "python": true, "cuda_api": true, "gpu_activity": true})");
  w.setMeta(trace::meta::kCommandElapsedNs, "2000");
  w.setMeta(trace::meta::kPythonTransitions, "2");
  addAnalysisProcess(w);
  addCpu(w, 0, 1000, Category::kPython, kAnalysisMain);
  addCpu(w, 400, 600, Category::kBackend, kAnalysisMain);
  addApiCall(w, 420, 430, kAnalysisMain, 7);
  addAnalysisKernel(w, 500, 900, 7);
  addOperation(w, 1, 0, 1000, "update", kAnalysisMain);
  analysis::Calibration c;
  c.uninstrumentedNs = {1700, 0, 1};
  c.costs = {{analysis::cost::kProcess, "", {10, 0, 1}},
             {analysis::cost::kAnnotation, "", {100, 0, 1}},
             {analysis::cost::kPythonTransition, "", {50, 0, 1}},
             {analysis::cost::kCupti, "cudaLaunchKernel", {5, 0, 1}}};
  for (const auto& r : analysis::calibrationRecords(c)) w.addCalibration(r);
  w.commit();
}

// An RL loop of `steps` steps of 10 µs (about 10 events each): "step" holds "inference" and
// "backprop"; Python, Backend and a CUDA API call on the main thread, a kernel on the GPU, the
// simulator on a worker thread between steps. On an A100.
inline void writeAnalysisLoop(const std::filesystem::path& path, std::int64_t steps) {
  using trace::Category;
  trace::TraceWriter w(path);
  addAnalysisProcess(w, true);
  std::int64_t id = 0;
  for (std::int64_t i = 0; i < steps; ++i) {
    trace::TimeNs t = i * 10'000;
    std::int64_t step = ++id;
    addOperation(w, step, t, t + 8'000, "step", kAnalysisMain);
    addOperation(w, ++id, t + 500, t + 3'000, "inference", kAnalysisMain, step, 1);
    addOperation(w, ++id, t + 4'000, t + 7'500, "backprop", kAnalysisMain, step, 1);
    addCpu(w, t, t + 8'000, Category::kPython, kAnalysisMain);
    addCpu(w, t + 1'000, t + 2'500, Category::kBackend, kAnalysisMain);
    addCpu(w, t + 4'500, t + 7'000, Category::kBackend, kAnalysisMain);
    addApiCall(w, t + 5'000, t + 5'200, kAnalysisMain, i + 1);
    addAnalysisKernel(w, t + 5'100, t + 9'000, i + 1);
    addCpu(w, t + 8'000, t + 9'500, Category::kSimulator, kAnalysisWorker);
  }
  w.commit();
}

// A two-rank job (ns): ranks 0 and 1 (pids 100 and 200) each run three steps of 1000; rank 0
// enters its allreduce at step + 100, rank 1 at step + 300 after a "simulate" operation in
// Python; both have the result at step + 500.
inline void writeAnalysisJob(const std::filesystem::path& path) {
  using trace::Category;
  trace::TraceWriter w(path);
  for (std::int64_t rank : {0, 1}) {
    std::int64_t pid = rank ? 200 : 100, tid = trace::globalTidOf(pid, pid);
    addProcess(w, pid);
    w.addProcessIdentity(
        {.globalPid = trace::globalPidOf(pid), .host = "node", .rank = rank, .worldSize = 2});
    for (int k = 0; k < 3; ++k) {
      trace::TimeNs t = k * 1000, entry = t + (rank ? 300 : 100);
      addOperation(w, pid + k, t, entry, "simulate", tid);
      addCpu(w, t, entry, Category::kPython, tid, "env.py:step");
      addCpu(w, entry, entry + 10, Category::kBackend, tid, "torch._C._distributed_c10d.allreduce");
      addCpu(w, entry + 10, t + 500, Category::kWaiting, tid, "torch._C._distributed_c10d.wait");
    }
  }
  w.commit();
}

}  // namespace rlscope::testing
