// Wave scaling and peak-throughput predictions computed by hand, on two made-up GPUs whose
// ratios are round: the target has twice the SMs, clock and bandwidth and four times the peaks.
#include "rlscope/predictor/wave_scaling.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rlscope::predictor {
namespace {

GpuSpec ampereLike(const char* name, int sms, double clockMhz, double bandwidth, double fp32,
                   double tf32) {
  GpuSpec g;
  g.name = name;
  g.ccMajor = 8;
  g.ccMinor = 0;
  g.smCount = sms;
  g.baseClockMhz = g.boostClockMhz = clockMhz;
  g.memoryBandwidthGBs = g.achievableBandwidthGBs = bandwidth;
  g.fp32Tflops = fp32;
  g.tf32Tflops = tf32;
  g.fp16Tflops = g.bf16Tflops = 2 * tf32;
  g.registersPerSm = g.registersPerBlock = 65536;
  g.sharedMemPerSm = 167936;
  g.sharedMemPerBlock = 49152;
  g.sharedMemPerBlockOptin = 166912;
  g.maxThreadsPerSm = 2048;
  g.maxThreadsPerBlock = 1024;
  g.maxBlocksPerSm = 32;
  return g;
}

class WaveScaling : public ::testing::Test {
 protected:
  // 256 threads and 32 registers: 8 blocks per SM on both (warps and registers both allow 8),
  // so a wave is 800 blocks on the origin and 1600 on the target.
  KernelLaunch launch(std::int64_t blocks, double flops = 0, double bytes = 0) const {
    return {blocks, {256, 32, 0, 0}, 1000.0, bytes, flops};
  }
  KernelPrediction predict(const KernelLaunch& k, KernelTraits traits = {}) const {
    return KernelPredictor(origin, target).predict(k, traits);
  }

