#include "gpu_properties.h"

#include <cupti_target.h>
#include <dlfcn.h>

#include <cstdio>

#include "rlscope/part/record_codec.h"

namespace rlscope::cupti {

part::GpuInfo gpuInfoFromAttributes(std::uint32_t deviceId, const AttributeFn& attribute,
                                    std::int64_t totalMemory) {
  part::GpuInfo g{};
  auto kHzToHz = [](int kHz) { return std::int64_t{kHz} * 1000; };
  g.deviceId = deviceId;
  g.totalMemory = totalMemory;
  g.l2CacheSize = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  g.clockRate = kHzToHz(attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  g.memoryClockRate = kHzToHz(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
  g.memoryBusWidth = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  g.memoryBandwidth = 2 * g.memoryClockRate * g.memoryBusWidth / 8;
  g.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  g.computeMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  g.computeMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  g.maxRegistersPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  g.maxRegistersPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  g.maxShmemPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  g.maxShmemPerBlockOptin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  g.maxShmemPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  g.threadsPerWarp = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  int threadsPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  g.maxWarpsPerSm = g.threadsPerWarp > 0 ? threadsPerSm / g.threadsPerWarp : 0;
  g.maxBlocksPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  g.maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  g.isDiscrete = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED) ? 0 : 1;
  return g;
}

std::string formatUuid(const unsigned char (&b)[16]) {
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

std::string formatBusLocation(int domain, int bus, int device) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.0", static_cast<unsigned>(domain),
                static_cast<unsigned>(bus), static_cast<unsigned>(device));
  return text;
}

std::vector<std::byte> encodeGpuInfo(const GpuDescription& gpu) {
  std::vector<std::byte> out(
      part::encodedSize<part::GpuInfo>({gpu.name, gpu.uuid, gpu.busLocation, gpu.chipName}));
  part::encodeRecord(out.data(), part::RecordType::kGpuInfo, gpu.info,
                     {gpu.name, gpu.uuid, gpu.busLocation, gpu.chipName});
  return out;
}

namespace {

// The driver entry points, looked up in the libcuda the process already has: linking libcuda
// would make this library (and its tests) unloadable on machines without a driver.
struct Driver {
  CUresult (*deviceGet)(CUdevice*, int) = nullptr;
  CUresult (*getAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*getName)(char*, int, CUdevice) = nullptr;
  CUresult (*getUuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*totalMem)(std::size_t*, CUdevice) = nullptr;

  bool load(std::string* error) {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) {
      *error = "the CUDA driver (libcuda.so.1) is not loaded";
      return false;
    }
    bool ok = sym(lib, "cuDeviceGet", deviceGet) &&
              sym(lib, "cuDeviceGetAttribute", getAttribute) &&
              sym(lib, "cuDeviceGetName", getName) &&
              (sym(lib, "cuDeviceGetUuid_v2", getUuid) || sym(lib, "cuDeviceGetUuid", getUuid)) &&
              sym(lib, "cuDeviceTotalMem_v2", totalMem);
    if (!ok) *error = "the CUDA driver lacks the device query functions";
    return ok;
  }

  template <class F>
  static bool sym(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    return f != nullptr;
  }
};

}  // namespace

std::optional<GpuDescription> queryGpu(std::uint32_t deviceId, std::string* error) {
  static Driver driver;
  static bool loaded = driver.load(error);
  if (!loaded) {
    if (error->empty()) *error = "the CUDA driver could not be queried";
    return std::nullopt;
  }
  CUdevice dev{};
  if (CUresult r = driver.deviceGet(&dev, static_cast<int>(deviceId)); r != CUDA_SUCCESS) {
    *error = "cuDeviceGet(" + std::to_string(deviceId) + ") failed with " + std::to_string(r);
    return std::nullopt;
  }
  GpuDescription gpu;
  auto attribute = [&](CUdevice_attribute a) {
    int v = 0;
    return driver.getAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
  };
  std::size_t total = 0;
  if (driver.totalMem(&total, dev) != CUDA_SUCCESS) total = 0;
  gpu.info = gpuInfoFromAttributes(deviceId, attribute, static_cast<std::int64_t>(total));
  char name[256] = {};
  if (driver.getName(name, sizeof name - 1, dev) == CUDA_SUCCESS) gpu.name = name;
  CUuuid uuid{};
  if (driver.getUuid(&uuid, dev) == CUDA_SUCCESS) {
    unsigned char bytes[16];
    for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
    gpu.uuid = formatUuid(bytes);
  }
  gpu.busLocation = formatBusLocation(attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                                      attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
                                      attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE, nullptr,
                                       deviceId, nullptr};
  if (cuptiDeviceGetChipName(&chip) == CUPTI_SUCCESS && chip.pChipName)
    gpu.chipName = chip.pChipName;
  return gpu;
}

}  // namespace rlscope::cupti
