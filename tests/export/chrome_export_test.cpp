// `rlscope export --format chrome`: every table of a trace comes out as Kineto-style Chrome Trace
// Event JSON, with exact microsecond text, the right tracks, categories and args, and paired flows.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "rich_trace.h"
#include "rlscope/export/chrome_exporter.h"
#include "rlscope/import/importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::exporter {
namespace {

using nlohmann::json;
using namespace rlscope::exporter::testing;

// Builds the document as nlohmann does, except that every floating-point number is kept as its
// exact text, so that tests can check "ts" and "dur" character by character.
class FloatsAsText : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  using nlohmann::detail::json_sax_dom_parser<json>::json_sax_dom_parser;
  bool number_float(double /*value*/, const std::string& text) {
    std::string copy = text;
    return string(copy);
  }
};

json parseKeepingFloatText(const std::string& text) {
  json doc;
  FloatsAsText sax(doc);
  EXPECT_TRUE(json::sax_parse(text, &sax));
  return doc;
}

struct Exported {
  std::string text;
  json doc;
  std::vector<json> events;
  ExportStats stats;

  std::vector<json> where(const std::function<bool(const json&)>& keep) const {
    std::vector<json> out;
    std::copy_if(events.begin(), events.end(), std::back_inserter(out), keep);
    return out;
  }
  std::vector<json> byCat(const std::string& cat) const {
    return where([&](const json& e) { return e.value("cat", "") == cat; });
  }
  // The one event of `cat` named `name`; fails the test when there is not exactly one.
  json one(const std::string& cat, const std::string& name) const {
    auto found = where(
        [&](const json& e) { return e.value("cat", "") == cat && e.value("name", "") == name; });
    EXPECT_EQ(found.size(), 1u) << cat << " / " << name;
    return found.empty() ? json() : found.front();
  }
  std::vector<json> metadata(const std::string& name) const {
    return where([&](const json& e) { return e["ph"] == "M" && e["name"] == name; });
  }
};

Exported exportTrace(const std::filesystem::path& tracePath, const std::filesystem::path& out) {
  trace::TraceReader reader(tracePath);
  Exported e;
  e.stats = exportChrome(reader, out);
  e.text = rlscope::testing::readFile(out);
  EXPECT_TRUE(json::accept(e.text)) << "not strict JSON";
  e.doc = parseKeepingFloatText(e.text);
  for (const auto& ev : e.doc.at("traceEvents")) e.events.push_back(ev);
  return e;
}

class ChromeExport : public ::testing::Test {
 protected:
  void SetUp() override {
    writeRichTrace(dir_ / "trace.sqlite");
    exported_ = exportTrace(dir_ / "trace.sqlite", dir_ / "trace.json");
  }
  rlscope::testing::TempDir dir_;
  Exported exported_;
};

TEST_F(ChromeExport, WritesKinetoTopLevelObject) {
  const auto& doc = exported_.doc;
  EXPECT_EQ(doc["schemaVersion"], 1);
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["deviceProperties"].size(), 2u);
  EXPECT_EQ(doc["rlscope"]["schema_version"], rlscope::trace::kSchemaVersion);
  // Members in the contract's order (Kineto's), so that a streaming reader meets them in turn.
  const auto& t = exported_.text;
  auto at = [&](const char* key) { return t.find(std::string("\"") + key + "\":"); };
  EXPECT_LT(at("schemaVersion"), at("deviceProperties"));
  EXPECT_LT(at("deviceProperties"), at("traceEvents"));
  EXPECT_LT(at("traceEvents"), at("displayTimeUnit"));
  EXPECT_LT(at("displayTimeUnit"), at("rlscope"));
  EXPECT_FALSE(json::parse(t).is_discarded());
}

