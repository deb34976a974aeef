// Decodes fabricated CUPTI records (the toolkit's real structs, zeroed, fields set) and checks
// every field of the part records that come out.
#include "activity_decoder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cupti/part_records.h"

namespace rlscope::cupti {
namespace {

using part::RecordType;
using testing::splitRecords;

template <class T>
T zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof t);
  t.kind = kind;
  return t;
}

template <class T>
const CUpti_Activity* asActivity(const T& t) {
  return reinterpret_cast<const CUpti_Activity*>(&t);
}

// A namer that needs no CUPTI, so the tests see exactly what the decoder does with names.
std::string fakeName(part::ApiKind kind, std::uint32_t cbid) {
  if (cbid == 999) return {};
  return (kind == part::ApiKind::kRuntime ? "rt" : "drv") + std::to_string(cbid);
}

TEST(ActivityDecoder, ConcurrentKernel) {
  auto a = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  a.start = 1'000'000'123;
  a.end = 1'000'050'456;
  a.deviceId = 1;
  a.contextId = 7;
  a.streamId = 13;
  a.correlationId = 4242;
  a.gridX = 128;
  a.gridY = 2;
  a.gridZ = 1;
  a.blockX = 256;
  a.blockY = 1;
  a.blockZ = 3;
  a.registersPerThread = 40;
  a.staticSharedMemory = 4096;
  a.dynamicSharedMemory = 8192;
  a.localMemoryPerThread = 16;
  a.localMemoryTotal = 111;
  a.localMemoryTotal_v2 = 65536;
  a.sharedMemoryExecuted = 32768;
  a.gridId = 99;
  a.graphNodeId = 555;
  a.graphId = 6;
  a.launchType = 1;
  a.cacheConfig.config.requested = 2;
  a.cacheConfig.config.executed = 3;
  const char* name = "_Z13linear_forwardPKfS0_Pfiii";
  a.name = name;

  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(a), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_EQ(recs[0].type, RecordType::kKernel);
  auto k = recs[0].payload<part::Kernel>();
  ASSERT_TRUE(k);
  EXPECT_EQ(k->start, 1'000'000'123);
  EXPECT_EQ(k->end, 1'000'050'456);
  EXPECT_EQ(k->deviceId, 1u);
  EXPECT_EQ(k->contextId, 7u);
  EXPECT_EQ(k->streamId, 13u);
  EXPECT_EQ(k->correlationId, 4242u);
  EXPECT_EQ(k->gridX, 128);
  EXPECT_EQ(k->gridY, 2);
  EXPECT_EQ(k->gridZ, 1);
  EXPECT_EQ(k->blockX, 256);
  EXPECT_EQ(k->blockY, 1);
  EXPECT_EQ(k->blockZ, 3);
  EXPECT_EQ(k->registersPerThread, 40);
  EXPECT_EQ(k->staticSharedMemory, 4096);
  EXPECT_EQ(k->dynamicSharedMemory, 8192);
  EXPECT_EQ(k->localMemoryPerThread, 16);
  EXPECT_EQ(k->localMemoryTotal, 65536u);  // the 64-bit field wins
  EXPECT_EQ(k->sharedMemoryExecuted, 32768u);
  EXPECT_EQ(k->gridId, 99u);
  EXPECT_EQ(k->graphNodeId, 555u);
  EXPECT_EQ(k->graphId, 6u);
  EXPECT_EQ(k->launchType, 1);
  EXPECT_EQ(k->cacheConfigRequested, 2);
  EXPECT_EQ(k->cacheConfigExecuted, 3);
  EXPECT_EQ(recs[0].string<part::Kernel>(0), std::string_view(name));
  EXPECT_EQ(d.decoded(), 1u);
  // The kernel taught the decoder its context's device.
  EXPECT_EQ(d.deviceOfContext(7), 1u);
}

TEST(ActivityDecoder, KernelWithoutNameAndOnlyThe32BitLocalMemory) {
  auto a = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  a.start = 10;
  a.end = 20;
  a.localMemoryTotal = 777;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(a), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].payload<part::Kernel>()->localMemoryTotal, 777u);
  EXPECT_EQ(recs[0].string<part::Kernel>(0), std::string_view());
}

