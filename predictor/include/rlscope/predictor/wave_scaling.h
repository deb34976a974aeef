// One kernel's time on another GPU (docs/predictor.md, "Kernels"): Habitat's wave scaling with
// the roofline's memory-boundedness, made occupancy- and tail-aware, on achievable rather than
// spec-sheet bandwidth; library GEMMs and convolutions by the peak of their precision; NCCL kept.
#pragma once

#include <cstdint>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_model.h"
#include "rlscope/predictor/kernel_traits.h"
#include "rlscope/predictor/occupancy.h"

namespace rlscope::predictor {

struct KernelLaunch {
  std::int64_t blocks = 0;    // gridX * gridY * gridZ
  KernelResources resources;  // block size, registers per thread, shared memory
  double timeNs = 0;          // measured on the origin GPU
  double dramBytes = 0;       // DRAM bytes read + written, 0 when unknown
  double flops = 0;           // floating-point operations, 0 when unknown
  // Registers per thread of the target's build of the kernel when known (cuobjdump -res-usage
  // of its binary for that architecture); 0: the origin's.
  int targetRegistersPerThread = 0;
  // The GEMM or convolution the kernel computes, when known: what the learned models need.
  std::optional<GemmShape> gemm;
  std::optional<ConvShape> conv;
};

enum class Method {
  kLearned,                // the learned model of its family (kernel_model.h), both GPUs
  kWaveScaled,             // wave scaling, gamma from the roofline (FLOPs and bytes known)
  kWaveScaledMemoryBound,  // wave scaling, no FLOP/byte counts: taken as memory-bound (gamma 1)
  kPeakThroughput,         // library kernel: the ratio of its precision's peak (per used SM)
  kKept,                   // communication: the origin's time
  kCannotPredict,          // does not fit the target (or has no launch configuration): origin time
};
const char* methodName(Method m);

struct KernelPrediction {
  double timeNs = 0;
  Method method = Method::kWaveScaled;
  double gamma = 1;  // memory-boundedness used, 0 (compute) .. 1 (memory)
  int occupancyOrigin = 0, occupancyTarget = 0;   // active blocks per SM
  std::int64_t wavesOrigin = 0, wavesTarget = 0;  // ceil(blocks / (SMs * occupancy))
  const char* reason = "";                        // with kCannotPredict: why
  std::optional<KernelFamily> family;             // with kLearned the model used, else when known
};

// Predicts kernels from one GPU to another; ratios that depend only on the pair are computed
// once. Cheap to call: two occupancy computations and some arithmetic per kernel.
class KernelPredictor {
 public:
  // `models`: the learned models to use where they apply (nullptr: the analytic rules only).
  KernelPredictor(const GpuSpec& origin, const GpuSpec& target,
                  const KernelModels* models = &KernelModels::builtIn());

  KernelPrediction predict(const KernelLaunch& kernel, const KernelTraits& traits) const;
  // A device-to-device copy or a memset of `bytes` (a DRAM stream): the bandwidth ratio.
  double predictDeviceCopyNs(double originNs) const { return originNs * bandwidthRatio_; }

  const GpuSpec& origin() const { return origin_; }
  const GpuSpec& target() const { return target_; }

 private:
  std::optional<KernelPrediction> learned(const KernelLaunch& k, const KernelTraits& traits) const;
  KernelPrediction waveScaled(const KernelLaunch& k, const KernelTraits& traits) const;
  KernelPrediction peakThroughput(const KernelLaunch& k, const KernelTraits& traits) const;
  double gamma(const KernelLaunch& k, Precision precision) const;

  const GpuSpec& origin_;
  const GpuSpec& target_;
  const KernelModels* models_;
  double bandwidthRatio_;  // achievable bandwidth origin / target: < 1 when the target is faster
  double clockRatio_;      // boost clock origin / target
};

// The mean absolute error predictions like `p` showed where they were measured against real
// timings (docs/predictor.md, "Expected error"), a fraction: the learned models' and the peak
// ratios' on held-out GPUs (scripts/validate-predictor.sh), wave scaling's on published
// bandwidth measurements. 0 for times kept as recorded (communication, cannot predict), whose
// error the predictor does not know.
double expectedError(const KernelPrediction& p);

// The peak of a precision on a GPU in FLOP/s, with the fallback a library takes where the GPU
// is faster in FP32 (no tensor cores for TF32 or BF16, Pascal GeForce's 1/64-rate FP16).
double peakFlops(const GpuSpec& gpu, Precision precision);

}  // namespace rlscope::predictor
