// Occupancy with the rules of NVIDIA's cuda_occupancy.h (CUDA 13.0), written anew: the same
// result as cudaOccMaxActiveBlocksPerMultiprocessor for the device properties of the GpuSpec,
// default function attributes (no partitioned global caching: the default on the Pascal GPUs
// that support it) except the shared-memory opt-in below, and the default device state (no cache
// preference, default carveout). The per-architecture constants name the function of
// cuda_occupancy.h they come from.
#include "rlscope/predictor/occupancy.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace rlscope::predictor {
namespace {

constexpr int kKiB = 1024;
constexpr int kWarpSize = 32;  // every NVIDIA GPU of compute capability 6.0 to 12.x

// Registers are allocated to a warp in units of 256 on every architecture
// (cudaOccRegAllocationGranularity).
constexpr std::int64_t kRegisterAllocationUnit = 256;

// The L1 / shared memory splits (KiB of shared memory per SM) an SM can be configured with
// (cudaOccAlignUpShmemSizeVoltaPlus).
constexpr int kVoltaCarveouts[] = {0, 8, 16, 32, 64, 96};
constexpr int kTuringCarveouts[] = {32, 64};
constexpr int kGa100Carveouts[] = {0, 8, 16, 32, 64, 100, 132, 164};
constexpr int kGa10xCarveouts[] = {0, 8, 16, 32, 64, 100};
constexpr int kHopperCarveouts[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};

// What the occupancy rules know about one compute capability.
struct Architecture {
  int maxBlocksPerSm = 0;             // cudaOccMaxBlocksPerMultiprocessor
  int maxRegistersPerThread = 0;      // cudaOccRegAllocationMaxPerThread
  int subPartitions = 0;              // of the register file, cudaOccSubPartitionsPerMultiprocessor
  int sharedMemGranularity = 0;       // bytes, cudaOccSMemAllocationGranularity
  int reservedSharedMemPerBlock = 0;  // bytes the driver adds to every block (Ampere on)
  // Empty on Pascal, whose shared memory is dedicated (no carveout) and has no per-block opt-in.
  std::span<const int> carveoutsKiB;
};

[[noreturn]] void throwUnknown(int major, int minor) {
  throw std::invalid_argument("compute capability " + std::to_string(major) + "." +
                              std::to_string(minor) +
                              " is unknown to the occupancy rules (6.x to 9.x, 10.0, 10.1, 10.3, "
                              "11.0, 11.1, 11.3, 12.0, 12.1)");
}

int maxBlocksPerSm(int major, int minor) {
  switch (major) {
    case 6:
      return 32;
    case 7:
      return minor == 5 ? 16 : 32;  // Turing: 16
    case 8:
      return minor == 0 ? 32 : (minor == 9 ? 24 : 16);  // A100 32, Ada 24, GA10x 16
    case 9:
      return 32;
    case 10:
      return minor == 1 ? 24 : 32;
    case 11:
      return minor == 0 ? 24 : 32;
    default:
      return 24;  // 12.x
  }
}

// cuda_occupancy.h only knows some minors of Blackwell (10.x, 11.x, 12.x): the others are
// "unknown device" there, and so here.
std::span<const int> carveoutsKiB(int major, int minor) {
  switch (major) {
    case 6:
      return {};
    case 7:
      return minor == 5 ? std::span<const int>(kTuringCarveouts) : kVoltaCarveouts;
    case 8:
      return minor == 0 || minor == 7 ? std::span<const int>(kGa100Carveouts) : kGa10xCarveouts;
    case 9:
      return kHopperCarveouts;
    case 10:
    case 11:
      if (minor == 0 || minor == 1 || minor == 3) return kHopperCarveouts;
      break;
    case 12:
      if (minor == 0 || minor == 1) return kGa10xCarveouts;
      break;
  }
  throwUnknown(major, minor);
}

Architecture architectureOf(const GpuSpec& gpu) {
  const int major = gpu.ccMajor, minor = gpu.ccMinor;
  if (major < 6 || major > 12 || minor < 0) throwUnknown(major, minor);
  return {
      .maxBlocksPerSm = maxBlocksPerSm(major, minor),
      .maxRegistersPerThread = major == 6 ? 255 : 256,
      .subPartitions = major == 6 && minor == 0 ? 2 : 4,  // GP100 has 2, every other SM 4
      .sharedMemGranularity = major <= 7 ? 256 : 128,
      // Not in cuda_occupancy.h's tables but a device property (reservedSharedMemPerBlock),
      // 1 KiB on every GPU since Ampere.
      .reservedSharedMemPerBlock = major >= 8 ? 1 * kKiB : 0,
      .carveoutsKiB = carveoutsKiB(major, minor),
  };
}

void requirePositive(const GpuSpec& gpu, std::string_view field, int value) {
  if (value <= 0) {
    throw std::invalid_argument("GPU '" + gpu.name + "': " + std::string(field) + " is " +
                                std::to_string(value) + ", must be positive");
  }
}

void checkInputs(const GpuSpec& gpu, const KernelResources& kernel) {
  requirePositive(gpu, "warpSize", gpu.warpSize);
  requirePositive(gpu, "maxThreadsPerBlock", gpu.maxThreadsPerBlock);
  requirePositive(gpu, "maxThreadsPerSm", gpu.maxThreadsPerSm);
  requirePositive(gpu, "registersPerBlock", gpu.registersPerBlock);
  requirePositive(gpu, "registersPerSm", gpu.registersPerSm);
  requirePositive(gpu, "sharedMemPerBlock", gpu.sharedMemPerBlock);
  requirePositive(gpu, "sharedMemPerSm", gpu.sharedMemPerSm);
  if (kernel.blockSize <= 0 || kernel.registersPerThread < 0 || kernel.staticSharedMemory < 0 ||
      kernel.dynamicSharedMemory < 0) {
    throw std::invalid_argument(
        "kernel resources: the block size must be positive, registers and shared memory not "
        "negative");
  }
}

std::int64_t divideRoundUp(std::int64_t x, std::int64_t y) {
  return (x + y - 1) / y;
}
std::int64_t roundUp(std::int64_t x, std::int64_t y) {
  return divideRoundUp(x, y) * y;
}

// How many blocks one SM holds by one resource, and why none when none.
struct Limit {
  int blocks = 0;
  std::string whyNone;
};

Limit noBlocks(std::string why) {
  return {0, std::move(why)};
}

// Blocks needing `perBlock` units of a resource the SM has `perSm` of (INT_MAX when they need
// none).
Limit blocksFitting(std::int64_t perSm, std::int64_t perBlock, std::string_view units) {
  if (perBlock == 0) return {INT_MAX, {}};
  const auto blocks = static_cast<int>(std::min<std::int64_t>(perSm / perBlock, INT_MAX));
  if (blocks > 0) return {blocks, {}};
  return noBlocks("a block needs " + std::to_string(perBlock) + " " + std::string(units) +
                  ", an SM has " + std::to_string(perSm));
}

Limit warpLimit(const GpuSpec& gpu, const KernelResources& kernel, std::int64_t warpsPerBlock) {
  if (kernel.blockSize > gpu.maxThreadsPerBlock) {
    return noBlocks("block of " + std::to_string(kernel.blockSize) + " threads > " +
                    std::to_string(gpu.maxThreadsPerBlock) + " per block");
  }
  return blocksFitting(gpu.maxThreadsPerSm / gpu.warpSize, warpsPerBlock, "warps");
}

// Registers are allocated per warp, and the register file is split evenly between the SM's
// sub-partitions, each running whole warps.
Limit registerLimitWith(int subPartitions, const GpuSpec& gpu, const Architecture& arch,
                        int registersPerThread, std::int64_t warpsPerBlock) {
  if (registersPerThread > arch.maxRegistersPerThread) {
    return noBlocks(std::to_string(registersPerThread) + " registers per thread > " +
                    std::to_string(arch.maxRegistersPerThread) + " on compute capability " +
                    gpu.computeCapabilityText());
  }
  const std::int64_t perWarp =
      roundUp(std::int64_t{registersPerThread} * gpu.warpSize, kRegisterAllocationUnit);
  // The hardware's launch check assumes a block's warps are spread over all sub-partitions
  // at once, so it counts them rounded up to a multiple of the sub-partitions.
  const std::int64_t checkedPerBlock = perWarp * roundUp(warpsPerBlock, subPartitions);
  if (checkedPerBlock > gpu.registersPerBlock) {
    return noBlocks("block needs " + std::to_string(checkedPerBlock) + " registers (" +
                    std::to_string(perWarp) + " per warp, warps rounded up to a multiple of " +
                    std::to_string(subPartitions) + " sub-partitions) > " +
                    std::to_string(gpu.registersPerBlock) + " per block");
  }
  if (perWarp == 0) return {INT_MAX, {}};
  const std::int64_t warpsPerSubPartition = gpu.registersPerSm / subPartitions / perWarp;
  return blocksFitting(warpsPerSubPartition * subPartitions, warpsPerBlock, "warps of registers");
}

Limit registerLimit(const GpuSpec& gpu, const Architecture& arch, int registersPerThread,
                    std::int64_t warpsPerBlock) {
  Limit limit = registerLimitWith(arch.subPartitions, gpu, arch, registersPerThread, warpsPerBlock);
  // GP100 has 2 sub-partitions, the other Pascal GPUs 4. For compatibility within Pascal,
  // cudaOccMaxActiveBlocksPerMultiprocessor lets a block run on GP100 only if it would run on
  // them too.
  constexpr int kGp10xSubPartitions = 4;
  if (limit.blocks > 0 && arch.subPartitions != kGp10xSubPartitions) {
    Limit gp10x =
        registerLimitWith(kGp10xSubPartitions, gpu, arch, registersPerThread, warpsPerBlock);
    if (gp10x.blocks == 0) return noBlocks(gp10x.whyNone + " on a GP10x (Pascal compatibility)");
  }
  return limit;
}

// The smallest carveout the SM can be configured with that holds `bytes`.
std::int64_t carveoutHolding(std::int64_t bytes, const GpuSpec& gpu, const Architecture& arch) {
  for (int kib : arch.carveoutsKiB) {
    if (std::int64_t{kib} * kKiB >= bytes) return std::int64_t{kib} * kKiB;
  }
  const std::string largest = std::to_string(arch.carveoutsKiB.back()) + " KiB";
  throw std::invalid_argument("GPU '" + gpu.name + "': " + std::to_string(bytes) +
                              " bytes of shared memory per SM exceed compute capability " +
                              gpu.computeCapabilityText() + "'s largest carveout, " + largest);
}

// A kernel using more than sharedMemPerBlock (48 KiB) per block must have opted in
// (cudaFuncAttributeMaxDynamicSharedMemorySize) or its launch fails, so a block may use up to the
// opt-in limit: cuda_occupancy.h's FUNC_SHMEM_LIMIT_OPTIN with no per-function dynamic limit
// (maxDynamicSharedSizeBytes = INT_MAX). Its default, FUNC_SHMEM_LIMIT_DEFAULT (what Habitat
// used), would give 0 for every block over 48 KiB although such launches run. Pascal has no
// opt-in; sharedMemPerBlockOptin 0 means none either.
std::int64_t sharedMemPerBlockAllowed(const GpuSpec& gpu, const Architecture& arch) {
  const bool optin = !arch.carveoutsKiB.empty() && gpu.sharedMemPerBlockOptin > 0;
  const int limit = optin ? gpu.sharedMemPerBlockOptin : gpu.sharedMemPerBlock;
  return std::int64_t{limit} + arch.reservedSharedMemPerBlock;
}

Limit sharedMemoryLimit(const GpuSpec& gpu, const Architecture& arch,
                        const KernelResources& kernel) {
  // By default the driver prefers the largest carveout, sharedMemPerSm (rounded up to one the
  // SM supports); Pascal's shared memory is all there is.
  const bool dedicated = arch.carveoutsKiB.empty();
  const std::int64_t preferredPerSm =
      dedicated ? gpu.sharedMemPerSm : carveoutHolding(gpu.sharedMemPerSm, gpu, arch);
  const std::int64_t perBlock =
      roundUp(std::int64_t{kernel.staticSharedMemory} + kernel.dynamicSharedMemory +
                  arch.reservedSharedMemPerBlock,
              arch.sharedMemGranularity);
  const std::int64_t allowed = sharedMemPerBlockAllowed(gpu, arch);
  if (perBlock > allowed) {
    return noBlocks("block needs " + std::to_string(perBlock) + " bytes of shared memory > " +
                    std::to_string(allowed) + " per block");
  }
  // A block needing more than the preference makes the driver pick a carveout holding it.
  const std::int64_t perSm = perBlock <= preferredPerSm || dedicated
                                 ? preferredPerSm
                                 : carveoutHolding(perBlock, gpu, arch);
  return blocksFitting(perSm, perBlock, "bytes of shared memory");
}

// The four limits in the order of cuda_occupancy.h's limiting-factor flags.
using NamedLimits = std::span<const std::pair<OccupancyLimit, const Limit*>>;

// The limit giving `blocks`; ties go to the first.
OccupancyLimit bindingLimit(NamedLimits limits, int blocks) {
  for (const auto& [name, limit] : limits) {
    if (limit->blocks == blocks) return name;
  }
  return OccupancyLimit::kNone;
}

std::string reasonsForNone(NamedLimits limits) {
  std::string reasons;
  for (const auto& [name, limit] : limits) {
    if (limit->blocks > 0) continue;
    if (!reasons.empty()) reasons += "; ";
    reasons += limit->whyNone;
  }
  return reasons;
}

}  // namespace

