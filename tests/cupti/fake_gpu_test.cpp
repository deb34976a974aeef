// The collector's CUDA path end to end without a GPU: rlscope-prof profiles the CUDA sample's calls
// replayed on the fake GPU (fake_gpu/: stand-ins for libcupti and libcuda that librlscope_cupti.so
// binds to), so the injection, CUPTI subscription and activity kinds, buffer callbacks, flushes,
// external correlation, GPU properties, decoding and the merge all run as on a GPU, and the trace
// must pass every check scripts/gpu-check.sh makes of a real GPU run. What real CUPTI records,
// and when, only gpu-check.sh on a GPU can show.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rlscope/part/reader.h"
#include "rlscope/trace/sqlite.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::cupti {
namespace {

using testing::runCommand;

constexpr int kIterations = 3;

std::string fakeGpuLibraryPath() {
  const char* existing = std::getenv("LD_LIBRARY_PATH");
  return std::string("LD_LIBRARY_PATH=") + RLSCOPE_FAKE_GPU_DIR +
         (existing && *existing ? std::string(":") + existing : "");
}

// rlscope-prof's run of the replay on the fake GPU, its parts kept.
struct ProfiledReplay {
  testing::TempDir dir;
  std::string trace = (dir.path() / "cuda.sqlite").string();
  testing::CommandResult result;
};

std::unique_ptr<ProfiledReplay> profileReplay(int iterations, std::vector<std::string> more = {}) {
  auto run = std::make_unique<ProfiledReplay>();
  std::vector<std::string> argv = {"/usr/bin/env",
                                   fakeGpuLibraryPath(),
                                   std::string(RLSCOPE_BIN_DIR) + "/rlscope-prof",
                                   "--keep-parts",
                                   "-o",
                                   run->trace,
                                   "--",
                                   RLSCOPE_FAKE_CUDA_TRAINING,
                                   "--iterations",
                                   std::to_string(iterations)};
  argv.insert(argv.end(), more.begin(), more.end());
  run->result = runCommand(argv);
  return run;
}

testing::CommandResult gpuCheck(const std::string& trace, int iterations) {
  return runCommand({"/bin/bash", RLSCOPE_GPU_CHECK_SCRIPT, "--check-only", trace, "--iterations",
                     std::to_string(iterations), "--bin", RLSCOPE_BIN_DIR});
}

void expectAllChecksPass(const testing::CommandResult& check) {
  EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("gpu-check: all checks passed"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("FAIL"), std::string::npos) << check.out;
}

class FakeGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = profileReplay(kIterations).release(); }
  static void TearDownTestSuite() { delete run_; }
  void SetUp() override { ASSERT_EQ(run_->result.exitCode, 0) << run_->result.err; }

  static std::int64_t count(const std::string& sql) {
    trace::Database db(run_->trace, trace::Database::Mode::kReadOnlyUntrusted);
    return db.queryInt(sql).value_or(-1);
  }

  static inline ProfiledReplay* run_ = nullptr;
};

TEST_F(FakeGpu, RlscopeProfRecordsGpuActivityWithoutAWarning) {
  const testing::CommandResult& r = run_->result;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("iterations=3"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("36 kernels"), std::string::npos) << r.err;
}

TEST_F(FakeGpu, TraceOfTheCudaSampleReplayPassesEveryGpuCheck) {
  expectAllChecksPass(gpuCheck(run_->trace, kIterations));
}

TEST_F(FakeGpu, CallsTheCollectorSwitchesOffNeverReachTheTrace) {
  // cudaGetDevice is made once per iteration and switched off in CUPTI by the collector.
  EXPECT_EQ(count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                  "ON s.id = r.nameId WHERE s.value LIKE 'cudaGetDevice%'"),
            0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                  "ON s.id = r.nameId WHERE s.value = 'cudaDeviceReset'"),
            1);
}

TEST_F(FakeGpu, ApiRecordsCarryTheProgramsThreadAndTheCollectorsClock) {
  // CUPTI's thread ids are the OS's (cuptiSetThreadIdType): the API calls sit on the thread of
  // the NVTX operations around them, and within the run's time span.
  EXPECT_EQ(count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT EXISTS ("
                  "SELECT 1 FROM rlscope_operations o WHERE o.globalTid = r.globalTid)"),
            0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k, rlscope_processes p "
                  "WHERE p.globalPid = k.globalPid AND (k.start < p.start OR k.end > p.end)"),
            0);
}

TEST_F(FakeGpu, EveryCallInsideAnOperationCarriesItsExternalCorrelation) {
  // The merge would attribute kernels to the operation open at launch even without CUPTI's
  // external correlation records, so count those in the part itself: one per runtime call made
  // inside an operation (6 in inference, 15 in backpropagate), naming an operation the
  // collector pushed.
  std::int64_t records = 0, unnamed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run_->dir.path())) {
    if (entry.path().extension() != ".part") continue;
    part::PartReader reader(entry.path());
    reader.readAll();
    reader.forEachRecord([&](std::uint32_t, const part::RecordView& r) {
      if (r.type != part::RecordType::kExternalCorrelation) return;
      auto x = r.payload<part::ExternalCorrelation>();
      ++records;
      if (!x || x->externalId == 0) ++unnamed;
    });
  }
  EXPECT_EQ(records, 21 * kIterations);
  EXPECT_EQ(unnamed, 0);
}

TEST_F(FakeGpu, EveryDeviceIsDescribedOnce) {
  EXPECT_EQ(count("SELECT COUNT(*) FROM TARGET_INFO_GPU WHERE name = 'NVIDIA H200' AND "
                  "smCount = 132 AND computeMajor = 9 AND chipName = 'GH100' AND "
                  "memoryBandwidth = 4916736000000"),
            1);
}

