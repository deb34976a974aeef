#include "rlscope/predictor/wave_scaling.h"

#include <algorithm>
#include <cmath>

namespace rlscope::predictor {
namespace {

// The learned models' mean error on GPUs they never saw (docs/predictor.md, "Validation").
constexpr double kLearnedGemmError = 0.298, kLearnedConvError = 0.231,
                 kLearnedElementwiseError = 0.173, kLearnedNormalisationError = 0.211;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

const char* methodName(Method m) {
  switch (m) {
    case Method::kLearned:
      return "learned model";
    case Method::kWaveScaledMemoryBound:
      return "wave-scaled (memory-bound)";
    case Method::kPeakThroughput:
      return "peak throughput";
    case Method::kKept:
      return "kept";
    case Method::kCannotPredict:
      return "cannot predict";
    case Method::kWaveScaled:
      break;
  }
  return "wave-scaled (roofline)";
}

double expectedError(const KernelPrediction& p) {
  // Measured by scripts/validate-predictor.sh (learned: every row; peak ratios: --analytic on
  // kernel-dominated rows) and BM_MemoryBoundAccuracy; the tables are in docs/predictor.md.
  bool conv = p.family == KernelFamily::kConv;
  switch (p.method) {
    case Method::kLearned:
      switch (p.family.value_or(KernelFamily::kGemm)) {
        case KernelFamily::kGemm:
          return kLearnedGemmError;
        case KernelFamily::kConv:
          return kLearnedConvError;
        case KernelFamily::kElementwise:
          return kLearnedElementwiseError;
        case KernelFamily::kNormalisation:
          return kLearnedNormalisationError;
      }
      break;
    case Method::kPeakThroughput:
      return conv ? 0.224 : 0.540;
    case Method::kWaveScaled:
    case Method::kWaveScaledMemoryBound:
      return 0.077;
    case Method::kKept:
    case Method::kCannotPredict:
      break;
  }
  return 0;
}

double peakFlops(const GpuSpec& gpu, Precision precision) {
  double tflops = 0;
  switch (precision) {
    case Precision::kTf32:
      tflops = gpu.tf32Tflops;
      break;
    case Precision::kFp16:
      tflops = gpu.fp16Tflops;
      break;
    case Precision::kBf16:
      tflops = gpu.bf16Tflops;
      break;
    case Precision::kFp32:
      break;
  }
  // A library computes on the faster of the two: half-precision GEMMs on Pascal GeForce (FP16
  // at 1/64 rate) accumulate and multiply in FP32.
  return std::max(tflops, gpu.fp32Tflops) * 1e12;
}

KernelPredictor::KernelPredictor(const GpuSpec& origin, const GpuSpec& target,
                                 const KernelModels* models)
    : origin_(origin),
      target_(target),
      models_(models),
      bandwidthRatio_(origin.achievableBandwidthGBs / target.achievableBandwidthGBs),
      clockRatio_(origin.boostClockMhz / target.boostClockMhz) {}

KernelPrediction KernelPredictor::predict(const KernelLaunch& k, const KernelTraits& traits) const {
  if (traits.kind == KernelKind::kCommunication)
    return {.timeNs = k.timeNs, .method = Method::kKept, .gamma = 0};
  if (auto p = learned(k, traits)) return *p;
  if (k.blocks <= 0 || k.resources.blockSize <= 0) {
    return {.timeNs = k.timeNs,
            .method = Method::kCannotPredict,
            .reason = "no launch configuration (grid and block) recorded"};
  }
  if (traits.kind == KernelKind::kLibrary) return peakThroughput(k, traits);
  return waveScaled(k, traits);
}

// The learned models cover FP32 kernels of their families with known work (and shape, for GEMM
// and convolution). GEMMs and convolutions take the pair model where the file has one: the log
// of their time ratio between the two GPUs. Otherwise the family's model gives the kernel's time
// on both GPUs; what the origin measured beyond the model's kernel is taken as time the kernel's
// operator spends outside the GPU's work (launch, host) and carried over unchanged; a kernel that
// ran faster than its model on the origin keeps that ratio on the target. Convolutions without a
// pair model keep the peak ratios, which beat the convolution MLP on held-out GPUs
// (docs/predictor.md, "Validation").
std::optional<KernelPrediction> KernelPredictor::learned(const KernelLaunch& k,
                                                         const KernelTraits& traits) const {
  if (models_ == nullptr || traits.precision != Precision::kFp32) return std::nullopt;
  ModelledKernel m{.work = {k.flops, k.dramBytes}, .gemm = k.gemm, .conv = k.conv};
  if (k.gemm)
    m.family = KernelFamily::kGemm;
  else if (k.conv)
    m.family = KernelFamily::kConv;
  else if (traits.family == KernelFamily::kElementwise ||
           traits.family == KernelFamily::kNormalisation)
    m.family = *traits.family;
  else
    return std::nullopt;
  if (!(k.flops > 0) || !(k.dramBytes > 0) || !(k.timeNs > 0)) return std::nullopt;
  KernelPrediction p{.method = Method::kLearned, .gamma = 0, .family = m.family};
  // The same GPU: the time as measured. (The pair models never saw a GPU paired with itself,
  // and their trees are not exact there.)
  if (origin_.name == target_.name) {
    p.timeNs = k.timeNs;
    return p;
  }
  if (models_->coversPairs(m.family) && k.blocks > 0) {
    double ratio = std::exp(models_->pairLogRatio(m, origin_, target_, k.timeNs / 1e3, k.blocks));
    if (!std::isfinite(ratio) || !(ratio > 0)) return std::nullopt;
    p.timeNs = k.timeNs * ratio;
    return p;
  }
  if (m.family == KernelFamily::kConv || !models_->covers(m.family)) return std::nullopt;
  double originNs = models_->kernelUs(m, origin_) * 1e3;
  double targetNs = models_->kernelUs(m, target_) * 1e3;
  if (!std::isfinite(originNs) || !std::isfinite(targetNs) || !(originNs > 0) || !(targetNs > 0))
    return std::nullopt;
  p.timeNs = k.timeNs >= originNs ? k.timeNs - originNs + targetNs : k.timeNs * targetNs / originNs;
  return p;
}

// Habitat's roofline rule (reference: habitat-method.md §1.4) against the target's ridge point,
// in FLOP per byte with the peak of the kernel's precision: 1 far below the ridge, 0.5 on it,
// towards 0 far above. Without both counts a non-library kernel is taken as memory-bound, as
// Habitat does for kernels without metrics: elementwise, reduction and normalisation kernels,
// most of what is not a GEMM, move bytes rather than compute.
double KernelPredictor::gamma(const KernelLaunch& k, Precision precision) const {
  if (k.flops <= 0) return 1;
  if (k.dramBytes <= 0) return 0;
  double intensity = k.flops / k.dramBytes;
  double ridge = peakFlops(target_, precision) / (target_.achievableBandwidthGBs * 1e9);
  return intensity <= ridge ? 1 - intensity / (2 * ridge) : ridge / (2 * intensity);
}

// The same code on both GPUs: time = waves x time per wave. The compute-bound part of a wave
// scales with the clock, its memory-bound part with achievable bandwidth; gamma mixes the two
// (T_d = T_o * r_mem^gamma * r_compute^(1-gamma)). A kernel of less than one wave on both GPUs
// runs all its blocks at once and is bound by latency, not throughput: instruction and cache
// latencies, block scheduling and the kernel's own start, all counted in cycles of the SM clock.
// Its time follows the blocks on the busiest SM and the clock, whatever its gamma (Habitat kept
// such memory-bound kernels unchanged, which left them unchanged on every GPU).
KernelPrediction KernelPredictor::waveScaled(const KernelLaunch& k,
                                             const KernelTraits& traits) const {
  KernelPrediction p;
  Occupancy o = computeOccupancy(origin_, k.resources);
  KernelResources onTarget = k.resources;
  if (k.targetRegistersPerThread > 0) onTarget.registersPerThread = k.targetRegistersPerThread;
  Occupancy d = computeOccupancy(target_, onTarget);
  p.occupancyOrigin = o.activeBlocksPerSm;
  p.occupancyTarget = d.activeBlocksPerSm;
  if (d.activeBlocksPerSm == 0) {
    p.timeNs = k.timeNs;
    p.method = Method::kCannotPredict;
    p.reason = "its block does not fit an SM of the target GPU";
    return p;
  }
  // A launch the database says cannot fit its own GPU ran anyway: the origin's entry is off;
  // one block per SM keeps the arithmetic defined.
  std::int64_t waveOrigin = std::int64_t{origin_.smCount} * std::max(o.activeBlocksPerSm, 1);
  std::int64_t waveTarget = std::int64_t{target_.smCount} * d.activeBlocksPerSm;
  p.wavesOrigin = ceilDiv(k.blocks, waveOrigin);
  p.wavesTarget = ceilDiv(k.blocks, waveTarget);
  p.gamma = gamma(k, traits.precision);
  p.method = k.flops > 0 ? Method::kWaveScaled : Method::kWaveScaledMemoryBound;

  bool small = k.blocks < waveOrigin && k.blocks < waveTarget;
  if (small) {
    p.timeNs = k.timeNs * clockRatio_ * static_cast<double>(ceilDiv(k.blocks, target_.smCount)) /
               static_cast<double>(ceilDiv(k.blocks, origin_.smCount));
    return p;
  }
  double compute =
      clockRatio_ * static_cast<double>(p.wavesTarget) / static_cast<double>(p.wavesOrigin);
  p.timeNs = k.timeNs * std::pow(bandwidthRatio_, p.gamma) * std::pow(compute, 1 - p.gamma);
  return p;
}

// GEMM and convolution libraries re-tune per GPU, so waves of the origin's launch mean little;
// what carries over is the throughput of the precision's units. A kernel using fewer blocks
// than the GPU has SMs gets only those SMs' share of the peak.
KernelPrediction KernelPredictor::peakThroughput(const KernelLaunch& k,
                                                 const KernelTraits& traits) const {
  KernelPrediction p;
  p.method = Method::kPeakThroughput;
  p.family = traits.family;
  double usedOrigin = static_cast<double>(std::min<std::int64_t>(k.blocks, origin_.smCount));
  double usedTarget = static_cast<double>(std::min<std::int64_t>(k.blocks, target_.smCount));
  double originRate = peakFlops(origin_, traits.precision) * usedOrigin / origin_.smCount;
  double targetRate = peakFlops(target_, traits.precision) * usedTarget / target_.smCount;
  p.gamma = k.flops > 0 ? gamma(k, traits.precision) : 0;
  p.timeNs = k.timeNs * std::pow(bandwidthRatio_, p.gamma) *
             std::pow(originRate / targetRate, 1 - p.gamma);
  return p;
}

}  // namespace rlscope::predictor
