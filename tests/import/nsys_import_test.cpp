// Nsight Systems SQLite import, on exports built from the documented nsys DDL
// (tests/support/nsys_fixture.h): NVIDIA ships no sample export.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rlscope/import/importer.h"
#include "rlscope/import/nsys_importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/nsys_fixture.h"
#include "support/temp_dir.h"

namespace rlscope::import {
namespace {

namespace fs = std::filesystem;
namespace table = trace::table;
using testing::NsysFixture;
using testing::NsysFixtureOptions;
using testing::TempDir;
using trace::TraceError;
using trace::TraceReader;

constexpr std::int64_t gtid(std::int64_t pid, std::int64_t tid) {
  return trace::globalTidOf(pid, tid);
}
constexpr std::int64_t gpid(std::int64_t pid) {
  return trace::globalPidOf(pid);
}

constexpr auto kPushPop = trace::NvtxEventType::kPushPopRange;
constexpr auto kStartEnd = trace::NvtxEventType::kStartEndRange;

trace::KernelRecord kernelRow(std::int64_t start, std::int64_t end, std::int64_t globalPid,
                              std::int64_t stream, std::int64_t correlation, std::int64_t name,
                              std::int64_t device = 0) {
  trace::KernelRecord k;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.correlationId = correlation;
  k.globalPid = globalPid;
  k.demangledName = name;
  k.shortName = name;
  k.registersPerThread = 32;
  k.gridX = 1;
  k.gridY = 1;
  k.gridZ = 1;
  k.blockX = 128;
  k.blockY = 1;
  k.blockZ = 1;
  return k;
}

trace::ApiCallRecord apiRow(std::int64_t start, std::int64_t end, std::int64_t globalTid,
                            std::int64_t correlation, std::int64_t name) {
  return {.start = start,
          .end = end,
          .globalTid = globalTid,
          .correlationId = correlation,
          .nameId = name};
}

trace::NvtxRecord rangeRow(trace::NvtxEventType type, std::int64_t start, std::int64_t end,
                           std::int64_t globalTid, std::string text) {
  return {.start = start,
          .end = end,
          .eventType = type,
          .text = std::move(text),
          .globalTid = globalTid};
}

// Like gmock's HasSubstr, without linking gmock.
::testing::AssertionResult hasText(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
}

ImportStats importDirect(const fs::path& in, const fs::path& out, const ImportOptions& opts = {}) {
  ImportStats stats;
  trace::TraceWriter writer(out);
  importNsys(in, writer, opts, stats);
  writer.commit();
  return stats;
}

// The message of the TraceError that importing `in` throws; empty if none is thrown.
std::string importError(const fs::path& in, const fs::path& out, bool direct = false) {
  try {
    if (direct) {
      importDirect(in, out);
    } else {
      importFile(in, out);
    }
  } catch (const TraceError& e) {
    return e.what();
  }
  return {};
}

struct Op {
  std::int64_t id = 0;
  std::int64_t parentId = 0;
  int depth = 0;
  std::int64_t globalTid = 0;
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
  std::string parent;  // parent's name, empty at depth 0
};

// Operations by name (names are unique in these fixtures).
std::map<std::string, Op> operationsByName(TraceReader& r) {
  std::map<std::string, Op> byName;
  std::map<std::int64_t, std::string> nameOfId;
  r.forEachOperation({}, [&](const trace::OperationRecord& o) {
    EXPECT_EQ(o.source, trace::OperationSource::kNvtx);
    std::string name(r.string(o.nameId));
    EXPECT_FALSE(byName.count(name)) << "duplicate operation " << name;
    byName[name] = {o.id, o.parentId, o.depth, o.globalTid, o.start, o.end, {}};
    nameOfId[o.id] = name;
  });
  for (auto& [name, op] : byName) {
    if (op.parentId) op.parent = nameOfId.at(op.parentId);
  }
  return byName;
}

// A two-process export with every table rlscope imports.
struct FullExport {
  // Source rows per table, as written.
  std::map<std::string, std::int64_t> rows;
  std::int64_t events = 0;
};

FullExport buildFullExport(NsysFixture& f) {
  FullExport e;
  const auto main = gtid(100, 100), worker = gtid(100, 101), rollout = gtid(200, 200);
  auto gemm = f.string("void gemm_kernel<float>(float*, float const*, int)");
  auto gemmShort = f.string("gemm_kernel");
  auto gemmMangled = f.string("_Z11gemm_kernelIfEvPfPKfi");
  auto relu = f.string("relu_kernel");
  auto launch = f.string("cudaLaunchKernel_v7000");
  auto memcpyAsync = f.string("cudaMemcpyAsync_v3020");
  auto memsetAsync = f.string("cudaMemsetAsync_v3020");
  auto streamSync = f.string("cudaStreamSynchronize_v3020");
  auto cuLaunch = f.string("cuLaunchKernel");

  trace::KernelRecord k = kernelRow(1000, 1500, gpid(100), 7, 11, gemm);
  k.shortName = gemmShort;
  k.mangledName = gemmMangled;
  k.gridX = 256;
  k.gridY = 4;
  k.gridZ = 2;
  k.blockX = 128;
  k.blockY = 2;
  k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 4096;
  k.dynamicSharedMemory = 16384;
  k.localMemoryPerThread = 8;
  k.localMemoryTotal = 1 << 20;
  k.gridId = 42;
  k.launchType = 0;
  k.cacheConfig = 1;
  k.sharedMemoryExecuted = 32768;
  k.graphNodeId = 5;
  k.graphId = 3;
  f.kernel(k);
  f.kernel(kernelRow(1600, 1700, gpid(100), 13, 12, relu));
  f.kernel(kernelRow(1800, 1900, gpid(100), 7, 13, relu));
  // Process 200 reuses correlation id 11: ids are unique per process only.
  f.kernel(kernelRow(2000, 2300, gpid(200), 7, 11, gemm, 1));
  f.runtime(apiRow(900, 990, main, 11, launch));
  f.runtime(apiRow(1550, 1580, worker, 12, launch));
  f.runtime(apiRow(1750, 1790, main, 13, launch));
  f.runtime(apiRow(1950, 1990, rollout, 11, launch));
  f.runtime(apiRow(400, 450, main, 21, memcpyAsync));
  f.runtime(apiRow(2400, 2450, main, 22, memcpyAsync));
  f.runtime(apiRow(460, 470, main, 23, memsetAsync));
  f.runtime(apiRow(2500, 2700, main, 24, streamSync));
  trace::ApiCallRecord drv = apiRow(910, 980, main, 11, cuLaunch);
  drv.eventClass = 1;
  f.driver(drv);
  f.memcpy({.start = 460,
            .end = 560,
            .deviceId = 0,
            .contextId = 1,
            .streamId = 7,
            .correlationId = 21,
            .globalPid = gpid(100),
            .bytes = 1 << 20,
            .copyKind = 1,
            .srcKind = 1,
            .dstKind = 2,
            .srcDeviceId = 0,
            .dstDeviceId = 0});
  f.memcpy({.start = 2460,
            .end = 2560,
            .deviceId = 0,
            .contextId = 1,
            .streamId = 7,
            .correlationId = 22,
            .globalPid = gpid(100),
            .bytes = 4096,
            .copyKind = 2,
            .srcKind = 2,
            .dstKind = 0});
  f.memset({.start = 580,
            .end = 590,
            .deviceId = 0,
            .contextId = 1,
            .streamId = 13,
            .correlationId = 23,
            .globalPid = gpid(100),
            .value = 0,
            .bytes = 512,
            .memKind = 2});
  f.sync({.start = 2500,
          .end = 2690,
          .deviceId = 0,
          .contextId = 1,
          .streamId = 7,
          .correlationId = 24,
          .globalPid = gpid(100),
          .syncType = trace::SyncType::kStreamSynchronize,
          .eventId = 3,
          .eventSyncId = 77});

  // NVTX: push/pop nesting on two threads of process 100 and one of process 200, a mark, a
  // domain, a registered string, and a start/end range that ends on another thread.
  f.nvtx(rangeRow(kPushPop, 0, 3000, main, "train"));
  f.nvtx(rangeRow(kPushPop, 10, 1200, main, "forward"));
  f.nvtx(rangeRow(kPushPop, 20, 600, main, "matmul"));
  f.nvtx(rangeRow(kPushPop, 1200, 2800, main, "backward"));
  trace::NvtxRecord registered = rangeRow(kPushPop, 2850, 2900, main, "");
  registered.textId = f.string("optimizer_step");
  registered.domainId = 1;
  f.nvtx(registered);
  f.nvtx(rangeRow(kPushPop, 50, 1500, worker, "load_batch"));
  f.nvtx(rangeRow(kPushPop, 60, 400, worker, "decode"));
  f.nvtx(rangeRow(kPushPop, 0, 2500, rollout, "rollout"));
  f.nvtx(rangeRow(kPushPop, 100, 200, rollout, "env_step"));
  f.nvtx(rangeRow(kPushPop, 200, 300, rollout, "policy"));
  trace::NvtxRecord epoch = rangeRow(kStartEnd, 5, 2950, main, "epoch");
  epoch.endGlobalTid = worker;
  epoch.rangeId = 7;
  epoch.color = 0xff00ff00;
  f.nvtx(epoch);
  trace::NvtxRecord mark = rangeRow(trace::NvtxEventType::kMark, 1234, 0, main, "checkpoint");
  mark.end.reset();
  f.nvtx(mark);
  trace::NvtxRecord domain = rangeRow(trace::NvtxEventType::kDomainCreate, 0, 0, main, "my_domain");
  domain.end.reset();
  domain.domainId = 1;
  f.nvtx(domain);

  f.threadName(main, "python");
  f.threadName(worker, "dataloader");
  f.threadName(rollout, "rollout_worker");
  f.process(gpid(100), 100, "python train.py");
  f.process(gpid(200), 200, "python rollout.py");

  trace::GpuInfoRecord a100{.id = 0,
                            .name = "NVIDIA A100-SXM4-40GB",
                            .busLocation = "0000:07:00.0",
                            .isDiscrete = 1,
                            .l2CacheSize = 41943040,
                            .totalMemory = 42505273344,
                            .memoryBandwidth = 1555200000000,
                            .clockRate = 1410000000,
                            .smCount = 108,
                            .uuid = "GPU-0f0e0d0c-0b0a-0908-0706-050403020100",
                            .chipName = "GA100",
                            .computeMajor = 8,
                            .computeMinor = 0,
                            .maxIPC = 4,
                            .maxRegistersPerBlock = 65536,
                            .maxShmemPerBlock = 49152,
                            .maxShmemPerBlockOptin = 166912,
                            .maxShmemPerSm = 167936,
                            .maxRegistersPerSm = 65536,
                            .threadsPerWarp = 32,
                            .maxWarpsPerSm = 64,
                            .maxBlocksPerSm = 32,
                            .maxThreadsPerBlock = 1024};
  f.gpu(a100);
  trace::GpuInfoRecord h100 = a100;
  h100.id = 1;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.chipName = "GH100";
  h100.smCount = 132;
  h100.computeMajor = 9;
  f.gpu(h100);
  f.sessionStart(1767225600000000000);

  e.rows = {{std::string(table::kKernel), 4},    {std::string(table::kRuntime), 8},
            {std::string(table::kDriver), 1},    {std::string(table::kMemcpy), 2},
            {std::string(table::kMemset), 1},    {std::string(table::kSync), 1},
            {std::string(table::kNvtx), 13},     {std::string(table::kThreadNames), 3},
            {std::string(table::kGpuInfo), 2},   {std::string(table::kOperations), 11},
            {std::string(table::kProcesses), 2}, {std::string(table::kThreads), 3}};
  e.events = 4 + 8 + 1 + 2 + 1 + 1 + 13;
  return e;
}

struct Imported {
  TempDir dir;
  ImportStats stats;
  FullExport expected;
  std::unique_ptr<TraceReader> reader;
};

std::unique_ptr<Imported> importFullExport() {
  auto result = std::make_unique<Imported>();
  auto in = result->dir / "report.sqlite";
  {
    NsysFixture f(in);
    result->expected = buildFullExport(f);
  }
  auto out = result->dir / "trace.sqlite";
  result->stats = importFile(in, out);
  result->reader = std::make_unique<TraceReader>(out);
  return result;
}

TEST(NsysImport, CopiesEveryTableWithItsRowCount) {
  auto im = importFullExport();
  auto& r = *im->reader;
  for (const auto& [name, count] : im->expected.rows) {
    EXPECT_EQ(r.rowCount(name), count) << name;
    EXPECT_EQ(im->stats.rowsPerTable[name], static_cast<std::uint64_t>(count)) << name;
  }
  EXPECT_EQ(im->stats.events, static_cast<std::uint64_t>(im->expected.events));
  EXPECT_EQ(im->stats.format, nsysFormat().name);
  EXPECT_GT(im->stats.inputBytes, 0u);
  // Every distinct string of the export, plus the unregistered NVTX texts interned as names.
  EXPECT_EQ(static_cast<std::uint64_t>(r.rowCount(table::kStringIds)),
            im->stats.rowsPerTable[std::string(table::kStringIds)]);
  EXPECT_TRUE(im->stats.warnings.empty()) << im->stats.warnings.front();
  EXPECT_EQ(r.metaValue(trace::meta::kSourceFormat), "nsys");
  EXPECT_EQ(r.metaValue("nsys_export_schema_version"), "3.11.0");
  EXPECT_EQ(r.metaValue(trace::meta::kStartWallNs), "1767225600000000000");
  EXPECT_EQ(r.metaValue(trace::meta::kGpuActivity), "recorded");
}

TEST(NsysImport, KernelFieldsAndNamesSurvive) {
  auto im = importFullExport();
  auto& r = *im->reader;
  std::vector<trace::KernelRecord> kernels;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) { kernels.push_back(k); });
  ASSERT_EQ(kernels.size(), 4u);
  const auto& k = kernels[0];
  EXPECT_EQ(k.start, 1000);
  EXPECT_EQ(k.end, 1500);
  EXPECT_EQ(r.string(k.demangledName), "void gemm_kernel<float>(float*, float const*, int)");
  EXPECT_EQ(r.string(k.shortName), "gemm_kernel");
  EXPECT_EQ(r.string(k.mangledName), "_Z11gemm_kernelIfEvPfPKfi");
  EXPECT_EQ(std::tie(k.gridX, k.gridY, k.gridZ), std::make_tuple(256, 4, 2));
  EXPECT_EQ(std::tie(k.blockX, k.blockY, k.blockZ), std::make_tuple(128, 2, 1));
  EXPECT_EQ(k.registersPerThread, 96);
  EXPECT_EQ(k.staticSharedMemory, 4096);
  EXPECT_EQ(k.dynamicSharedMemory, 16384);
  EXPECT_EQ(k.localMemoryPerThread, 8);
  EXPECT_EQ(k.localMemoryTotal, 1 << 20);
  EXPECT_EQ(k.gridId, 42);
  EXPECT_EQ(k.cacheConfig, 1);
  EXPECT_EQ(k.sharedMemoryExecuted, 32768);
  EXPECT_EQ(k.graphNodeId, 5);
  EXPECT_EQ(k.graphId, 3);
  EXPECT_EQ(k.streamId, 7);
  EXPECT_EQ(k.globalPid, gpid(100));
  // NULL mangledName stays "no string".
  EXPECT_EQ(kernels[1].mangledName, trace::kNoString);
  EXPECT_EQ(r.string(kernels[1].demangledName), "relu_kernel");
  EXPECT_EQ(kernels[3].deviceId, 1);