TEST_F(ChromeExport, DevicePropertiesUseKinetoNames) {
  for (std::int64_t id : {0, 1}) {
    auto g = gpuInfo(id);
    const auto& d = exported_.doc["deviceProperties"][static_cast<std::size_t>(id)];
    EXPECT_EQ(d["id"], g.id);
    EXPECT_EQ(d["name"], g.name);
    EXPECT_EQ(d["totalGlobalMem"], g.totalMemory);
    EXPECT_EQ(d["computeMajor"], g.computeMajor);
    EXPECT_EQ(d["computeMinor"], g.computeMinor);
    EXPECT_EQ(d["maxThreadsPerBlock"], g.maxThreadsPerBlock);
    EXPECT_EQ(d["maxThreadsPerMultiprocessor"], 64 * 32);
    EXPECT_EQ(d["regsPerBlock"], g.maxRegistersPerBlock);
    EXPECT_EQ(d["regsPerMultiprocessor"], g.maxRegistersPerSm);
    EXPECT_EQ(d["warpSize"], g.threadsPerWarp);
    EXPECT_EQ(d["sharedMemPerBlock"], g.maxShmemPerBlock);
    EXPECT_EQ(d["sharedMemPerMultiprocessor"], g.maxShmemPerSm);
    EXPECT_EQ(d["numSms"], g.smCount);
    EXPECT_EQ(d["sharedMemPerBlockOptin"], g.maxShmemPerBlockOptin);
    EXPECT_EQ(d["l2CacheSize"], g.l2CacheSize);
    EXPECT_EQ(d["memoryBandwidth"], g.memoryBandwidth);
    EXPECT_EQ(d["clockRate"], g.clockRate);
    EXPECT_EQ(d["memoryClockRate"], g.memoryClockRate);
    EXPECT_EQ(d["memoryBusWidth"], g.memoryBusWidth);
    EXPECT_EQ(d["maxBlocksPerSm"], g.maxBlocksPerSm);
    EXPECT_EQ(d["busLocation"], g.busLocation);
    EXPECT_EQ(d["uuid"], g.uuid);
    EXPECT_EQ(d["chipName"], g.chipName);
    EXPECT_EQ(d["isDiscrete"], g.isDiscrete);
    EXPECT_EQ(d["maxIPC"], g.maxIPC);
  }
}

TEST_F(ChromeExport, CpuIntervalsAreCompleteEventsOnTheirThreads) {
  const auto& e = exported_;
  auto python = e.one("python_function", "train_step 🚀 λ");
  EXPECT_EQ(python["ph"], "X");
  EXPECT_EQ(python["pid"], kPidA);
  EXPECT_EQ(python["tid"], kTidA1);
  EXPECT_EQ(python["ts"], "1000.000");
  EXPECT_EQ(python["dur"], "4000.500");
  // The stored args object is embedded as written: every value kind, numbers with their text.
  EXPECT_EQ(python["args"], parseKeepingFloatText(
                                R"({"External id":7,"Sequence number":-3,"Input Dims":[[2,3],[]],)"
                                R"("big":12345678901234567890,"pi":3.141592653589793,)"
                                R"("s":"ünï \"q\" \\ \n","nested":{"a":[{"b":null}]},"t":true})"));
  EXPECT_NE(e.text.find("\"big\":12345678901234567890"), std::string::npos);

  auto zeroLength = e.one("cpu_op", "aten::mm");
  EXPECT_EQ(zeroLength["ts"], "1000.100");
  EXPECT_EQ(zeroLength["dur"], "0.000");
  EXPECT_EQ(zeroLength["args"], json::object());

  auto simulator = e.one("rlscope.simulator", "mujoco.step");
  EXPECT_EQ(simulator["tid"], kTidA2);
  EXPECT_EQ(simulator["dur"], "500.001");

  auto native = e.one("rlscope.native", longName());
  EXPECT_EQ(native["ts"], "-5000000.123");
  EXPECT_EQ(native["dur"], "4999999.123");

  auto cudaApi = e.one("rlscope.cuda_api", "cudaLaunchKernel");
  EXPECT_EQ(cudaApi["pid"], kPidB);
  EXPECT_EQ(cudaApi["tid"], kTidB1);
  EXPECT_EQ(cudaApi["ts"], "9000000000000000.123");
  EXPECT_EQ(cudaApi["dur"], "0.999");

  // A thread without an rlscope_threads row is placed by its globalTid.
  auto unlisted = e.one("cpu_op", "aten::add");
  EXPECT_EQ(unlisted["pid"], kPidB);
  EXPECT_EQ(unlisted["tid"], kTidB2);
  EXPECT_EQ(unlisted["args"], json::parse(R"({"Input type":["float"]})"));
}

TEST_F(ChromeExport, OperationsAreUserAnnotationsCarryingTheirId) {
  auto ops = exported_.byCat("user_annotation");
  std::set<std::string> names;
  for (const auto& op : ops) names.insert(op["name"]);
  // NVTX-derived operations are left to the NVTX events they come from.
  EXPECT_EQ(names, (std::set<std::string>{"step", "inference ✓", "ProfilerStep#2"}));

  auto step = exported_.one("user_annotation", "step");
  EXPECT_EQ(step["pid"], kPidA);
  EXPECT_EQ(step["tid"], kTidA1);
  EXPECT_EQ(step["ts"], "900.000");
  EXPECT_EQ(step["dur"], "5100.000");
  EXPECT_EQ(step["args"], json::parse(R"({"iteration":3,"External id":2})"));
  EXPECT_EQ(exported_.one("user_annotation", "inference ✓")["args"],
            json::parse(R"({"External id":4})"));
  // A stored "External id" gives way to the operation's id.
  auto kineto = exported_.one("user_annotation", "ProfilerStep#2");
  EXPECT_EQ(kineto["args"], json::parse(R"({"External id":1,"Trace iteration":2})"));
  EXPECT_EQ(kineto["pid"], kPidB);
}

