// The whole-run what-if on a constructed trace with exact expected times, on the real A100
// traces to every GPU of the database, and the `rlscope predict / devices / occupancy` commands.
#include "rlscope/predictor/what_if.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "rlscope/predictor/what_if_output.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::predictor {
namespace {

using testing::addA100;
using testing::addApiCall;
using testing::addCpu;
using testing::addOperation;
using testing::addProcess;
using trace::Category;
constexpr std::int64_t kPid = 42;
constexpr std::int64_t kMain = trace::globalTidOf(kPid, 42);

const OperationPrediction& find(const RunPrediction& p, const std::string& name) {
  for (const auto& o : p.operations)
    if (o.name == name) return o;
  throw std::runtime_error("no operation " + name);
}

// The memory-bound kernel of the traces below: 5400 blocks of 256 threads, 47 registers.
KernelLaunch theKernel(double ns) {
  return {5400, {256, 47, 0, 0}, ns};
}

// Rows the constructed traces are made of: a Python process on an A100 (unless asked otherwise),
// and kernels with `theKernel`'s launch configuration (or none with grid 0).
void addProcessOnA100(trace::TraceWriter& w, bool withGpuInfo = true) {
  addProcess(w, kPid);
  if (withGpuInfo) addA100(w, /*predictorProperties=*/true);
}

void addKernel(trace::TraceWriter& w, trace::TimeNs start, trace::TimeNs end,
               std::int64_t correlation, const char* name, std::int64_t grid = 5400) {
  testing::Kernel k{
      .start = start, .end = end, .pid = kPid, .correlation = correlation, .name = name};
  if (grid > 0) {
    k.grid = {grid, 1, 1};
    k.block = {256, 1, 1};
    k.registersPerThread = 47;
  }
  testing::addKernel(w, k);
}

// "train" [0, 10 µs): Python for 1 µs, a launch, then cudaDeviceSynchronize for the 8 µs its
// kernel runs, then Python again; "rollout" [10, 20 µs): Python only. Recorded on an A100.
void writeTrainingStep(const std::filesystem::path& path, bool withGpuInfo = true) {
  trace::TraceWriter w(path);
  addProcessOnA100(w, withGpuInfo);
  addOperation(w, 1, 0, 10000, "train", kMain);
  addOperation(w, 2, 10000, 20000, "rollout", kMain);
  addCpu(w, 0, 1000, Category::kPython, kMain);
  addApiCall(w, 1000, 1100, kMain, 7, "cudaLaunchKernel");
  addApiCall(w, 1100, 9100, kMain, 8, "cudaDeviceSynchronize");
  addCpu(w, 9100, 10000, Category::kPython, kMain);
  addCpu(w, 10000, 20000, Category::kPython, kMain);
  addKernel(w, 1100, 9100, 7, "void at::native::vectorized_elementwise_kernel<4>");
  w.commit();
}

class WhatIf : public ::testing::Test {
 protected:
  void SetUp() override { writeTrainingStep(path); }
  RunPrediction predict(const char* target, PredictOptions options = {}) {
    trace::TraceReader reader(path);
    return predictRun(reader, db, db.get(target), options);
  }

