#include "support/shaped_trace.h"

#include <algorithm>
#include <random>
#include <string>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"

namespace rlscope::bench {

namespace {

using trace::Category;
using trace::StringId;
using trace::TimeNs;

constexpr std::int64_t kPid = 5151;

// Writes the rows of one shape; each thread keeps its own clock, and threads take turns by step
// so that rows are written roughly in time order, as the collector's merge writes them.
class ShapeWriter {
 public:
  ShapeWriter(trace::TraceWriter& w, const TraceShape& shape) : w_(w), shape_(shape) {
    w_.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
    for (int t = 0; t < shape_.threads; ++t) {
      std::int64_t tid = kPid + t;
      threads_.push_back({trace::globalTidOf(kPid, tid), 1'000'000});
      w_.addThread({threads_.back().globalTid, trace::globalPidOf(kPid), tid,
                    t == 0 ? "MainThread" : ("worker" + std::to_string(t)).c_str()});
    }
    for (int d = 0; d < std::max(1, shape_.depth); ++d)
      levelNames_.push_back(w_.intern(d == 0 ? "step" : "level" + std::to_string(d)));
    for (const char* k : {"sgemm_128x64_nn", "relu_kernel", "reduce_kernel", "adam_update"})
      kernels_.push_back(w_.intern(k));
    launch_ = w_.intern("cudaLaunchKernel");
    python_ = w_.intern("train.py");
    backend_ = w_.intern("aten::addmm");
    simulator_ = w_.intern("mujoco.mj_step");
    streamFree_.assign(static_cast<std::size_t>(std::max(0, shape_.streams)), 0);
  }

  std::int64_t write(std::int64_t events) {
    TimeNs end = 0;
    while (rows_ < events) {
      for (auto& thread : threads_) {
        thread.now = operation(thread, 0, 0);
        thread.now += slice(rng_);  // between steps
        end = std::max(end, thread.now);
      }
    }
    w_.setMeta(trace::meta::kCommandElapsedNs, std::to_string(end));
    return rows_;
  }

 private:
  struct Thread {
    std::int64_t globalTid;
    TimeNs now;
  };

  void cpu(TimeNs s, TimeNs e, Category c, const Thread& t, StringId name) {
    w_.addCpuInterval(
        {.start = s, .end = e, .globalTid = t.globalTid, .category = c, .nameId = name});
    ++rows_;
  }

  // A Backend call at `t` that launches a run of kernels on the next stream; returns its end.
  TimeNs backendLaunch(Thread& thread, TimeNs t) {
    TimeNs n = slice(rng_), a = api(rng_);
    TimeNs apiStart = t + n / 2, apiEnd = apiStart + a;
    cpu(t, apiEnd + n / 2, Category::kBackend, thread, backend_);
    trace::ApiCallRecord call;
    call.start = apiStart;
    call.end = apiEnd;
    call.globalTid = thread.globalTid;
    call.correlationId = ++correlation_;
    call.nameId = launch_;
    w_.addApiCall(trace::ApiKind::kRuntime, call);
    ++rows_;
    auto stream = static_cast<std::size_t>(launches_++ % shape_.streams);
    for (int k = 0; k < shape_.kernelsPerLaunch; ++k) {
      trace::KernelRecord kernel;
      kernel.start = std::max(apiEnd - a / 4, streamFree_[stream]);
      kernel.end = kernel.start + gpu(rng_);
      streamFree_[stream] = kernel.end;
      kernel.deviceId = 0;
      kernel.streamId = 7 + static_cast<std::int64_t>(stream);
      kernel.correlationId = correlation_;
      kernel.globalPid = trace::globalPidOf(kPid);
      kernel.shortName = kernel.demangledName = kernel.mangledName =
          kernels_[static_cast<std::size_t>(k + launches_) % kernels_.size()];
      w_.addKernel(kernel);
      ++rows_;
    }
    return apiEnd + n / 2;
  }

  // The operation at `level` starting now on `thread` (its children or its work inside); written
  // when it ends, children first, as the collector writes them. Returns its end.
  TimeNs operation(Thread& thread, int level, std::int64_t parent) {
    std::int64_t id = ++opId_;
    TimeNs start = thread.now;
    if (level + 1 >= shape_.depth) {
      for (int i = 0; i < shape_.launchesPerOp; ++i) {
        TimeNs py = slice(rng_);
        cpu(thread.now, thread.now + py, Category::kPython, thread, python_);
        thread.now += py;
        if (shape_.streams > 0) {
          thread.now = backendLaunch(thread, thread.now);
        } else {
          TimeNs s = slice(rng_);
          cpu(thread.now, thread.now + s, Category::kSimulator, thread, simulator_);
          thread.now += s;
        }
      }
    } else {
      for (int c = 0; c < shape_.children; ++c) {
        TimeNs py = slice(rng_);
        cpu(thread.now, thread.now + py, Category::kPython, thread, python_);
        thread.now += py;
        thread.now = operation(thread, level + 1, id);
      }
    }
    w_.addOperation({.id = id,
                     .start = start,
                     .end = thread.now,
                     .globalTid = thread.globalTid,
                     .nameId = levelNames_[static_cast<std::size_t>(level)],
                     .parentId = parent,
                     .depth = level});
    ++rows_;
    return thread.now;
  }

  trace::TraceWriter& w_;
  const TraceShape& shape_;
  std::vector<Thread> threads_;
  std::vector<StringId> levelNames_, kernels_;
  StringId launch_ = 0, python_ = 0, backend_ = 0, simulator_ = 0;
  std::vector<TimeNs> streamFree_;
  std::mt19937_64 rng_{42};
  std::uniform_int_distribution<TimeNs> slice{200, 3000}, api{3000, 8000}, gpu{1000, 20000};
  std::int64_t rows_ = 0, opId_ = 0, correlation_ = 0, launches_ = 0;
};

}  // namespace

const std::vector<TraceShape>& traceShapes() {
  static const std::vector<TraceShape> shapes = {
      // Several threads of CPU work, two streams, nested operations, one kernel per launch.
      {.name = "threads8", .threads = 8, .streams = 2, .depth = 3, .children = 3},
      {.name = "streams16", .threads = 2, .streams = 16, .depth = 2},
      {.name = "deep12",
       .threads = 1,
       .streams = 2,
       .depth = 12,
       .children = 1,
       .launchesPerOp = 4},
      // One operation around every launch: as many operations as CUDA calls.
      {.name = "short_ops",
       .threads = 2,
       .streams = 2,
       .depth = 2,
       .children = 20,
       .launchesPerOp = 1},
      // GPU-bound: each call queues a run of 32 kernels.
      {.name = "kernel_runs",
       .threads = 1,
       .streams = 2,
       .depth = 2,
       .launchesPerOp = 2,
       .kernelsPerLaunch = 32},
      {.name = "cpu_only", .threads = 4, .streams = 0, .depth = 3},
  };
  return shapes;
}

std::int64_t writeShapedTrace(const std::filesystem::path& path, const TraceShape& shape,
                              std::int64_t events) {
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
  bool gpu = shape.streams > 0;
  w.setMeta(
      trace::meta::kFeatures,
      gpu ? R"({"python": true, "cuda_api": true, "gpu_activity": true})" : R"({"python": true})");
  if (gpu) w.setMeta(trace::meta::kGpuActivity, "recorded");
  std::int64_t rows = ShapeWriter(w, shape).write(events);
  w.commit();
  return rows;
}

}  // namespace rlscope::bench
