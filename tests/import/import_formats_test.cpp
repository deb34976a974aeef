// The formats `rlscope import` reads, as one table (formats()): what each claims, and what
// detection picks from a file's content.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rlscope/import/importer.h"
#include "rlscope/import/input_file.h"
#include "rlscope/import/kineto_importer.h"
#include "rlscope/import/nsys_importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/writer.h"
#include "support/nsys_fixture.h"
#include "support/temp_dir.h"

namespace rlscope::import {
namespace {

using testing::TempDir;

constexpr std::string_view kEvent =
    R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5})";

std::string detectedName(const std::filesystem::path& path) {
  const Format* f = detectFormat(path);
  return f ? std::string(f->name) : std::string("rlscope trace");
}

std::string detectError(const std::filesystem::path& path) {
  try {
    detectFormat(path);
  } catch (const trace::TraceError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportFormats, EachHasANameItsFilesATestAndAnImporter) {
  std::set<std::string_view> names;
  for (const Format* f : formats()) {
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->name.empty());
    EXPECT_FALSE(f->files.empty());
    EXPECT_NE(f->match, nullptr);
    EXPECT_NE(f->import, nullptr);
    EXPECT_TRUE(names.insert(f->name).second) << "two formats named " << f->name;
  }
  EXPECT_EQ(names, (std::set<std::string_view>{kinetoFormat().name, nsysFormat().name}));
}

// PyTorch writes deviceProperties and distributedInfo before traceEvents: the real CPU-only
// trace has 16 KiB of them. Detection looks far enough in (kSampleBytes) to see the events.
TEST(ImportFormats, KinetoIsKnownByItsEventsAfterLongMetadata) {
  TempDir dir;
  std::string metadata(200 << 10, 'x');
  std::string json = R"({"schemaVersion": 1, "deviceProperties": [{"name": ")" + metadata +
                     R"("}], "traceEvents": [)" + std::string(kEvent) + "]}";
  auto plain = dir.write("late.json", json);
  auto gz = dir.write("late.json.gz", testing::gzip(json));
  EXPECT_EQ(detectedName(plain), kinetoFormat().name);
  EXPECT_EQ(detectedName(gz), kinetoFormat().name);
  // The array form of Chrome's format: events, each with a phase.
  auto array = dir.write("array.json", "[" + std::string(kEvent) + "]");
  EXPECT_EQ(detectedName(array), kinetoFormat().name);

  InputSample sample{.head = json};
  EXPECT_EQ(kinetoFormat().match(sample), Match::kYes);
  EXPECT_EQ(nsysFormat().match(sample), Match::kNo);
}

// JSON that is no trace goes to the Kineto importer only as its family (kMaybe), which then
// says what is missing; bytes of no format are refused naming every format.
TEST(ImportFormats, OtherJsonIsOnlyTheFamilyAndOtherBytesNoFormat) {
  std::string other = R"({"name": "package.json", "version": 3})";
  EXPECT_EQ(kinetoFormat().match(InputSample{.head = other}), Match::kMaybe);
  EXPECT_EQ(kinetoFormat().match(InputSample{.head = "PK\x03\x04"}), Match::kNo);
  EXPECT_EQ(kinetoFormat().match(InputSample{.head = "", .gzip = true}), Match::kMaybe);

  TempDir dir;
  auto zip = dir.write("archive.zip", std::string("PK\x03\x04\x14\0\0\0", 8));
  std::string error = detectError(zip);
  EXPECT_NE(error.find("unrecognised format"), std::string::npos) << error;
  for (const Format* f : formats()) EXPECT_NE(error.find(f->files), std::string::npos) << error;

  auto gzipped = dir.write("notes.txt.gz", testing::gzip("plain words, no JSON"));
  EXPECT_EQ(detectedName(gzipped), kinetoFormat().name);  // gzip: the family, checked in full
  auto out = dir / "out.sqlite";
  try {
    importFile(gzipped, out);
    ADD_FAILURE() << "imported text that is not JSON";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ImportFormats, SqliteIsAnRlscopeTraceAnNsysExportOrOnlyTheFamily) {
  TempDir dir;
  auto ours = dir / "ours.sqlite";
  {
    trace::TraceWriter w(ours);
    w.commit();
  }
  EXPECT_EQ(detectFormat(ours), nullptr);

  auto exportPath = dir / "export.sqlite";
  {
    testing::NsysFixture nsys(exportPath);
    nsys.createEmptyTable("CUPTI_ACTIVITY_KIND_KERNEL");
  }
  EXPECT_EQ(detectedName(exportPath), nsysFormat().name);

  auto other = dir / "other.sqlite";
  {
    trace::Database db(other, trace::Database::Mode::kCreate);
    db.exec("CREATE TABLE foo (a INTEGER)");
  }
  trace::Database db(other, trace::Database::Mode::kReadOnlyUntrusted);
  EXPECT_EQ(nsysFormat().match(InputSample{.sqlite = &db}), Match::kMaybe);
  EXPECT_EQ(kinetoFormat().match(InputSample{.sqlite = &db}), Match::kNo);
}

TEST(ImportFormats, EveryRealKinetoTraceIsDetected) {
  auto dir = testing::sharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent: real-trace tests skipped";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gz") continue;
    ++seen;
    EXPECT_EQ(detectedName(entry.path()), kinetoFormat().name) << entry.path();
    bool gzip = false;
    std::string head = readSample(entry.path(), kSampleBytes, &gzip);
    EXPECT_EQ(kinetoFormat().match(InputSample{.head = head, .gzip = gzip}), Match::kYes)
        << entry.path();
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace rlscope::import
