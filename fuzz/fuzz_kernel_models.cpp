// A kernel models file (`rlscope predict --kernel-models FILE`): a user's or a stranger's file,
// parsed and, when accepted, evaluated on a GEMM, a convolution and an elementwise kernel between
// two GPUs. Whatever the weights or trees, rlscope must refuse the file in one line or compute
// (a NaN is an answer; an out-of-bounds node or a crash is not).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_model.h"

using namespace rlscope::predictor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  KernelModels models;
  try {
    models = KernelModels::parse(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "fuzz.json");
  } catch (const std::runtime_error&) {
    return 0;
  }
  static const GpuDatabase& db = GpuDatabase::builtIn();
  const GpuSpec& origin = db.get("A100 SXM4 40GB");
  const GpuSpec& target = db.get("T4");
  GemmShape gemm{2, 512, 768, 1024};
  ConvShape conv{8, 64, 128, 56, 56, 3, 3, 1, 1};
  ModelledKernel kernels[] = {
      {.family = KernelFamily::kGemm, .work = gemmWork(gemm, Precision::kFp32), .gemm = gemm},
      {.family = KernelFamily::kConv, .work = convWork(conv, Precision::kFp32), .conv = conv},
      {.family = KernelFamily::kElementwise, .work = {1e6, 12e6}},
      {.family = KernelFamily::kNormalisation, .work = {5e6, 8e6}},
  };
  for (const ModelledKernel& k : kernels) {
    if (models.covers(k.family)) (void)models.kernelUs(k, target);
    if (models.coversPairs(k.family)) (void)models.pairLogRatio(k, origin, target, 80.0, 4096);
  }
  return 0;
}
