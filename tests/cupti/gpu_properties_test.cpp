// GPU properties from driver attributes, checked with an A100-SXM4-40GB's published values.
#include "gpu_properties.h"

#include <gtest/gtest.h>

#include <map>

#include "cupti/part_records.h"

namespace rlscope::cupti {
namespace {

int a100(CUdevice_attribute a) {
  static const std::map<CUdevice_attribute, int> values = {
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 40 << 20},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1410000},         // kHz
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 1215000},  // kHz
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 5120},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 108},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 8},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 166912},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 167936},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, 0},
  };
  auto it = values.find(a);
  return it == values.end() ? 0 : it->second;
}

TEST(GpuProperties, UnitsAndDerivedValues) {
  part::GpuInfo g = gpuInfoFromAttributes(3, a100, 42'505'273'344);
  EXPECT_EQ(g.deviceId, 3u);
  EXPECT_EQ(g.totalMemory, 42'505'273'344);
  EXPECT_EQ(g.l2CacheSize, 40 << 20);
  EXPECT_EQ(g.clockRate, 1'410'000'000);
  EXPECT_EQ(g.memoryClockRate, 1'215'000'000);
  EXPECT_EQ(g.memoryBusWidth, 5120);
  // 2 × 1215 MHz × 640 bytes = 1555.2 GB/s, the A100-40GB's published peak.
  EXPECT_EQ(g.memoryBandwidth, 1'555'200'000'000);
  EXPECT_EQ(g.smCount, 108);
  EXPECT_EQ(g.computeMajor, 8);
  EXPECT_EQ(g.computeMinor, 0);
  EXPECT_EQ(g.maxRegistersPerBlock, 65536);
  EXPECT_EQ(g.maxRegistersPerSm, 65536);
  EXPECT_EQ(g.maxShmemPerBlock, 49152);
  EXPECT_EQ(g.maxShmemPerBlockOptin, 166912);
  EXPECT_EQ(g.maxShmemPerSm, 167936);
  EXPECT_EQ(g.threadsPerWarp, 32);
  EXPECT_EQ(g.maxWarpsPerSm, 64);
  EXPECT_EQ(g.maxBlocksPerSm, 32);
  EXPECT_EQ(g.maxThreadsPerBlock, 1024);
  EXPECT_EQ(g.isDiscrete, 1);
}

TEST(GpuProperties, MissingAttributesStayZero) {
  part::GpuInfo g = gpuInfoFromAttributes(
      0, [](CUdevice_attribute) { return 0; }, 0);
  EXPECT_EQ(g.maxWarpsPerSm, 0);  // no division by a zero warp size
  EXPECT_EQ(g.memoryBandwidth, 0);
  EXPECT_EQ(g.smCount, 0);
}

TEST(GpuProperties, IntegratedGpu) {
  part::GpuInfo g = gpuInfoFromAttributes(
      0, [](CUdevice_attribute a) { return a == CU_DEVICE_ATTRIBUTE_INTEGRATED ? 1 : 0; }, 0);
  EXPECT_EQ(g.isDiscrete, 0);
}

TEST(GpuProperties, UuidAndBusLocationAsNvidiaSmiPrintsThem) {
  const unsigned char bytes[16] = {0x1c, 0x2b, 0x3a, 0x49, 0x58, 0x67, 0x76, 0x85,
                                   0x94, 0xa3, 0xb2, 0xc1, 0xd0, 0xef, 0xfe, 0x0d};
  EXPECT_EQ(formatUuid(bytes), "GPU-1c2b3a49-5867-7685-94a3-b2c1d0effe0d");
  EXPECT_EQ(formatBusLocation(0, 0x3b, 0), "0000:3b:00.0");
  EXPECT_EQ(formatBusLocation(1, 0xaf, 0x1f), "0001:af:1f.0");
}

TEST(GpuProperties, RecordCarriesPropertiesAndStrings) {
  GpuDescription gpu;
  gpu.info = gpuInfoFromAttributes(1, a100, 1234);
  gpu.name = "NVIDIA A100-SXM4-40GB";
  gpu.uuid = "GPU-1c2b3a49-5867-7685-94a3-b2c1d0effe0d";
  gpu.busLocation = "0000:3b:00.0";
  gpu.chipName = "GA100";
  std::vector<std::byte> bytes = encodeGpuInfo(gpu);  // the views point into it
  auto recs = testing::splitRecords(bytes);
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_EQ(recs[0].type, part::RecordType::kGpuInfo);
  auto g = recs[0].payload<part::GpuInfo>();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->deviceId, 1u);
  EXPECT_EQ(g->smCount, 108);
  EXPECT_EQ(g->totalMemory, 1234);
  EXPECT_EQ(g->memoryBandwidth, 1'555'200'000'000);
  EXPECT_EQ(recs[0].string<part::GpuInfo>(0), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(recs[0].string<part::GpuInfo>(1), "GPU-1c2b3a49-5867-7685-94a3-b2c1d0effe0d");
  EXPECT_EQ(recs[0].string<part::GpuInfo>(2), "0000:3b:00.0");
  EXPECT_EQ(recs[0].string<part::GpuInfo>(3), "GA100");
}

}  // namespace
}  // namespace rlscope::cupti
