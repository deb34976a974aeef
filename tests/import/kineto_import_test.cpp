// Kineto JSON import: the project's own generated traces (what the real ones do not cover).
// nlohmann::json writes keys in alphabetical order, so "args" comes before "cat" here: these
// tests take the importer's second-pass args path, the real traces (Kineto order) the first-pass
// one.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "rlscope/import/importer.h"
#include "rlscope/import/kineto_time.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "support/rocm_trace.h"
#include "support/temp_dir.h"

namespace rlscope::import {
namespace {

using nlohmann::json;
using trace::TraceReader;

json event(std::string ph, std::string cat, std::string name, json pid, json tid, double ts,
           double dur = -1, json args = json::object()) {
  json e = {{"ph", ph}, {"cat", cat}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", ts}};
  if (dur >= 0) e["dur"] = dur;
  if (!args.empty()) e["args"] = args;
  return e;
}

struct Imported {
  testing::TempDir dir;
  std::unique_ptr<TraceReader> reader;
  ImportStats stats;
};

std::unique_ptr<Imported> importJson(const std::string& text, bool gz = false) {
  auto result = std::make_unique<Imported>();
  auto in = result->dir.write(gz ? "in.json.gz" : "in.json", gz ? testing::gzip(text) : text);
  auto out = result->dir / "out.sqlite";
  result->stats = importFile(in, out);
  result->reader = std::make_unique<TraceReader>(out);
  return result;
}

TEST(KinetoTime, ConvertsMicrosecondTokensExactly) {
  EXPECT_EQ(microsecondsToNs("1695835542514261"), 1695835542514261000);
  EXPECT_EQ(microsecondsToNs("4458676522690.655"), 4458676522690655);
  EXPECT_EQ(microsecondsToNs("0.001"), 1);
  EXPECT_EQ(microsecondsToNs("-3.5"), -3500);
  EXPECT_EQ(microsecondsToNs("1.0005"), 1001);  // rounded half up past the 3rd digit
  EXPECT_EQ(microsecondsToNs("1.0004"), 1000);
  EXPECT_EQ(microsecondsToNs("1.5e3"), 1500000);
  EXPECT_EQ(microsecondsToNs("9223372036854775"), 9223372036854775000);
  EXPECT_FALSE(microsecondsToNs("9223372036854776"));  // * 1000 leaves int64
  EXPECT_FALSE(microsecondsToNs("1e300"));
  EXPECT_FALSE(microsecondsToNs("abc"));
  EXPECT_FALSE(microsecondsToNs("1."));
  EXPECT_FALSE(microsecondsToNs(""));
}

TEST(KinetoImport, MapsCategoriesToTables) {
  json events = json::array({
      event("X", "python_function", "train.py(10): step", 100, 100, 10, 50),
      event("X", "cpu_op", "aten::mm", 100, 100, 20, 10, {{"Input Dims", {{2, 2}}}}),
      event("X", "rlscope.simulator", "mj_step", 100, 100, 35, 5),
      event("X", "rlscope.native", "my_native", 100, 100, 40, 1),
      event("X", "cuda_runtime", "cudaLaunchKernel", 100, 100, 25, 2,
            {{"correlation", 7}, {"cbid", 211}}),
      event("X", "cuda_driver", "cuLaunchKernel", 100, 100, 25.5, 1, {{"correlation", 8}}),
      event("X", "kernel", "gemm", 0, 7, 30, 4,
            {{"device", 0},
             {"stream", 7},
             {"context", 1},
             {"correlation", 7},
             {"registers per thread", 64},
             {"shared memory", 4096},
             {"grid", {80, 2, 1}},
             {"block", {256, 1, 1}}}),
      event("X", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, 40, 2,
            {{"device", 0}, {"stream", 7}, {"correlation", 8}, {"bytes", 1024}}),
      event("X", "gpu_memset", "Memset (Device)", 0, 7, 45, 1,
            {{"device", 0}, {"stream", 7}, {"bytes", 64}}),
      event("X", "cuda_sync", "Stream Sync", 0, 7, 50, 1,
            {{"device", 0}, {"stream", 7}, {"cuda_sync_kind", "Stream Sync"}}),
      event("X", "user_annotation", "step", 100, 100, 5, 60),
      event("X", "rlscope.phase", "training", 100, 100, 0, 100),
      event("X", "cuda_profiler_range", "range", 100, 100, 1, 1),
      event("i", "", "marker", 100, 100, 3),
      {{"ph", "s"},
       {"cat", "ac2g"},
       {"name", "ac2g"},
       {"id", 7},
       {"pid", 100},
       {"tid", 100},
       {"ts", 25}},
      {{"ph", "f"},
       {"cat", "ac2g"},
       {"name", "ac2g"},
       {"id", 7},
       {"pid", 0},
       {"tid", 7},
       {"ts", 30},
       {"bp", "e"}},
      {{"ph", "M"},
       {"name", "process_name"},
       {"pid", 100},
       {"tid", 0},
       {"args", {{"name", "python3"}}}},
      {{"ph", "M"},
       {"name", "thread_name"},
       {"pid", 100},
       {"tid", 100},
       {"args", {{"name", "main"}}}},
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  auto& r = *t->reader;
  EXPECT_EQ(r.metaValue("source_format"), "kineto");
  EXPECT_EQ(r.rowCount("rlscope_cpu_intervals"), 4);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_RUNTIME"), 1);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_DRIVER"), 1);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_KERNEL"), 1);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_MEMCPY"), 1);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_MEMSET"), 1);
  EXPECT_EQ(r.rowCount("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), 1);
  EXPECT_EQ(r.rowCount("rlscope_operations"), 1);
  EXPECT_EQ(r.rowCount("rlscope_phases"), 1);
  EXPECT_EQ(r.rowCount("rlscope_events"), 2);  // cuda_profiler_range and the instant

  std::map<trace::Category, int> cats;
  r.forEachCpuInterval({}, [&](const trace::CpuIntervalRecord& c) { ++cats[c.category]; });
  EXPECT_EQ(cats[trace::Category::kPython], 1);
  EXPECT_EQ(cats[trace::Category::kBackend], 1);
  EXPECT_EQ(cats[trace::Category::kSimulator], 1);
  EXPECT_EQ(cats[trace::Category::kNative], 1);

  const auto gpid = trace::globalPidOf(100);
  int kernels = 0;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) {
    ++kernels;
    EXPECT_EQ(k.start, 30000);
    EXPECT_EQ(k.end, 34000);
    EXPECT_EQ(k.globalPid, gpid);  // from the runtime call with the same correlation id
    EXPECT_EQ(k.correlationId, 7);
    EXPECT_EQ(k.registersPerThread, 64);
    EXPECT_EQ(k.staticSharedMemory + k.dynamicSharedMemory, 4096);
    EXPECT_EQ(k.gridX, 80);
    EXPECT_EQ(k.gridY, 2);
    EXPECT_EQ(k.blockX, 256);
    EXPECT_EQ(r.string(k.demangledName), "gemm");
  });
  EXPECT_EQ(kernels, 1);
  r.forEachApiCall(trace::ApiKind::kRuntime, {}, [&](const trace::ApiCallRecord& a) {
    EXPECT_EQ(a.cbid, 211);
    EXPECT_EQ(a.globalTid, trace::globalTidOf(100, 100));
  });
  r.forEachMemcpy({}, [&](const trace::MemcpyRecord& m) {
    EXPECT_EQ(m.copyKind, 1);  // HtoD
    EXPECT_EQ(m.srcKind, 1);   // pinned
    EXPECT_EQ(m.dstKind, 2);   // device
    EXPECT_EQ(m.bytes, 1024);
    EXPECT_EQ(m.globalPid, gpid);
  });
  r.forEachSync({}, [&](const trace::SyncRecord& s) {
    EXPECT_EQ(s.syncType, trace::SyncType::kStreamSynchronize);
  });
  auto procs = r.processes();
  ASSERT_EQ(procs.size(), 1u);  // the GPU pid 0 is not a process
  EXPECT_EQ(procs[0].pid, 100);
  EXPECT_EQ(procs[0].name, "python3");
  auto threads = r.threads();
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].name, "main");
}

