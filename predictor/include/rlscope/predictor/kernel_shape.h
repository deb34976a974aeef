// What a kernel computes, from the shape of its operation: the FLOPs and DRAM bytes of a GEMM or
// a convolution (the roofline's inputs), and the launch-configuration text the command line and
// kernel tables take ("864", "864,1,1", "128x128x64").
#pragma once

#include <cstdint>
#include <string_view>

#include "rlscope/predictor/kernel_traits.h"

namespace rlscope::predictor {

// C[M,N] = A[M,K] · B[K,N], `batch` times.
struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
};

// NCHW input of C channels, K filters of R×S, one stride and padding for both dimensions.
struct ConvShape {
  std::int64_t n = 0, c = 0, k = 0, h = 0, w = 0, r = 0, s = 0, stride = 1, pad = 0;
};

struct Work {
  double flops = 0;
  double dramBytes = 0;  // operands read and the result written once: a lower bound
};

// Bytes of one element in the precision a kernel computes in: 4 for FP32 and TF32 (TF32 GEMMs
// keep FP32 operands), 2 for FP16 and BF16.
int elementBytes(Precision precision);

Work gemmWork(const GemmShape& g, Precision precision);
// Throws std::runtime_error when the filter does not fit the padded input.
Work convWork(const ConvShape& c, Precision precision);

// "B,M,N,K" (or "BxMxNxK"); throws std::runtime_error naming `what` for anything else.
GemmShape parseGemm(std::string_view text, std::string_view what = "--gemm");
// "N,C,K,H,W,R,S,STRIDE,PAD".
ConvShape parseConv(std::string_view text, std::string_view what = "--conv");
// The blocks of a grid, "G" or "X,Y,Z" (or "XxYxZ").
std::int64_t parseGrid(std::string_view text, std::string_view what = "--grid");

}  // namespace rlscope::predictor