  std::vector<trace::MemcpyRecord> copies;
  r.forEachMemcpy({}, [&](const trace::MemcpyRecord& m) { copies.push_back(m); });
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].bytes, 1 << 20);
  EXPECT_EQ(copies[0].copyKind, 1);
  EXPECT_EQ(copies[0].srcKind, 1);
  EXPECT_EQ(copies[0].dstKind, 2);
  EXPECT_EQ(copies[1].copyKind, 2);
  std::vector<trace::SyncRecord> syncs;
  r.forEachSync({}, [&](const trace::SyncRecord& s) { syncs.push_back(s); });
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].syncType, trace::SyncType::kStreamSynchronize);
  EXPECT_EQ(syncs[0].eventId, 3);
  EXPECT_EQ(syncs[0].eventSyncId, 77);
  std::vector<trace::MemsetRecord> sets;
  r.forEachMemset({}, [&](const trace::MemsetRecord& m) { sets.push_back(m); });
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].bytes, 512);
  EXPECT_EQ(sets[0].memKind, 2);
  std::vector<trace::ApiCallRecord> driver;
  r.forEachApiCall(trace::ApiKind::kDriver, {},
                   [&](const trace::ApiCallRecord& a) { driver.push_back(a); });
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(driver[0].eventClass, 1);
  EXPECT_EQ(r.string(driver[0].nameId), "cuLaunchKernel");
}