  GpuDatabase db = GpuDatabase::builtIn();
  testing::TempDir dir;
  std::filesystem::path path = dir / "step.sqlite";
};

TEST_F(WhatIf, CpuTimeStaysAndTheWaitForTheGpuScales) {
  for (const char* target : {"H100 SXM", "T4", "A100 SXM4 40GB"}) {
    SCOPED_TRACE(target);
    double kernel = KernelPredictor(db.get("A100 SXM4 40GB"), db.get(target))
                        .predict(theKernel(8000), {})
                        .timeNs;
    RunPrediction p = predict(target);
    EXPECT_EQ(p.origin, "A100 SXM4 40GB");
    EXPECT_EQ(p.originFrom, "trace");
    EXPECT_EQ(p.kernelLaunches, 1u);
    EXPECT_DOUBLE_EQ(p.gpuOriginNs, 8000);
    EXPECT_NEAR(p.gpuPredictedNs, kernel, 1e-6);

    const auto& train = find(p, "train");
    EXPECT_DOUBLE_EQ(train.cpuNs, 2000);
    EXPECT_DOUBLE_EQ(train.cpuGpuNs, 8000);
    EXPECT_DOUBLE_EQ(train.gpuWaitNs, 8000);
    EXPECT_NEAR(train.gpuScale, kernel / 8000, 1e-12);
    EXPECT_NEAR(train.predictedNs, 2000 + kernel, 1e-6);
    EXPECT_DOUBLE_EQ(find(p, "rollout").predictedNs, 10000);

    EXPECT_DOUBLE_EQ(p.originNs, 20000);
    EXPECT_NEAR(p.predictedNs, 12000 + kernel, 1e-6);
    EXPECT_DOUBLE_EQ(p.gpuBoundNs, 8000);
    EXPECT_FALSE(p.cpuBound);
    EXPECT_DOUBLE_EQ(p.maxSpeedup(), 20000.0 / 12000.0);
  }
  EXPECT_LT(predict("H100 SXM").predictedNs, 20000);
  EXPECT_GT(predict("T4").predictedNs, 20000);
  EXPECT_NEAR(predict("A100 SXM4 40GB").predictedNs, 20000, 1e-6);
}

TEST_F(WhatIf, ABusyCpuHidesAFasterGpu) {
  // Python busy throughout the kernel instead of waiting: the overlap stays as long as the CPU.
  testing::TempDir other;
  auto busy = other / "busy.sqlite";
  {
    trace::TraceWriter w(busy);
    addProcessOnA100(w);
    addOperation(w, 1, 0, 100000, "simulate", kMain);
    addCpu(w, 0, 100000, Category::kSimulator, kMain);
    addKernel(w, 1000, 3000, 1, "reduce_kernel", /*grid=*/1);
    w.commit();
  }
  trace::TraceReader reader(busy);
  RunPrediction p = predictRun(reader, db, db.get("H200"));
  EXPECT_DOUBLE_EQ(p.predictedNs, 100000);  // the CPU part is the longer one
  EXPECT_TRUE(p.cpuBound);
  EXPECT_NE(p.verdict().find("CPU-bound"), std::string::npos);
  // A much slower GPU stretches the overlap past the CPU's part.
  trace::TraceReader again(busy);
  RunPrediction slow = predictRun(again, db, db.get("P4"));
  EXPECT_GE(slow.predictedNs, 100000);
}

TEST_F(WhatIf, TheOriginComesFromTheTraceOrTheCaller) {
  testing::TempDir other;
  auto bare = other / "no_gpu_info.sqlite";
  writeTrainingStep(bare, /*withGpuInfo=*/false);
  {
    trace::TraceReader reader(bare);
    try {
      predictRun(reader, db, db.get("H100"));
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("--origin"), std::string::npos) << e.what();
    }
  }
  trace::TraceReader reader(bare);
  PredictOptions options;
  options.origin = &db.get("V100");
  RunPrediction p = predictRun(reader, db, db.get("H100"), options);
  EXPECT_EQ(p.origin, db.get("V100").name);
  EXPECT_EQ(p.originFrom, "--origin");

  // A board name the database does not list: matched by compute capability and SM count.
  trace::GpuInfoRecord board;
  board.name = "NVIDIA A100-PG999-900";
  board.computeMajor = 8;
  board.smCount = 108;
  board.totalMemory = 85'000'000'000;
  EXPECT_EQ(matchTraceGpu(db, board).name, "A100 SXM4 80GB");
  board.smCount = 7;
  EXPECT_THROW(matchTraceGpu(db, board), std::runtime_error);
}

