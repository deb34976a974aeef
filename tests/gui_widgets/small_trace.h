// The small trace the widget tests draw: process 42's main thread runs Python over [0, 1 ms) with
// a cudaLaunchKernel call in it over [400, 450) µs, which launches a kernel "gemm" on stream 7 of
// GPU 0 over [500, 900) µs (correlation id 1); all of it inside an operation "train_step" (id 1)
// over [100, 950) µs.
#pragma once

#include <filesystem>
#include <string>

#include "rlscope/gui_widgets/timeline_layout.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::testing {

inline constexpr std::int64_t kSmallPid = 42;
inline constexpr std::int64_t kSmallOperationId = 1;

inline std::filesystem::path writeSmallTrace(const TempDir& dir) {
  const std::int64_t main = trace::globalTidOf(kSmallPid, 42);
  auto path = dir / "small.sqlite";
  trace::TraceWriter w(path);
  addProcess(w, kSmallPid);
  addThread(w, kSmallPid, 42, "MainThread");
  addA100(w);
  addCpu(w, 0, 1'000'000, trace::Category::kPython, main, "train.py:step");
  addOperation(w, kSmallOperationId, 100'000, 950'000, "train_step", main);
  addApiCall(w, 400'000, 450'000, main, 1, "cudaLaunchKernel");
  addKernel(w, {.start = 500'000,
                .end = 900'000,
                .pid = kSmallPid,
                .correlation = 1,
                .name = "gemm",
                .stream = 7,
                .grid = {108, 0, 0},
                .block = {256, 0, 0}});
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