// `gzip -c a b > c` makes one stream of two members: the whole-buffer fast path hands it to zlib,
// and both paths give the same trace.
TEST(KinetoImport, GzipWithSeveralMembers) {
  json events = json::array();
  for (int i = 0; i < 1000; ++i) events.push_back(event("X", "cpu_op", "op", 1, 1, i, 0.5));
  std::string text = json{{"traceEvents", events}}.dump();
  testing::TempDir dir;
  auto split = text.size() / 2;
  auto twoMembers = dir.write(
      "two.json.gz", testing::gzip(text.substr(0, split)) + testing::gzip(text.substr(split)));
  auto oneMember = dir.write("one.json.gz", testing::gzip(text));
  importFile(twoMembers, dir / "two.sqlite");
  importFile(oneMember, dir / "one.sqlite");
  for (const char* name : {"two.sqlite", "one.sqlite"}) {
    TraceReader r(dir / name);
    EXPECT_EQ(r.rowCount("rlscope_cpu_intervals"), 1000) << name;
  }
}

TEST(KinetoImport, NestsAnnotationsPerThread) {
  json events = json::array();
  // Thread 1: outer [0,100) > mid [10,60) > inner [20,30); sibling [60,90) after mid.
  // Thread 2: two top-level ranges, written out of order.
  events.push_back(event("X", "user_annotation", "inner", 1, 1, 20, 10));
  events.push_back(event("X", "user_annotation", "outer", 1, 1, 0, 100));
  events.push_back(event("X", "user_annotation", "sibling", 1, 1, 60, 30));
  events.push_back(event("X", "user_annotation", "mid", 1, 1, 10, 50));
  events.push_back(event("X", "user_annotation", "b", 1, 2, 50, 10));
  events.push_back(event("X", "user_annotation", "a", 1, 2, 0, 10));
  auto t = importJson(json{{"traceEvents", events}}.dump());
  std::map<std::string, trace::OperationRecord> ops;
  std::map<std::int64_t, std::string> names;
  t->reader->forEachOperation({}, [&](const trace::OperationRecord& o) {
    std::string name(t->reader->string(o.nameId));
    ops[name] = o;
    names[o.id] = name;
  });
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops["outer"].depth, 0);
  EXPECT_EQ(ops["outer"].parentId, 0);
  EXPECT_EQ(names[ops["mid"].parentId], "outer");
  EXPECT_EQ(ops["mid"].depth, 1);
  EXPECT_EQ(names[ops["inner"].parentId], "mid");
  EXPECT_EQ(ops["inner"].depth, 2);
  EXPECT_EQ(names[ops["sibling"].parentId], "outer");  // mid ends where sibling starts
  EXPECT_EQ(ops["sibling"].depth, 1);
  EXPECT_EQ(ops["a"].depth, 0);
  EXPECT_EQ(ops["b"].depth, 0);
  EXPECT_NE(ops["a"].globalTid, ops["outer"].globalTid);
}

