#include "rlscope/predictor/kernel_traits.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "rlscope/gpu_metrics/gpu_metrics.h"

namespace rlscope::predictor {
namespace {

bool containsAny(const std::string& text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return text.find(w) != std::string::npos; });
}

// Names of GEMM and convolution kernels in cuBLAS, cuBLASLt, cuDNN and CUTLASS: their
// implementation (tile shapes, split-K, tensor-core path) is chosen per GPU, so the origin's
// launch configuration says nothing about the target's. gemv is memory-bound and stays
// wave-scaled, as do cuDNN's layout transforms and normalisations (cudnn::ops::nchwToNhwc,
// bn_fw_*): only its convolution kernels ("scudnn", "implicit_convolve", ...) match.
bool isLibraryKernel(const std::string& n) {
  if (containsAny(n, {"gemv"})) return false;
  return containsAny(
      n, {"gemm", "scudnn", "hcudnn", "cutlass", "xmma", "implicit_convolve", "winograd", "conv2d",
          "convolve", "fprop", "dgrad", "wgrad", "hmma", "imma", "tensorop"});
}

Precision precisionOf(const std::string& n) {
  if (containsAny(n, {"bf16", "bfloat16"})) return Precision::kBf16;
  if (containsAny(n, {"tf32"})) return Precision::kTf32;
  // Volta/Turing/Ampere half kernels: h884, h1688, s16816 with f16/fp16 operands, hmma.
  if (containsAny(n, {"fp16", "f16", "half", "h884", "h1688", "h16816", "hmma", "__half"}))
    return Precision::kFp16;
  // CUTLASS's "tensorop_s1688gemm" without f16 operands is TF32 (Ampere's 16x8x8 tf32 MMA).
  if (containsAny(n, {"tensorop_s1688", "s1688tf32"})) return Precision::kTf32;
  return Precision::kFp32;
}

// Library names say GEMM or convolution; PyTorch's own kernels say elementwise or normalisation
// (vectorized_elementwise_kernel, unrolled_elementwise_kernel, vectorized_layer_norm_kernel,
// cunn_SoftMaxForward, softmax_warp_forward).
std::optional<KernelFamily> familyOf(const std::string& n, KernelKind kind) {
  if (kind == KernelKind::kLibrary)
    return containsAny(n, {"gemm", "hmma", "imma", "tensorop"}) &&
                   !containsAny(n, {"cudnn", "conv", "fprop", "dgrad", "wgrad", "winograd"})
               ? KernelFamily::kGemm
               : KernelFamily::kConv;
  if (containsAny(n, {"elementwise_kernel"})) return KernelFamily::kElementwise;
  if (containsAny(n, {"layer_norm", "layernorm", "softmax"})) return KernelFamily::kNormalisation;
  return std::nullopt;
}

}  // namespace

const char* kernelFamilyName(KernelFamily family) {
  switch (family) {
    case KernelFamily::kGemm:
      return "gemm";
    case KernelFamily::kConv:
      return "conv";
    case KernelFamily::kNormalisation:
      return "normalisation";
    case KernelFamily::kElementwise:
      break;
  }
  return "elementwise";
}

const char* kernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kLibrary:
      return "library";
    case KernelKind::kCommunication:
      return "communication";
    case KernelKind::kWaveScaled:
      break;
  }
  return "wave-scaled";
}

const char* precisionName(Precision precision) {
  switch (precision) {
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp32:
      break;
  }
  return "fp32";
}

KernelTraits classifyKernel(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  KernelTraits traits;
  // Communication as the GPU metrics class it (HTA's rule), so both reports agree.
  if (analysis::classifyKernel(name) == analysis::KernelClass::kCommunication) {
    traits.kind = KernelKind::kCommunication;
    return traits;
  }
  traits.precision = precisionOf(n);
  if (isLibraryKernel(n)) traits.kind = KernelKind::kLibrary;
  traits.family = familyOf(n, traits.kind);
  return traits;
}

}  // namespace rlscope::predictor
