// The details of a clicked item (rlscope/gui_model/event_details.h): every source table from a
// constructed trace, the same trace with NULL, garbage, dropped columns and unknown ids, files that
// went away or changed, and a kernel of the real A100 AlexNet trace with its grid, block and
// launch call.
#include "rlscope/gui_model/event_details.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "rlscope/gui_model/correlation_index.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

namespace rlscope::gui {
namespace {

constexpr std::int64_t kPid = 42;
constexpr std::int64_t kGlobalPid = trace::globalPidOf(kPid);
constexpr std::int64_t kMain = trace::globalTidOf(kPid, kPid);

// One of each kind of item, in process 42 on GPU 0. The trace starts at 1000 (the step).
std::filesystem::path writeDetails(const testing::TempDir& dir) {
  auto path = dir / "details.sqlite";
  trace::TraceWriter w(path);
  testing::addProcess(w, kPid);
  testing::addThread(w, kPid, kPid, "MainThread");
  testing::addA100(w);

  testing::addOperation(w, {.id = 1,
                            .start = 1000,
                            .end = 2000,
                            .name = "step",
                            .globalTid = kMain,
                            .args = R"({"unterminated":true})"});
  testing::addOperation(w, {.id = 2,
                            .start = 1100,
                            .end = 1500,
                            .name = "inference",
                            .globalTid = kMain,
                            .parent = 1,
                            .depth = 1,
                            .source = trace::OperationSource::kNvtx});
  testing::addOperation(w, {.id = 3,
                            .start = 1600,
                            .end = 1700,
                            .name = "user_step",
                            .globalTid = kMain,
                            .parent = 1,
                            .depth = 1,
                            .source = trace::OperationSource::kKinetoUserAnnotation,
                            .args = R"({"External id": 5, "note": "x"})"});
  trace::NvtxRecord domain;
  domain.start = 0;
  domain.eventType = trace::NvtxEventType::kDomainCreate;
  domain.globalTid = kMain;
  domain.domainId = 3;
  domain.text = "my_domain";
  w.addNvtx(domain);
  trace::NvtxRecord range;
  range.start = 1100;
  range.end = 1500;
  range.eventType = trace::NvtxEventType::kPushPopRange;
  range.globalTid = kMain;
  range.domainId = 3;
  range.category = 2;
  range.color = 0xFF00FF00;
  range.text = "inference";
  range.payloadType = trace::NvtxPayloadType::kUint64;
  range.payloadBits = 17;
  w.addNvtx(range);

  w.addCpuInterval({.start = 1150,
                    .end = 1400,
                    .globalTid = kMain,
                    .category = trace::Category::kBackend,
                    .nameId = w.intern("aten::linear"),
                    .args = R"({"Input Dims": [[2, 3], [4]], "Sequence number": 12, )"
                            R"("flag": true, "nothing": null})"});

  trace::ApiCallRecord launch;
  launch.start = 1200;
  launch.end = 1210;
  launch.globalTid = kMain;
  launch.correlationId = 7;
  launch.nameId = w.intern("cudaLaunchKernel");
  launch.cbid = 211;
  w.addApiCall(trace::ApiKind::kRuntime, launch);
  trace::ApiCallRecord copyCall = launch;
  copyCall.start = 1220;
  copyCall.end = 1230;
  copyCall.eventClass = 1;
  copyCall.correlationId = 8;
  copyCall.nameId = w.intern("cuMemcpyHtoDAsync_v2");
  copyCall.returnValue = 1;
  copyCall.cbid = 279;
  w.addApiCall(trace::ApiKind::kDriver, copyCall);
  w.addExternalCorrelation({kGlobalPid, 7, 2});

  trace::KernelRecord k;
  k.start = 1205;
  k.end = 1305;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = 7;
  k.globalPid = kGlobalPid;
  k.demangledName = w.intern("void gemm<float>(float*)");
  k.shortName = w.intern("gemm");
  k.mangledName = w.intern("_Z4gemmIfEvPf");
  k.cacheConfig = 1;
  k.registersPerThread = 32;
  k.gridX = 128, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.staticSharedMemory = 49152;
  k.dynamicSharedMemory = 1024;
  k.gridId = 99;
  k.sharedMemoryExecuted = 65536;
  w.addKernel(k);

  trace::MemcpyRecord m;
  m.start = 1300;
  m.end = 1400;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 8;
  m.globalPid = kGlobalPid;
  m.bytes = 1000;  // in 100 ns: 10 GB/s
  m.copyKind = 1;
  m.srcKind = 1;
  m.dstKind = 2;
  w.addMemcpy(m);

  trace::MemsetRecord s;
  s.start = 1500;
  s.end = 1600;
  s.contextId = 1;
  s.streamId = 7;
  s.correlationId = 9;
  s.globalPid = kGlobalPid;
  s.value = 255;
  s.bytes = 65536;
  s.memKind = 2;
  w.addMemset(s);
  w.commit();
  return path;
}

ItemLocation find(const TimelineData& data, std::string_view name) {
  ItemLocation out;
  data.forEachTrack([&](const Track& t) {
    for (std::size_t i = 0; i < t.row.size() && !out.track; ++i)
      if (data.name(t.row[i]) == name) out = {&t, i};
  });
  EXPECT_TRUE(out.track) << name;
  return out;
}

using Fields = std::map<std::string, std::string>;

// The fields as a map (labels are unique), after checking that they are.
Fields fieldsOf(const EventDetails& d) {
  Fields out;
  for (const auto& f : d.fields) EXPECT_TRUE(out.emplace(f.label, f.value).second) << f.label;
  return out;
}

// The fields listed, each with the value expected.
void expectFields(const Fields& got, const Fields& expected) {
  for (const auto& [label, value] : expected) {
    auto it = got.find(label);
    if (it == got.end()) {
      ADD_FAILURE() << "no field " << label;
    } else {
      EXPECT_EQ(it->second, value) << label;
    }
  }
}

class EventDetailsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = writeDetails(dir_);
    trace::TraceReader reader(path_);
    data_ = loadTimeline(reader);
  }