TEST(NsysImport, RuntimeToKernelCorrelationIsKeptPerProcess) {
  auto im = importFullExport();
  // The documented nsys recipe: same correlation id and the same process.
  auto st = im->reader->db().prepare(
      "SELECT k.start, r.start, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
      "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON k.correlationId = r.correlationId "
      "AND r.globalTid / 16777216 % 16777216 = k.globalPid / 16777216 % 16777216 "
      "JOIN StringIds s ON s.id = r.nameId ORDER BY k.start");
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> pairs;
  while (st.step()) {
    pairs.emplace_back(st.columnInt(0), st.columnInt(1), std::string(st.columnText(2)));
  }
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> expected = {
      {1000, 900, "cudaLaunchKernel_v7000"},
      {1600, 1550, "cudaLaunchKernel_v7000"},
      {1800, 1750, "cudaLaunchKernel_v7000"},
      {2000, 1950, "cudaLaunchKernel_v7000"}};
  EXPECT_EQ(pairs, expected);
  auto copies = im->reader->db().queryInt(
      "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
      "ON m.correlationId = r.correlationId AND r.globalTid / 16777216 = m.globalPid / 16777216 "
      "JOIN StringIds s ON s.id = r.nameId AND s.value = 'cudaMemcpyAsync_v3020'");
  EXPECT_EQ(copies, 2);
}