const char* occupancyLimitName(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::kNone:
      return "none";
    case OccupancyLimit::kWarps:
      return "warps";
    case OccupancyLimit::kRegisters:
      return "registers";
    case OccupancyLimit::kSharedMemory:
      return "shared memory";
    case OccupancyLimit::kBlocks:
      return "blocks";
    case OccupancyLimit::kInvalid:
      return "invalid";
  }
  return "unknown";
}

int Occupancy::activeWarpsPerSm(int blockSize) const {
  return activeBlocksPerSm * static_cast<int>(divideRoundUp(blockSize, kWarpSize));
}

Occupancy computeOccupancy(const GpuSpec& gpu, const KernelResources& kernel) {
  const Architecture arch = architectureOf(gpu);
  checkInputs(gpu, kernel);
  const std::int64_t warpsPerBlock = divideRoundUp(kernel.blockSize, gpu.warpSize);

  const Limit warps = warpLimit(gpu, kernel, warpsPerBlock);
  const Limit registers = registerLimit(gpu, arch, kernel.registersPerThread, warpsPerBlock);
  const Limit sharedMemory = sharedMemoryLimit(gpu, arch, kernel);
  const Limit blocks{arch.maxBlocksPerSm, {}};

  Occupancy occupancy;
  occupancy.limitByWarps = warps.blocks;
  occupancy.limitByRegisters = registers.blocks;
  occupancy.limitBySharedMemory = sharedMemory.blocks;
  occupancy.limitByBlocks = blocks.blocks;
  occupancy.activeBlocksPerSm =
      std::min({warps.blocks, registers.blocks, sharedMemory.blocks, blocks.blocks});
  const std::pair<OccupancyLimit, const Limit*> limits[] = {
      {OccupancyLimit::kWarps, &warps},
      {OccupancyLimit::kRegisters, &registers},
      {OccupancyLimit::kSharedMemory, &sharedMemory},
      {OccupancyLimit::kBlocks, &blocks}};
  if (occupancy.activeBlocksPerSm > 0) {
    occupancy.limit = bindingLimit(limits, occupancy.activeBlocksPerSm);
  } else {
    occupancy.limit = OccupancyLimit::kInvalid;
    occupancy.invalidReason = reasonsForNone(limits);
  }
  return occupancy;
}

}  // namespace rlscope::predictor
