// The trace library's contract: atomic output, schema checks, filters and window queries.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::trace {
namespace {

using testing::TempDir;

TEST(GlobalId, PacksLikeNsys) {
  auto g = globalTidOf(4242, 17);
  EXPECT_EQ(g, (std::int64_t{4242} << 24) | 17);
  EXPECT_EQ(pidOfGlobalId(g), 4242);
  EXPECT_EQ(tidOfGlobalId(g), 17);
  EXPECT_EQ(globalPidOfTid(g), globalPidOf(4242));
  // nsys' documented extraction: PID = globalTid / 0x1000000 % 0x1000000.
  EXPECT_EQ(g / 0x1000000 % 0x1000000, 4242);
  EXPECT_FALSE(fitsGlobalIdField(1 << 24));
  EXPECT_FALSE(fitsGlobalIdField(-1));
}

TEST(Writer, NothingAppearsWithoutCommit) {
  TempDir dir;
  auto path = dir / "t.sqlite";
  {
    TraceWriter w(path);
    w.addCpuInterval({.start = 1, .end = 2, .globalTid = 1});
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "temporary files were left behind";
}

TEST(Writer, CommitReplacesAnExistingFileAtomically) {
  TempDir dir;
  auto path = dir.write("t.sqlite", "old contents");
  TraceWriter w(path);
  EXPECT_EQ(testing::readFile(path), "old contents");  // untouched until commit
  w.commit();
  TraceReader r(path);
  EXPECT_EQ(r.schemaVersion(), kSchemaVersion);
}

TEST(Writer, RefusesAMissingDirectory) {
  TempDir dir;
  EXPECT_THROW(TraceWriter(dir / "missing" / "t.sqlite"), TraceError);
}

TEST(Writer, WalJournalGivesOneSelfContainedFile) {
  TempDir dir;
  auto path = dir / "wal.sqlite";
  {
    WriterOptions options;
    options.journal = WriterOptions::Journal::kWal;
    options.rowsPerTransaction = 1000;  // many transactions
    TraceWriter w(path, options);
    auto name = w.intern("op");
    for (int i = 0; i < 10000; ++i) {
      w.addCpuInterval({.start = i, .end = i + 1, .globalTid = 1, .nameId = name});
    }
    w.commit();
  }
  for (auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "wal.sqlite") << "side file left: " << entry.path();
  }
  TraceReader r(path);
  EXPECT_EQ(r.rowCount("rlscope_cpu_intervals"), 10000);
}

// A write that fails on the writer thread (here: the file-size limit, as a full disk would) is
// reported to the caller, and no file is left behind.
TEST(Writer, FailureOnTheWriterThreadReachesTheCaller) {
  TempDir dir;
  auto path = dir / "big.sqlite";
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto savedHandler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 512 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    WriterOptions options;
    options.rowsPerTransaction = 10'000;
    TraceWriter w(path, options);
    std::string args(200, 'a');
    for (int i = 0; i < 200'000; ++i) {
      w.addCpuInterval({.start = i, .end = i + 1, .globalTid = 1, .args = args});
    }
    w.commit();
  } catch (const TraceError& e) {
    threw = true;
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, savedHandler);
  EXPECT_TRUE(threw);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "temporary files were left behind";
}

// Both indexing modes give the same trace: the same indexes, the same rows.
TEST(Writer, IndexingDuringLoadMatchesIndexingAtCommit) {
  TempDir dir;
  auto write = [&](WriterOptions::Indexing indexing, const char* name) {
    WriterOptions options;
    options.indexing = indexing;
    options.rowsPerTransaction = 500;
    TraceWriter w(dir / name, options);
    for (int i = 0; i < 2000; ++i) {
      w.addCpuInterval({.start = 2000 - i, .end = 2001 - i, .globalTid = i % 3});
      w.addKernel({.start = i, .end = i + 1, .deviceId = i % 2, .streamId = 7});
    }
    w.commit();
    TraceReader r(dir / name);
    std::vector<std::string> indexes;
    auto st = r.db().prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%' ORDER BY name");
    while (st.step()) indexes.emplace_back(st.columnText(0));
    std::vector<TimeNs> starts;
    r.forEachCpuInterval({.globalTid = 1, .windowStart = 100, .windowEnd = 110},
                         [&](const CpuIntervalRecord& c) { starts.push_back(c.start); });
    return std::pair{indexes, starts};
  };
  auto atCommit = write(WriterOptions::Indexing::kAtCommit, "a.sqlite");
  auto duringLoad = write(WriterOptions::Indexing::kDuringLoad, "b.sqlite");
  EXPECT_FALSE(atCommit.first.empty());
  EXPECT_EQ(atCommit, duringLoad);
  EXPECT_EQ(atCommit.second, (std::vector<TimeNs>{100, 103, 106, 109}));
}