  EventDetails details(std::string_view name) {
    ItemLocation at = find(data_, name);
    if (!at.track) return {};
    return reader_.read(data_, *at.track, at.item());
  }

  testing::TempDir dir_;
  std::filesystem::path path_;
  TimelineData data_;
  EventDetailsReader reader_{dir_ / "details.sqlite"};
};

TEST(EventDetailsFormat, BytesAndBandwidth) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(49'152), "49152 B (48 KiB)");
  EXPECT_EQ(formatBytes(1'000'000), "1000000 B (976.56 KiB)");
  EXPECT_EQ(formatBytes(3LL << 30), "3221225472 B (3 GiB)");
  EXPECT_EQ(formatBytes(-5), "-5 B");
  EXPECT_EQ(formatBandwidth(1'000'000, 100), "10000.00 GB/s");
  EXPECT_EQ(formatBandwidth(1'000'000, 100'000), "10.00 GB/s");
  EXPECT_EQ(formatBandwidth(65'536, 100'000), "655.36 MB/s");
  EXPECT_EQ(formatBandwidth(10, 0), "—");
}

TEST_F(EventDetailsTest, AKernel) {
  EventDetails d = details("gemm");
  EXPECT_EQ(d.title, "gemm");
  EXPECT_EQ(d.problem, "");
  Fields f = fieldsOf(d);
  expectFields(f, {{"Name", "gemm"},
                   {"Category", "GPU kernel"},
                   {"Source table", "CUPTI_ACTIVITY_KIND_KERNEL"},
                   {"Start", "+205 ns"},
                   {"End", "+305 ns"},
                   {"Duration", "100 ns"},
                   {"Start (ns)", "1205"},
                   {"End (ns)", "1305"},
                   {"Device", "GPU 0: NVIDIA A100-SXM4-40GB"},
                   {"Stream", "7"},
                   {"Process", "python (pid 42)"},
                   {"Demangled name", "void gemm<float>(float*)"},
                   {"Short name", "gemm"},
                   {"Mangled name", "_Z4gemmIfEvPf"},
                   {"Grid", "(128, 2, 1) = 256 blocks"},
                   {"Block", "(256, 1, 1) = 256 threads"},
                   {"Registers per thread", "32"},
                   {"Static shared memory", "49152 B (48 KiB)"},
                   {"Dynamic shared memory", "1024 B (1 KiB)"},
                   {"Shared memory executed", "65536 B (64 KiB)"},
                   {"Local memory per thread", "0 B"},
                   {"Local memory total", "0 B"},
                   {"Launch type", "0"},
                   {"Cache config", "1"},
                   {"Grid id", "99"},
                   {"Context", "1"},
                   {"Correlation id", "7"},
                   {"Graph node id", "0"},
                   {"Graph id", "0"},
                   {"Launched by", "cudaLaunchKernel"},
                   {"Launched in operation", "inference (id 2)"}});
  // The order a details view lists them in: the timeline's fields first.
  ASSERT_GE(d.fields.size(), 3u);
  EXPECT_EQ(d.fields[0].label, "Name");
  EXPECT_EQ(d.fields[1].label, "Category");
  EXPECT_EQ(d.fields[2].label, "Source table");
  ASSERT_NE(d.find("Grid"), nullptr);
  EXPECT_EQ(d.find("No such field"), nullptr);
}

TEST_F(EventDetailsTest, ApiCalls) {
  Fields runtime = fieldsOf(details("cudaLaunchKernel"));
  expectFields(runtime, {{"Category", "CUDA API"},
                         {"Source table", "CUPTI_ACTIVITY_KIND_RUNTIME"},
                         {"Process", "python (pid 42)"},
                         {"Thread", "MainThread (tid 42)"},
                         {"API", "cudaLaunchKernel"},
                         {"Event class", "CUDA runtime"},
                         {"Correlation id", "7"},
                         {"Return value", "0 (success)"},
                         {"Callback id", "211"},
                         {"Call chain id", "—"},  // NULL: none
                         {"Launched", "kernel gemm"},
                         {"Launched in operation", "inference (id 2)"}});
  Fields driver = fieldsOf(details("cuMemcpyHtoDAsync_v2"));
  expectFields(driver, {{"Source table", "CUPTI_ACTIVITY_KIND_DRIVER"},
                        {"Event class", "CUDA driver"},
                        {"Return value", "1"},
                        {"Launched", "memcpy HtoD, 1000 B"},
                        {"Launched in operation", "—"}});
}

TEST_F(EventDetailsTest, CopiesAndMemsets) {
  Fields copy = fieldsOf(details("Memcpy HtoD"));
  expectFields(copy, {{"Category", "GPU memcpy"},
                      {"Copy kind", "HtoD"},
                      {"Bytes", "1000 B"},
                      {"Bandwidth", "10.00 GB/s"},
                      {"Source kind", "Pinned"},
                      {"Destination kind", "Device"},
                      {"Source device", "0"},
                      {"Destination device", "0"},
                      {"Correlation id", "8"},
                      {"Launched by", "cuMemcpyHtoDAsync_v2"}});
  // nsys-only columns rlscope never fills are left out rather than listed as "—".
  EXPECT_EQ(copy.count("Migration cause"), 0u);
  Fields set = fieldsOf(details("Memset"));
  expectFields(set, {{"Category", "GPU memset"},
                     {"Bytes", "65536 B (64 KiB)"},
                     {"Bandwidth", "655.36 GB/s"},
                     {"Value", "255"},
                     {"Memory kind", "Device"},
                     {"Launched by", "—"}});  // correlation 9 has no call in the trace
}

TEST_F(EventDetailsTest, OperationsAndCpuIntervals) {
  expectFields(fieldsOf(details("step")), {{"Category", "operation"},
                                           {"Start", "+0 ns"},
                                           {"Duration", "1 µs"},
                                           {"Operation id", "1"},
                                           {"Depth", "0"},
                                           {"Parent", "none (outermost)"},
                                           {"Source", "rlscope annotation"},
                                           {"Domain", "rlscope"},
                                           {"args.unterminated", "true"}});
  expectFields(fieldsOf(details("inference")), {{"Operation id", "2"},
                                                {"Depth", "1"},
                                                {"Parent", "step (id 1)"},
                                                {"Source", "NVTX"},
                                                {"Domain", "my_domain"},
                                                {"NVTX category", "2"},
                                                {"NVTX color", "#FF00FF00"},
                                                {"NVTX payload", "17"}});
  Fields user = fieldsOf(details("user_step"));
  expectFields(user, {{"Source", "Kineto user_annotation"},
                      {"Domain", "—"},
                      {"args.External id", "5"},
                      {"args.note", "x"}});
  Fields cpu = fieldsOf(details("aten::linear"));
  expectFields(cpu, {{"Category", "Backend"},
                     {"Source table", "rlscope_cpu_intervals"},
                     {"Thread", "MainThread (tid 42)"},
                     {"args.Input Dims", "[[2,3],[4]]"},
                     {"args.Sequence number", "12"},
                     {"args.flag", "true"},
                     {"args.nothing", "null"}});
  EXPECT_EQ(cpu.count("Category id"), 0u);  // only for a category rlscope does not know
}

TEST_F(EventDetailsTest, AOneOffReadWithTheCallersConnection) {
  trace::TraceReader reader(path_);
  ItemLocation at = find(data_, "gemm");
  EventDetails d = readEventDetails(reader.db(), data_, *at.track, at.item());
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(*d.find("Grid"), "(128, 2, 1) = 256 blocks");
}

// The same trace damaged: values of the wrong type, NULLs, a dropped column, an enum table gone,
// ids nothing has, args that are not JSON.
TEST_F(EventDetailsTest, NullsGarbageAndMissingColumnsGiveDashesOrRawValues) {
  {
    trace::Database db(path_, trace::Database::Mode::kCreate);
    db.exec(R"sql(
      UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'garbage', blockY = 'y', mangledName = 999999,
        launchType = NULL, cacheConfig = 2.5, sharedMemoryExecuted = x'0102';
      ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN registersPerThread;
      UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 99, srcKind = NULL, bytes = 'lots';
      DROP TABLE ENUM_CUDA_MEM_KIND;
      UPDATE rlscope_cpu_intervals SET args = '{not json', category = 42;
      UPDATE rlscope_operations SET parentId = 12345, source = 9 WHERE id = 3;
      UPDATE rlscope_operations SET args = '[1, 2]' WHERE id = 1;
      UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 'x', returnValue = 'bad', callchainId = 1e300,
        correlationId = 'seven';
      DROP TABLE rlscope_external_correlation;
    )sql");
  }
  trace::TraceReader reader(path_);
  data_ = loadTimeline(reader);

  EventDetails kernel = details("gemm");
  EXPECT_EQ(kernel.problem, "");
  expectFields(fieldsOf(kernel), {{"Grid", "(garbage, 2, 1)"},
                                  {"Block", "(256, y, 1)"},
                                  {"Registers per thread", "—"},
                                  {"Mangled name", "999999"},
                                  {"Launch type", "—"},
                                  {"Cache config", "2.5"},
                                  {"Shared memory executed", "(2-byte blob)"},
                                  {"Launched in operation", "—"}});
  expectFields(fieldsOf(details("Memcpy")), {{"Copy kind", "99"},
                                             {"Bytes", "lots"},
                                             {"Bandwidth", "—"},
                                             {"Source kind", "—"},
                                             {"Destination kind", "2"}});
  expectFields(fieldsOf(details("Memset")), {{"Memory kind", "2"}});
  Fields cpu = fieldsOf(details("aten::linear"));
  expectFields(cpu, {{"Category", "—"}, {"Category id", "42"}, {"args", "{not json"}});
  expectFields(fieldsOf(details("user_step")), {{"Parent", "id 12345"}, {"Source", "9"}});
  expectFields(fieldsOf(details("step")), {{"args", "[1, 2]"}});
  // The timeline read the name 'x' and correlation id 'seven' as none; the row shows what is there.
  ItemLocation call;
  data_.forEachTrack([&](const Track& t) {
    for (std::size_t i = 0; i < t.row.size(); ++i)
      if (t.row[i].source == ItemSource::kRuntime) call = {&t, i};
  });
  ASSERT_TRUE(call.track);
  EventDetails api = reader_.read(data_, *call.track, call.item());
  EXPECT_EQ(api.title, "(no name)");
  expectFields(fieldsOf(api), {{"Name", "—"},
                               {"API", "x"},
                               {"Return value", "bad"},
                               {"Call chain id", "1.0000000000000001e+300"},
                               {"Correlation id", "seven"},
                               {"Launched", "—"},
                               {"Launched in operation", "—"}});
}

TEST_F(EventDetailsTest, AMissingChangedOrForeignFileIsAProblemNotAnException) {
  ItemLocation at = find(data_, "gemm");
  ASSERT_TRUE(at.track);

  EventDetailsReader gone(dir_ / "no_such.sqlite");
  EventDetails d = gone.read(data_, *at.track, at.item());
  EXPECT_NE(d.problem, "");
  EXPECT_EQ(d.title, "gemm");
  // What the timeline knows is there all the same.
  ASSERT_NE(d.find("Duration"), nullptr);
  EXPECT_EQ(*d.find("Duration"), "100 ns");

  // Another trace at the path: row 1 of its kernels is not this kernel.
  auto other = dir_ / "other.sqlite";
  {
    trace::TraceWriter w(other);
    trace::KernelRecord k;
    k.start = 5;
    k.end = 6;
    k.shortName = k.demangledName = w.intern("other");
    w.addKernel(k);
    w.commit();
  }
  EventDetails changed = EventDetailsReader(other).read(data_, *at.track, at.item());
  EXPECT_NE(changed.problem.find("is not this item"), std::string::npos) << changed.problem;
  EXPECT_EQ(changed.find("Grid"), nullptr);

  // A row that is not there.
  TrackItem missing = at.item();
  missing.rowId = 77;
  EXPECT_NE(reader_.read(data_, *at.track, missing).problem.find("has no row 77"),
            std::string::npos);
  missing.rowId = 0;
  EXPECT_NE(reader_.read(data_, *at.track, missing).problem, "");

  // An SQLite file without the trace's tables.
  auto foreign = dir_ / "foreign.sqlite";
  {
    trace::Database db(foreign, trace::Database::Mode::kCreate);
    db.exec("CREATE TABLE x (a)");
  }
  EventDetails none = EventDetailsReader(foreign).read(data_, *at.track, at.item());
  EXPECT_NE(none.problem.find("no table CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos)
      << none.problem;

  // Not an SQLite file at all.
  auto text = dir_.write("text.sqlite", "hello, this is not a database at all.........");
  EXPECT_NE(EventDetailsReader(text).read(data_, *at.track, at.item()).problem, "");
}

// --- The real A100 AlexNet trace -----------------------------------------------------------------

TEST(EventDetailsReal, AnA100KernelHasAGridABlockAndItsLaunchCall) {
  testing::TempDir dir;
  std::string why;
  auto path = testing::importSharedTrace(dir, "a100_alexnet", why);
  if (path.empty()) GTEST_SKIP() << why;
  trace::TraceReader reader(path);
  TimelineData data = loadTimeline(reader);
  CorrelationIndex index(data);
  EventDetailsReader details(path);

  ItemLocation kernel;
  for (const auto& d : data.devices)
    for (const auto& s : d.streams)
      for (std::size_t i = 0; i < s.row.size() && !kernel.track; ++i)
        if (s.row[i].source == ItemSource::kKernel) kernel = {&s, i};
  ASSERT_TRUE(kernel.track);
  EventDetails k = details.read(data, *kernel.track, kernel.item());
  SCOPED_TRACE(k.title);
  EXPECT_EQ(k.problem, "");
  // Kineto's "grid" and "block" args: three positive numbers each.
  for (const char* label : {"Grid", "Block"}) {
    ASSERT_NE(k.find(label), nullptr) << label;
    EXPECT_NE(k.find(label)->find(" = "), std::string::npos) << label << ": " << *k.find(label);
    EXPECT_EQ(k.find(label)->find("(0"), std::string::npos) << *k.find(label);
  }
  EXPECT_NE(*k.find("Registers per thread"), "—");
  EXPECT_NE(*k.find("Launched by"), "—");

  auto launch = index.linked(*kernel.track, kernel.index);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_EQ(launch[0].item().source, ItemSource::kRuntime);
  EXPECT_EQ(launch[0].item().correlationId, kernel.item().correlationId);
  EXPECT_EQ(*k.find("Launched by"), data.name(launch[0].item()));
  // And back from the call to the kernel.
  auto back = index.linked(*launch[0].track, launch[0].index);
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(back[0], kernel);
  EventDetails call = details.read(data, *launch[0].track, launch[0].item());
  // Names are cut for display (C++ kernel names can be longer than a screen).
  std::string start(data.name(kernel.item()).substr(0, 200));
  EXPECT_EQ(call.find("Launched")->rfind("kernel " + start, 0), 0u) << *call.find("Launched");
}

}  // namespace
}  // namespace rlscope::gui