TEST(KinetoImport, ManyProcessesStreamsAndDevices) {
  json events = json::array();
  int correlation = 1;
  for (int pid = 1000; pid < 1008; ++pid) {
    for (int tid = 0; tid < 4; ++tid) {
      events.push_back(event("X", "cpu_op", "op", pid, pid + tid, 10.0 * tid, 5));
    }
  }
  // Two devices, three streams each; correlation ids repeat across processes, as CUPTI's do.
  for (int pid = 1000; pid < 1002; ++pid) {
    correlation = 1;
    for (int dev = 0; dev < 2; ++dev) {
      for (int stream = 7; stream < 10; ++stream, ++correlation) {
        events.push_back(event("X", "cuda_runtime", "cudaLaunchKernel", pid, pid, 1, 1,
                               {{"correlation", correlation + 100 * (pid - 1000)}}));
        events.push_back(event("X", "kernel", "k", dev, stream, 2, 1,
                               {{"device", dev},
                                {"stream", stream},
                                {"correlation", correlation + 100 * (pid - 1000)}}));
      }
    }
  }
  auto t = importJson(json{{"traceEvents", events}}.dump(), /*gz=*/true);
  auto& r = *t->reader;
  EXPECT_EQ(r.processes().size(), 8u);
  EXPECT_EQ(r.threads().size(), 32u);
  std::set<std::pair<std::int64_t, std::int64_t>> streams;
  std::set<std::int64_t> pids;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) {
    streams.insert({k.deviceId, k.streamId});
    pids.insert(trace::pidOfGlobalId(k.globalPid));
  });
  EXPECT_EQ(streams.size(), 6u);
  EXPECT_EQ(pids, (std::set<std::int64_t>{1000, 1001}));
  int onStream8 = 0;
  r.forEachKernel({.deviceId = 1, .streamId = 8}, [&](const trace::KernelRecord&) { ++onStream8; });
  EXPECT_EQ(onStream8, 2);
}

