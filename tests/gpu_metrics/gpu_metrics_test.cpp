// GPU metrics (kernel breakdown, idle time, launch statistics) of small constructed traces, with
// exact expected numbers, and plausible, checkable facts on the real A100 AlexNet trace.
#include "rlscope/gpu_metrics/gpu_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "rlscope/gpu_metrics/gpu_metrics_output.h"
#include "rlscope/report/analysis_document.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/scan.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::analysis {
namespace {

using trace::TimeNs;
constexpr std::int64_t kPidA = 100;
constexpr std::int64_t kPidB = 200;

// Adds GPU activity and the CUDA API calls that launch it.
class TraceBuilder {
 public:
  explicit TraceBuilder(const std::filesystem::path& path) : w_(path) {
    for (auto pid : {kPidA, kPidB})
      w_.addProcess({.globalPid = trace::globalPidOf(pid), .pid = pid, .name = "python"});
  }

  void api(std::int64_t pid, std::int64_t correlation, TimeNs start, TimeNs end,
           trace::ApiKind kind = trace::ApiKind::kRuntime) {
    trace::ApiCallRecord r;
    r.start = start;
    r.end = end;
    r.eventClass = kind == trace::ApiKind::kRuntime ? 0 : 1;
    r.globalTid = trace::globalTidOf(pid, pid + 1);
    r.correlationId = correlation;
    r.nameId = w_.intern(kind == trace::ApiKind::kRuntime ? "cudaLaunchKernel" : "cuLaunchKernel");
    w_.addApiCall(kind, r);
  }

  void kernel(std::int64_t pid, const char* name, TimeNs start, TimeNs end,
              std::int64_t correlation = 0, std::int64_t device = 0, std::int64_t stream = 7) {
    trace::KernelRecord k;
    k.start = start;
    k.end = end;
    k.deviceId = device;
    k.streamId = stream;
    k.correlationId = correlation;
    k.globalPid = trace::globalPidOf(pid);
    k.demangledName = k.shortName = k.mangledName = w_.intern(name);
    w_.addKernel(k);
  }

  trace::TraceWriter& writer() { return w_; }

