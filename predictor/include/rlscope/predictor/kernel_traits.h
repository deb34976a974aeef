// What a kernel's name tells the predictor: whether a library picks its implementation per GPU
// (GEMM, convolution), whether it is communication, and the precision it computes in.
#pragma once

#include <optional>
#include <string_view>

namespace rlscope::predictor {

enum class KernelKind {
  kWaveScaled,     // the same code on every GPU: elementwise, reductions, normalisations, ...
  kLibrary,        // cuBLAS / cuDNN / CUTLASS GEMM and convolution: re-tuned per GPU
  kCommunication,  // NCCL: set by the interconnect, which the database does not model
};
enum class Precision { kFp32, kTf32, kFp16, kBf16 };
// The operator families the learned models cover (kernel_model.h).
enum class KernelFamily { kGemm, kConv, kElementwise, kNormalisation };

struct KernelTraits {
  KernelKind kind = KernelKind::kWaveScaled;
  Precision precision = Precision::kFp32;
  std::optional<KernelFamily> family;  // when the name tells it
};

const char* kernelKindName(KernelKind kind);
const char* precisionName(Precision precision);
const char* kernelFamilyName(KernelFamily family);

// From the (demangled or mangled) kernel name, e.g. "ampere_fp16_s16816gemm_fp16_128x128_ldg8",
// "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", "ncclKernel_AllReduce_...".
KernelTraits classifyKernel(std::string_view name);

}  // namespace rlscope::predictor