  GpuSpec origin = ampereLike("O", 100, 1000, 1000, 10, 100);
  GpuSpec target = ampereLike("T", 200, 2000, 2000, 40, 400);
};

TEST_F(WaveScaling, MemoryBoundKernelsFollowAchievableBandwidth) {
  for (std::int64_t blocks : {1600, 8000, 100000}) {
    auto p = predict(launch(blocks));
    EXPECT_EQ(p.method, Method::kWaveScaledMemoryBound);
    EXPECT_DOUBLE_EQ(p.gamma, 1);
    EXPECT_DOUBLE_EQ(p.timeNs, 500) << blocks << " blocks";
  }
}

TEST_F(WaveScaling, ComputeBoundKernelsFollowWavesAndClock) {
  // FLOPs without DRAM bytes: gamma 0. 8000 blocks: 10 waves -> 5, clock x2: a quarter.
  auto p = predict(launch(8000, /*flops=*/1e9, /*bytes=*/0));
  EXPECT_EQ(p.method, Method::kWaveScaled);
  EXPECT_DOUBLE_EQ(p.gamma, 0);
  EXPECT_EQ(p.occupancyOrigin, 8);
  EXPECT_EQ(p.occupancyTarget, 8);
  EXPECT_EQ(p.wavesOrigin, 10);
  EXPECT_EQ(p.wavesTarget, 5);
  EXPECT_DOUBLE_EQ(p.timeNs, 250);
}

TEST_F(WaveScaling, APartialLastWaveCountsAsAWholeOne) {
  // 2400 blocks: 3 waves of 800 -> 2 waves of 1600 (the second half full), clock x2.
  auto p = predict(launch(2400, 1e9, 0));
  EXPECT_EQ(p.wavesOrigin, 3);
  EXPECT_EQ(p.wavesTarget, 2);
  EXPECT_DOUBLE_EQ(p.timeNs, 1000 * 0.5 * 2.0 / 3.0);
}

TEST_F(WaveScaling, OneWaveOnTheOriginIsNotSmallWhenItFillsIt) {
  // 800 blocks: exactly one wave on the origin, half of one on the target: not "small" (that
  // needs less than a wave on both), so bandwidth applies.
  auto p = predict(launch(800));
  EXPECT_EQ(p.wavesOrigin, 1);
  EXPECT_EQ(p.wavesTarget, 1);
  EXPECT_DOUBLE_EQ(p.timeNs, 500);
}

TEST_F(WaveScaling, SmallKernelsFollowTheBusiestSmAndClockWhateverTheirGamma) {
  // 100 blocks: under a wave on both. Compute-bound: one block per SM on both, clock x2.
  EXPECT_DOUBLE_EQ(predict(launch(100, 1e9, 0)).timeNs, 500);
  // 300 blocks: 3 per SM on the origin, 2 on the target.
  EXPECT_DOUBLE_EQ(predict(launch(300, 1e9, 0)).timeNs, 1000 * 0.5 * 2.0 / 3.0);
  // Memory-bound and small: latency-bound too, so the clock (x2) applies, not bandwidth.
  EXPECT_DOUBLE_EQ(predict(launch(100)).timeNs, 500);
  EXPECT_DOUBLE_EQ(predict(launch(300)).timeNs, 1000 * 0.5 * 2.0 / 3.0);
}

TEST_F(WaveScaling, GammaComesFromTheRooflineOfTheTarget) {
  // The target's ridge: 40 TFLOP/s / 2000 GB/s = 20 FLOP/byte.
  auto below = predict(launch(8000, /*flops=*/10e6, /*bytes=*/1e6));  // 10 FLOP/byte
  EXPECT_DOUBLE_EQ(below.gamma, 0.75);
  EXPECT_NEAR(below.timeNs, 1000 * std::pow(0.5, 0.75) * std::pow(0.25, 0.25), 1e-9);
  auto above = predict(launch(8000, 40e6, 1e6));  // 40 FLOP/byte
  EXPECT_DOUBLE_EQ(above.gamma, 0.25);
  auto ridge = predict(launch(8000, 20e6, 1e6));
  EXPECT_DOUBLE_EQ(ridge.gamma, 0.5);
}

TEST_F(WaveScaling, TargetRegisterCountsChangeTheTargetsOccupancy) {
  KernelLaunch k = launch(8000, 1e9, 0);
  k.targetRegistersPerThread = 128;  // 32768 registers a block: 2 blocks per SM, waves of 400
  auto p = predict(k);
  EXPECT_EQ(p.occupancyTarget, 2);
  EXPECT_EQ(p.wavesTarget, 20);
  EXPECT_DOUBLE_EQ(p.timeNs, 1000 * 0.5 * 20.0 / 10.0);
}

TEST_F(WaveScaling, LibraryKernelsScaleWithThePeakOfTheirPrecision) {
  KernelTraits gemm{KernelKind::kLibrary, Precision::kTf32};
  auto big = predict(launch(8000), gemm);
  EXPECT_EQ(big.method, Method::kPeakThroughput);
  EXPECT_DOUBLE_EQ(big.timeNs, 250);  // 100 -> 400 TFLOP/s
  // 50 blocks use 50 SMs on both: half the origin's peak against a quarter of the target's.
  EXPECT_DOUBLE_EQ(predict(launch(50), gemm).timeNs, 500);
  // FP32 GEMMs use the CUDA cores' peak: 10 -> 40.
  EXPECT_DOUBLE_EQ(predict(launch(8000), {KernelKind::kLibrary, Precision::kFp32}).timeNs, 250);
}

TEST_F(WaveScaling, PrecisionsTheTargetLacksRunAtItsFp32Peak) {
  target.tf32Tflops = 0;  // a pre-Ampere target: TF32 work runs as FP32, at 40 TFLOP/s
  EXPECT_DOUBLE_EQ(predict(launch(8000), {KernelKind::kLibrary, Precision::kTf32}).timeNs, 2500);
}

TEST_F(WaveScaling, CommunicationKeepsItsTime) {
  auto p = predict(launch(8000), {KernelKind::kCommunication, Precision::kFp32});
  EXPECT_EQ(p.method, Method::kKept);
  EXPECT_DOUBLE_EQ(p.timeNs, 1000);
}

TEST_F(WaveScaling, KernelsThatCannotRunOnTheTargetSayWhy) {
  KernelLaunch k = launch(8000);
  k.resources.dynamicSharedMemory = 160000;  // fits the origin's opt-in, not the target's
  target.sharedMemPerSm = 102400;
  target.sharedMemPerBlockOptin = 101376;
  auto p = predict(k);
  EXPECT_EQ(p.method, Method::kCannotPredict);
  EXPECT_DOUBLE_EQ(p.timeNs, 1000);
  EXPECT_STRNE(p.reason, "");
  auto none = predict({0, {0, 0, 0, 0}, 1000.0});
  EXPECT_EQ(none.method, Method::kCannotPredict);
}

TEST_F(WaveScaling, DeviceCopiesFollowBandwidth) {
  EXPECT_DOUBLE_EQ(KernelPredictor(origin, target).predictDeviceCopyNs(1000), 500);
}

TEST(KernelTraits, NamesTellLibraryKernelsAndTheirPrecision) {
  struct Case {
    const char* name;
    KernelKind kind;
    Precision precision;
  };
  for (const Case& c : {
           Case{"ampere_sgemm_128x64_nn", KernelKind::kLibrary, Precision::kFp32},
           Case{"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", KernelKind::kLibrary,
                Precision::kFp32},
           Case{"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw",
                KernelKind::kLibrary, Precision::kTf32},
           Case{"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", KernelKind::kLibrary,
                Precision::kFp16},
           Case{"volta_h884gemm_64x64_ldg8_nn", KernelKind::kLibrary, Precision::kFp16},
           Case{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", KernelKind::kLibrary,
                Precision::kBf16},
           Case{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
                KernelKind::kLibrary, Precision::kTf32},
           Case{"void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4>",
                KernelKind::kWaveScaled, Precision::kFp32},
           Case{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
                "<float>>",
                KernelKind::kWaveScaled, Precision::kFp32},
           Case{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", KernelKind::kCommunication,
                Precision::kFp32},
       }) {
    KernelTraits t = classifyKernel(c.name);
    EXPECT_EQ(t.kind, c.kind) << c.name;
    if (c.kind != KernelKind::kCommunication) {
      EXPECT_EQ(t.precision, c.precision) << c.name;
    }
  }
}

}  // namespace
}  // namespace rlscope::predictor