 private:
  trace::TraceWriter w_;
};

const KernelStats& find(const std::vector<KernelStats>& kernels, const std::string& name) {
  for (const auto& k : kernels)
    if (k.name == name) return k;
  throw std::runtime_error("no kernel " + name);
}

const ProcessGpuMetrics& process(const GpuMetrics& m, std::int64_t pid) {
  for (const auto& p : m.processes)
    if (p.pid == pid) return p;
  throw std::runtime_error("no process " + std::to_string(pid));
}

TEST(GpuMetricsClass, NamesDecideTheClass) {
  EXPECT_EQ(classifyKernel("ncclKernel_AllReduce_RING_LL_Sum_float"), KernelClass::kCommunication);
  EXPECT_EQ(classifyKernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            KernelClass::kCommunication);
  EXPECT_EQ(classifyKernel("void ncclKernel<...>(ncclDevComm*)"), KernelClass::kCommunication);
  EXPECT_EQ(classifyKernel("void at::native::vectorized_elementwise_kernel<4>"),
            KernelClass::kCompute);
  EXPECT_EQ(classifyKernel("sm80_xmma_gemm_nccl_like"), KernelClass::kCompute);
  EXPECT_EQ(memcpyName(1), "[CUDA memcpy HtoD]");
  EXPECT_EQ(memcpyName(2), "[CUDA memcpy DtoH]");
  EXPECT_EQ(memcpyName(8), "[CUDA memcpy DtoD]");
  EXPECT_EQ(memcpyName(10), "[CUDA memcpy PtoP]");
  EXPECT_EQ(memcpyName(3), "[CUDA memcpy]");
  EXPECT_EQ(kernelClassName(KernelClass::kMemory), "memory");
}

// Kernels of three classes: gemm 10/20/30 ns, one NCCL kernel 40 ns, a kernel with only a short
// name, two memcpys (HtoD 5 ns, an unnamed kind 7 ns) and a memset 3 ns.
std::filesystem::path writeBreakdownTrace(const testing::TempDir& dir) {
  auto path = dir / "breakdown.sqlite";
  TraceBuilder b(path);
  b.kernel(kPidA, "gemm", 0, 10);
  b.kernel(kPidA, "gemm", 100, 120);
  b.kernel(kPidA, "gemm", 200, 230);
  b.kernel(kPidA, "ncclKernel_AllReduce", 300, 340);
  trace::KernelRecord shortOnly;
  shortOnly.start = 400;
  shortOnly.end = 401;
  shortOnly.globalPid = trace::globalPidOf(kPidA);
  shortOnly.shortName = b.writer().intern("short_only");
  b.writer().addKernel(shortOnly);
  trace::MemcpyRecord copy;
  copy.globalPid = trace::globalPidOf(kPidA);
  copy.copyKind = 1;
  copy.start = 500;
  copy.end = 505;
  b.writer().addMemcpy(copy);
  copy.copyKind = 3;
  copy.start = 600;
  copy.end = 607;
  b.writer().addMemcpy(copy);
  trace::MemsetRecord set;
  set.globalPid = trace::globalPidOf(kPidA);
  set.start = 700;
  set.end = 703;
  b.writer().addMemset(set);
  b.writer().commit();
  return path;
}

TEST(GpuMetricsKernels, CountsMeansExtremesAndClassesAreExact) {
  testing::TempDir dir;
  trace::TraceReader reader(writeBreakdownTrace(dir));
  GpuMetrics m = computeGpuMetrics(reader);
  ASSERT_TRUE(m.available());
  const auto& kernels = m.total.kernels;
  ASSERT_EQ(kernels.size(), 6u);
  // Longest total first.
  EXPECT_EQ(kernels[0].name, "gemm");
  EXPECT_EQ(kernels[1].name, "ncclKernel_AllReduce");
  const auto& gemm = find(kernels, "gemm");
  EXPECT_EQ(gemm.kernelClass, KernelClass::kCompute);
  EXPECT_EQ(gemm.count, 3u);
  EXPECT_EQ(gemm.total, 60);
  EXPECT_DOUBLE_EQ(gemm.mean, 20.0);
  EXPECT_EQ(gemm.min, 10);
  EXPECT_EQ(gemm.max, 30);
  EXPECT_DOUBLE_EQ(gemm.stdDev(), 10.0);  // sample std of 10, 20, 30
  EXPECT_EQ(find(kernels, "ncclKernel_AllReduce").kernelClass, KernelClass::kCommunication);
  EXPECT_EQ(find(kernels, "ncclKernel_AllReduce").stdDev(), 0.0);
  EXPECT_EQ(find(kernels, "short_only").total, 1);
  EXPECT_EQ(find(kernels, "[CUDA memcpy HtoD]").kernelClass, KernelClass::kMemory);
  EXPECT_EQ(find(kernels, "[CUDA memcpy HtoD]").total, 5);
  EXPECT_EQ(find(kernels, "[CUDA memcpy]").total, 7);
  EXPECT_EQ(find(kernels, "[CUDA memset]").total, 3);
  EXPECT_EQ(m.total.classes.compute, 61);
  EXPECT_EQ(m.total.classes.communication, 40);
  EXPECT_EQ(m.total.classes.memory, 15);
  EXPECT_EQ(m.total.activities, 8u);
}

TEST(GpuMetricsKernels, StatisticsMergeAcrossProcessesExactly) {
  KernelStats a, b, all;
  for (TimeNs d : {3, 9, 4}) a.add(d), all.add(d);
  for (TimeNs d : {100, 7}) b.add(d), all.add(d);
  a.merge(b);
  EXPECT_EQ(a.count, all.count);
  EXPECT_EQ(a.total, all.total);
  EXPECT_EQ(a.min, 3);
  EXPECT_EQ(a.max, 100);
  EXPECT_NEAR(a.mean, all.mean, 1e-9);
  EXPECT_NEAR(a.stdDev(), all.stdDev(), 1e-9);
}

// Process A, device 0 stream 7 (times in ns):
//   K1 [100,200) launched by runtime [50,60)
//   K2 [210,300) runtime [70,80): gap 10 < 30, launched before 200   -> kernel wait 10
//   K3 [400,450) runtime [350,390): gap 100, launched after 300      -> host wait 100
//   K4 [500,520) driver [300,330): gap 50 >= 30, launched before 450 -> other 50
//   K5 [525,530) no API call: gap 5                                  -> kernel wait 5
// device 0 stream 8: memcpy [250,420), no API call; device 1 stream 7: kernel [1000,1010).
// Process B reuses correlation id 3 (its own call [0,8), its kernel [5,6): delay -3) and its call
// comes first in the table, so a join that ignored the process would give K3 the wrong launch.
std::filesystem::path writeIdleTrace(const testing::TempDir& dir) {
  auto path = dir / "idle.sqlite";
  TraceBuilder b(path);
  b.api(kPidB, 3, 0, 8);
  b.api(kPidA, 1, 50, 60);
  b.api(kPidA, 2, 70, 80);
  b.api(kPidA, 3, 350, 390);
  b.api(kPidA, 4, 300, 330, trace::ApiKind::kDriver);
  b.kernel(kPidA, "k1", 100, 200, 1);
  b.kernel(kPidA, "k2", 210, 300, 2);
  b.kernel(kPidA, "k3", 400, 450, 3);
  b.kernel(kPidA, "k4", 500, 520, 4);
  b.kernel(kPidA, "k5", 525, 530);
  b.kernel(kPidA, "other_device", 1000, 1010, 0, 1, 7);
  trace::MemcpyRecord copy;
  copy.globalPid = trace::globalPidOf(kPidA);
  copy.copyKind = 2;
  copy.streamId = 8;
  copy.start = 250;
  copy.end = 420;
  b.writer().addMemcpy(copy);
  b.kernel(kPidB, "b1", 5, 6, 3);
  b.writer().commit();
  return path;
}

TEST(GpuMetricsIdle, GapsSplitIntoHostWaitKernelWaitAndOther) {
  testing::TempDir dir;
  trace::TraceReader reader(writeIdleTrace(dir));
  GpuMetrics m = computeGpuMetrics(reader, {.kernelWaitThreshold = 30});
  ASSERT_EQ(m.processes.size(), 2u);
  const IdleBreakdown& idle = process(m, kPidA).metrics.idle;

  ASSERT_EQ(idle.streams.size(), 3u);
  const StreamIdle& s7 = idle.streams[0];
  EXPECT_EQ(std::tie(s7.deviceId, s7.streamId), std::tuple(0, 7));
  EXPECT_EQ(s7.activities, 5u);
  EXPECT_EQ(s7.span, 430);
  EXPECT_EQ(s7.busy, 100 + 90 + 50 + 20 + 5);
  EXPECT_EQ(s7.idle, 165);
  EXPECT_EQ(s7.hostWait, 100);
  EXPECT_EQ(s7.kernelWait, 10 + 5);
  EXPECT_EQ(s7.other, 50);
  const StreamIdle& s8 = idle.streams[1];
  EXPECT_EQ(std::tie(s8.deviceId, s8.streamId), std::tuple(0, 8));
  EXPECT_EQ(s8.span, 170);
  EXPECT_EQ(s8.idle, 0);
  EXPECT_EQ(idle.streams[2].deviceId, 1);

  // Device 0: union [100,200) [210,450) [500,520) [525,530) of span [100,530); device 1:
  // [1000,1010).
  ASSERT_EQ(idle.devices.size(), 2u);
  EXPECT_EQ(idle.devices[0].span, 430);
  EXPECT_EQ(idle.devices[0].busy, 100 + 240 + 20 + 5);
  EXPECT_EQ(idle.devices[0].idle, 65);
  EXPECT_EQ(idle.span, 440);
  EXPECT_EQ(idle.busy, 375);
  EXPECT_EQ(idle.idle, 65);
  EXPECT_EQ(idle.hostWait, 100);
  EXPECT_EQ(idle.kernelWait, 15);
  EXPECT_EQ(idle.other, 50);
  EXPECT_GE(idle.streamIdle(), idle.idle);  // stream 7 waits while the memcpy runs

  // The whole trace adds process B's one-kernel device.
  EXPECT_EQ(m.total.idle.span, 441);
  EXPECT_EQ(m.total.idle.idle, 65);
  EXPECT_EQ(m.total.idle.streams.size(), 4u);
}

// HTA compares its consecutive_kernel_delay (30) with gaps in microseconds: a 50 ns gap between
// two launched kernels is launch overhead, not "other" idle time.
TEST(GpuMetricsIdle, DefaultThresholdIsHtasThirtyMicroseconds) {
  EXPECT_EQ(GpuMetricsOptions{}.kernelWaitThreshold, 30'000);
  testing::TempDir dir;
  trace::TraceReader reader(writeIdleTrace(dir));
  GpuMetrics m = computeGpuMetrics(reader);  // kept: `idle` refers into it
  const IdleBreakdown& idle = process(m, kPidA).metrics.idle;
  EXPECT_EQ(idle.hostWait, 100);
  EXPECT_EQ(idle.kernelWait, 65);
  EXPECT_EQ(idle.other, 0);
}

TEST(GpuMetricsIdle, ThresholdIsConfigurable) {
  testing::TempDir dir;
  trace::TraceReader reader(writeIdleTrace(dir));
  // Above 50 ns, K4's gap becomes kernel wait too.
  GpuMetrics m = computeGpuMetrics(reader, {.kernelWaitThreshold = 51});
  const IdleBreakdown& idle = process(m, kPidA).metrics.idle;
  EXPECT_EQ(idle.hostWait, 100);
  EXPECT_EQ(idle.kernelWait, 65);
  EXPECT_EQ(idle.other, 0);
}

TEST(GpuMetricsLaunch, DelaysPercentilesAndShortKernels) {
  testing::TempDir dir;
  trace::TraceReader reader(writeIdleTrace(dir));
  GpuMetrics m = computeGpuMetrics(reader);

  // Process A: delays K1 40, K2 130, K3 10, K4 170; K4 ran 20 ns after a 30 ns call.
  const LaunchStats& a = process(m, kPidA).metrics.launch;
  EXPECT_EQ(a.count, 4u);
  EXPECT_EQ(a.withoutApiCall, 3u);  // K5, the memcpy, the device-1 kernel
  EXPECT_EQ(a.negativeDelays, 0u);
  EXPECT_DOUBLE_EQ(a.delayMean, 87.5);
  EXPECT_DOUBLE_EQ(a.delayP50, 85.0);   // between 40 and 130
  EXPECT_DOUBLE_EQ(a.delayP95, 164.0);  // 130 + 0.85 * (170 - 130)
  EXPECT_EQ(a.delayMin, 10);
  EXPECT_EQ(a.delayMax, 170);
  EXPECT_EQ(a.shortKernels, 1u);
  EXPECT_EQ(a.shortKernelTime, 20);
  // The kernels-only view leaves the memcpy out.
  const LaunchStats& kernelsOnly = process(m, kPidA).metrics.kernelLaunch;
  EXPECT_EQ(kernelsOnly.count, 4u);
  EXPECT_EQ(kernelsOnly.withoutApiCall, 2u);
  EXPECT_DOUBLE_EQ(kernelsOnly.delayP95, 164.0);

  // Pooled with process B's kernel, which started 3 ns before its 8 ns call returned.
  const LaunchStats& all = m.total.launch;
  EXPECT_EQ(all.count, 5u);
  EXPECT_EQ(all.negativeDelays, 1u);
  EXPECT_EQ(all.delayMin, -3);
  EXPECT_DOUBLE_EQ(all.delayP50, 40.0);
  EXPECT_EQ(all.shortKernels, 2u);
  EXPECT_EQ(all.shortKernelTime, 21);
  EXPECT_EQ(m.total.kernelLaunch.count, 5u);
  EXPECT_EQ(m.total.kernelLaunch.withoutApiCall, 2u);
}

// The launch join: by (process, correlation id), whatever order the rows are stored in; the
// runtime call wins over a driver call with the same id; ids without a call stay unlaunched.
TEST(GpuMetricsLaunch, JoinsByProcessAndCorrelationInAnyOrder) {
  testing::TempDir dir;
  auto path = dir / "join.sqlite";
  {
    TraceBuilder b(path);
    // Process A: calls stored with ids 9, 3, 7 and 5 (a driver call shares id 3, stored first);
    // process B reuses id 3 and 7.
    b.api(kPidA, 3, 100, 190, trace::ApiKind::kDriver);
    b.api(kPidA, 9, 1000, 1010);
    b.api(kPidA, 3, 100, 110);
    b.api(kPidA, 7, 500, 510);
    b.api(kPidA, 5, 300, 310);
    b.api(kPidB, 3, 2000, 2004);
    b.api(kPidB, 7, 3000, 3004);
    // Kernels in yet another order, several ids twice, one id (4) without a call.
    const std::tuple<std::int64_t, std::int64_t, TimeNs> kernels[] = {
        {kPidA, 7, 600}, {kPidA, 3, 150},  {kPidB, 7, 3010}, {kPidA, 9, 1100}, {kPidA, 4, 400},
        {kPidA, 5, 320}, {kPidB, 3, 2010}, {kPidA, 3, 160},  {kPidA, 9, 1020}};
    for (auto [pid, correlation, start] : kernels)
      b.kernel(pid, "k", start, start + 1000, correlation);
    b.writer().commit();
  }
  trace::TraceReader reader(path);
  GpuMetrics m = computeGpuMetrics(reader);
  const LaunchStats& a = process(m, kPidA).metrics.launch;
  EXPECT_EQ(a.count, 6u);
  EXPECT_EQ(a.withoutApiCall, 1u);  // id 4
  // Delays: 7: 600-510=90; 3: 150-110=40 and 160-110=50 (the runtime call's end, not the
  // driver's 190); 9: 1100-1010=90, 1020-1010=10; 5: 320-310=10.
  EXPECT_EQ(a.delayMin, 10);
  EXPECT_EQ(a.delayMax, 90);
  EXPECT_DOUBLE_EQ(a.delayMean, (90 + 40 + 50 + 90 + 10 + 10) / 6.0);
  const LaunchStats& bStats = process(m, kPidB).metrics.launch;
  EXPECT_EQ(bStats.count, 2u);
  EXPECT_EQ(bStats.delayMin, 6);  // 2010-2004 and 3010-3004
  EXPECT_EQ(bStats.delayMax, 6);
}

// The same join against a plain map, on random traces: ids repeat across processes and within
// one, rows are stored in random order, runtime and driver calls share ids.
TEST(GpuMetricsLaunch, JoinMatchesAMapOnRandomTraces) {
  testing::TempDir dir;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 12; ++round) {
    auto path = dir / ("random" + std::to_string(round) + ".sqlite");
    // Reference: (pid, id) -> end of the first runtime call, else of the first driver call.
    std::map<std::pair<std::int64_t, std::int64_t>, TimeNs> runtimeEnd, driverEnd;
    std::map<std::int64_t, std::vector<TimeNs>> delays;
    std::map<std::int64_t, std::uint64_t> unlaunched;
    {
      TraceBuilder b(path);
      std::uniform_int_distribution<std::int64_t> id(1, 120), time(0, 100000);
      for (int i = 0; i < 200; ++i) {
        std::int64_t pid = rng() % 2 ? kPidA : kPidB, correlation = id(rng);
        TimeNs start = time(rng);
        bool driver = rng() % 4 == 0;
        b.api(pid, correlation, start, start + 10,
              driver ? trace::ApiKind::kDriver : trace::ApiKind::kRuntime);
        (driver ? driverEnd : runtimeEnd).try_emplace({pid, correlation}, start + 10);
      }
      for (int i = 0; i < 300; ++i) {
        std::int64_t pid = rng() % 2 ? kPidA : kPidB, correlation = id(rng);
        TimeNs start = time(rng);
        b.kernel(pid, "k", start, start + 5, correlation);
        auto r = runtimeEnd.find({pid, correlation});
        auto d = driverEnd.find({pid, correlation});
        if (r != runtimeEnd.end())
          delays[pid].push_back(start - r->second);
        else if (d != driverEnd.end())
          delays[pid].push_back(start - d->second);
        else
          ++unlaunched[pid];
      }
      b.writer().commit();
    }
    trace::TraceReader reader(path);
    GpuMetrics m = computeGpuMetrics(reader);
    for (auto pid : {kPidA, kPidB}) {
      const LaunchStats& got = process(m, pid).metrics.launch;
      const auto& want = delays[pid];
      ASSERT_EQ(got.count, want.size()) << "round " << round << " pid " << pid;
      EXPECT_EQ(got.withoutApiCall, unlaunched[pid]);
      if (want.empty()) continue;
      EXPECT_EQ(got.delayMin, *std::min_element(want.begin(), want.end()));
      EXPECT_EQ(got.delayMax, *std::max_element(want.begin(), want.end()));
      double sum = 0;
      for (auto v : want) sum += static_cast<double>(v);
      EXPECT_NEAR(got.delayMean, sum / static_cast<double>(want.size()), 1e-6);
    }
  }
}

// Numbers equal to a relative 1e-12 (Welford means and spreads merged from parts round
// differently from one pass), everything else exactly.
void expectSameJson(const nlohmann::json& got, const nlohmann::json& want, const std::string& at) {
  if (want.is_number_float() || got.is_number_float()) {
    double g = got.get<double>(), w = want.get<double>();
    EXPECT_NEAR(g, w, 1e-12 * std::max(1.0, std::abs(w))) << at;
  } else if (want.is_structured()) {
    ASSERT_EQ(got.type(), want.type()) << at;
    ASSERT_EQ(got.size(), want.size()) << at;
    if (want.is_object())
      for (auto it = want.begin(); it != want.end(); ++it) {
        ASSERT_TRUE(got.contains(it.key())) << at << "." << it.key();
        expectSameJson(got[it.key()], it.value(), at + "." + it.key());
      }
    else
      for (std::size_t i = 0; i < want.size(); ++i)
        expectSameJson(got[i], want[i], at + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got, want) << at;
  }
}

// A caller that reads the GPU tables in parts (rlscope analyze's breakdown reads the end of a big
// kernel table on a second thread) hands each part to a builder of its own and appends them in
// rowid order: the metrics are those of one read, on random traces of two processes with
// kernels, copies and sets on several streams, cut anywhere; and so are they where each
// process's activities are joined in two halves at once.
TEST(GpuMetricsBuilder, RowsReadInPartsGiveTheMetricsOfOneRead) {
  testing::TempDir dir;
  std::mt19937_64 rng(11);
  for (int round = 0; round < 8; ++round) {
    auto path = dir / ("parts" + std::to_string(round) + ".sqlite");
    {
      TraceBuilder b(path);
      std::uniform_int_distribution<std::int64_t> id(1, 400), time(0, 200000), length(1, 300);
      for (int i = 0; i < 300; ++i) {
        std::int64_t pid = rng() % 2 ? kPidA : kPidB;
        TimeNs start = time(rng);
        b.api(pid, id(rng), start, start + length(rng),
              rng() % 4 ? trace::ApiKind::kRuntime : trace::ApiKind::kDriver);
      }
      const char* names[] = {"gemm", "relu", "ncclKernel_AllReduce", ""};
      for (int i = 0; i < 500; ++i) {
        std::int64_t pid = rng() % 2 ? kPidA : kPidB;
        TimeNs start = time(rng);
        // Sorted on most lanes, as streams are stored; one lane in random order.
        std::int64_t stream = static_cast<std::int64_t>(rng() % 3);
        if (stream != 2) start = i * 400 + static_cast<TimeNs>(rng() % 50);
        b.kernel(pid, names[rng() % 4], start, start + length(rng), id(rng),
                 static_cast<std::int64_t>(rng() % 2), stream);
      }
      for (int i = 0; i < 60; ++i) {
        std::int64_t pid = rng() % 2 ? kPidA : kPidB;
        TimeNs start = time(rng);
        trace::MemcpyRecord c{.start = start,
                              .end = start + length(rng),
                              .streamId = 1,
                              .correlationId = id(rng),
                              .globalPid = trace::globalPidOf(pid),
                              .copyKind = static_cast<std::int64_t>(rng() % 3)};
        b.writer().addMemcpy(c);
        trace::MemsetRecord m{.start = start + 7,
                              .end = start + 9,
                              .streamId = 2,
                              .correlationId = id(rng),
                              .globalPid = trace::globalPidOf(pid)};
        b.writer().addMemset(m);
      }
      b.writer().commit();
    }
    trace::TraceReader reader(path);
    const nlohmann::json want =
        gpuMetricsToJson(computeGpuMetrics(reader, {.kernelWaitThreshold = 40}), 0);
    // The API calls and kernel rows before the cut, the kernels after it, then copies and sets.
    const std::int64_t cut = 1 + static_cast<std::int64_t>(rng() % 501);
    // Every other round, each process's activities joined in two halves at once.
    const GpuMetricsOptions options{.kernelWaitThreshold = 40,
                                    .joinInHalvesAbove = round % 2 ? 100u : 500'000u};
    std::vector<GpuMetricsBuilder> parts;
    for (int i = 0; i < 3; ++i) parts.emplace_back(options);
    for (auto table : {trace::table::kRuntime, trace::table::kDriver})
      trace::scan(
          reader.db(), table, "globalTid, correlationId, start, end", [&](trace::Statement& st) {
            parts[0].addApiCall(st.columnInt(0), st.columnInt(1), st.columnInt(2), st.columnInt(3));
          });
    using Table = GpuMetricsBuilder::Table;
    auto read = [&](Table table, GpuMetricsBuilder& into, trace::RowidRange range) {
      trace::scan(
          reader.db(), GpuMetricsBuilder::tableName(table), GpuMetricsBuilder::columns(table),
          [&](trace::Statement& st) { into.addRow(table, st); }, range);
    };
    read(Table::kKernel, parts[0], {.to = cut});
    read(Table::kKernel, parts[1], {.from = cut});
    read(Table::kMemcpy, parts[2], {});
    read(Table::kMemset, parts[2], {});
    parts[0].append(std::move(parts[1]));
    parts[0].append(std::move(parts[2]));
    if (round % 2) parts[0].summarize();  // as the analysis does it, on a thread of its own
    expectSameJson(gpuMetricsToJson(parts[0].finish(reader), 0), want,
                   "round " + std::to_string(round) + " cut " + std::to_string(cut));
  }
}

// The analysis document's GPU section read back by the report (report/analysis_document.cpp)
// gives every metric the analyzer wrote: the keys are defined once (rlscope/document/gpu_json.h).
TEST(GpuMetricsOutput, TheReportReadsBackEveryMetricWritten) {
  testing::TempDir dir;
  trace::TraceReader reader(writeBreakdownTrace(dir));
  GpuMetrics m = computeGpuMetrics(reader);
  nlohmann::json document = {{"schema", report::kAnalysisSchema},
                             {"operations", nlohmann::json::array()},
                             {"gpu", gpuMetricsToJson(m, 0)}};
  report::Analysis a = report::parseAnalysis(document);
  ASSERT_TRUE(a.gpu.has_value());
  const report::GpuSection& g = *a.gpu;
  EXPECT_TRUE(g.available);
  ASSERT_EQ(g.kernels.size(), m.total.kernels.size());
  for (std::size_t i = 0; i < g.kernels.size(); ++i) {
    const auto& k = g.kernels[i];
    const auto& want = m.total.kernels[i];
    EXPECT_EQ(k.name, want.name);
    EXPECT_EQ(k.kernelClass, kernelClassName(want.kernelClass));
    EXPECT_EQ(k.count, static_cast<double>(want.count));
    EXPECT_DOUBLE_EQ(k.totalUs.value_or(-1), static_cast<double>(want.total) / 1e3);
    for (const auto& field : {k.meanUs, k.minUs, k.maxUs, k.stdUs})
      EXPECT_TRUE(field.has_value()) << k.name;
  }
  EXPECT_EQ(g.classes.size(), 3u);
  ASSERT_TRUE(g.idle.has_value());
  EXPECT_DOUBLE_EQ(g.idle->spanUs.value_or(-1), static_cast<double>(m.total.idle.span) / 1e3);
  for (const auto& field :
       {g.idle->busyUs, g.idle->idleUs, g.idle->hostWaitUs, g.idle->kernelWaitUs, g.idle->otherUs})
    EXPECT_TRUE(field.has_value());
  ASSERT_TRUE(g.launch.has_value());
  EXPECT_EQ(g.launch->count, static_cast<double>(m.total.launch.count));
  for (const auto& field :
       {g.launch->delayMeanUs, g.launch->delayP50Us, g.launch->delayP95Us, g.launch->delayMaxUs,
        g.launch->shortKernels, g.launch->shortKernelTimeUs})
    EXPECT_TRUE(field.has_value());
}

TEST(GpuMetricsOutput, JsonHasTheDocumentedShapeInMicroseconds) {
  testing::TempDir dir;
  trace::TraceReader reader(writeBreakdownTrace(dir));
  auto j = gpuMetricsToJson(computeGpuMetrics(reader), 2);
  EXPECT_EQ(j["available"], true);
  ASSERT_EQ(j["kernels"].size(), 2u);
  const auto& gemm = j["kernels"][0];
  EXPECT_EQ(gemm["name"], "gemm");
  EXPECT_EQ(gemm["class"], "compute");
  EXPECT_EQ(gemm["count"], 3);
  EXPECT_DOUBLE_EQ(gemm["total_us"].get<double>(), 0.060);
  EXPECT_DOUBLE_EQ(gemm["mean_us"].get<double>(), 0.020);
  EXPECT_DOUBLE_EQ(gemm["min_us"].get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(gemm["max_us"].get<double>(), 0.030);
  EXPECT_DOUBLE_EQ(gemm["std_us"].get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(j["classes"]["memory"].get<double>(), 0.015);
  EXPECT_DOUBLE_EQ(j["classes"]["communication"].get<double>(), 0.040);
  for (const char* key :
       {"span_us", "busy_us", "idle_us", "host_wait_us", "kernel_wait_us", "other_us", "streams"})
    EXPECT_TRUE(j["idle"].contains(key)) << key;
  for (const char* key : {"count", "delay_mean_us", "delay_p50_us", "delay_p95_us", "delay_max_us",
                          "short_kernels", "short_kernel_time_us"})
    EXPECT_TRUE(j["launch"].contains(key) && j["launch"]["kernels_only"].contains(key)) << key;
  EXPECT_EQ(gpuMetricsToJson(computeGpuMetrics(reader), 0)["kernels"].size(), 6u);

  trace::TraceReader idleReader(writeIdleTrace(dir));
  auto idle = gpuMetricsToJson(computeGpuMetrics(idleReader, {.kernelWaitThreshold = 30}))["idle"];
  EXPECT_DOUBLE_EQ(idle["host_wait_us"].get<double>(), 0.100);
  const auto& stream = idle["streams"][0];
  EXPECT_EQ(stream["process"], kPidA);
  EXPECT_EQ(stream["device"], 0);
  EXPECT_EQ(stream["stream"], 7);
  EXPECT_DOUBLE_EQ(stream["kernel_wait_us"].get<double>(), 0.015);
}

TEST(GpuMetricsOutput, TableListsKernelsIdleAndLaunches) {
  testing::TempDir dir;
  trace::TraceReader reader(writeIdleTrace(dir));
  std::ostringstream out;
  writeGpuMetricsTable(computeGpuMetrics(reader), out, 3);
  std::string text = out.str();
  EXPECT_NE(text.find("GPU kernels (3 of 8 names"), std::string::npos) << text;
  EXPECT_NE(text.find("[CUDA memcpy DtoH]"), std::string::npos) << text;
  EXPECT_NE(text.find("host wait"), std::string::npos);
  EXPECT_NE(text.find("launch delay"), std::string::npos);
}

TEST(GpuMetricsEmpty, TraceWithoutGpuActivityGivesZeros) {
  testing::TempDir dir;
  auto path = dir / "cpu.sqlite";
  {
    TraceBuilder b(path);
    b.api(kPidA, 1, 0, 10);  // a launch whose kernel was never recorded
    b.writer().addCpuInterval({.start = 0,
                               .end = 100,
                               .globalTid = trace::globalTidOf(kPidA, kPidA),
                               .category = trace::Category::kPython});
    b.writer().commit();
  }
  trace::TraceReader reader(path);
  GpuMetrics m = computeGpuMetrics(reader);
  EXPECT_FALSE(m.available());
  EXPECT_TRUE(m.processes.empty());
  auto j = gpuMetricsToJson(m);
  EXPECT_EQ(j["available"], false);
  EXPECT_TRUE(j["kernels"].empty());
  EXPECT_EQ(j["classes"]["compute"].get<double>(), 0.0);
  EXPECT_EQ(j["idle"]["span_us"].get<double>(), 0.0);
  EXPECT_TRUE(j["idle"]["streams"].empty());
  EXPECT_EQ(j["launch"]["count"], 0);
  EXPECT_EQ(j["launch"]["delay_p95_us"].get<double>(), 0.0);
  std::ostringstream out;
  writeGpuMetricsTable(m, out, 20);
  EXPECT_NE(out.str().find("No GPU activity"), std::string::npos);
}

TimeNs sumOfDurations(trace::TraceReader& reader, std::string_view table) {
  auto sql = "SELECT TOTAL(\"end\" - start) FROM " + std::string(table);
  return static_cast<TimeNs>(reader.db().queryInt(sql).value_or(0));
}

TEST(GpuMetricsReal, A100AlexNetTraceIsConsistent) {
  auto shared = testing::sharedTracesDir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  auto source = shared / "a100_alexnet.json.gz";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not there";
  if (!std::filesystem::exists(std::filesystem::path(RLSCOPE_BIN_DIR) / "rlscope"))
    GTEST_SKIP() << "the rlscope executable is not built (cmake --build ... --target rlscope)";
  testing::TempDir dir;
  auto path = dir / "alexnet.sqlite";
  auto imported =
      testing::runCommand({"rlscope", "import", "-q", source.string(), "-o", path.string()});
  ASSERT_EQ(imported.exitCode, 0) << imported.err;

  trace::TraceReader reader(path);
  GpuMetrics m = computeGpuMetrics(reader);
  ASSERT_TRUE(m.available());
  const GpuSummary& s = m.total;

  // Every row is counted once: kernels under their names, copies and sets as memory.
  auto kernelRows = reader.db().queryInt("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  std::uint64_t kernelCount = 0, memoryCount = 0;
  for (const auto& k : s.kernels)
    (k.kernelClass == KernelClass::kMemory ? memoryCount : kernelCount) += k.count;
  EXPECT_EQ(static_cast<std::int64_t>(kernelCount), kernelRows.value_or(-1));
  EXPECT_EQ(static_cast<std::int64_t>(memoryCount),
            reader.rowCount(trace::table::kMemcpy) + reader.rowCount(trace::table::kMemset));
  EXPECT_EQ(s.activities, kernelCount + memoryCount);

  // Class totals add up to the GPU time of the three tables.
  EXPECT_EQ(s.classes.compute + s.classes.communication,
            sumOfDurations(reader, trace::table::kKernel));
  EXPECT_EQ(s.classes.memory, sumOfDurations(reader, trace::table::kMemcpy) +
                                  sumOfDurations(reader, trace::table::kMemset));
  for (std::size_t i = 1; i < s.kernels.size(); ++i)
    EXPECT_GE(s.kernels[i - 1].total, s.kernels[i].total);

  // Idle time lies within the span; streams' idle splits into the three categories.
  const IdleBreakdown& idle = s.idle;
  EXPECT_GT(idle.span, 0);
  EXPECT_LE(idle.idle, idle.span);
  EXPECT_EQ(idle.busy + idle.idle, idle.span);
  EXPECT_LE(idle.busy, s.classes.sum());
  TimeNs streamIdle = 0;
  for (const auto& st : idle.streams) {
    EXPECT_EQ(st.hostWait + st.kernelWait + st.other, st.idle);
    EXPECT_LE(st.idle, st.span);
    streamIdle += st.idle;
  }
  EXPECT_EQ(streamIdle, idle.streamIdle());

  // Every activity either joined its launching call or did not; delays are ordered.
  const LaunchStats& l = s.launch;
  EXPECT_EQ(l.count + l.withoutApiCall, s.activities);
  EXPECT_GT(l.count, 0u);
  EXPECT_LE(l.delayMin, l.delayP50);
  EXPECT_LE(l.delayP50, l.delayP95);
  EXPECT_LE(l.delayP95, static_cast<double>(l.delayMax));
  EXPECT_LE(l.shortKernels, l.count);
  const LaunchStats& k = s.kernelLaunch;
  EXPECT_EQ(k.count + k.withoutApiCall, static_cast<std::uint64_t>(kernelRows.value_or(-1)));
  EXPECT_LE(k.negativeDelays, l.negativeDelays);

  std::ostringstream table;
  writeGpuMetricsTable(m, table, 3);
  std::cout << table.str();
  std::cout << "negative launch delays: " << l.negativeDelays << " of " << l.count
            << " activities, " << k.negativeDelays << " of " << k.count << " kernels\n";
}

}  // namespace
}  // namespace rlscope::analysis