TEST_F(ChromeExport, PhasesSitOnTheirProcessTrack) {
  auto collection = exported_.one("rlscope.phase", "data_collection");
  EXPECT_EQ(collection["pid"], kPidA);
  EXPECT_EQ(collection["tid"], kPidA);
  EXPECT_EQ(collection["ts"], "0.000");
  EXPECT_EQ(collection["dur"], "3000.000");
  auto training = exported_.one("rlscope.phase", "training");
  EXPECT_EQ(training["pid"], kPidB);
  EXPECT_EQ(training["tid"], kPidB);
}

TEST_F(ChromeExport, CudaApiCallsCarryCorrelationAndOperation) {
  EXPECT_EQ(exported_.byCat("cuda_runtime").size(), 6u);
  auto malloc = exported_.one("cuda_runtime", "cudaMalloc");
  EXPECT_EQ(malloc["pid"], kPidA);
  EXPECT_EQ(malloc["tid"], kTidA1);
  EXPECT_EQ(malloc["ts"], "1300.000");
  EXPECT_EQ(malloc["dur"], "0.900");
  EXPECT_EQ(malloc["args"], json::parse(R"({"correlation":3,"cbid":20,"returnValue":2,
                                            "External id":4,"rlscope operation id":4})"));
  auto driver = exported_.one("cuda_driver", "cuMemsetD32Async");
  EXPECT_EQ(driver["tid"], kTidA2);
  EXPECT_EQ(driver["args"], json::parse(R"({"correlation":5})"));  // zero cbid/returnValue left out
}

TEST_F(ChromeExport, KernelsCarryKinetoAndRlscopeArgs) {
  auto kernels = exported_.byCat("kernel");
  ASSERT_EQ(kernels.size(), 4u);
  auto gemm = exported_.one("kernel", "void gemm<float>(float*, int)");
  ASSERT_EQ(gemm.size(), 8u);  // ph, cat, name, pid, tid, ts, dur, args
  EXPECT_EQ(gemm["pid"], 0);
  EXPECT_EQ(gemm["tid"], 7);
  EXPECT_EQ(gemm["ts"], "1110.000");
  EXPECT_EQ(gemm["dur"], "70.000");
  EXPECT_EQ(gemm["args"], json::parse(R"({
      "device": 0, "context": 1, "stream": 7, "correlation": 1, "registers per thread": 47,
      "shared memory": 3072, "grid": [864, 2, 1], "block": [256, 1, 1],
      "static shared memory": 1024, "dynamic shared memory": 2048,
      "local memory per thread": 16, "local memory total": 4096, "grid id": 12,
      "launch type": 0, "cache config": 1, "short name": "gemm",
      "mangled name": "_Z4gemmIfEvPfi", "shared memory executed": 8192,
      "External id": 4, "rlscope operation id": 4})"));

  auto vecAdd = exported_.one("kernel", "vecAdd");
  EXPECT_EQ(vecAdd["pid"], 1);
  EXPECT_EQ(vecAdd["tid"], 13);
  EXPECT_EQ(vecAdd["dur"], "0.000");
  const auto& args = vecAdd["args"];
  EXPECT_FALSE(args.contains("short name"));  // same as the name
  EXPECT_FALSE(args.contains("mangled name"));
  EXPECT_EQ(args["graph id"], 5);
  EXPECT_EQ(args["graph node id"], 9);
  EXPECT_EQ(args["launch type"], 1);
  EXPECT_EQ(args["External id"], 1);

  auto uncorrelated = exported_.one("kernel", longName());
  EXPECT_EQ(uncorrelated["args"]["correlation"], 0);
  EXPECT_FALSE(uncorrelated["args"].contains("External id"));
  EXPECT_FALSE(gemm["args"].contains("graph id"));
  EXPECT_EQ(exported_.one("kernel", "orphan_kernel")["tid"], 8);
}