TEST(KinetoImport, ZeroLengthOutOfOrderUnicodeAndLongNames) {
  std::string longName(200000, 'x');
  std::string unicode = "推論 → backprop ✓ \xF0\x9F\xA4\x96";  // includes a 4-byte emoji
  json events = json::array({
      event("X", "cpu_op", "late", 5, 5, 900, 10),
      event("X", "cpu_op", "zero", 5, 5, 100, 0),
      event("X", "cpu_op", unicode, 5, 5, 500, 1),
      event("X", "cpu_op", longName, 5, 5, 300, 2),
      event("X", "cpu_op", "early", 5, 5, 0.5, 0.25),
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  std::vector<std::pair<std::int64_t, std::string>> seen;
  t->reader->forEachCpuInterval({}, [&](const trace::CpuIntervalRecord& c) {
    seen.emplace_back(c.start, std::string(t->reader->string(c.nameId)));
    if (seen.back().second == "zero") {
      EXPECT_EQ(c.end, c.start);
    }
  });
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], (std::pair<std::int64_t, std::string>{500, "early"}));
  EXPECT_EQ(seen[1].second, "zero");
  EXPECT_EQ(seen[2].second, longName);
  EXPECT_EQ(seen[3].second, unicode);
  EXPECT_EQ(seen[4].second, "late");
  // The window query finds the zero-length event at its own start.
  int inWindow = 0;
  t->reader->forEachCpuInterval({.windowStart = 100000, .windowEnd = 100001},
                                [&](const trace::CpuIntervalRecord&) { ++inWindow; });
  EXPECT_EQ(inWindow, 1);
}

TEST(KinetoImport, BareEventArrayAndTextPidsArePlainEvents) {
  json events = json::array({
      event("X", "Trace", "PyTorch Profiler (0)", "Spans", "PyTorch Profiler", 1, 10),
      event("X", "cpu_op", "odd", "Spans", 3, 2, 1),  // CPU category on a text track
      {{"ph", "i"},
       {"s", "g"},
       {"name", "Iteration Start"},
       {"pid", "Traces"},
       {"tid", "T"},
       {"ts", 5}},
  });
  auto t = importJson(events.dump());
  EXPECT_EQ(t->reader->rowCount("rlscope_events"), 3);
  EXPECT_EQ(t->reader->rowCount("rlscope_cpu_intervals"), 0);
  ASSERT_EQ(t->stats.warnings.size(), 1u);
  std::vector<trace::PlainEventRecord> plain;
  t->reader->forEachPlainEvent([&](const trace::PlainEventRecord& p) { plain.push_back(p); });
  EXPECT_EQ(plain[0].pid, "Spans");
  EXPECT_EQ(plain[0].tid, "PyTorch Profiler");
  EXPECT_EQ(plain[1].tid, "3");
  auto instant = json::parse(plain[2].args);
  EXPECT_EQ(instant["__event"]["s"], "g");
}