TEST(ActivityDecoder, Memcpy) {
  auto a = zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.bytes = 1 << 20;
  a.start = 5000;
  a.end = 9000;
  a.deviceId = 2;
  a.contextId = 3;
  a.streamId = 14;
  a.correlationId = 77;
  a.graphNodeId = 12;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(a), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_EQ(recs[0].type, RecordType::kMemcpy);
  auto m = recs[0].payload<part::Memcpy>();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->start, 5000);
  EXPECT_EQ(m->end, 9000);
  EXPECT_EQ(m->bytes, 1u << 20);
  EXPECT_EQ(m->graphNodeId, 12u);
  EXPECT_EQ(m->deviceId, 2u);
  EXPECT_EQ(m->contextId, 3u);
  EXPECT_EQ(m->streamId, 14u);
  EXPECT_EQ(m->correlationId, 77u);
  EXPECT_EQ(m->srcDeviceId, 2u);
  EXPECT_EQ(m->dstDeviceId, 2u);
  EXPECT_EQ(m->copyKind, 1);  // ENUM_CUDA_MEMCPY_OPER: 1 HtoD
  EXPECT_EQ(m->srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(m->dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
}

TEST(ActivityDecoder, PeerToPeerMemcpy) {
  auto a = zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.bytes = 4096;
  a.start = 100;
  a.end = 300;
  a.deviceId = 0;
  a.contextId = 1;
  a.streamId = 7;
  a.srcDeviceId = 0;
  a.dstDeviceId = 1;
  a.correlationId = 8;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(a), out));
  auto m = splitRecords(out).at(0).payload<part::Memcpy>();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->copyKind, 10);  // PtoP
  EXPECT_EQ(m->bytes, 4096u);
  EXPECT_EQ(m->srcDeviceId, 0u);
  EXPECT_EQ(m->dstDeviceId, 1u);
  EXPECT_EQ(m->streamId, 7u);
  EXPECT_EQ(m->correlationId, 8u);
  EXPECT_EQ(m->start, 100);
  EXPECT_EQ(m->end, 300);
}

TEST(ActivityDecoder, Memset) {
  auto a = zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  a.value = 0xab;
  a.bytes = 65536;
  a.start = 40;
  a.end = 90;
  a.deviceId = 1;
  a.contextId = 2;
  a.streamId = 3;
  a.correlationId = 4;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.graphNodeId = 5;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(a), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.at(0).type, RecordType::kMemset);
  auto m = recs[0].payload<part::Memset>();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->start, 40);
  EXPECT_EQ(m->end, 90);
  EXPECT_EQ(m->bytes, 65536u);
  EXPECT_EQ(m->graphNodeId, 5u);
  EXPECT_EQ(m->deviceId, 1u);
  EXPECT_EQ(m->contextId, 2u);
  EXPECT_EQ(m->streamId, 3u);
  EXPECT_EQ(m->correlationId, 4u);
  EXPECT_EQ(m->value, 0xabu);
  EXPECT_EQ(m->memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
}

