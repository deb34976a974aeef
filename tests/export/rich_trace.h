// A trace that fills every table the Chrome exporter reads: two processes with several threads,
// two GPUs with several streams, every CPU category, CUDA runtime and driver calls, kernels,
// copies, memsets, synchronizations, NVTX ranges and marks, plain events, external correlations,
// calibration and metadata; with Unicode names, a very long name, zero-length events, negative
// and huge timestamps. The export and round-trip tests share it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"

namespace rlscope::exporter::testing {

// Process A (python) and process B (trainer), OS pids = packed pids.
inline constexpr std::int64_t kPidA = 4242;
inline constexpr std::int64_t kPidB = 777;
inline constexpr std::int64_t kTidA1 = 4242;  // main thread of A
inline constexpr std::int64_t kTidA2 = 4250;  // worker thread of A
inline constexpr std::int64_t kTidB1 = 777;   // main thread of B
inline constexpr std::int64_t kTidB2 = 781;   // thread of B named only in ThreadNames

inline constexpr std::int64_t kGlobalPidA = trace::globalPidOf(kPidA);
inline constexpr std::int64_t kGlobalPidB = trace::globalPidOf(kPidB);
inline constexpr std::int64_t kA1 = trace::globalTidOf(kPidA, kTidA1);
inline constexpr std::int64_t kA2 = trace::globalTidOf(kPidA, kTidA2);
inline constexpr std::int64_t kB1 = trace::globalTidOf(kPidB, kTidB1);
inline constexpr std::int64_t kB2 = trace::globalTidOf(kPidB, kTidB2);

inline constexpr trace::TimeNs kHugeStart = 9'000'000'000'000'000'123;  // ~2.8 centuries
inline constexpr trace::TimeNs kNegativeStart = -5'000'000'123;

inline std::string longName() {
  std::string s = "very_long_kernel_name<";
  while (s.size() < 100'000) s += "ünïcødé_λ_🚀_template<int, float>, ";
  return s + ">";
}

struct RichTraceOptions {
  // Process B reuses A's CUDA correlation ids (each process's CUPTI counts from 1), as two real
  // profiled processes do. Off: B's ids are distinct from A's.
  bool overlappingCorrelationIds = true;
};

// Correlation ids of process B's calls.
inline std::int64_t correlationB(const RichTraceOptions& o, std::int64_t id) {
  return o.overlappingCorrelationIds ? id : 1000 + id;
}

inline trace::GpuInfoRecord gpuInfo(std::int64_t id) {
  trace::GpuInfoRecord g;
  g.id = id;
  g.name = id == 0 ? "NVIDIA A100-SXM4-40GB" : "NVIDIA H100 80GB HBM3";
  g.busLocation = "0000:0" + std::to_string(id) + ":00.0";
  g.isDiscrete = 1;
  g.l2CacheSize = 41'943'040 + id;
  g.totalMemory = 42'505'273'344 + id;
  g.memoryBandwidth = 1'555'200'000'000 + id;
  g.clockRate = 1'410'000'000 + id;
  g.smCount = 108 + id;
  g.uuid = "GPU-0123456" + std::to_string(id);
  g.chipName = id == 0 ? "GA100" : "GH100";
  g.computeMajor = 8 + id;
  g.computeMinor = 0;
  g.maxIPC = 4;
  g.maxRegistersPerBlock = 65'536;
  g.maxShmemPerBlock = 49'152;
  g.maxShmemPerBlockOptin = 166'912 + id;
  g.maxShmemPerSm = 167'936 + id;
  g.maxRegistersPerSm = 65'536;
  g.threadsPerWarp = 32;
  g.maxWarpsPerSm = 64;
  g.maxBlocksPerSm = 32;
  g.maxThreadsPerBlock = 1024;
  g.memoryClockRate = 1'215'000'000 + id;
  g.memoryBusWidth = 5120;
  return g;
}

inline void writeRichTrace(const std::filesystem::path& path, const RichTraceOptions& o = {}) {
  using namespace trace;
  TraceWriter w(path);
  w.setMeta(meta::kCommandLine, "python train.py --λ=0.5");
  w.setMeta(meta::kHost, "gpu-box");
  w.setMeta("custom \"key\"", "value\twith tab");

  w.addProcess({.globalPid = kGlobalPidA,
                .pid = kPidA,
                .parentPid = 1,
                .name = "python3.11",
                .commandLine = "python train.py",
                .start = 1,
                .end = 10'000'000,
                .exitStatus = 0});
  w.addProcess({.globalPid = kGlobalPidB, .pid = kPidB, .name = "trainer 日本語"});
  // A is rank 1 of 2 (torchrun); B has no identity row: the trace's host, no rank.
  w.addProcessIdentity({.globalPid = kGlobalPidA,
                        .host = "gpu-box",
                        .launcher = "torchrun",
                        .rank = 1,
                        .localRank = 1,
                        .worldSize = 2,
                        .localWorldSize = 2,
                        .nodeRank = 0,
                        .variables = R"({"RANK":"1","WORLD_SIZE":"2"})"});
  w.addThread({kA1, kGlobalPidA, kTidA1, "MainThread"});
  w.addThread({kA2, kGlobalPidA, kTidA2, "worker ✓"});
  w.addThread({kB1, kGlobalPidB, kTidB1, "main"});
  w.addThreadName({w.intern("nsys-only thread"), 0, kB2});
  w.addGpuInfo(gpuInfo(0));
  w.addGpuInfo(gpuInfo(1));

  // CPU intervals: every category, args of every JSON kind.
  w.addCpuInterval({.start = 1'000'000,
                    .end = 5'000'500,
                    .globalTid = kA1,
                    .category = Category::kPython,
                    .nameId = w.intern("train_step 🚀 λ"),
                    .args = R"({"External id":7,"Sequence number":-3,"Input Dims":[[2,3],[]],)"
                            R"("big":12345678901234567890,"pi":3.141592653589793,)"
                            R"("s":"ünï \"q\" \\ \n","nested":{"a":[{"b":null}]},"t":true})"});
  w.addCpuInterval({.start = 1'000'100,
                    .end = 1'000'100,
                    .globalTid = kA1,
                    .category = Category::kBackend,
                    .nameId = w.intern("aten::mm")});
  w.addCpuInterval({.start = 2'000'000,
                    .end = 2'500'001,
                    .globalTid = kA2,
                    .category = Category::kSimulator,
                    .nameId = w.intern("mujoco.step")});
  w.addCpuInterval({.start = kNegativeStart,
                    .end = -1'000,
                    .globalTid = kA2,
                    .category = Category::kNative,
                    .nameId = w.intern(longName())});
  w.addCpuInterval({.start = kHugeStart,
                    .end = kHugeStart + 999,
                    .globalTid = kB1,
                    .category = Category::kCudaApi,
                    .nameId = w.intern("cudaLaunchKernel")});
  w.addCpuInterval({.start = 3'000'000,
                    .end = 3'000'001,
                    .globalTid = kB2,
                    .category = Category::kBackend,
                    .nameId = w.intern("aten::add"),
                    .args = R"({"Input type":["float"]})"});

  // Operations, with ids as `rlscope import` numbers them (by globalTid, then start).
  w.addOperation({.id = 2,
                  .start = 900'000,
                  .end = 6'000'000,
                  .globalTid = kA1,
                  .nameId = w.intern("step"),
                  .args = R"({"iteration":3})"});
  w.addOperation({.id = 3,
                  .start = 1'000'000,
                  .end = 1'900'000,
                  .globalTid = kA1,
                  .nameId = w.intern("forward 🔥"),
                  .parentId = 2,
                  .depth = 1,
                  .source = OperationSource::kNvtx});
  w.addOperation({.id = 4,
                  .start = 1'050'000,
                  .end = 1'800'000,
                  .globalTid = kA1,
                  .nameId = w.intern("inference ✓"),
                  .parentId = 3,
                  .depth = 2});
  w.addOperation({.id = 5,
                  .start = 1'500'000,
                  .end = 2'500'000,
                  .globalTid = kA1,
                  .nameId = w.intern("async io"),
                  .parentId = 2,
                  .depth = 1,
                  .source = OperationSource::kNvtx});
  w.addOperation({.id = 6,
                  .start = 2'000'000,
                  .end = 2'100'000,
                  .globalTid = kA2,
                  .nameId = w.intern("registered range"),
                  .source = OperationSource::kNvtx});
  w.addOperation({.id = 1,
                  .start = 1'500'000,
                  .end = 3'000'000,
                  .globalTid = kB1,
                  .nameId = w.intern("ProfilerStep#2"),
                  .source = OperationSource::kKinetoUserAnnotation,
                  .args = R"({"External id":99,"Trace iteration":2})"});

  w.addPhase({0, 3'000'000, kGlobalPidA, w.intern("data_collection")});
  w.addPhase({3'000'000, 8'000'000, kGlobalPidB, w.intern("training")});

  // CUDA API calls. A: 1 launch, 2 memcpy, 3 malloc (no GPU work), 6 stream sync; driver 5
  // launches a memset. B: 1 launch, 2 memcpy.
  auto api = [&](ApiKind kind, TimeNs start, TimeNs end, std::int64_t gtid, std::int64_t corr,
                 std::string_view name, std::int64_t cbid, std::int64_t rv = 0) {
    w.addApiCall(kind, {.start = start,
                        .end = end,
                        .eventClass = kind == ApiKind::kDriver,
                        .globalTid = gtid,
                        .correlationId = corr,
                        .nameId = w.intern(name),
                        .returnValue = rv,
                        .cbid = cbid});
  };
  api(ApiKind::kRuntime, 1'100'000, 1'100'020, kA1, 1, "cudaLaunchKernel", 211);
  api(ApiKind::kRuntime, 1'200'000, 1'200'050, kA1, 2, "cudaMemcpyAsync", 41);
  api(ApiKind::kRuntime, 1'300'000, 1'300'900, kA1, 3, "cudaMalloc", 20, 2);
  api(ApiKind::kRuntime, 1'500'000, 1'500'400, kA1, 6, "cudaStreamSynchronize", 131);
  api(ApiKind::kDriver, 1'400'000, 1'400'010, kA2, 5, "cuMemsetD32Async", 0);
  api(ApiKind::kRuntime, 1'150'000, 1'150'030, kB1, correlationB(o, 1), "cudaLaunchKernel", 211);
  api(ApiKind::kRuntime, 1'250'000, 1'250'040, kB1, correlationB(o, 2), "cudaMemcpyAsync", 41);

  KernelRecord k1{.start = 1'110'000,
                  .end = 1'180'000,
                  .deviceId = 0,
                  .contextId = 1,
                  .streamId = 7,
                  .correlationId = 1,
                  .globalPid = kGlobalPidA,
                  .demangledName = w.intern("void gemm<float>(float*, int)"),
                  .shortName = w.intern("gemm"),
                  .mangledName = w.intern("_Z4gemmIfEvPfi"),
                  .launchType = 0,
                  .cacheConfig = 1,
                  .registersPerThread = 47,
                  .gridX = 864,
                  .gridY = 2,
                  .gridZ = 1,
                  .blockX = 256,
                  .blockY = 1,
                  .blockZ = 1,
                  .staticSharedMemory = 1024,
                  .dynamicSharedMemory = 2048,
                  .localMemoryPerThread = 16,
                  .localMemoryTotal = 4096,
                  .gridId = 12,
                  .sharedMemoryExecuted = 8192};
  w.addKernel(k1);
  KernelRecord k2{.start = 1'160'000,
                  .end = 1'160'000,
                  .deviceId = 1,
                  .contextId = 2,
                  .streamId = 13,
                  .correlationId = correlationB(o, 1),
                  .globalPid = kGlobalPidB,
                  .demangledName = w.intern("vecAdd"),
                  .shortName = w.intern("vecAdd"),
                  .launchType = 1,
                  .registersPerThread = 8,
                  .gridX = 1,
                  .gridY = 1,
                  .gridZ = 1,
                  .blockX = 32,
                  .blockY = 1,
                  .blockZ = 1,
                  .gridId = 3,
                  .graphNodeId = 9,
                  .graphId = 5};
  w.addKernel(k2);
  KernelRecord k3 = k1;  // no correlation id: no flow
  k3.start = 1'190'000;
  k3.end = 1'195'000;
  k3.correlationId = 0;
  k3.demangledName = w.intern(longName());
  w.addKernel(k3);
  KernelRecord k4 = k1;  // a correlation id no API call has: no flow
  k4.start = 1'196'000;
  k4.end = 1'197'000;
  k4.streamId = 8;
  k4.correlationId = 77;
  k4.demangledName = w.intern("orphan_kernel");
  k4.shortName = k4.demangledName;
  w.addKernel(k4);

  w.addMemcpy({.start = 1'210'000,
               .end = 1'222'000,
               .deviceId = 0,
               .contextId = 1,
               .streamId = 7,
               .correlationId = 2,
               .globalPid = kGlobalPidA,
               .bytes = 92'928,
               .copyKind = 1,
               .srcKind = 0,
               .dstKind = 2,
               .srcDeviceId = 0,
               .dstDeviceId = 0});
  w.addMemcpy({.start = 1'260'000,
               .end = 1'260'000,
               .deviceId = 1,
               .contextId = 2,
               .streamId = 13,
               .correlationId = correlationB(o, 2),
               .globalPid = kGlobalPidB,
               .bytes = 4096,
               .copyKind = 10,
               .srcKind = 2,
               .dstKind = 2,
               .srcDeviceId = 1,
               .dstDeviceId = 0,
               .graphNodeId = 3});
  w.addMemset({.start = 1'410'000,
               .end = 1'410'002,
               .deviceId = 0,
               .contextId = 1,
               .streamId = 20,
               .correlationId = 5,
               .globalPid = kGlobalPidA,
               .value = 255,
               .bytes = 512,
               .memKind = 2});

  w.addSync({.start = 1'500'100,
             .end = 1'500'300,
             .deviceId = 0,
             .contextId = 1,
             .streamId = 7,
             .correlationId = 6,
             .globalPid = kGlobalPidA,
             .syncType = SyncType::kStreamSynchronize});
  w.addSync({.start = 1'600'000,
             .end = 1'600'010,
             .deviceId = 0,
             .contextId = 1,
             .streamId = 7,
             .globalPid = kGlobalPidA,
             .syncType = SyncType::kEventSynchronize,
             .eventId = 12,
             .eventSyncId = 1012});
  w.addSync({.start = 1'600'100,
             .end = 1'600'110,
             .deviceId = 0,
             .contextId = 1,
             .streamId = 8,
             .globalPid = kGlobalPidA,
             .syncType = SyncType::kStreamWaitEvent,
             .eventId = 13});
  w.addSync({.start = 1'600'200,
             .end = 1'600'210,
             .deviceId = 0,
             .contextId = 1,
             .streamId = 4'294'967'295,
             .globalPid = kGlobalPidA,
             .syncType = SyncType::kContextSynchronize});
  w.addSync({.start = 1'600'300,
             .end = 1'600'300,
             .deviceId = 0,
             .contextId = 1,
             .streamId = 7,
             .globalPid = kGlobalPidA,
             .syncType = SyncType::kUnknown});

  w.addNvtx({.start = 1'000'000,
             .end = 1'900'000,
             .eventType = NvtxEventType::kPushPopRange,
             .color = 0xFF00FF00,
             .text = "forward 🔥",
             .globalTid = kA1});
  w.addNvtx({.start = 2'000'000,
             .end = 2'100'000,
             .eventType = NvtxEventType::kPushPopRange,
             .globalTid = kA2,
             .textId = w.intern("registered range"),
             .domainId = 1});
  w.addNvtx({.start = 3'000'000,
             .eventType = NvtxEventType::kMark,
             .category = 4,
             .text = "checkpoint",
             .globalTid = kB1});
  w.addNvtx({.start = 1'500'000,
             .end = 2'500'000,
             .eventType = NvtxEventType::kStartEndRange,
             .rangeId = 17,
             .category = 3,
             .text = "async io",
             .globalTid = kA1,
             .endGlobalTid = kA2,
             .domainId = 2});

  // Plain events as the Kineto importer stores them.
  w.addPlainEvent({.start = 500,
                   .end = 9'000'500,
                   .pid = "Spans",
                   .tid = "PyTorch Profiler",
                   .nameId = w.intern("PyTorch Profiler (0)"),
                   .categoryId = w.intern("Trace"),
                   .phase = "X",
                   .args = R"({"Op count":0})"});
  w.addPlainEvent({.start = 500,
                   .end = 500,
                   .pid = "Traces",
                   .tid = "Trace PyTorch Profiler",
                   .nameId = w.intern("Iteration Start: PyTorch Profiler"),
                   .phase = "i",
                   .args = R"({"__event":{"s":"g"}})"});
  w.addPlainEvent({.start = 700,
                   .end = 700,
                   .pid = "4242",
                   .tid = "4250",
                   .nameId = w.intern("fwdbwd"),
                   .categoryId = w.intern("fwdbwd"),
                   .phase = "f",
                   .args = R"({"__event":{"id":5,"bp":"e"},"x":1})"});
  w.addPlainEvent({.start = 800,
                   .end = 800,
                   .pid = "4242",
                   .tid = "007",
                   .nameId = w.intern("Memory Usage"),
                   .categoryId = w.intern("memory"),
                   .phase = "C",
                   .args = R"({"Total Allocated":1024})"});
  w.addPlainEvent({.start = 900, .end = 900, .phase = "i"});

  w.addExternalCorrelation({kGlobalPidA, 1, 4});
  w.addExternalCorrelation({kGlobalPidA, 2, 4});
  w.addExternalCorrelation({kGlobalPidA, 3, 4});
  w.addExternalCorrelation({kGlobalPidA, 6, 2});
  w.addExternalCorrelation({kGlobalPidB, correlationB(o, 1), 1});

  w.addCalibration({"cupti", "cudaLaunchKernel", 1234.5, 12.25, 100});
  w.addCalibration({"annotation", "", 80.0, 0.1, 5});
  w.commit();
}

}  // namespace rlscope::exporter::testing