TEST(Writer, InternsEachStringOnce) {
  TempDir dir;
  auto path = dir / "t.sqlite";
  {
    TraceWriter w(path);
    EXPECT_EQ(w.intern("a"), w.intern("a"));
    EXPECT_NE(w.intern("a"), w.intern("b"));
    EXPECT_NE(w.intern(""), kNoString);
    w.commit();
  }
  TraceReader r(path);
  EXPECT_EQ(r.rowCount("StringIds"), 3);
}

TEST(Writer, PartialBatchesAndEveryTableRoundTrip) {
  TempDir dir;
  auto path = dir / "t.sqlite";
  const auto tid = globalTidOf(10, 11);
  {
    TraceWriter w(path);
    w.setMeta(meta::kCommandLine, "python train.py");
    w.addProcess({.globalPid = globalPidOf(10),
                  .pid = 10,
                  .parentPid = 1,
                  .name = "python",
                  .commandLine = "python train.py",
                  .start = 5,
                  .end = 500,
                  .exitStatus = 3});
    w.addThread({.globalTid = tid, .globalPid = globalPidOf(10), .tid = 11, .name = "main"});
    w.addOperation({.id = 1,
                    .start = 0,
                    .end = 100,
                    .globalTid = tid,
                    .nameId = w.intern("step"),
                    .parentId = 0,
                    .depth = 0,
                    .source = OperationSource::kAnnotation});
    w.addPhase({.start = 0, .end = 100, .globalPid = globalPidOf(10), .nameId = w.intern("train")});
    w.addApiCall(ApiKind::kDriver, {.start = 3,
                                    .end = 4,
                                    .eventClass = 1,
                                    .globalTid = tid,
                                    .correlationId = 9,
                                    .nameId = w.intern("cuLaunchKernel"),
                                    .returnValue = 0,
                                    .cbid = 307});
    w.addMemset({.start = 7,
                 .end = 8,
                 .deviceId = 1,
                 .streamId = 2,
                 .correlationId = 9,
                 .globalPid = globalPidOf(10),
                 .value = 255,
                 .bytes = 64,
                 .memKind = 2});
    w.addSync({.start = 9,
               .end = 10,
               .deviceId = 1,
               .streamId = 2,
               .correlationId = 11,
               .syncType = SyncType::kEventSynchronize,
               .eventId = 4,
               .eventSyncId = 40});
    w.addNvtx({.start = 1,
               .end = std::nullopt,
               .eventType = NvtxEventType::kMark,
               .text = "mark",
               .globalTid = tid});
    w.addExternalCorrelation({globalPidOf(10), 9, 1});
    w.addCalibration({"cupti", "cudaLaunchKernel", 1500.5, 20.25, 1000});
    w.addPlainEvent({.start = 1, .end = 1, .pid = "Spans", .tid = "-3", .phase = "i"});
    w.addGpuInfo({.id = 1, .name = "NVIDIA H200", .smCount = 132, .computeMajor = 9});
    w.commit();
  }
  TraceReader r(path);
  EXPECT_EQ(r.metaValue(meta::kCommandLine), "python train.py");
  auto procs = r.processes();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].exitStatus, 3);
  EXPECT_EQ(procs[0].parentPid, 1);
  EXPECT_EQ(r.threads().at(0).name, "main");
  int n = 0;
  r.forEachApiCall(ApiKind::kDriver, {}, [&](const ApiCallRecord& a) {
    EXPECT_EQ(a.cbid, 307);
    EXPECT_EQ(r.string(a.nameId), "cuLaunchKernel");
    ++n;
  });
  r.forEachMemset({}, [&](const MemsetRecord& m) { n += m.value == 255 && m.memKind == 2; });
  r.forEachSync({}, [&](const SyncRecord& s) {
    n += s.syncType == SyncType::kEventSynchronize && s.eventId == 4 && s.eventSyncId == 40;
  });
  r.forEachNvtx({}, [&](const NvtxRecord& v) { n += !v.end && v.text == "mark"; });
  r.forEachPhase({}, [&](const PhaseRecord& p) { n += r.string(p.nameId) == "train"; });
  EXPECT_EQ(n, 5);
  EXPECT_EQ(r.externalCorrelations().at(0).externalId, 1);
  EXPECT_DOUBLE_EQ(r.calibration().at(0).meanNs, 1500.5);
  std::vector<PlainEventRecord> plain;
  r.forEachPlainEvent([&](const PlainEventRecord& p) { plain.push_back(p); });
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].pid, "Spans");
  EXPECT_EQ(plain[0].tid, "-3");
  EXPECT_EQ(r.gpus().at(0).smCount, 132);
  auto span = r.timeSpan();
  ASSERT_TRUE(span);
  EXPECT_EQ(span->start, 0);
  EXPECT_EQ(span->end, 100);
}

class WindowQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "w.sqlite";
    TraceWriter w(path_);
    auto name = w.intern("x");
    // Thread 1: [0,10) [10,20) [20,20) [25,1000) ; thread 2: [5,6)
    for (auto [s, e] :
         std::vector<std::pair<TimeNs, TimeNs>>{{0, 10}, {10, 20}, {20, 20}, {25, 1000}}) {
      w.addCpuInterval({.start = s, .end = e, .globalTid = 1, .nameId = name});
    }
    w.addCpuInterval(
        {.start = 5, .end = 6, .globalTid = 2, .category = Category::kPython, .nameId = name});
    for (int i = 0; i < 100; ++i) {
      w.addKernel({.start = i * 10, .end = i * 10 + 5, .deviceId = i % 2, .streamId = 7});
    }
    w.commit();
  }
  std::vector<std::pair<TimeNs, TimeNs>> cpu(EventFilter f) {
    TraceReader r(path_);
    std::vector<std::pair<TimeNs, TimeNs>> out;
    r.forEachCpuInterval(f, [&](const CpuIntervalRecord& c) { out.emplace_back(c.start, c.end); });
    return out;
  }
  TempDir dir_;
  std::filesystem::path path_;
};

TEST_F(WindowQuery, KeepsEventsOverlappingTheWindow) {
  using V = std::vector<std::pair<TimeNs, TimeNs>>;
  EXPECT_EQ(cpu({.globalTid = 1, .windowStart = 10, .windowEnd = 21}),
            (V{{10, 20}, {20, 20}}));  // [0,10) ends at the window start: out
  EXPECT_EQ(cpu({.globalTid = 1, .windowStart = 500, .windowEnd = 501}), (V{{25, 1000}}));
  EXPECT_EQ(cpu({.globalTid = 1, .windowStart = 20, .windowEnd = 21}), (V{{20, 20}}));
  EXPECT_EQ(cpu({.windowStart = 5, .windowEnd = 6}), (V{{0, 10}, {5, 6}}));
  EXPECT_TRUE(cpu({.globalTid = 1, .windowStart = 2000, .windowEnd = 3000}).empty());
}

TEST_F(WindowQuery, FiltersByThreadProcessAndCategory) {
  using V = std::vector<std::pair<TimeNs, TimeNs>>;
  EXPECT_EQ(cpu({.globalTid = 2}), (V{{5, 6}}));
  EXPECT_EQ(cpu({.category = Category::kPython}), (V{{5, 6}}));
  EXPECT_EQ(cpu({.globalPid = 0}).size(), 5u);  // both threads belong to pid 0
  EXPECT_TRUE(cpu({.globalPid = globalPidOf(1)}).empty());
}

TEST_F(WindowQuery, StreamsKernelsPerDeviceAndStream) {
  TraceReader r(path_);
  std::vector<TimeNs> starts;
  r.forEachKernel({.deviceId = 1, .streamId = 7, .windowStart = 100, .windowEnd = 200},
                  [&](const KernelRecord& k) { starts.push_back(k.start); });
  EXPECT_EQ(starts, (std::vector<TimeNs>{110, 130, 150, 170, 190}));
}

TEST(Reader, RejectsFilesThatAreNotTraces) {
  TempDir dir;
  EXPECT_THROW(TraceReader(dir / "missing.sqlite"), TraceError);
  EXPECT_THROW(TraceReader(dir.write("x.json", "{}")), TraceError);
  EXPECT_THROW(TraceReader(dir.path()), TraceError);
  {
    Database db(dir / "other.sqlite", Database::Mode::kCreate);
    db.exec("CREATE TABLE foo (x)");
  }
  try {
    TraceReader r(dir / "other.sqlite");
    FAIL() << "accepted a database without rlscope_meta";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("not an rlscope trace"), std::string::npos);
  }
}

TEST(Reader, NeverWritesToTheInput) {
  TempDir dir;
  auto path = dir / "t.sqlite";
  {
    TraceWriter w(path);
    w.addCpuInterval({.start = 1, .end = 2, .globalTid = 1});
    w.commit();
  }
  auto before = testing::readFile(path);
  auto mtime = std::filesystem::last_write_time(path);
  {
    TraceReader r(path);
    r.forEachCpuInterval({}, [](const CpuIntervalRecord&) {});
    EXPECT_THROW(r.db().exec("DELETE FROM rlscope_cpu_intervals"), TraceError);
  }
  EXPECT_EQ(testing::readFile(path), before);
  EXPECT_EQ(std::filesystem::last_write_time(path), mtime);
  for (auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "t.sqlite");
  }
}

}  // namespace
}  // namespace rlscope::trace
