// Every real Kineto trace in ../shared/traces/kineto imports, with each table's row count equal to
// the count of the matching Kineto category, and kernel launch parameters and GPU properties kept.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "rlscope/import/importer.h"
#include "rlscope/trace/kernel_names.h"
#include "rlscope/trace/reader.h"
#include "support/temp_dir.h"

namespace rlscope::import {
namespace {

using nlohmann::json;

class RealKinetoTrace : public ::testing::TestWithParam<std::string> {};

// The table each Kineto category lands in (docs/trace-format.md), for complete ("X") events.
const std::map<std::string, std::string> kTableOfCategory = {
    {"cuda_runtime", "CUPTI_ACTIVITY_KIND_RUNTIME"},
    {"cuda_driver", "CUPTI_ACTIVITY_KIND_DRIVER"},
    {"kernel", "CUPTI_ACTIVITY_KIND_KERNEL"},
    {"gpu_memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"},
    {"gpu_memset", "CUPTI_ACTIVITY_KIND_MEMSET"},
    {"cuda_sync", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"},
    {"user_annotation", "rlscope_operations"},
};

bool numeric(const json& v) {
  return v.is_number_integer() || v.is_number_unsigned();
}

TEST_P(RealKinetoTrace, ImportsWithMatchingCounts) {
  auto dir = testing::sharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent: real-trace tests skipped";
  auto input = dir / GetParam();
  auto doc = json::parse(testing::readMaybeGzip(input));

  std::map<std::string, std::int64_t> expected;  // table -> rows
  std::int64_t backend = 0, python = 0, plain = 0;
  std::map<std::int64_t, json> kernelsByCorrelation;
  for (const auto& e : doc["traceEvents"]) {
    std::string ph = e.value("ph", ""), cat = e.value("cat", "");
    if (ph == "M") continue;
    if (cat == "ac2g" && (ph == "s" || ph == "f" || ph == "t")) continue;
    bool cpuTrack = numeric(e["pid"]) && numeric(e["tid"]);
    if (ph == "X" && kTableOfCategory.count(cat) &&
        (cpuTrack || cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
         cat == "cuda_sync")) {
      ++expected[kTableOfCategory.at(cat)];
      if (cat == "kernel") kernelsByCorrelation[e["args"]["correlation"].get<std::int64_t>()] = e;
    } else if (ph == "X" && cat == "cpu_op" && cpuTrack) {
      ++backend;
    } else if (ph == "X" && cat == "python_function" && cpuTrack) {
      ++python;
    } else {
      ++plain;
    }
  }

  testing::TempDir tmp;
  auto out = tmp / "trace.sqlite";
  auto stats = importFile(input, out);
  trace::TraceReader r(out);
  for (const auto& [cat, table] : kTableOfCategory) {
    EXPECT_EQ(r.rowCount(table), expected[table]) << table << " (Kineto category " << cat << ")";
  }
  std::map<trace::Category, std::int64_t> cats;
  r.forEachCpuInterval({}, [&](const trace::CpuIntervalRecord& c) { ++cats[c.category]; });
  EXPECT_EQ(cats[trace::Category::kBackend], backend);
  EXPECT_EQ(cats[trace::Category::kPython], python);
  EXPECT_EQ(r.rowCount("rlscope_events"), plain);

  // Launch parameters of every kernel survive.
  std::int64_t checked = 0;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) {
    auto it = kernelsByCorrelation.find(k.correlationId);
    ASSERT_NE(it, kernelsByCorrelation.end());
    const auto& a = it->second["args"];
    EXPECT_EQ(k.gridX, a["grid"][0].get<std::int64_t>());
    EXPECT_EQ(k.gridY, a["grid"][1].get<std::int64_t>());
    EXPECT_EQ(k.gridZ, a["grid"][2].get<std::int64_t>());
    EXPECT_EQ(k.blockX, a["block"][0].get<std::int64_t>());
    EXPECT_EQ(k.blockY, a["block"][1].get<std::int64_t>());
    EXPECT_EQ(k.blockZ, a["block"][2].get<std::int64_t>());
    EXPECT_EQ(k.registersPerThread, a["registers per thread"].get<std::int64_t>());
    EXPECT_EQ(k.staticSharedMemory + k.dynamicSharedMemory, a["shared memory"].get<std::int64_t>());
    EXPECT_EQ(k.streamId, a["stream"].get<std::int64_t>());
    EXPECT_EQ(k.deviceId, a["device"].get<std::int64_t>());
    EXPECT_EQ(r.string(k.demangledName), it->second["name"].get<std::string>());
    // The short name every producer gives (an rlscope-prof run of the same program included).
    EXPECT_EQ(r.string(k.shortName), trace::shortKernelName(r.string(k.demangledName)));
    EXPECT_FALSE(r.string(k.shortName).empty());
    EXPECT_NE(k.globalPid, 0) << "kernel without a process";
    ++checked;
  });
  EXPECT_EQ(checked, expected["CUPTI_ACTIVITY_KIND_KERNEL"]);

