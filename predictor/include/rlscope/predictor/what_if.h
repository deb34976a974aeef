// The whole-run what-if (docs/predictor.md, "Operations and the run"): every GPU activity of a
// trace predicted on a target GPU, then per operation and for the run on the analyzer's
// breakdown: CPU-only time stays, GPU-only time and the CPU's waits for the GPU scale, and time
// when both were busy becomes the longer of the CPU part and the scaled GPU part.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_traits.h"
#include "rlscope/predictor/replay.h"
#include "rlscope/predictor/wave_scaling.h"
#include "rlscope/trace/reader.h"

namespace rlscope::predictor {

struct PredictOptions {
  // The GPU the trace was recorded on; nullptr: each device's, matched from the trace's GPU
  // properties (TARGET_INFO_GPU) to the database.
  const GpuSpec* origin = nullptr;
  std::function<void(const std::string&)> progress;
};

// Every launch of one kernel name on one origin GPU.
struct KernelGroupPrediction {
  std::string name;
  KernelTraits traits;
  Method method = Method::kWaveScaled;  // of its longest launch
  std::uint64_t launches = 0;
  std::uint64_t cannotPredict = 0;  // launches kept at their origin time
  double originNs = 0, predictedNs = 0;
  double gamma = 0;  // of its longest launch
  int occupancyOrigin = 0, occupancyTarget = 0;
  double expectedError = 0;  // of its longest launch's method (expectedError), a fraction
};

struct OperationPrediction {
  std::int64_t process = 0;
  std::string name, phase;
  double originNs = 0, predictedNs = 0;
  double cpuNs = 0, gpuNs = 0, cpuGpuNs = 0, idleNs = 0;
  double gpuWaitNs = 0;  // of cpuGpu, the CPU waiting in synchronizing calls
  double gpuScale = 1;   // predicted / origin time of the GPU work it launched
  // The part of predictedNs that follows the GPU times the run's GPU-weighted expected error.
  double expectedErrorNs = 0;
};

struct RunPrediction {
  std::string origin, target;  // database names
  std::string originFrom;      // "trace" (matched from its GPU properties) or "--origin"
  // predictedNs: the run replayed (replay.replayed), else operationModelNs, the sum of the
  // operations' first-order predictions (kept beside the replay for comparison).
  double originNs = 0, predictedNs = 0, operationModelNs = 0;
  // The expected range of predictedNs: the run again with every GPU duration at the low and at
  // the high end of its expected error.
  double predictedLowNs = 0, predictedHighNs = 0;
  ReplayResult replay;
  double gpuOriginNs = 0, gpuPredictedNs = 0;  // every GPU activity, summed
  double gpuExpectedErrorNs = 0;  // every GPU activity's predicted time x its expected error
  // Time the run's result waited on the GPU: GPU-only time plus the CPU's waits in
  // synchronizing calls. An infinitely fast GPU saves at most this.
  double gpuBoundNs = 0;
  bool cpuBound = false;  // gpuBoundNs < kCpuBoundShare of the run
  std::uint64_t kernelLaunches = 0, cannotPredict = 0;
  std::vector<KernelGroupPrediction> kernels;   // longest origin time first
  std::vector<OperationPrediction> operations;  // per process, longest first
  std::vector<std::string> notes;

  double speedup() const { return predictedNs > 0 ? originNs / predictedNs : 0; }
  // The GPU work's expected error, a fraction: its predictions' errors weighted by their time.
  double gpuExpectedError() const {
    return gpuPredictedNs > 0 ? gpuExpectedErrorNs / gpuPredictedNs : 0;
  }
  double maxSpeedup() const {
    return originNs > gpuBoundNs ? originNs / (originNs - gpuBoundNs) : 0;
  }
  std::string verdict() const;  // one line a person reads first
};

// A run whose GPU-bound share is below this cannot gain much from any GPU.
inline constexpr double kCpuBoundShare = 0.10;

// The GPU a trace's device ran on, from its recorded name, else its compute capability, SM
// count and memory size. Throws std::runtime_error naming the device when nothing matches.
const GpuSpec& matchTraceGpu(const GpuDatabase& db, const trace::GpuInfoRecord& gpu);

// Throws std::runtime_error when the origin cannot be known: a trace without GPU properties and
// no PredictOptions::origin.
RunPrediction predictRun(trace::TraceReader& reader, const GpuDatabase& db, const GpuSpec& target,
                         const PredictOptions& options = {});

}  // namespace rlscope::predictor