// 4000 iterations make about 20 MiB of CUPTI records (5.2 KiB each) in about two seconds (0.1 ms
// of sleep each): the collector's 8 MiB buffers are handed back both when they fill and, partly
// filled, by the writer thread's unforced flush once a second while the run goes on (on this
// machine: full, 2.9 MB, full, the rest at exit). Nothing may be lost.
TEST(FakeGpuLongRun, RecordsAcrossManyBuffersAndFlushesAreAllThere) {
  constexpr int kLong = 4000;
  auto run = profileReplay(kLong, {"--sleep-us", "100"});
  ASSERT_EQ(run->result.exitCode, 0) << run->result.err;
  EXPECT_EQ(run->result.err.find("dropped"), std::string::npos) << run->result.err;
  expectAllChecksPass(gpuCheck(run->trace, kLong));
}

// SIGTERM with GPU records still in CUPTI's buffers (no cudaDeviceReset, no exit handlers): the
// collector's handler flushes CUPTI before the process dies, so every launch is in the trace.
TEST(FakeGpuSigterm, GpuRecordsStillInCuptiAreFlushed) {
  auto run = profileReplay(kIterations, {"--end-by-sigterm"});
  ASSERT_EQ(run->result.exitCode, 128 + SIGTERM) << run->result.err;
  expectAllChecksPass(gpuCheck(run->trace, kIterations));
}

// A child forked without exec after CUDA started inherits a copy of CUPTI's buffers holding the
// parent's records; if its collector flushed or decoded them, the parent's kernels would appear
// twice (gpu-check counts them exactly). The child's own operation must be there.
TEST(FakeGpuFork, AForkChildLeavesTheParentsGpuRecordsAlone) {
#ifdef RLSCOPE_TSAN_BUILD
  GTEST_SKIP() << "ThreadSanitizer build: no threads in fork children";
#endif
  auto run = profileReplay(kIterations, {"--fork-child"});
  ASSERT_EQ(run->result.exitCode, 0) << run->result.err;
  expectAllChecksPass(gpuCheck(run->trace, kIterations));
  trace::Database db(run->trace, trace::Database::Mode::kReadOnlyUntrusted);
  EXPECT_EQ(db.queryInt("SELECT COUNT(*) FROM rlscope_processes"), 2);
  EXPECT_EQ(db.queryInt("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                        "s.id = o.nameId JOIN rlscope_processes p ON p.globalPid = "
                        "(o.globalTid & ~0xFFFFFF) WHERE s.value = 'child' AND p.parentPid IN "
                        "(SELECT pid FROM rlscope_processes)"),
            1);
}

// `rlscope-prof --calibrate` with a GPU runs the two CUDA configurations too (CUDA API calls, then
// GPU activity), prices CUPTI per API name, and `rlscope analyze` removes both CUDA costs. The
// costs themselves are differences of noisy runs, so only what they were computed from is
// checked: every configuration's repetitions, every API the program calls, the event counts.
TEST(FakeGpuCalibration, CudaCostsAreCalibratedPerApiAndRemoved) {
  constexpr int kRuns = 200, kRepetitions = 2;
  testing::TempDir dir;
  std::string trace = (dir.path() / "calibrated.sqlite").string();
  auto prof = runCommand({"/usr/bin/env", fakeGpuLibraryPath(),
                          std::string(RLSCOPE_BIN_DIR) + "/rlscope-prof", "--calibrate",
                          "--repetitions", std::to_string(kRepetitions), "-q", "-o", trace, "--",
                          RLSCOPE_FAKE_CUDA_TRAINING, "--iterations", std::to_string(kRuns)});
  ASSERT_EQ(prof.exitCode, 0) << prof.err;
  EXPECT_EQ(prof.err.find("CUDA costs not calibrated"), std::string::npos) << prof.err;

  trace::Database db(trace, trace::Database::Mode::kReadOnlyUntrusted);
  for (const char* api : {"cudaLaunchKernel", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemsetAsync",
                          "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaDeviceReset"}) {
    EXPECT_EQ(db.queryInt("SELECT count FROM rlscope_calibration WHERE source = 'cupti' AND "
                          "name = '" +
                          std::string(api) + "'"),
              kRepetitions)
        << api;
  }
  EXPECT_EQ(db.queryInt("SELECT count FROM rlscope_calibration WHERE source = "
                        "'cuda_api_interception'"),
            kRepetitions);

  auto analysis = runCommand({"rlscope", "analyze", trace, "--format", "json"});
  ASSERT_EQ(analysis.exitCode, 0) << analysis.err;
  auto doc = nlohmann::json::parse(analysis.out);
  ASSERT_TRUE(doc.at("corrected").get<bool>());
  const auto& c = doc.at("correction");
  // 21 recorded calls per iteration, the 4 parameter copies and the reset; cudaGetDevice is off.
  constexpr int kCalls = 21 * kRuns + 5;
  EXPECT_EQ(c.at("events").at("cuda_api_interception").get<int>(), kCalls);
  EXPECT_EQ(c.at("events").at("cupti").get<int>(), kCalls);
  EXPECT_GE(c.at("removed_us").at("cupti").get<double>(), 0.0);
  EXPECT_GE(c.at("removed_us").at("cuda_api_interception").get<double>(), 0.0);
  EXPECT_LT(c.at("corrected_total_us").get<double>(), c.at("uncorrected_total_us").get<double>());
}

}  // namespace
}  // namespace rlscope::cupti
