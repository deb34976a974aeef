// Occupancy: cases computed by hand on real GPUs, and a cross-check against NVIDIA's
// cuda_occupancy.h (cudaOccMaxActiveBlocksPerMultiprocessor) over thousands of random kernels on
// every GPU of the built-in database and on every compute capability the rules know.
#include "rlscope/predictor/occupancy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#if __has_include(<cuda_occupancy.h>)
#include <cuda_occupancy.h>
#define RLSCOPE_HAVE_CUDA_OCCUPANCY_H 1
#endif

namespace rlscope::predictor {
namespace {

// A GPU with the cudaGetDeviceProperties values every GPU of compute capability 6.0 to 12.x has
// (65536 registers per SM and per block, 48 KiB per block without opt-in, 1024 threads per
// block), and the given ones.
GpuSpec spec(const char* name, int major, int minor, int maxThreadsPerSm, int sharedMemPerSm,
             int sharedMemPerBlockOptin) {
  GpuSpec gpu;
  gpu.name = name;
  gpu.ccMajor = major;
  gpu.ccMinor = minor;
  gpu.smCount = 80;
  gpu.registersPerSm = gpu.registersPerBlock = 65536;
  gpu.sharedMemPerSm = sharedMemPerSm;
  gpu.sharedMemPerBlock = 48 * 1024;
  gpu.sharedMemPerBlockOptin = sharedMemPerBlockOptin;
  gpu.maxThreadsPerSm = maxThreadsPerSm;
  gpu.maxThreadsPerBlock = 1024;
  gpu.warpSize = 32;
  return gpu;
}

const GpuSpec kP100 = spec("P100", 6, 0, 2048, 65536, 49152);
const GpuSpec kGtx1080Ti = spec("GTX 1080 Ti", 6, 1, 2048, 98304, 49152);
const GpuSpec kV100 = spec("V100", 7, 0, 2048, 98304, 98304);
const GpuSpec kT4 = spec("T4", 7, 5, 1024, 65536, 65536);
const GpuSpec kA100 = spec("A100", 8, 0, 2048, 167936, 166912);
const GpuSpec kH100 = spec("H100", 9, 0, 2048, 233472, 232448);

KernelResources kernel(int blockSize, int registers, int staticSmem = 0, int dynamicSmem = 0) {
  return {blockSize, registers, staticSmem, dynamicSmem};
}

TEST(Occupancy, GP100HasTwoRegisterSubPartitions) {
  // 48 registers × 32 threads = 1536 per warp; 32768 per sub-partition hold 21 warps, so the
  // 2 sub-partitions hold 42 warps: 14 blocks of 3. GP10x's 4 sub-partitions hold 4 × 10.
  Occupancy p100 = computeOccupancy(kP100, kernel(96, 48));
  EXPECT_EQ(p100.activeBlocksPerSm, 14);
  EXPECT_EQ(p100.limit, OccupancyLimit::kRegisters);
  EXPECT_EQ(p100.limitByWarps, 21);
  EXPECT_EQ(p100.limitByBlocks, 32);
  EXPECT_EQ(p100.limitBySharedMemory, INT_MAX);
  EXPECT_EQ(p100.activeWarpsPerSm(96), 42);
  EXPECT_EQ(computeOccupancy(kGtx1080Ti, kernel(96, 48)).activeBlocksPerSm, 13);
}

TEST(Occupancy, GP100RunsOnlyWhatOtherPascalGpusRun) {
  // 200 registers: 6400 per warp. 10 warps fit 65536 rounded up to 2 sub-partitions (64000),
  // not rounded up to 4 (76800), so GP10x cannot launch the block and neither does GP100.
  Occupancy p100 = computeOccupancy(kP100, kernel(320, 200));
  EXPECT_EQ(p100.activeBlocksPerSm, 0);
  EXPECT_EQ(p100.limit, OccupancyLimit::kInvalid);
  EXPECT_NE(p100.invalidReason.find("GP10x"), std::string::npos) << p100.invalidReason;
}

TEST(Occupancy, HopperRegistersBindBeforeSharedMemory) {
  // 96 registers: 3072 per warp, 5 warps per sub-partition, 20 per SM: 5 blocks of 4 warps.
  // Shared memory: (32768 + 1024 reserved) per block in 233472 gives 6.
  Occupancy h100 = computeOccupancy(kH100, kernel(128, 96, 0, 32768));
  EXPECT_EQ(h100.activeBlocksPerSm, 5);
  EXPECT_EQ(h100.limit, OccupancyLimit::kRegisters);
  EXPECT_EQ(h100.limitByRegisters, 5);
  EXPECT_EQ(h100.limitBySharedMemory, 6);
  EXPECT_EQ(h100.limitByWarps, 16);
  EXPECT_EQ(h100.activeWarpsPerSm(128), 20);
  EXPECT_TRUE(h100.invalidReason.empty());
}

TEST(Occupancy, TiesGoToWarpsFirst) {
  // 1024 threads × 32 registers: 2 blocks by warps and 2 by registers.
  Occupancy h100 = computeOccupancy(kH100, kernel(1024, 32));
  EXPECT_EQ(h100.activeBlocksPerSm, 2);
  EXPECT_EQ(h100.limitByRegisters, 2);
  EXPECT_EQ(h100.limit, OccupancyLimit::kWarps);
}

TEST(Occupancy, SmallBlocksAreBoundByTheBlockLimit) {
  EXPECT_EQ(computeOccupancy(kT4, kernel(32, 0)).activeBlocksPerSm, 16);
  EXPECT_EQ(computeOccupancy(kT4, kernel(32, 0)).limit, OccupancyLimit::kBlocks);
  EXPECT_EQ(computeOccupancy(kA100, kernel(32, 16)).activeBlocksPerSm, 32);
}

TEST(Occupancy, BlockOverTheThreadLimitCannotRun) {
  Occupancy h100 = computeOccupancy(kH100, kernel(2048, 32));
  EXPECT_EQ(h100.activeBlocksPerSm, 0);
  EXPECT_EQ(h100.limit, OccupancyLimit::kInvalid);
  EXPECT_EQ(h100.limitByWarps, 0);
  EXPECT_EQ(h100.invalidReason, "block of 2048 threads > 1024 per block");
  EXPECT_EQ(h100.activeWarpsPerSm(2048), 0);
}

TEST(Occupancy, RegistersPerThreadAreCappedPerArchitecture) {
  // Pascal allows 255 registers per thread; cuda_occupancy.h allows 256 from Volta on.
  Occupancy p100 = computeOccupancy(kGtx1080Ti, kernel(32, 256));
  EXPECT_EQ(p100.activeBlocksPerSm, 0);
  EXPECT_EQ(p100.invalidReason, "256 registers per thread > 255 on compute capability 6.1");
  EXPECT_EQ(computeOccupancy(kGtx1080Ti, kernel(32, 255)).activeBlocksPerSm, 8);
  EXPECT_EQ(computeOccupancy(kV100, kernel(32, 256)).activeBlocksPerSm, 8);
  EXPECT_EQ(computeOccupancy(kH100, kernel(32, 257)).activeBlocksPerSm, 0);
}

TEST(Occupancy, RegisterFileTooSmallForTheBlock) {
  // 128 registers × 1024 threads = 131072 > 65536 per block.
  Occupancy a100 = computeOccupancy(kA100, kernel(1024, 128));
  EXPECT_EQ(a100.activeBlocksPerSm, 0);
  EXPECT_EQ(a100.limitByRegisters, 0);
  EXPECT_NE(a100.invalidReason.find("131072 registers"), std::string::npos) << a100.invalidReason;
}

TEST(Occupancy, SharedMemoryUpToTheOptinLimitRuns) {
  // 232448 dynamic + 1024 reserved = 233472: exactly the opt-in limit, one block per SM.
  Occupancy fits = computeOccupancy(kH100, kernel(128, 32, 0, 232448));
  EXPECT_EQ(fits.activeBlocksPerSm, 1);
  EXPECT_EQ(fits.limit, OccupancyLimit::kSharedMemory);
  Occupancy over = computeOccupancy(kH100, kernel(128, 32, 0, 232449));
  EXPECT_EQ(over.activeBlocksPerSm, 0);
  EXPECT_EQ(over.invalidReason, "block needs 233600 bytes of shared memory > 233472 per block");
  // Volta: 64 KiB needs the opt-in (96 KiB); Pascal has none.
  EXPECT_EQ(computeOccupancy(kV100, kernel(128, 32, 16384, 49152)).activeBlocksPerSm, 1);
  EXPECT_EQ(computeOccupancy(kP100, kernel(128, 32, 0, 49152)).activeBlocksPerSm, 1);
  EXPECT_EQ(computeOccupancy(kP100, kernel(128, 32, 0, 49153)).activeBlocksPerSm, 0);
}

TEST(Occupancy, SharedMemoryIsAllocatedInGranules) {
  // Ampere on: 128-byte granules plus 1 KiB reserved per block; 167936 / (1024 + 128) = 145.
  EXPECT_EQ(computeOccupancy(kA100, kernel(32, 0, 1)).limitBySharedMemory, 145);
  // Volta: 256-byte granules, nothing reserved; 98304 / 256 = 384.
  EXPECT_EQ(computeOccupancy(kV100, kernel(32, 0, 1)).limitBySharedMemory, 384);
}

TEST(Occupancy, BlockLargerThanThePreferredCarveoutRaisesIt) {
  // With 64 KiB preferred, an 80 KiB block makes the driver configure the 96 KiB carveout.
  GpuSpec v100 = kV100;
  v100.sharedMemPerSm = 64 * 1024;
  EXPECT_EQ(computeOccupancy(v100, kernel(128, 32, 0, 80 * 1024)).activeBlocksPerSm, 1);
}

TEST(Occupancy, UnsupportedComputeCapabilitiesThrow) {
  for (auto [major, minor] : {std::pair{5, 2}, {10, 2}, {12, 2}, {13, 0}}) {
    GpuSpec gpu = kH100;
    gpu.ccMajor = major;
    gpu.ccMinor = minor;
    EXPECT_THROW(computeOccupancy(gpu, kernel(128, 32)), std::invalid_argument)
        << gpu.computeCapabilityText();
  }
}

TEST(Occupancy, BadInputsThrow) {
  EXPECT_THROW(computeOccupancy(kH100, kernel(0, 32)), std::invalid_argument);
  EXPECT_THROW(computeOccupancy(kH100, kernel(128, -1)), std::invalid_argument);
  GpuSpec tooMuchSharedMemory = kH100;
  tooMuchSharedMemory.sharedMemPerSm = 300 * 1024;  // the largest Hopper carveout is 228 KiB
  EXPECT_THROW(computeOccupancy(tooMuchSharedMemory, kernel(128, 32)), std::invalid_argument);
}

TEST(Occupancy, LimitNames) {
  EXPECT_STREQ(occupancyLimitName(OccupancyLimit::kSharedMemory), "shared memory");
  EXPECT_STREQ(occupancyLimitName(OccupancyLimit::kInvalid), "invalid");
}

TEST(Occupancy, DatabaseBlockLimitsMatchTheArchitecture) {
  const GpuDatabase database = GpuDatabase::builtIn();
  for (const GpuSpec& gpu : database.gpus()) {
    EXPECT_EQ(computeOccupancy(gpu, kernel(32, 0)).limitByBlocks, gpu.maxBlocksPerSm) << gpu.name;
  }
}

#ifdef RLSCOPE_HAVE_CUDA_OCCUPANCY_H

std::string describe(const GpuSpec& gpu, const KernelResources& k) {
  std::ostringstream out;
  out << gpu.name << " (" << gpu.computeCapabilityText() << "): block " << k.blockSize
      << ", registers " << k.registersPerThread << ", static smem " << k.staticSharedMemory
      << ", dynamic smem " << k.dynamicSharedMemory;
  return out.str();
}

// The device properties as cudaGetDeviceProperties fills them; an opt-in of 0 (none) is the
// default per-block limit.
cudaOccDeviceProp deviceProp(const GpuSpec& gpu) {
  cudaOccDeviceProp prop;
  prop.computeMajor = gpu.ccMajor;
  prop.computeMinor = gpu.ccMinor;
  prop.maxThreadsPerBlock = gpu.maxThreadsPerBlock;
  prop.maxThreadsPerMultiprocessor = gpu.maxThreadsPerSm;
  prop.regsPerBlock = gpu.registersPerBlock;
  prop.regsPerMultiprocessor = gpu.registersPerSm;
  prop.warpSize = gpu.warpSize;
  prop.sharedMemPerBlock = gpu.sharedMemPerBlock;
  prop.sharedMemPerMultiprocessor = gpu.sharedMemPerSm;
  prop.numSms = gpu.smCount;
  prop.sharedMemPerBlockOptin =
      gpu.sharedMemPerBlockOptin > 0 ? gpu.sharedMemPerBlockOptin : gpu.sharedMemPerBlock;
  prop.reservedSharedMemPerBlock = gpu.ccMajor >= 8 ? 1024 : 0;
  return prop;
}

// A kernel that opted in to all the shared memory a block may have, with no other limit.
cudaOccFuncAttributes functionAttributes(const KernelResources& k) {
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock = INT_MAX;
  attributes.numRegs = k.registersPerThread;
  attributes.sharedSizeBytes = static_cast<std::size_t>(k.staticSharedMemory);
  attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attributes.maxDynamicSharedSizeBytes = INT_MAX;
  return attributes;
}

unsigned limitFlag(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::kWarps:
      return OCC_LIMIT_WARPS;
    case OccupancyLimit::kRegisters:
      return OCC_LIMIT_REGISTERS;
    case OccupancyLimit::kSharedMemory:
      return OCC_LIMIT_SHARED_MEMORY;
    case OccupancyLimit::kBlocks:
      return OCC_LIMIT_BLOCKS;
    default:
      return 0;
  }
}

// Random kernels over the whole range (block 1..maxThreadsPerBlock, registers 0..256, static
// shared memory 0..48 KiB, dynamic 0..opt-in), each resource small half of the time so that
// every limit binds often.
class RandomKernels {
 public:
  explicit RandomKernels(const GpuSpec& gpu) : gpu_(gpu) {}

