// Without a GPU or driver (the project's machines), CUPTI refuses at enable time: the CUDA
// backend must say why once and leave the collector recording CPU activity.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "cupti_activity_api.h"
#include "cupti_session.h"
#include "rlscope/part/reader.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::cupti {
namespace {

using testing::runCommand;

bool gpuPresent() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto cuInitFn = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
  auto countFn = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuDeviceGetCount"));
  int count = 0;
  return cuInitFn && countFn && cuInitFn(0) == 0 && countFn(&count) == 0 && count > 0;
}

constexpr std::uint32_t kAllCuda = part::kFeatureCudaApi | part::kFeatureGpuActivity;

TEST(CpuOnly, CuptiRefusesWithAReason) {
  if (gpuPresent()) GTEST_SKIP() << "a GPU is present, so CUPTI starts";
  std::string reason = startCupti(kAllCuda);
  ASSERT_FALSE(reason.empty());
  EXPECT_NE(reason.find("CUPTI_ERROR_"), std::string::npos) << reason;
  EXPECT_EQ(reason.find('\n'), std::string::npos) << "one line: " << reason;
  // Nothing was left on: the hooks are inert, and a second attempt answers the same way.
  EXPECT_FALSE(CuptiActivityApi::instance().enabled());
  pushOperation(1);
  popOperation();
  drainActivity();
  flushActivity();
  EXPECT_EQ(startCupti(kAllCuda), reason);
}

struct PartContents {
  std::vector<std::pair<std::uint32_t, std::string>> statuses;  // recording, reason
  std::vector<std::string> warnings;
  int records = 0;
};

PartContents readParts(const std::filesystem::path& dir) {
  PartContents c;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".part") continue;
    part::PartReader reader(entry.path());
    reader.readAll();
    EXPECT_EQ(reader.cutShort(), "");
    reader.forEachRecord([&](std::uint32_t, const part::RecordView& r) {
      ++c.records;
      if (r.type == part::RecordType::kGpuActivityStatus) {
        auto s = r.payload<part::GpuActivityStatus>();
        auto why = r.string<part::GpuActivityStatus>(0);
        if (s && why) c.statuses.emplace_back(s->recording, std::string(*why));
      } else if (r.type == part::RecordType::kWarning) {
        if (auto text = r.string<part::Instant>(0)) c.warnings.emplace_back(*text);
      }
    });
  }
  return c;
}

TEST(CpuOnly, InjectionWarnsOnceAndRecordsWhyInThePart) {
  if (gpuPresent()) GTEST_SKIP() << "a GPU is present, so CUPTI starts";
  testing::TempDir dir;
  auto r = runCommand({"/usr/bin/env", "-u", "RLSCOPE_FEATURES",
                       "RLSCOPE_PART_DIR=" + dir.path().string(), RLSCOPE_INJECTION_PROBE,
                       RLSCOPE_CUPTI_LIBRARY});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "active=1 init=1,1\n");
  auto errLines = testing::lines(r.err);
  ASSERT_EQ(errLines.size(), 1u) << r.err;
  const std::string prefix = "rlscope: warning: GPU activity unavailable: ";
  const std::string suffix = "; recording CPU activity only";
  EXPECT_EQ(errLines[0].rfind(prefix, 0), 0u) << errLines[0];
  EXPECT_TRUE(errLines[0].ends_with(suffix)) << errLines[0];

  PartContents c = readParts(dir.path());
  ASSERT_EQ(c.statuses.size(), 1u);
  EXPECT_EQ(c.statuses[0].first, 0u);
  const std::string& reason = c.statuses[0].second;
  EXPECT_FALSE(reason.empty());
  EXPECT_NE(reason.find("cuptiSubscribe"), std::string::npos) << reason;
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "GPU activity unavailable: " + reason + suffix);
  EXPECT_EQ(errLines[0], "rlscope: warning: " + c.warnings[0]);
}

TEST(CpuOnly, CudaFeaturesSwitchedOffMeansNoWarning) {
  testing::TempDir dir;
  auto r = runCommand({"/usr/bin/env", "RLSCOPE_FEATURES=nvtx",
                       "RLSCOPE_PART_DIR=" + dir.path().string(), RLSCOPE_INJECTION_PROBE,
                       RLSCOPE_CUPTI_LIBRARY});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  PartContents c = readParts(dir.path());
  ASSERT_EQ(c.statuses.size(), 1u);
  EXPECT_EQ(c.statuses[0].first, 0u);
  EXPECT_NE(c.statuses[0].second.find("switched off"), std::string::npos);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(CpuOnly, OutsideRlscopeProfTheInjectionDoesNothing) {
  auto r = runCommand(
      {"/usr/bin/env", "-u", "RLSCOPE_PART_DIR", RLSCOPE_INJECTION_PROBE, RLSCOPE_CUPTI_LIBRARY});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "active=0 init=1,1\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace rlscope::cupti