TEST(NsysImport, PushPopRangesNestPerThreadAndProcess) {
  auto im = importFullExport();
  auto ops = operationsByName(*im->reader);
  ASSERT_EQ(ops.size(), 11u);
  auto expect = [&](const std::string& name, const std::string& parent, int depth,
                    std::int64_t thread) {
    ASSERT_TRUE(ops.count(name)) << name;
    const auto& op = ops.at(name);
    EXPECT_EQ(op.parent, parent) << name;
    EXPECT_EQ(op.depth, depth) << name;
    EXPECT_EQ(op.globalTid, thread) << name;
    if (!parent.empty()) {
      EXPECT_LT(ops.at(parent).id, op.id) << name;
    }
  };
  const auto main = gtid(100, 100), worker = gtid(100, 101), rollout = gtid(200, 200);
  // main: train [0,3000) > epoch [5,2950) (start/end) > forward > matmul; backward and the
  // registered-string range follow forward inside epoch.
  expect("train", "", 0, main);
  expect("epoch", "train", 1, main);
  expect("forward", "epoch", 2, main);
  expect("matmul", "forward", 3, main);
  expect("backward", "epoch", 2, main);
  expect("optimizer_step", "epoch", 2, main);  // named by its registered string (textId)
  expect("load_batch", "", 0, worker);
  expect("decode", "load_batch", 1, worker);
  expect("rollout", "", 0, rollout);
  expect("env_step", "rollout", 1, rollout);
  expect("policy", "rollout", 1, rollout);  // starts where env_step ends: a sibling
  EXPECT_EQ(ops.at("matmul").start, 20);
  EXPECT_EQ(ops.at("matmul").end, 600);

  std::set<std::int64_t> ids;
  for (const auto& [name, op] : ops) ids.insert(op.id);
  EXPECT_EQ(*ids.begin(), 1);
  EXPECT_EQ(*ids.rbegin(), 11);
}

TEST(NsysImport, NvtxRowsAreCopiedWithRegisteredStrings) {
  auto im = importFullExport();
  auto& r = *im->reader;
  std::vector<trace::NvtxRecord> rows;
  r.forEachNvtx({}, [&](const trace::NvtxRecord& n) { rows.push_back(n); });
  ASSERT_EQ(rows.size(), 13u);
  int marks = 0, registered = 0, epochs = 0;
  for (const auto& n : rows) {
    if (n.eventType == trace::NvtxEventType::kMark) {
      ++marks;
      EXPECT_FALSE(n.end);
      EXPECT_EQ(n.text, "checkpoint");
    }
    if (n.textId != trace::kNoString) {
      ++registered;
      EXPECT_EQ(r.string(n.textId), "optimizer_step");
      EXPECT_TRUE(n.text.empty());
      EXPECT_EQ(n.domainId, 1);
    }
    if (n.text == "epoch") {
      ++epochs;
      EXPECT_EQ(n.eventType, kStartEnd);
      EXPECT_EQ(n.endGlobalTid, gtid(100, 101));
      EXPECT_EQ(n.rangeId, 7);
      EXPECT_EQ(n.color, 0xff00ff00);
    }
  }
  EXPECT_EQ(marks, 1);
  EXPECT_EQ(registered, 1);
  EXPECT_EQ(epochs, 1);
}

TEST(NsysImport, ProcessesAndThreadsComeFromGlobalIdsAndNames) {
  auto im = importFullExport();
  auto& r = *im->reader;
  auto processes = r.processes();
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].globalPid, gpid(100));
  EXPECT_EQ(processes[0].pid, 100);
  EXPECT_EQ(processes[0].name, "python train.py");
  EXPECT_EQ(processes[1].pid, 200);
  EXPECT_EQ(processes[1].name, "python rollout.py");
  auto threads = r.threads();
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].globalTid, gtid(100, 100));
  EXPECT_EQ(threads[0].globalPid, gpid(100));
  EXPECT_EQ(threads[0].tid, 100);
  EXPECT_EQ(threads[0].name, "python");
  EXPECT_EQ(threads[1].tid, 101);
  EXPECT_EQ(threads[1].name, "dataloader");
  EXPECT_EQ(threads[2].globalPid, gpid(200));
  EXPECT_EQ(threads[2].name, "rollout_worker");
  auto names = r.threadNames();
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(r.string(names[1].nameId), "dataloader");
  EXPECT_EQ(names[1].globalTid, gtid(100, 101));
}

