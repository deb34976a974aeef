// A PyTorch-on-ROCm profiler trace in the layout ROCm's Kineto (roctracer) writes, for the
// importer's and the analysis's tests: HIP calls under the "cuda_runtime" category with the
// stream handle as a hex string ("stream": "0x0"), sizes as strings and the HIP API id as
// "cid"; kernels and copies with no args (their launching call only in the ac2g flow's id); an
// AMD device with 64-wide wavefronts and ROCm's shared-memory key. Times are microseconds.
#pragma once

#include <string>

namespace rlscope::testing {

inline std::string rocmKinetoTrace() {
  return R"json({
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "AMD Instinct MI250X/MI250", "totalGlobalMem": 68702699520,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 64,
      "sharedMemPerBlock": 65536, "numSms": 104,
      "maxSharedMemoryPerMultiProcessor": 65536
    }
  ],
  "traceEvents": [
  {
    "ph": "X", "cat": "user_annotation", "name": "train_step", "pid": 4100, "tid": 4100,
    "ts": 1000.000, "dur": 400.000,
    "args": {"External id": 1}
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 4100, "tid": 4100,
    "ts": 1010.000, "dur": 60.000,
    "args": {"External id": 2}
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 4100, "tid": 4100,
    "ts": 1020.000, "dur": 40.000,
    "args": {
      "External id": 2,
      "stream": "0x0", "cid": 83, "correlation": 11, "src": "0x7f3c5c200000", "dst": "0x7f3b00000000", "size": "4096", "kind": "1"
    }
  },
  {
    "ph": "s", "id": 11, "pid": 4100, "tid": 4100, "ts": 1020.000,
    "cat": "ac2g", "name": "ac2g"
  },
  {
    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Host -> Device)", "pid": 0, "tid": 1,
    "ts": 1030.000, "dur": 20.000
  },
  {
    "ph": "f", "id": 11, "pid": 0, "tid": 1, "ts": 1030.000,
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4100, "tid": 4100,
    "ts": 1100.000, "dur": 50.000,
    "args": {"External id": 3}
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 4100, "tid": 4100,
    "ts": 1110.000, "dur": 20.000,
    "args": {
      "External id": 3,
      "kernel": "Cijk_Alik_Bljk_SB_MT64x64x16", "cid": 1, "correlation": 12,
      "stream": "0x7f3c5c000000",
      "grid": [4096, 1, 1],
      "block": [256, 1, 1],
      "shared memory": 16384
    }
  },
  {
    "ph": "s", "id": 12, "pid": 4100, "tid": 4100, "ts": 1110.000,
    "cat": "ac2g", "name": "ac2g"
  },
  {
    "ph": "X", "cat": "kernel", "name": "Cijk_Alik_Bljk_SB_MT64x64x16", "pid": 0, "tid": 1,
    "ts": 1140.000, "dur": 150.000
  },
  {
    "ph": "f", "id": 12, "pid": 0, "tid": 1, "ts": 1140.000,
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "hipDeviceSynchronize", "pid": 4100, "tid": 4100,
    "ts": 1150.000, "dur": 145.000,
    "args": {"cid": 46, "correlation": 13}
  },
  {
    "name": "process_name", "ph": "M", "ts": 1000.000, "pid": 4100, "tid": 0,
    "args": {"name": "python3"}
  },
  {
    "name": "thread_name", "ph": "M", "ts": 1000.000, "pid": 4100, "tid": 4100,
    "args": {"name": "thread 4100 (python3)"}
  },
  {
    "name": "process_name", "ph": "M", "ts": 1000.000, "pid": 0, "tid": 0,
    "args": {"name": "AMD Instinct MI250X/MI250"}
  }
  ],
  "traceName": "rocm_trace.json"
})json";
}

}  // namespace rlscope::testing
