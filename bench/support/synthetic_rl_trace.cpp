#include "support/synthetic_rl_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"

namespace rlscope::bench {

namespace fs = std::filesystem;
using trace::Category;
using trace::TimeNs;

namespace {
constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, 4242);
constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 4243);
}  // namespace

// Writes the synthetic trace of about `events` rows; returns the number of rows.
std::int64_t writeSyntheticRlTrace(const fs::path& path, std::int64_t events) {
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
  w.addProcess({.globalPid = trace::globalPidOf(kPid), .pid = kPid, .name = "python"});
  w.addThread({kMain, trace::globalPidOf(kPid), 4242, "MainThread"});
  w.addThread({kWorker, trace::globalPidOf(kPid), 4243, "prefetch"});
  const trace::StringId step = w.intern("step"), prefetch = w.intern("prefetch"),
                        launch = w.intern("cudaLaunchKernel"),
                        memcpyAsync = w.intern("cudaMemcpyAsync"),
                        memsetAsync = w.intern("cudaMemsetAsync"), python = w.intern("train.py"),
                        simulator = w.intern("mujoco.mj_step"), backend = w.intern("aten::addmm");
  const trace::StringId parts[] = {w.intern("inference"), w.intern("simulation"),
                                   w.intern("backprop")};
  const trace::StringId kernels[] = {w.intern("sgemm_128x64_nn"), w.intern("relu_kernel"),
                                     w.intern("reduce_kernel"), w.intern("adam_update")};
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<TimeNs> slice(200, 3000), api(2000, 6000), gpu(1000, 8000);
  // Idle time between steps (waiting for the environment, logging, evaluation), log-uniform from
  // 1 µs to 50 ms: at every zoom level some gaps are a pixel wide or more, so the query has runs
  // to end and blocks to return, as in a real trace.
  std::uniform_real_distribution<double> logIdle(std::log(1e3), std::log(5e7));
  auto idle = [&](std::mt19937_64& r) { return static_cast<TimeNs>(std::exp(logIdle(r))); };

  std::int64_t rows = 0, opId = 0, correlation = 0;
  TimeNs streamFree[2] = {0, 0};
  auto cpu = [&](TimeNs s, TimeNs e, Category c, std::int64_t tid, trace::StringId name) {
    w.addCpuInterval({.start = s, .end = e, .globalTid = tid, .category = c, .nameId = name});
    ++rows;
  };
  auto op = [&](std::int64_t id, TimeNs s, TimeNs e, trace::StringId name, std::int64_t parent,
                int depth, std::int64_t tid) {
    w.addOperation({.id = id,
                    .start = s,
                    .end = e,
                    .globalTid = tid,
                    .nameId = name,
                    .parentId = parent,
                    .depth = depth});
    ++rows;
  };
  // A Backend call from Python at `t` holding one CUDA call; the GPU work it launches is queued
  // on its stream. Returns the end of the Backend call.
  auto backendCall = [&](TimeNs t, int i) {
    TimeNs n = slice(rng), a = api(rng);
    TimeNs apiStart = t + n / 2, apiEnd = apiStart + a;
    cpu(t, apiEnd + n / 2, Category::kBackend, kMain, backend);
    int kind = i % 10 == 9 ? 2 : i % 8 == 7 ? 1 : 0;  // memset, memcpy, kernel
    trace::ApiCallRecord call;
    call.start = apiStart;
    call.end = apiEnd;
    call.globalTid = kMain;
    call.correlationId = ++correlation;
    call.nameId = kind == 0 ? launch : kind == 1 ? memcpyAsync : memsetAsync;
    w.addApiCall(trace::ApiKind::kRuntime, call);
    int stream = i & 1;
    TimeNs start = std::max(apiEnd - a / 4, streamFree[stream]);
    TimeNs end = streamFree[stream] = start + gpu(rng);
    if (kind == 0) {
      trace::KernelRecord k;
      k.start = start;
      k.end = end;
      k.streamId = 7 + stream;
      k.correlationId = correlation;
      k.globalPid = trace::globalPidOf(kPid);
      k.shortName = k.demangledName = kernels[i & 3];
      w.addKernel(k);
    } else if (kind == 1) {
      trace::MemcpyRecord m;
      m.start = start;
      m.end = end;
      m.streamId = 7 + stream;
      m.correlationId = correlation;
      m.globalPid = trace::globalPidOf(kPid);
      m.copyKind = 1;
      m.bytes = 1 << 20;
      w.addMemcpy(m);
    } else {
      trace::MemsetRecord m;
      m.start = start;
      m.end = end;
      m.streamId = 7 + stream;
      m.correlationId = correlation;
      m.globalPid = trace::globalPidOf(kPid);
      m.bytes = 1 << 16;
      w.addMemset(m);
    }
    rows += 2;
    return apiEnd + n / 2;
  };

  TimeNs t = 1'000'000;
  while (rows < events) {
    TimeNs stepStart = t;
    std::int64_t stepId = ++opId;
    for (int p = 0; p < 3; ++p) {
      std::int64_t partId = ++opId;
      TimeNs partStart = t;
      for (int i = 0; i < 10; ++i) {
        TimeNs py = slice(rng);
        cpu(t, t + py, Category::kPython, kMain, python);
        t += py;
        if (p == 1) {
          TimeNs s = slice(rng);
          cpu(t, t + s, Category::kSimulator, kMain, simulator);
          t += s;
        } else {
          t = backendCall(t, i);
        }
      }
      op(partId, partStart, t, parts[p], stepId, 1, kMain);
    }
    op(stepId, stepStart, t, step, 0, 0, kMain);
    TimeNs ws = stepStart + slice(rng), b = slice(rng) * 4;
    op(++opId, ws, ws + 2 * b, prefetch, 0, 0, kWorker);
    cpu(ws, ws + b, Category::kPython, kWorker, python);
    cpu(ws + b, ws + 2 * b, Category::kBackend, kWorker, backend);
    t += idle(rng);
  }
  w.commit();
  return rows;
}

SyntheticRlTrace::SyntheticRlTrace(std::string name, std::int64_t events)
    : name_(std::move(name)), events_(events) {}

SyntheticRlTrace::~SyntheticRlTrace() {
  std::error_code ignored;
  if (!dir_.empty()) fs::remove_all(dir_, ignored);
}

const fs::path& SyntheticRlTrace::path() {
  if (path_.empty()) {
    dir_ = fs::temp_directory_path() / ("rlscope_" + name_ + "." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = dir_ / "rl.sqlite";
    rows_ = writeSyntheticRlTrace(path_, events_);
  }
  return path_;
}

std::int64_t SyntheticRlTrace::rows() {
  path();
  return rows_;
}

}  // namespace rlscope::bench