TEST(NsysImport, GpuPropertiesSurvive) {
  auto im = importFullExport();
  auto gpus = im->reader->gpus();
  ASSERT_EQ(gpus.size(), 2u);
  const auto& g = gpus[0];
  EXPECT_EQ(g.id, 0);
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(g.busLocation, "0000:07:00.0");
  EXPECT_EQ(g.uuid, "GPU-0f0e0d0c-0b0a-0908-0706-050403020100");
  EXPECT_EQ(g.chipName, "GA100");
  EXPECT_EQ(g.isDiscrete, 1);
  EXPECT_EQ(g.l2CacheSize, 41943040);
  EXPECT_EQ(g.totalMemory, 42505273344);
  EXPECT_EQ(g.memoryBandwidth, 1555200000000);
  EXPECT_EQ(g.clockRate, 1410000000);
  EXPECT_EQ(g.smCount, 108);
  EXPECT_EQ(g.computeMajor, 8);
  EXPECT_EQ(g.computeMinor, 0);
  EXPECT_EQ(g.maxIPC, 4);
  EXPECT_EQ(g.maxRegistersPerBlock, 65536);
  EXPECT_EQ(g.maxShmemPerBlock, 49152);
  EXPECT_EQ(g.maxShmemPerBlockOptin, 166912);
  EXPECT_EQ(g.maxShmemPerSm, 167936);
  EXPECT_EQ(g.maxRegistersPerSm, 65536);
  EXPECT_EQ(g.threadsPerWarp, 32);
  EXPECT_EQ(g.maxWarpsPerSm, 64);
  EXPECT_EQ(g.maxBlocksPerSm, 32);
  EXPECT_EQ(g.maxThreadsPerBlock, 1024);
  EXPECT_EQ(g.memoryClockRate, 0);  // not in nsys exports
  EXPECT_EQ(gpus[1].id, 1);
  EXPECT_EQ(gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[1].smCount, 132);
  EXPECT_EQ(gpus[1].computeMajor, 9);
}

TEST(NsysImport, StartEndRangesThatCrossBecomeSiblings) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  const auto t = gtid(7, 8), other = gtid(7, 9);
  {
    NsysFixture f(in);
    f.nvtx(rangeRow(kStartEnd, 0, 100, t, "A"));
    f.nvtx(rangeRow(kStartEnd, 50, 150, t, "B"));   // crosses A
    f.nvtx(rangeRow(kPushPop, 60, 70, t, "C"));     // inside both: the innermost is B
    f.nvtx(rangeRow(kPushPop, 120, 130, t, "D"));   // inside B only
    f.nvtx(rangeRow(kPushPop, 120, 120, t, "E"));   // zero length at D's start: inside D
    f.nvtx(rangeRow(kStartEnd, 50, 150, t, "B2"));  // same span as B: after it, inside it
    trace::NvtxRecord moved = rangeRow(kStartEnd, 10, 20, t, "F");
    moved.endGlobalTid = other;  // ends on another thread; belongs to the starting one
    f.nvtx(moved);
    trace::NvtxRecord open = rangeRow(kPushPop, 200, 0, t, "unterminated");
    open.end.reset();
    f.nvtx(open);
  }
  TempDir outDir;
  auto stats = importFile(in, outDir / "t.sqlite");
  TraceReader r(outDir / "t.sqlite");
  auto ops = operationsByName(r);
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops.at("A").depth, 0);
  EXPECT_EQ(ops.at("F").parent, "A");
  EXPECT_EQ(ops.at("B").depth, 0);
  EXPECT_EQ(ops.at("B").parent, "");
  EXPECT_EQ(ops.at("B2").parent, "B");
  EXPECT_EQ(ops.at("C").parent, "B2");
  EXPECT_EQ(ops.at("C").depth, 2);
  EXPECT_EQ(ops.at("D").parent, "B2");
  EXPECT_EQ(ops.at("E").parent, "D");
  EXPECT_EQ(ops.at("E").depth, 3);
  for (const auto& [name, op] : ops) EXPECT_EQ(op.globalTid, t) << name;
  // Depth is always the parent's plus one.
  for (const auto& [name, op] : ops) {
    if (!op.parent.empty()) {
      EXPECT_EQ(op.depth, ops.at(op.parent).depth + 1) << name;
    }
  }
  EXPECT_EQ(r.rowCount(table::kNvtx), 8);
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_TRUE(hasText(stats.warnings[0], "1 NVTX range without an end"));
  // The thread the start/end range ended on is a thread of the trace too.
  EXPECT_EQ(r.threads().size(), 2u);
}

TEST(NsysImport, SparseStringIdsAreRemapped) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  NsysFixtureOptions options;
  options.firstStringId = 1000;
  options.stringIdStep = 7919;
  {
    NsysFixture f(in, options);
    auto name = f.string("k");
    EXPECT_EQ(name, 1000);
    f.kernel(kernelRow(0, 10, gpid(1), 1, 1, name));
    f.runtime(apiRow(0, 5, gtid(1, 2), 1, f.string("cudaLaunchKernel_v7000")));
    trace::NvtxRecord reg = rangeRow(kPushPop, 0, 10, gtid(1, 2), "");
    reg.textId = f.string("registered");
    f.nvtx(reg);
    f.kernel(kernelRow(20, 30, gpid(1), 1, 2, 424242));  // no such string
  }
  auto stats = importFile(in, dir / "t.sqlite");
  TraceReader r(dir / "t.sqlite");
  std::vector<std::string> names;
  r.forEachKernel(
      {}, [&](const trace::KernelRecord& k) { names.emplace_back(r.string(k.demangledName)); });
  EXPECT_EQ(names, (std::vector<std::string>{"k", ""}));
  r.forEachApiCall(trace::ApiKind::kRuntime, {}, [&](const trace::ApiCallRecord& a) {
    EXPECT_EQ(r.string(a.nameId), "cudaLaunchKernel_v7000");
  });
  auto ops = operationsByName(r);
  EXPECT_TRUE(ops.count("registered"));
  ASSERT_EQ(stats.warnings.size(), 1u);
  // demangledName and shortName of the second kernel.
  EXPECT_TRUE(hasText(stats.warnings[0], "2 references to string ids missing from StringIds"));
}

