// The merge of CUDA records (as the CUPTI library writes them) into the trace: kernels with names
// demangled, API calls, correlation, and each launch tied to its operation, by the external
// correlation id the collector pushed or, without one, by the launching thread's open operation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "part_builder.h"
#include "part_file.h"
#include "rlscope/merge/part_merger.h"
#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"
#include "rlscope/trace/sqlite.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using part::RecordType;

part::ApiCall launch(std::int64_t start, std::uint32_t tid, std::uint32_t correlation) {
  return {start, start + 5, static_cast<std::uint32_t>(part::ApiKind::kRuntime),
          211,   tid,       correlation,
          0,     0};
}

part::Kernel kernel(std::int64_t start, std::uint32_t correlation) {
  part::Kernel k{};
  k.start = start;
  k.end = start + 100;
  k.deviceId = 0;
  k.streamId = 7;
  k.correlationId = correlation;
  k.gridX = 80, k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  return k;
}

// Merges the parts in `tmp` into `out` (CUDA API and GPU activity on); each launch tied to an
// operation, as "correlationId=operation" in correlation order.
std::string mergedTies(const testing::TempDir& tmp, const std::filesystem::path& out) {
  merge::MergeOptions o;
  o.features = 7;
  merge::mergeParts(tmp.path(), out, o);
  trace::Database db(out, trace::Database::Mode::kReadOnlyUntrusted);
  auto st = db.prepare(
      "SELECT group_concat(x.correlationId || '=' || s.value, ' ') FROM (SELECT * FROM "
      "rlscope_external_correlation ORDER BY correlationId) x JOIN rlscope_operations o ON "
      "o.id = x.externalId JOIN StringIds s ON s.id = o.nameId");
  return st.step() ? st.columnAsText(0) : "<no row>";
}

TEST(MergeCuda, KernelsApiCallsAndOperationAttribution) {
  testing::TempDir tmp;
  const std::uint32_t pid = 4242, tid = 4242;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, pid, 1, 7, 0},
        {"/bin/train", "train"});
  b.add(0, RecordType::kGpuActivityStatus, part::GpuActivityStatus{1000, 1, 0});
  part::GpuInfo g{};
  g.deviceId = 0, g.smCount = 132, g.computeMajor = 9, g.computeMinor = 0;
  g.memoryBandwidth = 4800'000'000'000;
  b.add(0, RecordType::kGpuInfo, g, {"NVIDIA H200", "GPU-uuid", "0000:01:00.0", "GH100"});
  // Thread: "step" > "forward"; a launch in forward with external correlation, one in step
  // without (attributed by time), one outside any operation.
  b.add(tid, RecordType::kThreadStart, part::ThreadStart{1000, tid, 0});
  b.add(tid, RecordType::kRangePushA, part::Instant{2000}, {"step"});
  b.add(tid, RecordType::kRangePushA, part::Instant{2100}, {"forward"});
  b.add(tid, RecordType::kRangePop, part::NvtxPop{2500, 0});
  b.add(tid, RecordType::kRangePop, part::NvtxPop{3000, 0});
  b.add(0, RecordType::kApiCall, launch(2200, tid, 11), {"cudaLaunchKernel"});
  b.add(0, RecordType::kApiCall, launch(2600, tid, 12), {"cudaLaunchKernel"});
  b.add(0, RecordType::kApiCall, launch(3500, tid, 13), {"cudaLaunchKernel"});
  // The collector's id for "forward": (tid << 32) | 2 (the thread's second push).
  b.add(0, RecordType::kExternalCorrelation,
        part::ExternalCorrelation{(std::uint64_t{tid} << 32) | 2, 0, 11});
  b.add(0, RecordType::kKernel, kernel(2300, 11), {"_Z6matmulPKfS0_Pfi"});
  b.add(0, RecordType::kKernel, kernel(2700, 12), {"_ZN5torch4reluIfEEvPT_i"});
  b.add(0, RecordType::kKernel, kernel(3600, 13), {"plain_c_kernel"});
  part::Memcpy m{};
  m.start = 2800, m.end = 2900, m.bytes = 4096, m.correlationId = 12, m.copyKind = 1;
  b.add(0, RecordType::kMemcpy, m);
  b.add(0, RecordType::kProcessEnd, part::ProcessEnd{4000, 0, 0, {0, 0}});
  b.write(tmp.path(), pid);

  auto out = tmp / "t.sqlite";
  merge::MergeOptions o;
  o.features = 7;
  auto report = merge::mergeParts(tmp.path(), out, o);
  EXPECT_EQ(report.gpuActivity, "recorded");
  EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();

  trace::Database db(out, trace::Database::Mode::kReadOnlyUntrusted);
  auto text = [&](const std::string& sql) {
    auto st = db.prepare(sql);
    return st.step() ? st.columnAsText(0) : std::string("<none>");
  };
  EXPECT_EQ(
      text("SELECT group_concat(s.value, '|') FROM (SELECT shortName FROM "
           "CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start) k JOIN StringIds s ON s.id = k.shortName"),
      "matmul|relu|plain_c_kernel");
  EXPECT_EQ(text("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                 "s.id = k.demangledName WHERE k.correlationId = 11"),
            "matmul(float const*, float const*, float*, int)");
  EXPECT_EQ(text("SELECT gridX || 'x' || blockX || ' r' || registersPerThread || ' s' || "
                 "staticSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 11"),
            "80x256 r32 s1024");
  // Launch -> operation: forward by external correlation, step by time, none for the last.
  EXPECT_EQ(text("SELECT group_concat(x.correlationId || '=' || s.value, ' ') FROM "
                 "(SELECT * FROM rlscope_external_correlation ORDER BY correlationId) x "
                 "JOIN rlscope_operations o ON o.id = x.externalId JOIN StringIds s ON "
                 "s.id = o.nameId"),
            "11=forward 12=step");
  EXPECT_EQ(text("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
                 "CUPTI_ACTIVITY_KIND_KERNEL k USING (correlationId) WHERE r.globalTid >> 24 = "
                 "k.globalPid >> 24"),
            "3");
  EXPECT_EQ(text("SELECT bytes || ' ' || copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"), "4096 1");
  EXPECT_EQ(text("SELECT name || ' ' || smCount || ' ' || computeMajor || ' ' || chipName FROM "
                 "TARGET_INFO_GPU"),
            "NVIDIA H200 132 9 GH100");
  EXPECT_EQ(text("SELECT value FROM rlscope_meta WHERE key = 'gpu_activity'"), "recorded");
}