// PyTorch on ROCm: HIP calls in Kineto's CUDA categories, hex stream handles, kernels and copies
// whose launching call only the ac2g flow names, an AMD device (tests/support/rocm_trace.h).
TEST(KinetoImport, RocmTraceIsImportedWithItsLaunches) {
  auto t = importJson(rlscope::testing::rocmKinetoTrace());
  auto& r = *t->reader;
  EXPECT_TRUE(t->stats.warnings.empty()) << t->stats.warnings.front();
  EXPECT_EQ(r.metaValue(trace::meta::kGpuVendor), "AMD");
  const auto gpid = trace::globalPidOf(4100);
  std::map<std::string, trace::ApiCallRecord> calls;
  r.forEachApiCall(trace::ApiKind::kRuntime, {}, [&](const trace::ApiCallRecord& a) {
    calls[std::string(r.string(a.nameId))] = a;
  });
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls["hipExtModuleLaunchKernel"].correlationId, 12);
  EXPECT_EQ(calls["hipExtModuleLaunchKernel"].cbid, 1);  // "cid"
  EXPECT_EQ(calls["hipMemcpyWithStream"].correlationId, 11);
  int kernels = 0;
  r.forEachKernel({}, [&](const trace::KernelRecord& k) {
    ++kernels;
    EXPECT_EQ(k.correlationId, 12);  // from the flow: the kernel has no args
    EXPECT_EQ(k.globalPid, gpid);
    EXPECT_EQ(k.deviceId, 0);
    EXPECT_EQ(k.streamId, 1);
    EXPECT_EQ(k.end - k.start, 150000);
  });
  EXPECT_EQ(kernels, 1);
  int copies = 0;
  r.forEachMemcpy({}, [&](const trace::MemcpyRecord& m) {
    ++copies;
    EXPECT_EQ(m.correlationId, 11);
    EXPECT_EQ(m.globalPid, gpid);
    EXPECT_EQ(m.copyKind, 1);  // HtoD, from the name
  });
  EXPECT_EQ(copies, 1);
  auto gpus = r.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].threadsPerWarp, 64);
  EXPECT_EQ(gpus[0].maxWarpsPerSm, 32);
  EXPECT_EQ(gpus[0].maxShmemPerSm, 65536);  // ROCm's maxSharedMemoryPerMultiProcessor
  EXPECT_EQ(gpus[0].smCount, 104);
}

// Integers written as text: decimal or 0x-hex are read, anything else is one clear error.
TEST(KinetoImport, IntegerArgsAsTextAreReadOrRefusedClearly) {
  json events = json::array({
      event("X", "kernel", "k", 0, 7, 10, 1,
            {{"device", "0"}, {"stream", "0x1f"}, {"correlation", "12"}}),
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  t->reader->forEachKernel({}, [&](const trace::KernelRecord& k) {
    EXPECT_EQ(k.streamId, 31);
    EXPECT_EQ(k.correlationId, 12);
  });
  json bad = json::array({event("X", "kernel", "k", 0, 7, 10, 1, {{"stream", "0xZZ"}})});
  try {
    importJson(json{{"traceEvents", bad}}.dump());
    ADD_FAILURE() << "a stream of \"0xZZ\" was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("args.stream: expected an integer, got \"0xZZ\""),
              std::string::npos)
        << e.what();
  }
}