TEST(NsysImport, UnknownSchemaMajorIsRefused) {
  for (std::string version : {"4.0.0", "2.9.1", "10.1"}) {
    TempDir dir;
    auto in = dir / "report.sqlite";
    {
      NsysFixture f(in, {.schemaVersion = version});
      f.kernel(kernelRow(0, 10, gpid(1), 1, 1, f.string("k")));
    }
    auto out = dir / "t.sqlite";
    auto error = importError(in, out);
    EXPECT_TRUE(hasText(error, in.string()));
    EXPECT_TRUE(hasText(error, "Nsight Systems export schema " + version +
                                   " is not supported (rlscope reads 3.x)"));
    EXPECT_FALSE(fs::exists(out)) << version;
  }
  TempDir dir;
  auto in = dir / "report.sqlite";
  { NsysFixture f(in, {.schemaVersion = "three"}); }
  EXPECT_TRUE(hasText(importError(in, dir / "t.sqlite"), "invalid Nsight Systems"));
}

TEST(NsysImport, MissingSchemaVersionIsReadAs3xWithAWarning) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  {
    NsysFixture f(in, {.schemaVersion = std::nullopt});
    f.kernel(kernelRow(0, 10, gpid(1), 1, 1, f.string("k")));
  }
  auto stats = importFile(in, dir / "t.sqlite");
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_TRUE(hasText(stats.warnings[0], "no EXPORT_SCHEMA_VERSION"));
  TraceReader r(dir / "t.sqlite");
  EXPECT_EQ(r.rowCount(table::kKernel), 1);
  EXPECT_FALSE(r.metaValue("nsys_export_schema_version"));
  EXPECT_EQ(r.metaValue(trace::meta::kSourceFormat), "nsys");
}

TEST(NsysImport, MissingOptionalTablesAreFine) {
  // nsys creates tables lazily: a CPU-only capture has no CUPTI tables, an empty one has only
  // StringIds and the metadata.
  TempDir dir;
  auto nvtxOnly = dir / "nvtx.sqlite";
  {
    NsysFixture f(nvtxOnly);
    f.nvtx(rangeRow(kPushPop, 0, 10, gtid(3, 3), "only"));
  }
  auto stats = importFile(nvtxOnly, dir / "a.sqlite");
  TraceReader a(dir / "a.sqlite");
  EXPECT_EQ(a.rowCount(table::kNvtx), 1);
  EXPECT_EQ(a.rowCount(table::kOperations), 1);
  EXPECT_EQ(a.rowCount(table::kKernel), 0);
  EXPECT_EQ(a.gpus().size(), 0u);
  EXPECT_FALSE(a.metaValue(trace::meta::kGpuActivity));
  EXPECT_FALSE(stats.rowsPerTable.count(std::string(table::kKernel)));
  EXPECT_TRUE(stats.warnings.empty());

  auto empty = dir / "empty.sqlite";
  { NsysFixture f(empty); }
  stats = importFile(empty, dir / "b.sqlite");
  TraceReader b(dir / "b.sqlite");
  EXPECT_EQ(stats.events, 0u);
  EXPECT_FALSE(b.timeSpan());
  EXPECT_EQ(b.processes().size(), 0u);
}

TEST(NsysImport, TablesWithFewerColumnsAreRead) {
  // An older/newer export: columns missing from several tables, TARGET_INFO_GPU without `id`.
  TempDir dir;
  auto in = dir / "report.sqlite";
  {
    NsysFixture f(in);
    f.createTable("CUPTI_ACTIVITY_KIND_KERNEL",
                  "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                  "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "
                  "globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, "
                  "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, "
                  "gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, "
                  "blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL");
    f.createTable("CUPTI_ACTIVITY_KIND_RUNTIME",
                  "start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, "
                  "correlationId INTEGER, nameId INTEGER NOT NULL");
    f.createTable("NVTX_EVENTS",
                  "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, "
                  "globalTid INTEGER");
    f.createTable("TARGET_INFO_GPU",
                  "cuDevice INTEGER NOT NULL, name TEXT, smCount INTEGER, computeMajor INTEGER, "
                  "computeMinor INTEGER");
    f.createTable("ThreadNames", "nameId INTEGER NOT NULL, globalTid INTEGER");
    trace::KernelRecord k = kernelRow(5, 25, gpid(4), 2, 9, f.string("old_kernel"));
    k.mangledName = f.string("ignored");  // no such column: dropped by the fixture
    k.gridX = 80;
    k.registersPerThread = 40;
    k.staticSharedMemory = 99;  // likewise
    f.kernel(k);
    f.runtime(apiRow(0, 4, gtid(4, 5), 9, f.string("cudaLaunchKernel")));
    f.nvtx(rangeRow(kPushPop, 0, 30, gtid(4, 5), "outer"));
    f.nvtx(rangeRow(kPushPop, 1, 3, gtid(4, 5), "inner"));
    f.gpu({.id = 2, .name = "Tesla V100-SXM2-16GB", .smCount = 80, .computeMajor = 7});
    f.threadName(gtid(4, 5), "main");
  }
  auto stats = importFile(in, dir / "t.sqlite");
  EXPECT_TRUE(stats.warnings.empty());
  TraceReader r(dir / "t.sqlite");
  std::vector<trace::KernelRecord> kernels;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) { kernels.push_back(k); });
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(r.string(kernels[0].demangledName), "old_kernel");
  EXPECT_EQ(kernels[0].mangledName, trace::kNoString);
  EXPECT_EQ(kernels[0].gridX, 80);
  EXPECT_EQ(kernels[0].registersPerThread, 40);
  EXPECT_EQ(kernels[0].staticSharedMemory, 0);
  EXPECT_EQ(kernels[0].graphId, 0);
  std::vector<trace::ApiCallRecord> calls;
  r.forEachApiCall(trace::ApiKind::kRuntime, {},
                   [&](const trace::ApiCallRecord& a) { calls.push_back(a); });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].eventClass, 0);
  EXPECT_EQ(calls[0].returnValue, 0);
  EXPECT_EQ(calls[0].correlationId, 9);
  auto ops = operationsByName(r);
  EXPECT_EQ(ops.at("inner").parent, "outer");
  auto gpus = r.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].id, 2);
  EXPECT_EQ(gpus[0].name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(gpus[0].smCount, 80);
  EXPECT_EQ(gpus[0].computeMajor, 7);
  EXPECT_EQ(gpus[0].isDiscrete, 1);  // record default when the column is absent
  ASSERT_EQ(r.threads().size(), 1u);
  EXPECT_EQ(r.threads()[0].name, "main");
}