// The external id decides, not the time: a launch made inside "inner" whose external
// correlation names "outer" belongs to "outer". Only ranges a launch names are remembered by the
// merge, whichever part of the file holds the correlation record (here the thread's records come
// after it, in another thread's block before it).
TEST(MergeCuda, ExternalCorrelationWinsOverTheOperationOpenAtLaunch) {
  testing::TempDir tmp;
  const std::uint32_t pid = 5151, tid = 5152, other = 5153;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, pid, 1, 7, 0}, {"/bin/t", "t"});
  b.add(0, RecordType::kGpuActivityStatus, part::GpuActivityStatus{1000, 1, 0});
  b.add(tid, RecordType::kThreadStart, part::ThreadStart{1000, tid, 0});
  b.add(tid, RecordType::kRangePushA, part::Instant{2000}, {"outer"});
  b.add(tid, RecordType::kRangePushA, part::Instant{2100}, {"inner"});
  b.add(tid, RecordType::kRangePop, part::NvtxPop{2500, 0});
  b.add(tid, RecordType::kRangePop, part::NvtxPop{3000, 0});
  b.add(other, RecordType::kThreadStart, part::ThreadStart{1000, other, 0});
  for (int i = 0; i < 100; ++i) {  // ranges no launch names
    b.add(other, RecordType::kRangePushA, part::Instant{2000 + 10 * i}, {"busy"});
    b.add(other, RecordType::kRangePop, part::NvtxPop{2005 + 10 * i, 0});
  }
  b.add(0, RecordType::kApiCall, launch(2200, tid, 21), {"cudaLaunchKernel"});
  b.add(0, RecordType::kExternalCorrelation,
        part::ExternalCorrelation{(std::uint64_t{tid} << 32) | 1, 0, 21});
  b.add(0, RecordType::kApiCall, launch(2300, tid, 22), {"cudaLaunchKernel"});
  b.add(0, RecordType::kProcessEnd, part::ProcessEnd{4000, 0, 0, {0, 0}});
  b.write(tmp.path(), pid);

  auto out = tmp / "t.sqlite";
  EXPECT_EQ(mergedTies(tmp, out), "21=outer 22=inner");
}