TEST_F(ChromeExport, CopiesAndMemsetsAreNamedLikeKineto) {
  auto htod = exported_.one("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(htod["pid"], 0);
  EXPECT_EQ(htod["tid"], 7);
  EXPECT_EQ(htod["ts"], "1210.000");
  EXPECT_EQ(htod["dur"], "12.000");
  EXPECT_EQ(htod["args"], parseKeepingFloatText(R"j({
      "device": 0, "context": 1, "stream": 7, "correlation": 2, "bytes": 92928,
      "memory bandwidth (GB/s)": 7.744, "copy kind": 1, "src kind": 0, "dst kind": 2,
      "src device": 0, "dst device": 0, "External id": 4, "rlscope operation id": 4})j"));

  auto p2p = exported_.one("gpu_memcpy", "Memcpy PtoP (Device -> Device)");
  EXPECT_EQ(p2p["pid"], 1);
  EXPECT_EQ(p2p["tid"], 13);
  EXPECT_EQ(p2p["args"]["memory bandwidth (GB/s)"], 0);  // zero length: no division by zero
  EXPECT_EQ(p2p["args"]["src device"], 1);
  EXPECT_EQ(p2p["args"]["dst device"], 0);
  EXPECT_EQ(p2p["args"]["graph node id"], 3);

  auto memset = exported_.one("gpu_memset", "Memset (Device)");
  EXPECT_EQ(memset["tid"], 20);
  EXPECT_EQ(memset["args"], json::parse(R"j({
      "device": 0, "context": 1, "stream": 20, "correlation": 5, "bytes": 512,
      "memory bandwidth (GB/s)": 256, "value": 255, "mem kind": 2})j"));
}

TEST_F(ChromeExport, SynchronizationsAreCudaSyncOnTheirStream) {
  std::map<std::string, json> byName;
  for (const auto& s : exported_.byCat("cuda_sync")) byName[s["name"]] = s;
  ASSERT_EQ(byName.size(), 5u);
  for (const auto& [name, s] : byName) EXPECT_EQ(s["args"]["cuda_sync_kind"], name);
  auto stream = byName["Stream Sync"];
  EXPECT_EQ(stream["pid"], 0);
  EXPECT_EQ(stream["tid"], 7);
  EXPECT_EQ(stream["ts"], "1500.100");
  EXPECT_EQ(stream["dur"], "0.200");
  EXPECT_EQ(stream["args"], json::parse(R"({"cuda_sync_kind": "Stream Sync", "device": 0,
      "context": 1, "stream": 7, "correlation": 6, "event id": 0, "event sync id": 0,
      "External id": 2, "rlscope operation id": 2})"));
  EXPECT_EQ(byName["Event Sync"]["args"]["event id"], 12);
  EXPECT_EQ(byName["Event Sync"]["args"]["event sync id"], 1012);
  EXPECT_EQ(byName["Stream Wait Event"]["tid"], 8);
  EXPECT_EQ(byName["Context Sync"]["tid"], 4'294'967'295);
  EXPECT_EQ(byName["Unknown Sync"]["dur"], "0.000");
}

// Every "s" has exactly one "f" with its id; returns id -> (s, f).
std::map<std::int64_t, std::pair<json, json>> pairFlows(const Exported& e) {
  std::map<std::int64_t, std::pair<json, json>> flows;
  for (const auto& ev : e.byCat("ac2g")) {
    EXPECT_EQ(ev["name"], "ac2g");
    auto& slot = flows[ev["id"].get<std::int64_t>()];
    if (ev["ph"] == "s") {
      EXPECT_TRUE(slot.first.is_null()) << "two flow starts with id " << ev["id"];
      slot.first = ev;
    } else {
      EXPECT_EQ(ev["ph"], "f");
      EXPECT_EQ(ev["bp"], "e");
      EXPECT_TRUE(slot.second.is_null()) << "two flow ends with id " << ev["id"];
      slot.second = ev;
    }
  }
  for (const auto& [id, p] : flows) {
    EXPECT_FALSE(p.first.is_null()) << "flow " << id << " has no start";
    EXPECT_FALSE(p.second.is_null()) << "flow " << id << " has no end";
  }
  return flows;
}

// (pid, tid, ts) of an event, to match flow ends with the events they bind to.
std::string place(const json& e) {
  return e["pid"].dump() + "/" + e["tid"].dump() + "@" + e["ts"].dump();
}

TEST_F(ChromeExport, FlowsLinkEachLaunchToItsGpuWork) {
  auto flows = pairFlows(exported_);
  // gemm, vecAdd, both copies and the memset; not the kernel without a correlation id, nor the
  // one whose correlation id no API call has, nor synchronizations.
  EXPECT_EQ(flows.size(), 5u);
  EXPECT_EQ(exported_.stats.flows, 5u);
  std::map<std::string, std::string> startOfEnd;  // place of the GPU event -> place of the launch
  for (const auto& [id, p] : flows) startOfEnd[place(p.second)] = place(p.first);
  auto launchOf = [&](const json& gpu) { return startOfEnd[place(gpu)]; };
  EXPECT_EQ(launchOf(exported_.one("kernel", "void gemm<float>(float*, int)")),
            place(json{{"pid", kPidA}, {"tid", kTidA1}, {"ts", "1100.000"}}));
  EXPECT_EQ(launchOf(exported_.one("kernel", "vecAdd")),
            place(json{{"pid", kPidB}, {"tid", kTidB1}, {"ts", "1150.000"}}));
  EXPECT_EQ(launchOf(exported_.one("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)")),
            place(json{{"pid", kPidA}, {"tid", kTidA1}, {"ts", "1200.000"}}));
  EXPECT_EQ(launchOf(exported_.one("gpu_memcpy", "Memcpy PtoP (Device -> Device)")),
            place(json{{"pid", kPidB}, {"tid", kTidB1}, {"ts", "1250.000"}}));
  EXPECT_EQ(launchOf(exported_.one("gpu_memset", "Memset (Device)")),  // a driver launch
            place(json{{"pid", kPidA}, {"tid", kTidA2}, {"ts", "1400.000"}}));
  // Both processes use correlation ids 1 and 2: the flow ids are made unique and stay exact in
  // JavaScript viewers.
  for (const auto& [id, p] : flows) {
    EXPECT_GT(id, 0);
    EXPECT_LT(id, std::int64_t{1} << 53);
  }
}

// Kineto before the "ac2g" name wrote its launch flows as "async_cpu_to_gpu" / "async_gpu". They
// are the launch links import already has as correlation ids: exported once, as ac2g, not again as
// the original events beside the new ones.
TEST(ChromeExportFlows, LegacyKinetoFlowsBecomeOneArrowPerLaunch) {
  rlscope::testing::TempDir dir;
  json events = json::array();
  for (int i = 0; i < 3; ++i) {
    double t = 10.0 * i;
    json corr = {{"correlation", 40 + i}};
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", "cudaLaunchKernel"},
                      {"pid", 5},
                      {"tid", 6},
                      {"ts", t},
                      {"dur", 2},
                      {"args", corr}});
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", "k"},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", t + 3},
                      {"dur", 1},
                      {"args", {{"device", 0}, {"stream", 7}, {"correlation", 40 + i}}}});
    events.push_back({{"ph", "s"},
                      {"cat", "async_cpu_to_gpu"},
                      {"name", "async_gpu"},
                      {"id", 40 + i},
                      {"pid", 5},
                      {"tid", 6},
                      {"ts", t}});
    events.push_back({{"ph", "f"},
                      {"cat", "async_cpu_to_gpu"},
                      {"name", "async_gpu"},
                      {"id", 40 + i},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", t + 3},
                      {"bp", "e"}});
  }
  auto in = dir.write("legacy.json", json{{"traceEvents", events}}.dump());
  import::importFile(in, dir / "legacy.sqlite");
  Exported e = exportTrace(dir / "legacy.sqlite", dir / "legacy_export.json");
  EXPECT_EQ(pairFlows(e).size(), 3u);
  EXPECT_EQ(e.where([](const json& ev) { return ev["ph"] == "s"; }).size(), 3u);
  EXPECT_TRUE(e.byCat("async_cpu_to_gpu").empty());
}

