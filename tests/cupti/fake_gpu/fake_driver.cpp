// A stand-in for the CUDA driver (libcuda.so.1) beside fake_cupti.cpp: one GPU with an H200's
// properties, and cuInit doing what the real driver does for profilers, loading the library
// named by CUDA_INJECTION64_PATH and calling its InitializeInjection. rlscope-prof's GPU probe
// and the collector's property query find it as they find the real driver (dlopen by soname).
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kDevices = 1;

// An H200 SXM (nvidia-smi and the CUDA programming guide's figures).
int attributeValue(CUdevice_attribute a) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return 132;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return 0;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      return 1980000;  // kHz
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      return 3201000;  // kHz
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      return 6144;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return 50 * 1024 * 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      return 65536;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return 49152;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      return 233472;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return 2048;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return 0x1b;
    default:
      return 0;
  }
}

}  // namespace

FAKE_EXPORT CUresult cuInit(unsigned int) {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path) return;
    void* lib = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    auto init = lib ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
    if (!init) {
      std::fprintf(stderr, "fake libcuda: cannot inject %s: %s\n", path, ::dlerror());
      return;
    }
    init();
  });
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  *count = kDevices;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  *name = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_INVALID_DEVICE";
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute,
                                          CUdevice device) {
  if (device < 0 || device >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *value = attributeValue(attribute);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (device < 0 || device >= kDevices || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<std::size_t>(length), "%s", "NVIDIA H200");
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  if (device < 0 || device >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xa0 + i);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice device) {
  if (device < 0 || device >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = std::size_t{143771140096};  // 141 GB
  return CUDA_SUCCESS;
}
