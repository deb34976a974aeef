#include "support/trace_builder.h"

#include <utility>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"

namespace rlscope::testing {

void addProcess(trace::TraceWriter& w, std::int64_t pid, const char* name) {
  w.addProcess({.globalPid = trace::globalPidOf(pid), .pid = pid, .name = name});
}

void addThread(trace::TraceWriter& w, std::int64_t pid, std::int64_t tid, const char* name) {
  w.addThread({trace::globalTidOf(pid, tid), trace::globalPidOf(pid), tid, name});
}

void addA100(trace::TraceWriter& w, bool predictorProperties) {
  trace::GpuInfoRecord gpu;
  gpu.id = 0;
  gpu.name = "NVIDIA A100-SXM4-40GB";
  if (predictorProperties) {
    gpu.computeMajor = 8;
    gpu.smCount = 108;
  }
  w.addGpuInfo(gpu);
}

void addCpu(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end, trace::Category category,
            std::int64_t globalTid, const char* name) {
  w.addCpuInterval({.start = start,
                    .end = end,
                    .globalTid = globalTid,
                    .category = category,
                    .nameId = name ? w.intern(name) : trace::kNoString});
}

void addOperation(trace::TraceWriter& w, const Operation& op) {
  w.addOperation({.id = op.id,
                  .start = op.start,
                  .end = op.end,
                  .globalTid = op.globalTid,
                  .nameId = w.intern(op.name),
                  .parentId = op.parent,
                  .depth = op.depth,
                  .source = op.source,
                  .args = op.args});
}

void addOperation(trace::TraceWriter& w, std::int64_t id, trace::TimeNs start, trace::TimeNs end,
                  const char* name, std::int64_t globalTid, std::int64_t parent, int depth) {
  addOperation(w, Operation{id, start, end, name, globalTid, parent, depth});
}

void addApiCall(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end,
                std::int64_t globalTid, std::int64_t correlation, const char* name,
                trace::ApiKind kind) {
  trace::ApiCallRecord r;
  r.start = start;
  r.end = end;
  r.globalTid = globalTid;
  r.correlationId = correlation;
  r.nameId = w.intern(name);
  w.addApiCall(kind, r);
}

namespace {

// A GPU activity record with the fields Kernel and GpuActivity share.
template <class Record, class Activity>
Record gpuRecord(const Activity& a) {
  Record r;
  r.start = a.start;
  r.end = a.end;
  r.deviceId = a.device;
  r.streamId = a.stream;
  r.correlationId = a.correlation;
  r.globalPid = trace::globalPidOf(a.pid);
  return r;
}

}  // namespace

void addKernel(trace::TraceWriter& w, const Kernel& k) {
  auto r = gpuRecord<trace::KernelRecord>(k);
  r.shortName = r.demangledName = w.intern(k.name);
  if (k.mangled) r.mangledName = r.shortName;
  r.gridX = k.grid.x, r.gridY = k.grid.y, r.gridZ = k.grid.z;
  r.blockX = k.block.x, r.blockY = k.block.y, r.blockZ = k.block.z;
  r.registersPerThread = k.registersPerThread;
  w.addKernel(r);
}

void addMemcpy(trace::TraceWriter& w, const GpuActivity& copy) {
  auto r = gpuRecord<trace::MemcpyRecord>(copy);
  r.copyKind = 1;  // ENUM_CUDA_MEMCPY_OPER: HtoD
  w.addMemcpy(r);
}

void addMemset(trace::TraceWriter& w, const GpuActivity& set) {
  w.addMemset(gpuRecord<trace::MemsetRecord>(set));
}

void addSync(trace::TraceWriter& w, const GpuActivity& sync, trace::SyncType type) {
  auto r = gpuRecord<trace::SyncRecord>(sync);
  r.syncType = type;
  w.addSync(r);
}

std::filesystem::path writeCorrectableTrace(const TempDir& dir, std::string_view features) {
  constexpr std::int64_t kPid = 42;
  constexpr std::int64_t kMain = trace::globalTidOf(kPid, 42);
  auto path = dir / "correctable.sqlite";
  trace::TraceWriter w(path);
  w.setMeta(trace::meta::kFeatures, features);
  w.setMeta(trace::meta::kCommandElapsedNs, "2000");
  w.setMeta(trace::meta::kPythonTransitions, "2");
  addProcess(w, kPid);
  addCpu(w, 0, 1000, trace::Category::kPython, kMain);
  addCpu(w, 400, 600, trace::Category::kBackend, kMain);
  addApiCall(w, 420, 430, kMain, 7);
  addKernel(w, {.start = 500, .end = 900, .pid = kPid, .correlation = 7, .mangled = true});
  addOperation(w, 1, 0, 1000, "update", kMain);
  w.commit();
  return path;
}

}  // namespace rlscope::testing
