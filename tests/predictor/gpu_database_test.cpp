// The GPU database: the built-in file's contents and sources, lookups, users' files and the
// errors bad ones get.
#include "rlscope/predictor/gpu_database.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace rlscope::predictor {
namespace {

TEST(GpuDatabase, BuiltInHoldsEveryGpuTheIssueNames) {
  GpuDatabase db = GpuDatabase::builtIn();
  for (const char* name : {"P4000", "P4",       "P100",        "GTX 1080 Ti",    "V100",
                           "T4",    "RTX 2070", "RTX 2080 Ti", "A100 SXM4 40GB", "A100 SXM4 80GB",
                           "A10",   "A40",      "RTX 3090",    "RTX 4090",       "L4",
                           "L40S",  "H100 SXM", "H100 PCIe",   "H200",           "B200"})
    EXPECT_NE(db.find(name), nullptr) << name;
}

TEST(GpuDatabase, BuiltInValuesAreConsistentAndSourced) {
  GpuDatabase db = GpuDatabase::builtIn();
  ASSERT_GE(db.gpus().size(), 20u);
  for (const auto& g : db.gpus()) {
    SCOPED_TRACE(g.name);
    EXPECT_GE(g.computeCapability(), 60);
    EXPECT_LE(g.computeCapability(), 129);
    EXPECT_LE(g.achievableBandwidthGBs, g.memoryBandwidthGBs);
    EXPECT_GT(g.achievableBandwidthGBs, 0.6 * g.memoryBandwidthGBs);
    EXPECT_GE(g.boostClockMhz, g.baseClockMhz);
    EXPECT_EQ(g.maxThreadsPerBlock, 1024);
    EXPECT_EQ(g.sharedMemPerBlock, 49152);
    // Tensor cores (Volta on) are faster than the CUDA cores at FP16.
    if (g.computeCapability() >= 70) {
      EXPECT_GT(g.fp16Tflops, g.fp32Tflops);
    }
    if (g.computeCapability() < 80) {
      EXPECT_EQ(g.tf32Tflops, 0);
    }
    for (const char* field : {"sm_count", "memory_bandwidth_gbs", "achievable_bandwidth_gbs",
                              "fp32_tflops", "shared_memory_per_sm", "l2_cache_bytes"}) {
      std::string id = g.sourceOf(field);
      ASSERT_FALSE(id.empty()) << field;
      EXPECT_TRUE(db.sources().count(id)) << field << ": " << id;
    }
  }
}

TEST(GpuDatabase, FindsNamesAndAliasesAsDriversAndPeopleWriteThem) {
  GpuDatabase db = GpuDatabase::builtIn();
  const GpuSpec* a100 = db.find("A100 SXM4 40GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(db.find("a100"), a100);
  EXPECT_EQ(db.find("NVIDIA A100-SXM4-40GB"), a100);
  EXPECT_EQ(db.find("nvidia a100-pg509-200"), a100);
  EXPECT_EQ(db.find("H100")->name, db.get("H100 SXM").name);
  EXPECT_EQ(db.find("NVIDIA H200"), db.find("H200 SXM"));
  EXPECT_EQ(db.find("Radeon VII"), nullptr);
  try {
    db.get("Radeon VII");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown GPU 'Radeon VII'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("rlscope devices"), std::string::npos);
  }
}

// A user's file with one GPU: a copy of the built-in A10 under a new name, a faster memory.
nlohmann::json userFile() {
  nlohmann::json builtIn = nlohmann::json::parse(
      R"({"name": "My GPU", "aliases": ["mine"], "architecture": "Ampere",
          "compute_capability": "8.6", "sm_count": 72, "base_clock_mhz": 900,
          "boost_clock_mhz": 1700, "memory_gb": 24, "memory_bandwidth_gbs": 900,
          "achievable_bandwidth_gbs": 800, "fp32_tflops": 31, "tf32_tflops": 62,
          "fp16_tflops": 125, "bf16_tflops": 125, "registers_per_sm": 65536,
          "registers_per_block": 65536, "shared_memory_per_sm": 102400,
          "shared_memory_per_block": 49152, "shared_memory_per_block_optin": 101376,
          "max_threads_per_sm": 1536, "max_threads_per_block": 1024, "max_blocks_per_sm": 16,
          "warp_size": 32, "l2_cache_bytes": 6291456, "sources": {"default": "me"}})");
  return {{"schema", "rlscope.gpus/1"},
          {"sources", {{"me", "measured on my desk"}}},
          {"gpus", nlohmann::json::array({builtIn})}};
}

std::string parseError(const nlohmann::json& doc) {
  try {
    GpuDatabase::parse(doc.dump(), "mine.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(GpuDatabase, UsersAddAndReplaceGpusWithTheirOwnFile) {
  testing::TempDir dir;
  auto path = dir / "mine.json";
  nlohmann::json doc = userFile();
  std::ofstream(path) << doc.dump();
  GpuDatabase db = GpuDatabase::builtIn();
  std::size_t before = db.gpus().size();
  db.merge(GpuDatabase::load(path));
  EXPECT_EQ(db.gpus().size(), before + 1);
  EXPECT_DOUBLE_EQ(db.get("MINE").achievableBandwidthGBs, 800);
  EXPECT_EQ(db.sources().at("me"), "measured on my desk");

  // The same name again replaces the built-in entry.
  doc["gpus"][0]["name"] = "A10";
  doc["gpus"][0]["aliases"] = nlohmann::json::array();
  db.merge(GpuDatabase::parse(doc.dump(), "mine.json"));
  EXPECT_EQ(db.gpus().size(), before + 1);
  EXPECT_DOUBLE_EQ(db.get("a10").achievableBandwidthGBs, 800);
}

TEST(GpuDatabase, BadFilesGetOneLineNamingTheProblem) {
  EXPECT_NE(parseError(nlohmann::json::object()).find("not a GPU database"), std::string::npos);
  auto doc = userFile();
  doc["gpus"][0].erase("sm_count");
  EXPECT_NE(parseError(doc).find("missing 'sm_count'"), std::string::npos);
  doc = userFile();
  doc["gpus"][0]["sm_count"] = -3;
  EXPECT_NE(parseError(doc).find("out of range"), std::string::npos);
  doc = userFile();
  doc["gpus"][0]["compute_capability"] = "eight";
  EXPECT_NE(parseError(doc).find("MAJOR.MINOR"), std::string::npos);
  doc = userFile();
  doc["gpus"][0]["sources"] = {{"default", "nobody"}};
  EXPECT_NE(parseError(doc).find("unknown source id 'nobody'"), std::string::npos);
  doc = userFile();
  doc["gpus"][0]["sources"] = {{"sm_count", "me"}};
  EXPECT_NE(parseError(doc).find("has no source"), std::string::npos);
  doc = userFile();
  doc["gpus"].push_back(doc["gpus"][0]);
  EXPECT_NE(parseError(doc).find("used twice"), std::string::npos);
  EXPECT_NE(parseError(nlohmann::json("text")).find("not a GPU database"), std::string::npos);
  try {
    GpuDatabase::parse("{not json", "x.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "x.json: not valid JSON");
  }
  EXPECT_THROW(GpuDatabase::load("/nonexistent/gpus.json"), std::runtime_error);
}

}  // namespace
}  // namespace rlscope::predictor