  KernelResources next() {
    const int optin = std::max(gpu_.sharedMemPerBlockOptin, gpu_.sharedMemPerBlock);
    return {coin() ? uniform(1, 128) : uniform(1, gpu_.maxThreadsPerBlock),
            coin() ? uniform(0, 64) : uniform(0, 256), coin() ? 0 : uniform(0, 48 * 1024),
            coin() ? uniform(0, 4096) : uniform(0, optin)};
  }

 private:
  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  bool coin() { return uniform(0, 1) == 1; }

  const GpuSpec& gpu_;
  std::mt19937 random_{20240611};  // fixed: the same kernels on every run
};

struct CrossCheck {
  int mismatches = 0;
  std::set<OccupancyLimit> limitsSeen;
};

// Compares every limit with cudaOccMaxActiveBlocksPerMultiprocessor on `count` random kernels,
// reporting the first few mismatches with their configuration.
CrossCheck crossCheck(const GpuSpec& gpu, int count) {
  const cudaOccDeviceProp prop = deviceProp(gpu);
  const cudaOccDeviceState state;
  RandomKernels kernels(gpu);
  CrossCheck check;
  for (int i = 0; i < count; ++i) {
    const KernelResources k = kernels.next();
    const cudaOccFuncAttributes attributes = functionAttributes(k);
    cudaOccResult theirs{};
    const cudaOccError status =
        cudaOccMaxActiveBlocksPerMultiprocessor(&theirs, &prop, &attributes, &state, k.blockSize,
                                                static_cast<std::size_t>(k.dynamicSharedMemory));
    if (status != CUDA_OCC_SUCCESS) {
      ADD_FAILURE() << describe(gpu, k) << ": cuda_occupancy.h error " << status;
      return {count, {}};
    }
    const Occupancy ours = computeOccupancy(gpu, k);
    check.limitsSeen.insert(ours.limit);
    const bool same =
        ours.activeBlocksPerSm == theirs.activeBlocksPerMultiprocessor &&
        ours.limitByWarps == theirs.blockLimitWarps &&
        ours.limitByRegisters == theirs.blockLimitRegs &&
        ours.limitBySharedMemory == theirs.blockLimitSharedMem &&
        ours.limitByBlocks == theirs.blockLimitBlocks &&
        (ours.activeBlocksPerSm == 0 || (theirs.limitingFactors & limitFlag(ours.limit)) != 0);
    if (!same && ++check.mismatches <= 5) {
      ADD_FAILURE() << describe(gpu, k) << ": rlscope " << ours.activeBlocksPerSm << " blocks ("
                    << occupancyLimitName(ours.limit) << "; warps " << ours.limitByWarps
                    << ", registers " << ours.limitByRegisters << ", shared memory "
                    << ours.limitBySharedMemory << ", blocks " << ours.limitByBlocks
                    << "), cuda_occupancy.h " << theirs.activeBlocksPerMultiprocessor
                    << " (factors 0x" << std::hex << theirs.limitingFactors << std::dec
                    << "; warps " << theirs.blockLimitWarps << ", registers "
                    << theirs.blockLimitRegs << ", shared memory " << theirs.blockLimitSharedMem
                    << ", blocks " << theirs.blockLimitBlocks << ")";
    }
  }
  return check;
}

// Cross-checks `gpu` on `count` random kernels, among which every limit must bind at least once.
void expectAgreementOnEveryLimit(const GpuSpec& gpu, int count) {
  const CrossCheck check = crossCheck(gpu, count);
  EXPECT_EQ(check.mismatches, 0) << gpu.name << ": mismatches in " << count << " kernels";
  for (auto limit :
       {OccupancyLimit::kWarps, OccupancyLimit::kRegisters, OccupancyLimit::kSharedMemory,
        OccupancyLimit::kBlocks, OccupancyLimit::kInvalid}) {
    EXPECT_TRUE(check.limitsSeen.count(limit))
        << gpu.name << ": no random kernel was bound by " << occupancyLimitName(limit);
  }
}

TEST(OccupancyCrossCheck, EveryBuiltInGpuAgreesWithCudaOccupancyH) {
  const GpuDatabase database = GpuDatabase::builtIn();
  ASSERT_FALSE(database.gpus().empty());
  for (const GpuSpec& gpu : database.gpus()) {
    expectAgreementOnEveryLimit(gpu, 5000);
  }
}

bool cudaOccupancyKnows(const GpuSpec& gpu) {
  const cudaOccDeviceProp prop = deviceProp(gpu);
  const cudaOccFuncAttributes attributes = functionAttributes(kernel(128, 32));
  const cudaOccDeviceState state;
  cudaOccResult result{};
  return cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attributes, &state, 128, 0) ==
         CUDA_OCC_SUCCESS;
}