TEST(ChromeExportFlows, UseCorrelationIdsWhenTheyAreUniqueAcrossProcesses) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite", {.overlappingCorrelationIds = false});
  auto e = exportTrace(dir / "t.sqlite", dir / "t.json");
  std::set<std::int64_t> ids;
  for (const auto& [id, p] : pairFlows(e)) ids.insert(id);
  EXPECT_EQ(ids, (std::set<std::int64_t>{1, 2, 5, 1001, 1002}));
}

TEST_F(ChromeExport, NvtxRangesAreCompleteEventsAndMarksInstants) {
  auto forward = exported_.one("rlscope.nvtx", "forward 🔥");
  EXPECT_EQ(forward["ph"], "X");
  EXPECT_EQ(forward["ts"], "1000.000");
  EXPECT_EQ(forward["dur"], "900.000");
  EXPECT_EQ(forward["args"], json::parse(R"({"eventType": 59, "rangeId": 0, "category": 0,
      "color": 4278255360, "domainId": 0, "registered": false})"));

  auto registered = exported_.one("rlscope.nvtx", "registered range");
  EXPECT_EQ(registered["tid"], kTidA2);
  EXPECT_EQ(registered["args"]["registered"], true);
  EXPECT_EQ(registered["args"]["domainId"], 1);
  EXPECT_FALSE(registered["args"].contains("color"));

  auto mark = exported_.one("rlscope.nvtx", "checkpoint");
  EXPECT_EQ(mark["ph"], "i");
  EXPECT_EQ(mark["s"], "t");
  EXPECT_EQ(mark["pid"], kPidB);
  EXPECT_EQ(mark["ts"], "3000.000");
  EXPECT_FALSE(mark.contains("dur"));
  EXPECT_EQ(mark["args"]["eventType"], 34);
  EXPECT_EQ(mark["args"]["category"], 4);

  auto startEnd = exported_.one("rlscope.nvtx", "async io");
  EXPECT_EQ(startEnd["args"]["eventType"], 60);
  EXPECT_EQ(startEnd["args"]["rangeId"], 17);
  EXPECT_EQ(startEnd["args"]["endGlobalTid"], kA2);
}