TEST(NsysImport, NonNsysInputsAreRefusedWithOneLine) {
  TempDir dir;
  auto out = dir / "t.sqlite";
  auto expectError = [&](const fs::path& in, const std::string& what, bool direct = false) {
    auto error = importError(in, out, direct);
    EXPECT_TRUE(hasText(error, in.string())) << what;
    EXPECT_TRUE(hasText(error, what));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(out));
  };

  auto plain = dir / "plain.sqlite";
  {
    trace::Database db(plain, trace::Database::Mode::kCreate);
    db.exec("CREATE TABLE foo (a INTEGER); INSERT INTO foo VALUES (1);");
  }
  expectError(plain, "not an Nsight Systems SQLite export");

  auto noStrings = dir / "nostrings.sqlite";
  {
    trace::Database db(noStrings, trace::Database::Mode::kCreate);
    db.exec("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)");
  }
  expectError(noStrings, "required table StringIds is missing");

  auto noStart = dir / "nostart.sqlite";
  {
    NsysFixture f(noStart);
    f.createTable("CUPTI_ACTIVITY_KIND_KERNEL", "begin INTEGER, end INTEGER");
  }
  expectError(noStart, "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'start'");

  auto text = dir / "notes.txt";
  dir.write("notes.txt", "hello, not a database\n");
  expectError(text, "not an SQLite database", /*direct=*/true);

  // SQLite's header, then garbage.
  std::string junk("SQLite format 3\0", 16);
  junk += std::string(4096, '\x5a');
  auto corrupt = dir.write("corrupt.sqlite", junk);
  auto error = importError(corrupt, out, /*direct=*/true);
  EXPECT_TRUE(hasText(error, corrupt.string()));
  EXPECT_TRUE(hasText(error, "corrupt"));
  EXPECT_FALSE(importError(corrupt, out).empty());  // through the front end as well
  EXPECT_FALSE(fs::exists(out));

  // An rlscope trace is not an export.
  auto ours = dir / "ours.sqlite";
  {
    trace::TraceWriter w(ours);
    w.commit();
  }
  expectError(ours, "already an rlscope trace", /*direct=*/true);

  expectError(dir / "missing.sqlite", "no such file", /*direct=*/true);
}

TEST(NsysImport, EndBeforeStartNamesTableAndRow) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  {
    NsysFixture f(in);
    auto name = f.string("k");
    f.kernel(kernelRow(0, 10, gpid(1), 1, 1, name));
    f.kernel(kernelRow(50, 40, gpid(1), 1, 2, name));
  }
  auto out = dir / "t.sqlite";
  auto error = importError(in, out);
  EXPECT_TRUE(hasText(error, in.string()));
  EXPECT_TRUE(hasText(error, "CUPTI_ACTIVITY_KIND_KERNEL row 2 ends before it starts"));
  EXPECT_FALSE(fs::exists(out));

  auto nvtx = dir / "nvtx.sqlite";
  {
    NsysFixture f(nvtx);
    f.nvtx(rangeRow(kPushPop, 100, 99, gtid(1, 1), "bad"));
  }
  EXPECT_TRUE(hasText(importError(nvtx, out), "NVTX_EVENTS row 1 ends before it starts"));
}

TEST(NsysImport, NegativeStartsAreKeptWithOneWarning) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  {
    NsysFixture f(in);
    auto name = f.string("cudaMalloc_v3020");
    f.runtime(apiRow(-500, -400, gtid(1, 1), 1, name));
    f.runtime(apiRow(-10, 20, gtid(1, 1), 2, name));
    f.runtime(apiRow(30, 40, gtid(1, 1), 3, name));
    f.nvtx(rangeRow(kPushPop, -600, 50, gtid(1, 1), "setup"));
  }
  auto stats = importFile(in, dir / "t.sqlite");
  TraceReader r(dir / "t.sqlite");
  EXPECT_EQ(r.rowCount(table::kRuntime), 3);
  EXPECT_EQ(r.timeSpan()->start, -600);
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_TRUE(hasText(stats.warnings[0], "kept 3 rows with a negative start"));
  EXPECT_EQ(operationsByName(r).at("setup").start, -600);
}