// A launch made inside a phase (rlscope.phase: no operation) whose external correlation names
// the phase's push belongs to the operation around the phase; one whose push names no operation
// at all belongs to none.
TEST(MergeCuda, ALaunchInAPhaseBelongsToTheOperationAroundIt) {
  testing::TempDir tmp;
  const std::uint32_t pid = 6161, tid = 6162;
  const std::uint64_t phases = 77;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, pid, 1, 7, 0}, {"/bin/t", "t"});
  b.add(0, RecordType::kGpuActivityStatus, part::GpuActivityStatus{1000, 1, 0});
  b.add(tid, RecordType::kThreadStart, part::ThreadStart{1000, tid, 0});
  b.add(tid, RecordType::kDomainCreate, part::NvtxHandleName{0, phases}, {"rlscope.phase"});
  part::NvtxEvent phase{};
  phase.domain = phases;
  phase.time = 1500;
  b.add(tid, RecordType::kRangePush, phase, {"warmup"});  // push 1: a phase, outside operations
  b.add(tid, RecordType::kRangePop, part::NvtxPop{1900, phases});
  b.add(tid, RecordType::kRangePushA, part::Instant{2000}, {"train"});  // push 2
  phase.time = 2100;
  b.add(tid, RecordType::kRangePush, phase, {"training"});  // push 3: a phase inside "train"
  b.add(tid, RecordType::kRangePop, part::NvtxPop{2500, phases});
  b.add(tid, RecordType::kRangePop, part::NvtxPop{3000, 0});
  b.add(0, RecordType::kApiCall, launch(1600, tid, 31), {"cudaLaunchKernel"});
  b.add(0, RecordType::kExternalCorrelation,
        part::ExternalCorrelation{(std::uint64_t{tid} << 32) | 1, 0, 31});
  b.add(0, RecordType::kApiCall, launch(2200, tid, 32), {"cudaLaunchKernel"});
  b.add(0, RecordType::kExternalCorrelation,
        part::ExternalCorrelation{(std::uint64_t{tid} << 32) | 3, 0, 32});
  b.add(0, RecordType::kProcessEnd, part::ProcessEnd{4000, 0, 0, {0, 0}});
  b.write(tmp.path(), pid);

  auto out = tmp / "t.sqlite";
  EXPECT_EQ(mergedTies(tmp, out), "32=train");
  trace::Database db(out, trace::Database::Mode::kReadOnlyUntrusted);
  EXPECT_EQ(db.queryInt("SELECT COUNT(*) FROM rlscope_external_correlation"), 1);
  EXPECT_EQ(db.queryInt("SELECT COUNT(*) FROM rlscope_phases"), 2);
}

// A long merge says what it does; a short one stays quiet (rlscope-prof prints these lines).
TEST(MergeProgress, LongMergesSayWhatTheyDo) {
  testing::TempDir tmp;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, 88, 1, 7, 0}, {"/bin/y", "y"});
  b.add(9, RecordType::kRangePushA, part::Instant{2000}, {"outer"});
  b.add(9, RecordType::kRangePushA, part::Instant{2100}, {"inner"});
  b.add(9, RecordType::kRangePop, part::NvtxPop{2500, 0});
  b.add(9, RecordType::kRangePop, part::NvtxPop{3000, 0});
  b.add(0, RecordType::kProcessEnd, part::ProcessEnd{4000, 0, 0, {0, 0}});
  b.write(tmp.path(), 88);
  for (std::uint64_t threshold : {std::uint64_t{0}, std::uint64_t{32} << 20}) {
    std::vector<std::string> lines;
    merge::MergeOptions o;
    o.features = 1;
    o.progressAboveBytes = threshold;
    o.progress = [&](const std::string& line) { lines.push_back(line); };
    merge::mergeParts(tmp.path(), tmp / "t.sqlite", o);
    if (threshold == 0) {
      // Operations are written as they close: nothing of them is left for the end.
      ASSERT_EQ(lines.size(), 2u);
      EXPECT_EQ(lines[0], "merging 1 part (0 MiB) into t.sqlite");
      EXPECT_EQ(lines[1], "finishing the trace");
    } else {
      EXPECT_TRUE(lines.empty()) << lines.front();
    }
  }
}

TEST(MergeCuda, GpuUnavailableReasonAndCutShortPartsAreReported) {
  testing::TempDir tmp;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, 77, 1, 7, 0}, {"/bin/x", "x"});
  b.add(0, RecordType::kGpuActivityStatus, part::GpuActivityStatus{1000, 0, 0},
        {"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"});
  b.add(5, RecordType::kRangePushA, part::Instant{2000}, {"never closed"});
  b.write(tmp.path(), 77);  // no kProcessEnd: the process was killed
  auto out = tmp / "t.sqlite";
  merge::MergeOptions o;
  o.features = 7;
  auto report = merge::mergeParts(tmp.path(), out, o);
  EXPECT_EQ(report.gpuActivity, "unavailable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  std::string all;
  for (auto& w : report.warnings) all += w + "\n";
  EXPECT_NE(all.find("process 77 (x) ended without finishing its trace"), std::string::npos) << all;
  EXPECT_NE(all.find("1 NVTX push/pop ranges still open"), std::string::npos) << all;
}

}  // namespace
}  // namespace rlscope