TEST_F(ChromeExport, PlainEventsComeBackAsTheyWere) {
  auto span = exported_.one("Trace", "PyTorch Profiler (0)");
  EXPECT_EQ(span, parseKeepingFloatText(R"j({"ph": "X", "cat": "Trace",
      "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
      "ts": 0.500, "dur": 9000.000, "args": {"Op count": 0}})j"));

  auto iteration = exported_.where(
      [](const json& e) { return e.value("name", "") == "Iteration Start: PyTorch Profiler"; });
  ASSERT_EQ(iteration.size(), 1u);
  EXPECT_EQ(iteration[0], parseKeepingFloatText(R"({"ph": "i", "name":
      "Iteration Start: PyTorch Profiler", "pid": "Traces", "tid": "Trace PyTorch Profiler",
      "ts": 0.500, "s": "g"})"));

  // Integer-looking pids and tids go out as numbers, "007" stays text.
  EXPECT_EQ(exported_.one("fwdbwd", "fwdbwd"), parseKeepingFloatText(R"({"ph": "f",
      "cat": "fwdbwd", "name": "fwdbwd", "pid": 4242, "tid": 4250, "ts": 0.700, "id": 5,
      "bp": "e", "args": {"x": 1}})"));
  auto counter = exported_.one("memory", "Memory Usage");
  EXPECT_EQ(counter["ph"], "C");
  EXPECT_EQ(counter["pid"], 4242);
  EXPECT_EQ(counter["tid"], "007");
  EXPECT_EQ(counter["args"], json::parse(R"({"Total Allocated": 1024})"));

  auto bare = exported_.where([](const json& e) { return e["ts"] == "0.900"; });
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0], parseKeepingFloatText(R"({"ph": "i", "ts": 0.900})"));
}