TEST(NsysImport, ManyProcessesAndStreams) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  constexpr int kProcesses = 12, kThreads = 3, kDevices = 2, kStreams = 8, kSteps = 5;
  {
    NsysFixture f(in);
    auto launch = f.string("cudaLaunchKernel_v7000");
    std::int64_t names[kStreams];
    for (int s = 0; s < kStreams; ++s) names[s] = f.string("kernel_" + std::to_string(s));
    for (int p = 0; p < kProcesses; ++p) {
      std::int64_t pid = 1000 + p;
      f.process(gpid(pid), pid, "worker_" + std::to_string(p));
      for (int t = 0; t < kThreads; ++t) {
        auto thread = gtid(pid, pid + t);
        f.threadName(thread, "thread_" + std::to_string(t));
        for (int step = 0; step < kSteps; ++step) {
          std::int64_t base = step * 10000 + t * 1000;
          f.nvtx(rangeRow(kPushPop, base, base + 900, thread, "step"));
          f.nvtx(rangeRow(kPushPop, base + 100, base + 500, thread, "inner"));
        }
      }
      std::int64_t correlation = 1;
      for (int d = 0; d < kDevices; ++d) {
        for (int s = 0; s < kStreams; ++s) {
          for (int step = 0; step < kSteps; ++step) {
            std::int64_t start = step * 10000 + s * 100 + d * 10;
            auto thread = gtid(pid, pid + (s % kThreads));
            f.runtime(apiRow(start, start + 5, thread, correlation, launch));
            f.kernel(
                kernelRow(start + 20, start + 60, gpid(pid), 10 + s, correlation, names[s], d));
            ++correlation;
          }
        }
      }
    }
  }
  auto stats = importFile(in, dir / "t.sqlite");
  TraceReader r(dir / "t.sqlite");
  EXPECT_EQ(r.processes().size(), static_cast<std::size_t>(kProcesses));
  EXPECT_EQ(r.threads().size(), static_cast<std::size_t>(kProcesses * kThreads));
  EXPECT_EQ(r.processes()[3].name, "worker_3");
  EXPECT_EQ(r.rowCount(table::kKernel), kProcesses * kDevices * kStreams * kSteps);
  EXPECT_EQ(r.rowCount(table::kOperations), kProcesses * kThreads * kSteps * 2);
  // Per stream of one device of one process.
  int onStream = 0;
  r.forEachKernel({.globalPid = gpid(1005), .deviceId = 1, .streamId = 13},
                  [&](const trace::KernelRecord& k) {
                    EXPECT_EQ(r.string(k.shortName), "kernel_3");
                    ++onStream;
                  });
  EXPECT_EQ(onStream, kSteps);
  // Every kernel joins exactly one launch of its own process.
  EXPECT_EQ(r.db().queryInt("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
                            "CUPTI_ACTIVITY_KIND_RUNTIME r ON k.correlationId = r.correlationId "
                            "AND r.globalTid / 16777216 = k.globalPid / 16777216"),
            kProcesses * kDevices * kStreams * kSteps);
  int innerOps = 0;
  r.forEachOperation({.globalTid = gtid(1007, 1009)}, [&](const trace::OperationRecord& o) {
    if (r.string(o.nameId) == "inner") {
      EXPECT_EQ(o.depth, 1);
      EXPECT_NE(o.parentId, 0);
      ++innerOps;
    }
  });
  EXPECT_EQ(innerOps, kSteps);
  EXPECT_TRUE(stats.warnings.empty());
}

TEST(NsysImport, InputIsNeverModified) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  {
    NsysFixture f(in);
    buildFullExport(f);
  }
  auto before = testing::readFile(in);
  auto mtime = fs::last_write_time(in);
  importFile(in, dir / "t.sqlite");
  EXPECT_EQ(testing::readFile(in), before);
  EXPECT_EQ(fs::last_write_time(in), mtime);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    files.insert(entry.path().filename().string());
  }
  EXPECT_EQ(files, (std::set<std::string>{"report.sqlite", "t.sqlite"}));
}

TEST(NsysImport, DirectCallMatchesTheFrontEnd) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  FullExport expected;
  {
    NsysFixture f(in);
    expected = buildFullExport(f);
  }
  auto stats = importDirect(in, dir / "t.sqlite");
  TraceReader r(dir / "t.sqlite");
  for (const auto& [name, count] : expected.rows) EXPECT_EQ(r.rowCount(name), count) << name;
  EXPECT_EQ(stats.format, nsysFormat().name);
}

TEST(NsysImport, ReportsProgressOnLargeExports) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  constexpr std::int64_t kRows = 1'050'000;
  {
    NsysFixture f(in);
    f.runtimeRows(kRows, gtid(5, 6), f.string("cudaLaunchKernel_v7000"));
  }
  std::vector<std::string> lines;
  ImportOptions options;
  options.progress = [&](std::string_view line) { lines.emplace_back(line); };
  auto stats = importFile(in, dir / "t.sqlite", options);
  EXPECT_EQ(stats.events, static_cast<std::uint64_t>(kRows));
  // The importer's one line per million rows, then the front end's per-phase lines.
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(hasText(lines[0], "1000000 rows"));
  EXPECT_TRUE(hasText(lines[1], "read 1050000 events"));
  EXPECT_TRUE(hasText(lines[2], "wrote and indexed"));
  TraceReader r(dir / "t.sqlite");
  EXPECT_EQ(r.rowCount(table::kRuntime), kRows);
  EXPECT_EQ(r.threads().size(), 1u);
}

TEST(NsysImport, RefusesInputsOverTheSizeLimit) {
  TempDir dir;
  auto in = dir / "report.sqlite";
  { NsysFixture f(in); }
  ImportOptions options;
  options.maxInputBytes = 100;
  try {
    importFile(in, dir / "t.sqlite", options);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_TRUE(hasText(e.what(), "larger than the import limit"));
  }
}

}  // namespace
}  // namespace rlscope::import