  // GPU properties survive.
  auto gpus = r.gpus();
  const auto& props = doc.contains("deviceProperties") ? doc["deviceProperties"] : json::array();
  ASSERT_EQ(gpus.size(), props.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].id, props[i]["id"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].name, props[i]["name"].get<std::string>());
    EXPECT_EQ(gpus[i].smCount, props[i]["numSms"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].computeMajor, props[i]["computeMajor"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].computeMinor, props[i]["computeMinor"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].totalMemory, props[i]["totalGlobalMem"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].maxRegistersPerBlock, props[i]["regsPerBlock"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].maxShmemPerBlock, props[i]["sharedMemPerBlock"].get<std::int64_t>());
    EXPECT_EQ(gpus[i].maxWarpsPerSm * gpus[i].threadsPerWarp,
              props[i]["maxThreadsPerMultiprocessor"].get<std::int64_t>());
  }
  EXPECT_EQ(stats.events, doc["traceEvents"].size());

  // baseTimeNanoseconds: the wall-clock time of the trace's clock origin.
  if (doc.contains("baseTimeNanoseconds")) {
    EXPECT_EQ(r.metaValue("start_wall_ns"),
              std::to_string(doc["baseTimeNanoseconds"].get<std::int64_t>()));
    EXPECT_EQ(r.metaValue("start_monotonic_ns"), "0");
  } else {
    EXPECT_FALSE(r.metaValue("start_wall_ns"));
  }

  // distributedInfo gives every CPU process the trace's rank; a lone rank names no launcher.
  auto ids = r.processIdentities();
  ASSERT_EQ(ids.size(), r.processes().size());
  const json dist = doc.contains("distributedInfo") ? doc["distributedInfo"] : json::object();
  for (const auto& id : ids) {
    if (!dist.contains("rank")) {
      EXPECT_FALSE(id.rank);
      continue;
    }
    EXPECT_EQ(id.rank, dist["rank"].get<std::int64_t>());
    EXPECT_EQ(id.worldSize.value_or(-1), dist.value("world_size", std::int64_t{-1}));
    EXPECT_EQ(id.backend, dist.value("backend", ""));
    EXPECT_EQ(id.launcher, dist.contains("world_size") ? "torch.distributed" : "");
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealKinetoTrace,
                         ::testing::Values("a100_alexnet.json.gz", "a100_cupti_profiler.json.gz",
                                           "a100_nccl.json.gz", "a100_simple_add.json.gz",
                                           "cpu_only.json.gz", "sampled_rank0.json.gz",
                                           "tiny_base.json.gz", "tiny_test.json.gz"),
                         [](const auto& param) {
                           return param.param.substr(0, param.param.find('.'));
                         });

}  // namespace
}  // namespace rlscope::import