TEST_F(ChromeExport, MetadataNamesProcessesThreadsAndStreams) {
  std::map<std::int64_t, std::string> processNames, labels;
  for (const auto& m : exported_.metadata("process_name"))
    processNames[m["pid"]] = m["args"]["name"];
  for (const auto& m : exported_.metadata("process_labels")) labels[m["pid"]] = m["args"]["labels"];
  EXPECT_EQ(processNames, (std::map<std::int64_t, std::string>{{kPidA, "python3.11"},
                                                               {kPidB, "trainer 日本語"},
                                                               {0, "NVIDIA A100-SXM4-40GB"},
                                                               {1, "NVIDIA H100 80GB HBM3"}}));
  EXPECT_EQ(labels, (std::map<std::int64_t, std::string>{
                        {kPidA, "CPU"}, {kPidB, "CPU"}, {0, "GPU 0"}, {1, "GPU 1"}}));

  std::map<std::pair<std::int64_t, std::int64_t>, std::string> threads;
  for (const auto& m : exported_.metadata("thread_name")) {
    auto [it, inserted] = threads.emplace(std::pair{m["pid"], m["tid"]}, m["args"]["name"]);
    EXPECT_TRUE(inserted) << "two names for " << m.dump();
  }
  using Names = std::map<std::pair<std::int64_t, std::int64_t>, std::string>;
  EXPECT_EQ(threads, (Names{{{kPidA, kTidA1}, "MainThread"},
                            {{kPidA, kTidA2}, "worker ✓"},
                            {{kPidB, kTidB1}, "main"},
                            {{kPidB, kTidB2}, "nsys-only thread"},
                            {{0, 7}, "stream 7"},
                            {{0, 8}, "stream 8"},
                            {{0, 20}, "stream 20"},
                            {{0, 4'294'967'295}, "stream 4294967295"},
                            {{1, 13}, "stream 13"}}));
  for (const auto& m : exported_.where([](const json& e) { return e["ph"] == "M"; })) {
    EXPECT_EQ(m["ts"], "-5000000.123");  // the earliest event of the trace
  }
}

TEST_F(ChromeExport, RlscopeSectionKeepsMetaCalibrationAndProcesses) {
  const auto& r = exported_.doc["rlscope"];
  EXPECT_EQ(r["meta"]["command_line"], "python train.py --λ=0.5");
  EXPECT_EQ(r["meta"]["host"], "gpu-box");
  EXPECT_EQ(r["meta"]["custom \"key\""], "value\twith tab");
  EXPECT_EQ(r["meta"]["schema_version"], std::to_string(rlscope::trace::kSchemaVersion));
  EXPECT_EQ(r["calibration"], parseKeepingFloatText(R"([
      {"source": "cupti", "name": "cudaLaunchKernel", "mean_ns": 1234.5, "std_ns": 12.25,
       "count": 100},
      {"source": "annotation", "name": "", "mean_ns": 80, "std_ns": 0.1, "count": 5}])"));
  // Ordered by globalPid; the fields a Chrome trace has no place for.
  json b = {
      {"globalPid", kGlobalPidB}, {"pid", kPidB}, {"parentPid", 0}, {"name", "trainer 日本語"},
      {"commandLine", ""},        {"start", 0},   {"end", 0}};
  json a = {{"globalPid", kGlobalPidA},
            {"pid", kPidA},
            {"parentPid", 1},
            {"name", "python3.11"},
            {"commandLine", "python train.py"},
            {"start", 1},
            {"end", 10'000'000},
            {"exitStatus", 0}};
  EXPECT_EQ(r["processes"], json::array({b, a}));
  // Who each process is: A's row as written, B's host from the trace's meta.
  EXPECT_EQ(r["process_identity"], json::parse(R"([
      {"pid": )" + std::to_string(kPidB) + R"(, "host": "gpu-box", "launcher": "", "backend": "",
       "variables": ""},
      {"pid": )" + std::to_string(kPidA) + R"(, "host": "gpu-box", "launcher": "torchrun",
       "rank": 1, "local_rank": 1, "world_size": 2, "local_world_size": 2, "node_rank": 0,
       "backend": "", "variables": "{\"RANK\":\"1\",\"WORLD_SIZE\":\"2\"}"}])"));
  // Kineto's own member, which HTA reads the rank from: the one rank of the trace.
  EXPECT_EQ(exported_.doc["distributedInfo"], json::parse(R"({"rank": 1, "world_size": 2})"));
  EXPECT_EQ(r["threads"].size(), 3u);
  EXPECT_EQ(r["thread_names"], json::parse(R"([{"globalTid": )" + std::to_string(kB2) +
                                           R"(, "name": "nsys-only thread", "priority": 0}])"));
}

TEST_F(ChromeExport, CountsEveryEventOnce) {
  std::size_t events = 0, flowStarts = 0;
  for (const auto& e : exported_.events) {
    if (e["ph"] == "M") continue;
    if (e.value("cat", "") == "ac2g") {
      flowStarts += e["ph"] == "s";
      continue;
    }
    ++events;
  }
  // 6 CPU intervals, 3 operations, 2 phases, 7 API calls, 4 kernels, 2 copies, 1 memset,
  // 5 synchronizations, 4 NVTX events, 5 plain events.
  EXPECT_EQ(events, 39u);
  EXPECT_EQ(exported_.stats.events, 39u);
  EXPECT_EQ(flowStarts, exported_.stats.flows);
}

TEST(ChromeExportEdges, EmptyTraceGivesAnEmptyEventList) {
  rlscope::testing::TempDir dir;
  trace::TraceWriter(dir / "t.sqlite").commit();
  auto e = exportTrace(dir / "t.sqlite", dir / "t.json");
  EXPECT_TRUE(e.events.empty());
  EXPECT_TRUE(e.doc["deviceProperties"].empty());
  EXPECT_EQ(e.stats.events, 0u);
  EXPECT_EQ(e.stats.flows, 0u);
}

TEST(ChromeExportEdges, BadTextNeverBreaksTheDocument) {
  rlscope::testing::TempDir dir;
  {
    trace::TraceWriter w(dir / "t.sqlite");
    auto add = [&](std::string name, std::string args) {
      w.addCpuInterval({.start = 1,
                        .end = 2,
                        .globalTid = kA1,
                        .category = trace::Category::kPython,
                        .nameId = w.intern(name),
                        .args = args});
    };
    add("bad\xFF\xC0name\x01\x1f", "");
    add("not json", "not json");
    add("array", "[1,2]");
    add("bad utf8 in args", "{\"a\":\"\xFF\"}");
    add("trailing", "{\"a\":1} x");
    w.addPlainEvent({.start = 3, .end = 3, .phase = "i", .args = "{\"__event\":"});
    w.commit();
  }
  auto e = exportTrace(dir / "t.sqlite", dir / "t.json");
  auto names = e.byCat("python_function");
  ASSERT_EQ(names.size(), 5u);
  // Each byte of an ill-formed UTF-8 sequence becomes U+FFFD; control characters are escaped.
  EXPECT_EQ(e.one("python_function", "bad\xEF\xBF\xBD\xEF\xBF\xBDname\x01\x1f")["args"],
            json::object());
  EXPECT_NE(e.text.find("name\\u0001\\u001f"), std::string::npos);
  EXPECT_EQ(e.one("python_function", "not json")["args"],
            json::parse(R"({"rlscope.invalid_args": "not json"})"));
  EXPECT_EQ(e.one("python_function", "array")["args"],
            json::parse(R"({"rlscope.invalid_args": "[1,2]"})"));
  EXPECT_EQ(e.one("python_function", "bad utf8 in args")["args"]["rlscope.invalid_args"],
            "{\"a\":\"\xEF\xBF\xBD\"}");
  EXPECT_EQ(e.one("python_function", "trailing")["args"]["rlscope.invalid_args"], "{\"a\":1} x");
  auto plain = e.where([](const json& ev) { return ev["ph"] == "i"; });
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0]["args"]["rlscope.invalid_args"], "{\"__event\":");
}