TEST_F(WhatIf, GpuWorkRunningDuringAnOperationScalesIt) {
  // "backward" on the main thread waits while a worker thread outside every operation launches
  // its kernel (as autograd does); an NCCL kernel after it, kept on any GPU, sets a different
  // run-wide ratio.
  testing::TempDir other;
  auto path2 = other / "autograd.sqlite";
  constexpr std::int64_t kWorker = trace::globalTidOf(kPid, 43);
  {
    trace::TraceWriter w(path2);
    addProcessOnA100(w);
    addOperation(w, 1, 0, 10000, "backward", kMain);
    addApiCall(w, 0, 10000, kMain, 1, "cudaStreamSynchronize");
    addApiCall(w, 0, 100, kWorker, 2, "cudaLaunchKernel");
    addApiCall(w, 20000, 20100, kWorker, 3, "cudaLaunchKernel");
    addKernel(w, 100, 9100, 2, "elementwise_kernel");
    addKernel(w, 20100, 40100, 3, "ncclKernel_AllReduce_RING_LL_Sum_float");
    w.commit();
  }
  trace::TraceReader reader(path2);
  RunPrediction p = predictRun(reader, db, db.get("H100"));
  double factor = KernelPredictor(db.get("A100"), db.get("H100")).predict(theKernel(1), {}).timeNs;
  const auto& backward = find(p, "backward");
  EXPECT_NEAR(backward.gpuScale, factor, 1e-12);
  EXPECT_DOUBLE_EQ(backward.gpuWaitNs, 9000);
  EXPECT_NEAR(backward.predictedNs, 1000 + 9000 * factor, 1e-6);
}

