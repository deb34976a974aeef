#include "cupti_error.h"

namespace rlscope::cupti {

namespace {

// The causes users meet in practice (ecosystem.md §3): no driver or GPU, another profiler
// holding CUPTI, restricted performance counters, a CUPTI older or newer than the driver.
std::string_view hint(CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "another profiler (Nsight Systems, the PyTorch profiler, ...) already uses CUPTI in "
             "this process";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "the driver allows GPU profiling to administrators only (see "
             "NVreg_RestrictProfilingToAdminUsers)";
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
      return "this CUPTI does not match the installed NVIDIA driver";
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
      return "no NVIDIA GPU or driver?";
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "not supported on this GPU or platform";
    default:
      return {};
  }
}

}  // namespace

std::string describeCuptiError(std::string_view call, CUptiResult result) {
  const char* name = nullptr;
  std::string text(call);
  text += ": ";
  if (cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name)
    text += name;
  else
    text += "CUPTI error " + std::to_string(static_cast<int>(result));
  if (auto h = hint(result); !h.empty()) {
    text += " (";
    text += h;
    text += ")";
  }
  return text;
}

}  // namespace rlscope::cupti
