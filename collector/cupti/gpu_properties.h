// What the trace's TARGET_INFO_GPU row holds for each device (part::GpuInfo), read from the CUDA
// driver the profiled process has loaded. The arithmetic is kept apart from the driver calls so
// tests check it with a table of attributes.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rlscope/part/format.h"

namespace rlscope::cupti {

struct GpuDescription {
  part::GpuInfo info{};
  std::string name;         // "NVIDIA A100-SXM4-40GB"
  std::string uuid;         // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string busLocation;  // "0000:3b:00.0"
  std::string chipName;     // "GA100"; empty when CUPTI cannot tell
};

// A device attribute's value; 0 when the driver does not know it.
using AttributeFn = std::function<int(CUdevice_attribute)>;

// Converts the driver's units (kHz, bits) into GpuInfo's (Hz, bytes/s). Peak memory bandwidth is
// 2 (double data rate) × memory clock × bus width in bytes.
part::GpuInfo gpuInfoFromAttributes(std::uint32_t deviceId, const AttributeFn& attribute,
                                    std::int64_t totalMemory);
std::string formatUuid(const unsigned char (&bytes)[16]);
std::string formatBusLocation(int domain, int bus, int device);

// The kGpuInfo record for a device (strings: name, uuid, bus location, chip name).
std::vector<std::byte> encodeGpuInfo(const GpuDescription& gpu);

// Asks the CUDA driver already loaded in this process about device ordinal `deviceId`. nullopt,
// with `error` set, when the driver is not loaded or a call fails.
std::optional<GpuDescription> queryGpu(std::uint32_t deviceId, std::string* error);

}  // namespace rlscope::cupti