TEST(ActivityDecoder, RuntimeAndDriverApiCalls) {
  auto rt = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  rt.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  rt.start = 1000;
  rt.end = 1400;
  rt.processId = 321;
  rt.threadId = 654;
  rt.correlationId = 4242;
  rt.returnValue = 0;
  auto drv = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  drv.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  drv.start = 1100;
  drv.end = 1300;
  drv.threadId = 655;
  drv.correlationId = 4243;
  drv.returnValue = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS

  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(rt), out));
  ASSERT_TRUE(d.decode(asActivity(drv), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(recs[0].type, RecordType::kApiCall);
  auto c = recs[0].payload<part::ApiCall>();
  EXPECT_EQ(c->start, 1000);
  EXPECT_EQ(c->end, 1400);
  EXPECT_EQ(c->kind, static_cast<std::uint32_t>(part::ApiKind::kRuntime));
  EXPECT_EQ(c->cbid, static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(c->tid, 654u);
  EXPECT_EQ(c->correlationId, 4242u);
  EXPECT_EQ(c->returnValue, 0);
  EXPECT_EQ(recs[0].string<part::ApiCall>(0),
            "rt" + std::to_string(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  auto c2 = recs[1].payload<part::ApiCall>();
  EXPECT_EQ(c2->kind, static_cast<std::uint32_t>(part::ApiKind::kDriver));
  EXPECT_EQ(c2->cbid, static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(c2->tid, 655u);
  EXPECT_EQ(c2->correlationId, 4243u);
  EXPECT_EQ(c2->returnValue, 700);
  EXPECT_EQ(c2->start, 1100);
  EXPECT_EQ(c2->end, 1300);
  EXPECT_EQ(recs[1].string<part::ApiCall>(0),
            "drv" + std::to_string(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
}

TEST(ActivityDecoder, ApiNamesAreLookedUpOnceAndUnknownOnesKeepTheirId) {
  int lookups = 0;
  ActivityDecoder d([&](part::ApiKind kind, std::uint32_t cbid) {
    ++lookups;
    return fakeName(kind, cbid);
  });
  auto a = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  a.start = 1;
  a.end = 2;
  a.cbid = 17;
  std::vector<std::byte> out;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(d.decode(asActivity(a), out));
  EXPECT_EQ(lookups, 1);
  a.cbid = 999;  // fakeName does not know it
  out.clear();
  ASSERT_TRUE(d.decode(asActivity(a), out));
  EXPECT_EQ(splitRecords(out).at(0).string<part::ApiCall>(0), "cbid_999");
}

TEST(ActivityDecoder, CuptiNamesTheApisWithoutTheRuntimeVersionSuffix) {
  EXPECT_EQ(cuptiApiName(part::ApiKind::kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            "cudaLaunchKernel");
  EXPECT_EQ(cuptiApiName(part::ApiKind::kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020),
            "cudaMemcpy");
  EXPECT_EQ(cuptiApiName(part::ApiKind::kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
            "cuLaunchKernel");
  EXPECT_EQ(stripRuntimeVersionSuffix("cudaLaunchKernel_ptsz_v7000"), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(stripRuntimeVersionSuffix("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(stripRuntimeVersionSuffix("cuda_vx"), "cuda_vx");
  EXPECT_EQ(stripRuntimeVersionSuffix("cudaFoo_v"), "cudaFoo_v");
  EXPECT_EQ(stripRuntimeVersionSuffix("plain"), "plain");
}

TEST(ActivityDecoder, SynchronizationTakesItsDeviceFromTheContext) {
  auto s = zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 700;
  s.end = 900;
  s.correlationId = 31;
  s.contextId = 5;
  s.streamId = 16;
  s.cudaEventId = 4;
  s.cudaEventSyncId = 123456789012ull;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(s), out));
  auto unknown = splitRecords(out).at(0).payload<part::Synchronization>();
  EXPECT_EQ(unknown->deviceId, kUnknownDevice);

  d.noteContextDevice(5, 3);
  out.clear();
  ASSERT_TRUE(d.decode(asActivity(s), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.at(0).type, RecordType::kSynchronization);
  auto y = recs[0].payload<part::Synchronization>();
  ASSERT_TRUE(y);
  EXPECT_EQ(y->start, 700);
  EXPECT_EQ(y->end, 900);
  EXPECT_EQ(y->cudaEventId, 4u);
  EXPECT_EQ(y->cudaEventSyncId, 123456789012ull);
  EXPECT_EQ(y->deviceId, 3u);
  EXPECT_EQ(y->contextId, 5u);
  EXPECT_EQ(y->streamId, 16u);
  EXPECT_EQ(y->correlationId, 31u);
  EXPECT_EQ(y->type, 3u);  // ENUM_CUPTI_SYNC_TYPE: 3 STREAM_SYNCHRONIZE
}

TEST(ActivityDecoder, OverheadNamesItsThreadOrDevice) {
  auto o = zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 100;
  o.objectId.pt.threadId = 101;
  o.start = 2000;
  o.end = 2500;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(o), out));
  o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
  std::memset(&o.objectId, 0, sizeof o.objectId);
  o.objectId.dcs.deviceId = 2;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
  ASSERT_TRUE(d.decode(asActivity(o), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(recs[0].type, RecordType::kOverhead);
  auto t = recs[0].payload<part::Overhead>();
  EXPECT_EQ(t->start, 2000);
  EXPECT_EQ(t->end, 2500);
  EXPECT_EQ(t->objectId, 101u);
  EXPECT_EQ(t->overheadKind,
            static_cast<std::uint32_t>(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH));
  EXPECT_EQ(t->objectKind, static_cast<std::uint32_t>(CUPTI_ACTIVITY_OBJECT_THREAD));
  auto dev = recs[1].payload<part::Overhead>();
  EXPECT_EQ(dev->objectId, 2u);
  EXPECT_EQ(dev->objectKind, static_cast<std::uint32_t>(CUPTI_ACTIVITY_OBJECT_DEVICE));
  EXPECT_EQ(dev->overheadKind,
            static_cast<std::uint32_t>(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION));
}

TEST(ActivityDecoder, ExternalCorrelation) {
  auto x = zeroed<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  x.externalId = (std::uint64_t{12345} << 32) | 7;  // collector::operationIdOf(12345, 7)
  x.correlationId = 4242;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  ASSERT_TRUE(d.decode(asActivity(x), out));
  auto recs = splitRecords(out);
  ASSERT_EQ(recs.at(0).type, RecordType::kExternalCorrelation);
  auto e = recs[0].payload<part::ExternalCorrelation>();
  EXPECT_EQ(e->externalId, (std::uint64_t{12345} << 32) | 7);
  EXPECT_EQ(e->externalKind, 3u);
  EXPECT_EQ(e->correlationId, 4242u);
}

TEST(ActivityDecoder, UnknownKindsAreCountedAndIgnored) {
  CUpti_ActivityMarker2 marker;
  std::memset(&marker, 0, sizeof marker);
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  EXPECT_FALSE(d.decode(asActivity(marker), out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(d.unknownKinds(), 1u);
  EXPECT_EQ(d.decoded(), 0u);
}

TEST(ActivityDecoder, RecordsWithoutTimestampsAreDropped) {
  // A forced flush returns kernels still running with CUPTI_TIMESTAMP_UNKNOWN.
  auto k = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 100;
  k.end = CUPTI_TIMESTAMP_UNKNOWN;
  auto m = zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.start = 300;
  m.end = 200;  // ends before it starts
  ActivityDecoder d(fakeName);
  std::vector<std::byte> out;
  EXPECT_FALSE(d.decode(asActivity(k), out));
  EXPECT_FALSE(d.decode(asActivity(m), out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(d.incomplete(), 2u);
  EXPECT_EQ(d.unknownKinds(), 0u);
}

}  // namespace
}  // namespace rlscope::cupti