// A kernel without "dur" keeps its launch and name, but its GPU time is unknown: kept as
// zero-length, counted, and said in one warning.
TEST(KinetoImport, KernelWithoutDurationIsKeptAndWarned) {
  json events = json::array({
      event("X", "cuda_runtime", "cudaLaunchKernel", 100, 100, 10, 2, {{"correlation", 7}}),
      event("X", "kernel", "gemm", 0, 7, 20, -1,
            {{"device", 0}, {"stream", 7}, {"correlation", 7}}),
      event("X", "kernel", "relu", 0, 7, 30, 1, {{"device", 0}, {"stream", 7}}),
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  EXPECT_EQ(t->reader->rowCount("CUPTI_ACTIVITY_KIND_KERNEL"), 2);
  std::vector<trace::KernelRecord> kernels;
  t->reader->forEachKernel({}, [&](const trace::KernelRecord& k) { kernels.push_back(k); });
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].end, kernels[0].start);
  std::string warnings;
  for (const auto& w : t->stats.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("1 GPU activities (kernels, memcpys, memsets) without \"dur\""),
            std::string::npos)
      << warnings;
}

// Unknown top-level members travel as written, escaped keys included, and stay valid JSON.
TEST(KinetoImport, UnknownMembersKeepTheirEscapes) {
  auto t = importJson(R"({"traceEvents": [{"ph": "i", "name": "m", "pid": 1, "tid": 1, "ts": 1,)"
                      R"( "we\"ird": [1, {"a": "\u00e9"}], "p\u0069d2": 7}]})");
  std::vector<trace::PlainEventRecord> plain;
  t->reader->forEachPlainEvent([&](const trace::PlainEventRecord& p) { plain.push_back(p); });
  ASSERT_EQ(plain.size(), 1u);
  auto args = json::parse(plain[0].args);
  EXPECT_EQ(args["__event"]["we\"ird"][1]["a"], "\u00e9");
  EXPECT_EQ(args["__event"]["pid2"], 7);
}

TEST(KinetoImport, NvtxEventsDefaultToRangesAndMarks) {
  json events = json::array({
      event("X", "rlscope.nvtx", "range", 1, 1, 10, 5),
      event("i", "rlscope.nvtx", "mark", 1, 1, 12),
      event("X", "rlscope.nvtx", "start/end", 1, 1, 20, 5, {{"eventType", 60}}),
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  std::map<std::string, trace::NvtxRecord> byText;
  t->reader->forEachNvtx({}, [&](const trace::NvtxRecord& n) { byText[n.text] = n; });
  EXPECT_EQ(byText["range"].eventType, trace::NvtxEventType::kPushPopRange);
  EXPECT_EQ(byText["mark"].eventType, trace::NvtxEventType::kMark);
  EXPECT_FALSE(byText["mark"].end);
  EXPECT_EQ(byText["start/end"].eventType, trace::NvtxEventType::kStartEndRange);
  EXPECT_EQ(t->reader->rowCount("rlscope_operations"), 2);  // the two ranges
}

// Kineto writes thread ids as signed 32-bit numbers: a100_nccl.json.gz has CUDA calls on
// "tid": -549452224, the unsigned id 3745515072 wrapped around. The thread keeps the unsigned id.
TEST(KinetoImport, OutOfRangeIdsGetSubstitutesAndWrappedTidsTheirUnsignedValue) {
  json events = json::array({
      event("X", "cpu_op", "a", 1 << 25, -549452224, 1, 1),
      event("X", "cpu_op", "b", 1 << 25, 70000000, 2, 1),
  });
  auto t = importJson(json{{"traceEvents", events}}.dump());
  auto threads = t->reader->threads();
  ASSERT_EQ(threads.size(), 2u);
  std::set<std::int64_t> tids;
  for (auto& th : threads) {
    tids.insert(th.tid);
    EXPECT_TRUE(trace::fitsGlobalIdField(trace::tidOfGlobalId(th.globalTid)));
  }
  EXPECT_EQ(tids, (std::set<std::int64_t>{3745515072, 70000000}));
  EXPECT_EQ(t->reader->processes().at(0).pid, 1 << 25);
}

}  // namespace
}  // namespace rlscope::import