TEST_F(WhatIf, KernelsWithoutLaunchConfigurationsAreNamedAndKept) {
  testing::TempDir other;
  auto bare = other / "no_grid.sqlite";
  {
    trace::TraceWriter w(bare);
    addProcessOnA100(w);
    addKernel(w, 0, 5000, 3, "mystery_kernel", /*grid=*/0);  // no grid, block or registers
    w.commit();
  }
  trace::TraceReader reader(bare);
  RunPrediction p = predictRun(reader, db, db.get("H100"));
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].method, Method::kCannotPredict);
  EXPECT_EQ(p.cannotPredict, 1u);
  EXPECT_DOUBLE_EQ(p.gpuPredictedNs, 5000);
  auto noted = [&](const char* text) {
    return std::any_of(p.notes.begin(), p.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(noted("cannot be predicted"));
  EXPECT_TRUE(noted("no CUDA calls to replay"));
  EXPECT_FALSE(p.replay.replayed);
  auto json = toJson(p);
  EXPECT_EQ(json["kernels"][0]["method"], "cannot predict");
  EXPECT_EQ(json["run"]["model"], "operations");
}

// Three kernels launched back to back without a wait while Python goes on: on a slower GPU their
// stream's serial work outlasts the CPU and sets the run; on a faster one the CPU does.
TEST(Replay, AStreamsSerialWorkOrTheCpuSetsTheRun) {
  testing::TempDir dir;
  auto path = dir / "async.sqlite";
  {
    trace::TraceWriter w(path);
    addProcessOnA100(w);
    addOperation(w, 1, 0, 8000, "step", kMain);
    addCpu(w, 0, 1000, Category::kPython, kMain);
    for (int i = 0; i < 3; ++i) {
      addApiCall(w, 1000 + 100 * i, 1100 + 100 * i, kMain, i + 1, "cudaLaunchKernel");
      addKernel(w, 1200 + 2000 * i, 3200 + 2000 * i, i + 1, "relu_kernel");
    }
    addCpu(w, 1300, 8000, Category::kPython, kMain);
    w.commit();
  }
  GpuDatabase db = GpuDatabase::builtIn();
  for (const char* target : {"T4", "H100 SXM", "A100 SXM4 40GB"}) {
    SCOPED_TRACE(target);
    double kernel = KernelPredictor(db.get("A100 SXM4 40GB"), db.get(target))
                        .predict(theKernel(2000), classifyKernel("relu_kernel"))
                        .timeNs;
    trace::TraceReader reader(path);
    RunPrediction p = predictRun(reader, db, db.get(target));
    ASSERT_TRUE(p.replay.replayed);
    EXPECT_EQ(p.replay.calls, 3u);
    EXPECT_EQ(p.replay.waits, 0u);
    EXPECT_NEAR(p.replay.longestStreamNs, 3 * kernel, 1e-6);
    EXPECT_DOUBLE_EQ(p.replay.longestCpuPathNs, 8000);
    // The first kernel keeps its 200 ns from its launch; the others follow on the stream.
    EXPECT_NEAR(p.predictedNs, std::max(8000.0, 1200 + 3 * kernel), 1e-6);
    EXPECT_GE(p.predictedNs, p.replay.longestStreamNs);
    // The range: the kernels at the ends of the memory-bound rule's expected error.
    double e = p.kernels.at(0).expectedError;
    EXPECT_DOUBLE_EQ(e, 0.077);
    EXPECT_NEAR(p.predictedHighNs, std::max(8000.0, 1200 + 3 * kernel * (1 + e)), 1e-6);
    EXPECT_NEAR(p.predictedLowNs, std::max(8000.0, 1200 + 3 * kernel * (1 - e)), 1e-6);
  }
}

// 4000 launches 12 µs apart of 10 µs kernels, then 60 ms of Python: on the A100 the stream keeps
// up. On a GPU where each kernel takes K > 12 µs the stream falls behind, and once 1024 launches
// wait in its queue each launch blocks until the oldest is done: the thread's last launch returns
// when kernel 4000 - 1024 has finished, and its Python after that moves with it.
TEST(Replay, AFullLaunchQueueHoldsTheLaunchingThread) {
  testing::TempDir dir;
  auto path = dir / "queue.sqlite";
  constexpr int kLaunches = 4000;
  constexpr trace::TimeNs kGap = 12'000, kKernel = 10'000, kTail = 60'000'000;
  {
    trace::TraceWriter w(path);
    addProcessOnA100(w);
    for (int i = 0; i < kLaunches; ++i) {
      trace::TimeNs t = i * kGap;
      addApiCall(w, t, t + 1000, kMain, i + 1, "cudaLaunchKernel");
      addKernel(w, t + 1500, t + 1500 + kKernel, i + 1, "relu_kernel");
    }
    trace::TimeNs last = (kLaunches - 1) * kGap + 1000;
    addCpu(w, last, last + kTail, Category::kPython, kMain);
    w.commit();
  }
  GpuDatabase db = GpuDatabase::builtIn();
  const char* target = "T4";
  double kernel = KernelPredictor(db.get("A100 SXM4 40GB"), db.get(target))
                      .predict(theKernel(kKernel), classifyKernel("relu_kernel"))
                      .timeNs;
  ASSERT_GT(kernel, 2.0 * kGap) << "the test needs a GPU slower than the launches";
  trace::TraceReader reader(path);
  RunPrediction p = predictRun(reader, db, db.get(target));
  // The stream runs its kernels back to back from the first one's start.
  double stream = 1500 + kLaunches * kernel;
  // The last launch returns once kernel kLaunches - 1024 has ended, 1000 ns of call later.
  double thread = 1500 + (kLaunches - 1024) * kernel + 1000 + kTail;
  EXPECT_NEAR(p.predictedNs, std::max(stream, thread), 1e-6 * thread);
  EXPECT_GT(thread, stream) << "the run is the thread's: without the queue it would end at "
                            << std::max(stream, (kLaunches - 1) * kGap + 1000.0 + kTail);

  // On the A100 itself nothing queues: the run as recorded.
  trace::TraceReader again(path);
  RunPrediction self = predictRun(again, db, db.get("A100 SXM4 40GB"));
  EXPECT_NEAR(self.predictedNs, self.originNs, 1e-6 * self.originNs);
}

// A run recorded with a full launch queue (each launch after the 1024th held until a kernel
// ended) replays as recorded on its own GPU: the recorded blocking is not counted twice.
TEST(Replay, BlockingTheTraceRecordedIsNotCountedTwice) {
  testing::TempDir dir;
  auto path = dir / "full.sqlite";
  constexpr int kLaunches = 3000;
  constexpr trace::TimeNs kKernel = 10'000;
  {
    trace::TraceWriter w(path);
    addProcessOnA100(w);
    // Kernels back to back from 1500 ns; launches 1 µs apart until the queue is full, then each
    // returns when the kernel 1024 places earlier has ended.
    trace::TimeNs t = 0;
    for (int i = 0; i < kLaunches; ++i) {
      trace::TimeNs kernelStart = 1500 + i * kKernel;
      trace::TimeNs end = t + 1000;
      if (i >= 1024) end = std::max(end, 1500 + (i - 1024 + 1) * kKernel + 500);
      addApiCall(w, t, end, kMain, i + 1, "cudaLaunchKernel");
      addKernel(w, kernelStart, kernelStart + kKernel, i + 1, "relu_kernel");
      t = end;
    }
    addCpu(w, t, t + 5'000'000, Category::kPython, kMain);
    w.commit();
  }
  GpuDatabase db = GpuDatabase::builtIn();
  trace::TraceReader reader(path);
  RunPrediction self = predictRun(reader, db, db.get("A100 SXM4 40GB"));
  EXPECT_NEAR(self.predictedNs, self.originNs, 1e-6 * self.originNs);
}

// A thread that waits for the GPU in cudaStreamSynchronize while another stream's work is still
// running waits for its own stream only (CUPTI's synchronisation record names it).
TEST(Replay, AStreamSynchronizeWaitsForItsStreamOnly) {
  testing::TempDir dir;
  auto path = dir / "streams.sqlite";
  {
    trace::TraceWriter w(path);
    addProcessOnA100(w);
    addOperation(w, 1, 0, 20000, "step", kMain);
    addApiCall(w, 0, 100, kMain, 1, "cudaLaunchKernel");          // stream 7: 100 .. 10100
    addApiCall(w, 100, 200, kMain, 2, "cudaLaunchKernel");        // stream 8: 200 .. 2200
    addApiCall(w, 200, 2300, kMain, 3, "cudaStreamSynchronize");  // waits for stream 8
    addCpu(w, 2300, 20000, Category::kPython, kMain);
    for (auto [start, end, stream, correlation] : {std::array<std::int64_t, 4>{100, 10100, 7, 1},
                                                   std::array<std::int64_t, 4>{200, 2200, 8, 2}})
      testing::addKernel(w, {.start = start,
                             .end = end,
                             .pid = kPid,
                             .correlation = correlation,
                             .name = "relu_kernel",
                             .stream = stream,
                             .grid = {5400, 1, 1},
                             .block = {256, 1, 1},
                             .registersPerThread = 47});
    testing::addSync(w, {.start = 200, .end = 2300, .pid = kPid, .correlation = 3, .stream = 8},
                     trace::SyncType::kStreamSynchronize);
    w.commit();
  }
  GpuDatabase db = GpuDatabase::builtIn();
  double factor = KernelPredictor(db.get("A100 SXM4 40GB"), db.get("T4"))
                      .predict(theKernel(1), classifyKernel("relu_kernel"))
                      .timeNs;
  trace::TraceReader reader(path);
  RunPrediction p = predictRun(reader, db, db.get("T4"));
  EXPECT_EQ(p.replay.waits, 1u);
  // The wait (2100 ns, 100 of it the call's own) becomes 2000 x factor: the CPU moves by that.
  double shift = 2000 * factor - 2000;
  EXPECT_NEAR(p.predictedNs, std::max(20000 + shift, 100 + 10000 * factor), 1e-6);
}

// The real A100 traces, imported once.
class RealTraces : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto shared = testing::sharedTracesDir();
    if (shared.empty()) return;
    dir_ = new testing::TempDir;
    for (const char* name : {"a100_alexnet", "a100_nccl", "a100_simple_add"}) {
      auto source = shared / (std::string(name) + ".json.gz");
      auto trace = *dir_ / (std::string(name) + ".sqlite");
      if (std::filesystem::exists(source) &&
          testing::runCommand({"rlscope", "import", "-q", source.string(), "-o", trace.string()})
                  .exitCode == 0)
        traces_.push_back(trace);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (traces_.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::vector<std::filesystem::path> traces_;
};

// Whether b is at least as fast as a in everything the model reads.
bool dominates(const GpuSpec& b, const GpuSpec& a) {
  return b.smCount >= a.smCount && b.boostClockMhz >= a.boostClockMhz &&
         b.achievableBandwidthGBs >= a.achievableBandwidthGBs && b.fp32Tflops >= a.fp32Tflops &&
         b.tf32Tflops >= a.tf32Tflops && b.fp16Tflops >= a.fp16Tflops &&
         b.maxThreadsPerSm >= a.maxThreadsPerSm && b.sharedMemPerSm >= a.sharedMemPerSm &&
         b.maxBlocksPerSm >= a.maxBlocksPerSm;
}

TEST_F(RealTraces, PredictionsToEveryGpuAreFinitePositiveAndMoveTheRightWay) {
  GpuDatabase db = GpuDatabase::builtIn();
  for (const auto& path : traces_) {
    SCOPED_TRACE(path.filename().string());
    std::map<std::string, RunPrediction> byTarget;
    for (const auto& target : db.gpus()) {
      trace::TraceReader reader(path);
      RunPrediction p = predictRun(reader, db, target);
      EXPECT_TRUE(std::isfinite(p.predictedNs) && p.predictedNs > 0) << target.name;
      EXPECT_TRUE(std::isfinite(p.gpuPredictedNs) && p.gpuPredictedNs > 0) << target.name;
      for (const auto& k : p.kernels)
        EXPECT_TRUE(std::isfinite(k.predictedNs) && k.predictedNs > 0) << k.name;
      for (const auto& o : p.operations) EXPECT_GE(o.predictedNs, 0) << o.name;
      byTarget.emplace(target.name, std::move(p));
    }
    for (const auto& a : db.gpus())
      for (const auto& b : db.gpus())
        if (&a != &b && dominates(b, a)) {
          EXPECT_LE(byTarget.at(b.name).gpuPredictedNs, byTarget.at(a.name).gpuPredictedNs + 1e-6)
              << b.name << " is faster than " << a.name << " in everything";
        }
    // Same chip and SMs, more bandwidth: H200 over H100 SXM.
    EXPECT_LE(byTarget.at("H200 SXM").gpuPredictedNs, byTarget.at("H100 SXM").gpuPredictedNs);
    // The A100 itself: the run as recorded (the replay re-derives launch delays of work that
    // queued behind its stream: within 10 ppm).
    const RunPrediction& self = byTarget.at("A100 SXM4 40GB");
    EXPECT_NEAR(self.gpuPredictedNs, self.gpuOriginNs, 1e-6 * self.gpuOriginNs);
    EXPECT_NEAR(self.predictedNs, self.originNs, 1e-5 * self.originNs);
  }
}

// The bounds a replay keeps, on every target: a run is never shorter than the predicted work of
// any one of its streams, one kernel after another, nor than any thread's own path.
TEST_F(RealTraces, TheReplayedRunKeepsItsBoundsOnEveryGpu) {
  GpuDatabase db = GpuDatabase::builtIn();
  for (const auto& path : traces_) {
    SCOPED_TRACE(path.filename().string());
    for (const auto& target : db.gpus()) {
      trace::TraceReader reader(path);
      RunPrediction p = predictRun(reader, db, target);
      ASSERT_TRUE(p.replay.replayed) << target.name;
      EXPECT_GT(p.replay.calls, 300u);
      EXPECT_GT(p.replay.longestStreamNs, 0);
      // The bounds are measured from the trace's first event; predictedNs from the breakdown's.
      double slack = 1e-6 * p.originNs + (p.replay.originNs - p.originNs);
      EXPECT_GE(p.predictedNs + slack, p.replay.longestStreamNs) << target.name;
      EXPECT_GE(p.predictedNs + slack, p.replay.longestCpuPathNs) << target.name;
      // The expected range brackets the prediction, and is only as wide as the GPU's part.
      EXPECT_LE(p.predictedLowNs, p.predictedNs + 1e-3) << target.name;
      EXPECT_GE(p.predictedHighNs, p.predictedNs - 1e-3) << target.name;
      EXPECT_LE(p.predictedHighNs - p.predictedLowNs, 2 * p.gpuExpectedErrorNs + 1e-3)
          << target.name;
    }
  }
}

TEST_F(RealTraces, PredictCommandPrintsTableAndJson) {
  const auto& trace = traces_.front();
  auto table = testing::runCommand({"rlscope", "predict", trace.string(), "--target", "h100"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("A100 SXM4 40GB (from trace) -> H100 SXM"), std::string::npos)
      << table.out;
  auto json = testing::runCommand(
      {"rlscope", "predict", trace.string(), "--target", "T4", "--format", "json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], "rlscope.prediction/1");
  EXPECT_GT(j["run"]["predicted_us"].get<double>(), j["run"]["origin_us"].get<double>());
  EXPECT_FALSE(j["kernels"].empty());

  auto unknown = testing::runCommand({"rlscope", "predict", trace.string(), "--target", "Z9"});
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_EQ(testing::lines(unknown.err).size(), 1u);
  EXPECT_NE(unknown.err.find("unknown GPU 'Z9'"), std::string::npos);
}

TEST(PredictorCommands, ATraceWithoutGpuPropertiesNeedsTheOrigin) {
  auto shared = testing::sharedTracesDir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  testing::TempDir dir;
  for (const char* name : {"sampled_rank0", "cpu_only"}) {
    SCOPED_TRACE(name);
    auto source = shared / (std::string(name) + ".json.gz");
    auto trace = dir / (std::string(name) + ".sqlite");
    ASSERT_EQ(
        testing::runCommand({"rlscope", "import", "-q", source.string(), "-o", trace.string()})
            .exitCode,
        0);
    auto bare = testing::runCommand({"rlscope", "predict", trace.string(), "--target", "H100"});
    EXPECT_EQ(bare.exitCode, 1);
    ASSERT_EQ(testing::lines(bare.err).size(), 1u) << bare.err;
    EXPECT_NE(bare.err.find("no GPU properties"), std::string::npos) << bare.err;
    auto given = testing::runCommand({"rlscope", "predict", trace.string(), "--target", "H100",
                                      "--origin", "A100", "--format", "json"});
    ASSERT_EQ(given.exitCode, 0) << given.err;
    auto j = nlohmann::json::parse(given.out);
    EXPECT_EQ(j["origin_from"], "--origin");
    if (std::string(name) == "cpu_only") {
      EXPECT_EQ(j["gpu"]["kernel_launches"], 0);
      EXPECT_NE(j["verdict"].get<std::string>().find("no GPU work"), std::string::npos);
    } else {
      EXPECT_LT(j["gpu"]["predicted_us"].get<double>(), j["gpu"]["origin_us"].get<double>());
    }
  }
}

TEST(PredictorCommands, KernelDevicesAndOccupancyPrintTheirAnswerLast) {
  auto kernel =
      testing::runCommand({"rlscope", "predict", "--kernel", "--origin", "A100", "--target", "H100",
                           "--grid", "5400", "--block", "256", "--regs", "47", "--time-us", "8"});
  ASSERT_EQ(kernel.exitCode, 0) << kernel.err;
  GpuDatabase db = GpuDatabase::builtIn();
  double expected =
      KernelPredictor(db.get("A100"), db.get("H100")).predict(theKernel(8000), {}).timeNs / 1e3;
  EXPECT_NEAR(std::stod(testing::lines(kernel.out).back()), expected, 1e-3);

  auto devices = testing::runCommand({"rlscope", "devices", "--format", "json"});
  ASSERT_EQ(devices.exitCode, 0);
  auto list = nlohmann::json::parse(devices.out);
  EXPECT_EQ(list.size(), db.gpus().size());
  EXPECT_TRUE(list[0].contains("name"));
  EXPECT_TRUE(list[0]["sources"].contains("default"));

  auto occupancy = testing::runCommand({"rlscope", "occupancy", "--gpu", "h100", "--block", "128",
                                        "--regs", "96", "--smem-dynamic", "32768"});
  ASSERT_EQ(occupancy.exitCode, 0) << occupancy.err;
  EXPECT_EQ(testing::lines(occupancy.out).back(), "5");
  EXPECT_NE(occupancy.out.find("bound by registers"), std::string::npos) << occupancy.out;

  auto missing = testing::runCommand({"rlscope", "predict", "--kernel", "--origin", "A100"});
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_EQ(testing::lines(missing.err).size(), 1u);
}

}  // namespace
}  // namespace rlscope::predictor