// Every compute capability 6.0..12.9 on a GPU whose shared memory fits every carveout list: the
// rules accept exactly those cuda_occupancy.h knows, and agree with it on each.
TEST(OccupancyCrossCheck, EveryComputeCapabilityAgreesWithCudaOccupancyH) {
  int known = 0;
  for (int major = 6; major <= 12; ++major) {
    for (int minor = 0; minor <= 9; ++minor) {
      GpuSpec gpu = spec("generic", major, minor, 2048, 64 * 1024, 63 * 1024);
      gpu.name += " " + gpu.computeCapabilityText();
      if (!cudaOccupancyKnows(gpu)) {
        EXPECT_THROW(computeOccupancy(gpu, kernel(128, 32)), std::invalid_argument) << gpu.name;
        continue;
      }
      ++known;
      expectAgreementOnEveryLimit(gpu, 2000);
    }
  }
  EXPECT_EQ(known, 4 * 10 + 3 + 3 + 2);  // 6.x to 9.x, 10.{0,1,3}, 11.{0,1,3}, 12.{0,1}
}

// Blocks larger than the preferred carveout (sharedMemPerSm, here smaller than real GPUs report):
// from Volta on the driver picks a larger carveout, Pascal's dedicated shared memory fits none.
TEST(OccupancyCrossCheck, BlocksOverThePreferredCarveoutAgreeWithCudaOccupancyH) {
  for (auto [major, minor] : {std::pair{6, 1}, {7, 0}, {7, 5}, {8, 0}, {8, 6}, {9, 0}, {12, 0}}) {
    GpuSpec gpu = spec("small carveout", major, minor, 2048, 20 * 1024, 63 * 1024);
    gpu.name += " " + gpu.computeCapabilityText();
    EXPECT_EQ(crossCheck(gpu, 2000).mismatches, 0) << gpu.name << ": mismatches in 2000 kernels";
  }
}

#else

TEST(OccupancyCrossCheck, EveryBuiltInGpuAgreesWithCudaOccupancyH) {
  GTEST_SKIP() << "cuda_occupancy.h not found (it comes with the CUDA toolkit): the cross-check "
                  "against NVIDIA's occupancy calculator is compiled out";
}

#endif

}  // namespace
}  // namespace rlscope::predictor
