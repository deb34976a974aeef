// Thread-block occupancy: how many blocks of a kernel one SM holds at once, for compute
// capability 6.0 to 12.x, with the rules of NVIDIA's cuda_occupancy.h
// (cudaOccMaxActiveBlocksPerMultiprocessor, default cache and carveout preferences), written
// anew so the result says which limit binds.
#pragma once

#include <string>

#include "rlscope/predictor/gpu_database.h"

namespace rlscope::predictor {

struct KernelResources {
  int blockSize = 0;  // threads per block
  int registersPerThread = 0;
  int staticSharedMemory = 0;   // bytes per block
  int dynamicSharedMemory = 0;  // bytes per block
};

enum class OccupancyLimit { kNone, kWarps, kRegisters, kSharedMemory, kBlocks, kInvalid };
const char* occupancyLimitName(OccupancyLimit limit);

struct Occupancy {
  int activeBlocksPerSm = 0;  // 0: the kernel cannot run on this GPU with these resources
  OccupancyLimit limit = OccupancyLimit::kNone;  // the limit that binds (kInvalid when 0)
  // Blocks per SM each resource alone allows; INT_MAX for registers or shared memory when the
  // kernel uses none.
  int limitByWarps = 0, limitByRegisters = 0, limitBySharedMemory = 0, limitByBlocks = 0;
  std::string invalidReason;  // why 0, e.g. "block of 2048 threads > 1024 per block"
  int activeWarpsPerSm(int blockSize) const;
};

// Shared memory up to the GPU's opt-in limit per block counts as allowed (a kernel using more
// than 48 KiB must have opted in to launch at all). Throws std::invalid_argument for a compute
// capability outside 6.0..12.x or one cuda_occupancy.h does not know (e.g. 10.2), a GpuSpec
// whose limits are not positive or whose sharedMemPerSm exceeds every carveout of its
// architecture, and a block size < 1 or negative registers or shared memory.
Occupancy computeOccupancy(const GpuSpec& gpu, const KernelResources& kernel);

}  // namespace rlscope::predictor