TEST(ChromeExportEdges, ExtremeTimestampsAreExact) {
  rlscope::testing::TempDir dir;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  {
    trace::TraceWriter w(dir / "t.sqlite");
    auto add = [&](trace::TimeNs start, trace::TimeNs end) {
      w.addPhase({start, end, kGlobalPidA, w.intern(std::to_string(start))});
    };
    add(kMax - 5, kMax);
    add(kMin, kMin + 1001);
    add(-1, 0);
    add(-999, 1);
    add(-1000, -1000);
    w.commit();
  }
  auto e = exportTrace(dir / "t.sqlite", dir / "t.json");
  auto at = [&](trace::TimeNs start) { return e.one("rlscope.phase", std::to_string(start)); };
  EXPECT_EQ(at(kMax - 5)["ts"], "9223372036854775.802");
  EXPECT_EQ(at(kMax - 5)["dur"], "0.005");
  EXPECT_EQ(at(kMin)["ts"], "-9223372036854775.808");
  EXPECT_EQ(at(kMin)["dur"], "1.001");
  EXPECT_EQ(at(-1)["ts"], "-0.001");
  EXPECT_EQ(at(-999)["ts"], "-0.999");
  EXPECT_EQ(at(-999)["dur"], "1.000");
  EXPECT_EQ(at(-1000)["ts"], "-1.000");
}

// --- failures leave nothing behind ---------------------------------------------------------------

std::vector<std::string> listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ChromeExportErrors, MissingOutputDirectoryThrowsAndLeavesNothing) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite");
  trace::TraceReader reader(dir / "t.sqlite");
  EXPECT_THROW(exportChrome(reader, dir / "no-such-dir" / "t.json"), trace::TraceError);
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.sqlite"}));
}

TEST(ChromeExportErrors, OutputThatIsADirectoryIsRefused) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite");
  std::filesystem::create_directory(dir / "out");
  trace::TraceReader reader(dir / "t.sqlite");
  EXPECT_THROW(exportChrome(reader, dir / "out"), trace::TraceError);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "out"));
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"out", "t.sqlite"}));
}

TEST(ChromeExportErrors, NeverOverwritesTheInputTrace) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite");
  auto before = rlscope::testing::readFile(dir / "t.sqlite");
  {
    trace::TraceReader reader(dir / "t.sqlite");
    EXPECT_THROW(exportChrome(reader, dir / "t.sqlite"), trace::TraceError);
  }
  EXPECT_EQ(rlscope::testing::readFile(dir / "t.sqlite"), before);
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.sqlite"}));
}

// A write that fails part-way (here: the file size limit) leaves the previous output in place
// and no temporary file.
TEST(ChromeExportErrors, FailedWriteKeepsThePreviousOutput) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite");
  dir.write("t.json", "previous");
  trace::TraceReader reader(dir / "t.sqlite");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto savedHandler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;  // the export is several times larger (long names)
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    exportChrome(reader, dir / "t.json");
  } catch (const trace::TraceError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, savedHandler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(rlscope::testing::readFile(dir / "t.json"), "previous");
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.json", "t.sqlite"}));
}

TEST(ChromeExportErrors, ReplacesAnExistingOutput) {
  rlscope::testing::TempDir dir;
  writeRichTrace(dir / "t.sqlite");
  dir.write("t.json", "previous");
  auto e = exportTrace(dir / "t.sqlite", dir / "t.json");
  EXPECT_EQ(e.stats.events, 39u);
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.json", "t.sqlite"}));
}

}  // namespace
}  // namespace rlscope::exporter
