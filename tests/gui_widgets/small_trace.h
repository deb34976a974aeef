// The small trace the widget tests draw: process 42's main thread runs Python over [0, 1 ms) with
// a cudaLaunchKernel call in it over [400, 450) µs, which launches a kernel "gemm" on stream 7 of
// GPU 0 over [500, 900) µs (correlation id 1); all of it inside an operation "train_step" (id 1)
// over [100, 950) µs.
#pragma once

#include <filesystem>
#include <string>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "timeline_layout.h"

namespace rlscope::testing {

inline constexpr std::int64_t kSmallPid = 42;
inline constexpr std::int64_t kSmallOperationId = 1;

inline std::filesystem::path writeSmallTrace(const TempDir& dir) {
  const std::int64_t main = trace::globalTidOf(kSmallPid, 42);
  auto path = dir / "small.sqlite";
  trace::TraceWriter w(path);
  w.addProcess({.globalPid = trace::globalPidOf(kSmallPid), .pid = kSmallPid, .name = "python"});
  w.addThread({main, trace::globalPidOf(kSmallPid), 42, "MainThread"});
  w.addGpuInfo({.id = 0, .name = "NVIDIA A100-SXM4-40GB"});
  w.addCpuInterval({.start = 0,
                    .end = 1'000'000,
                    .globalTid = main,
                    .category = trace::Category::kPython,
                    .nameId = w.intern("train.py:step")});
  w.addOperation({.id = kSmallOperationId,
                  .start = 100'000,
                  .end = 950'000,
                  .globalTid = main,
                  .nameId = w.intern("train_step")});
  trace::ApiCallRecord launch;
  launch.start = 400'000;
  launch.end = 450'000;
  launch.globalTid = main;
  launch.correlationId = 1;
  launch.nameId = w.intern("cudaLaunchKernel");
  w.addApiCall(trace::ApiKind::kRuntime, launch);
  trace::KernelRecord k;
  k.start = 500'000;
  k.end = 900'000;
  k.deviceId = 0;
  k.streamId = 7;
  k.correlationId = 1;
  k.globalPid = trace::globalPidOf(kSmallPid);
  k.gridX = 108;
  k.blockX = 256;
  k.shortName = k.demangledName = w.intern("gemm");
  w.addKernel(k);
  w.commit();
  return path;
}

inline const gui::LayoutRow* findRow(const gui::TimelineLayout& layout, const std::string& label) {
  for (const gui::LayoutRow& row : layout.rows()) {
    if (row.label == label) return &row;
  }
  return nullptr;
}

}  // namespace rlscope::testing
