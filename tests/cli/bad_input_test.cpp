// Bad input never crashes rlscope: one clear error line on stderr, a non-zero exit status, no
// output file left behind, and the input untouched. One test per kind of bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using testing::TempDir;

const std::string kValidJson =
    R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,)"
    R"( "ts": 10, "dur": 5}, {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1,)"
    R"( "tid": 1, "ts": 20, "dur": 5}]})";

// Runs `rlscope ARGS...` where the input is at `input`, and checks the failure contract.
void expectCleanFailure(const TempDir& dir, const std::filesystem::path& input,
                        std::vector<std::string> args, const std::string& mustMention) {
  std::string before = testing::readFile(input);
  std::set<std::filesystem::path> filesBefore;
  for (auto& f : std::filesystem::directory_iterator(dir.path())) filesBefore.insert(f.path());

  args.insert(args.begin(), "rlscope");
  auto result = testing::runCommand(args);

  EXPECT_NE(result.exitCode, 0);
  EXPECT_LT(result.exitCode, 128) << "killed by a signal: " << result.err;
  auto errLines = testing::lines(result.err);
  ASSERT_EQ(errLines.size(), 1u) << "stderr:\n" << result.err;
  EXPECT_EQ(errLines[0].rfind("rlscope: error: ", 0), 0u) << errLines[0];
  EXPECT_NE(errLines[0].find(mustMention), std::string::npos)
      << "'" << errLines[0] << "' should mention '" << mustMention << "'";
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_EQ(testing::readFile(input), before) << "the input was modified";
  std::set<std::filesystem::path> filesAfter;
  for (auto& f : std::filesystem::directory_iterator(dir.path())) filesAfter.insert(f.path());
  EXPECT_EQ(filesAfter, filesBefore) << "a file was left behind";
}

void expectImportFails(const std::string& name, const std::string& bytes,
                       const std::string& mustMention) {
  TempDir dir;
  auto input = dir.write(name, bytes);
  expectCleanFailure(dir, input, {"import", input.string(), "-o", (dir / "out.sqlite").string()},
                     mustMention);
}

TEST(BadInput, EmptyFile) {
  expectImportFails("empty.json", "", "empty file");
}

TEST(BadInput, TruncatedGzip) {
  auto gz = testing::gzip(kValidJson);
  expectImportFails("t.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip");
}

TEST(BadInput, CorruptGzip) {
  auto gz = testing::gzip(kValidJson);
  for (std::size_t i = 12; i < gz.size() - 8; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  expectImportFails("c.json.gz", gz, "corrupt gzip");
}

TEST(BadInput, TruncatedJson) {
  expectImportFails("t.json", kValidJson.substr(0, kValidJson.size() - 30), "JSON");
}

TEST(BadInput, CorruptJson) {
  expectImportFails("c.json", R"({"traceEvents": [{"ph": "X",, "ts": }]})", "JSON");
}

TEST(BadInput, WrongFormat) {
  expectImportFails("image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16),
                    "unrecognised format");
}

TEST(BadInput, JsonThatIsNotATrace) {
  expectImportFails("other.json", R"({"name": "package.json", "version": 3})", "no traceEvents");
}

TEST(BadInput, NonUtf8) {
  std::string bad = kValidJson;
  bad.replace(bad.find("aten::mm"), 8, "aten\xff\xfe\xfdmm");
  expectImportFails("bad.json", bad, "UTF-8");
}

TEST(BadInput, AbsurdTimestamp) {
  std::string bad = kValidJson;
  bad.replace(bad.find("\"ts\": 10"), 8, "\"ts\": 1e300");
  expectImportFails("absurd.json", bad, "traceEvents[0].ts");
}

TEST(BadInput, NegativeDuration) {
  std::string bad = kValidJson;
  bad.replace(bad.find("\"dur\": 5"), 8, "\"dur\": -5");
  expectImportFails("negative.json", bad, "negative duration");
}

TEST(BadInput, AbsurdPid) {
  std::string bad = kValidJson;
  bad.replace(bad.find("\"pid\": 1"), 8, "\"pid\": 1e40");
  expectImportFails("pid.json", bad, "traceEvents[0].pid");
}

TEST(BadInput, AbsurdKernelArgument) {
  expectImportFails(
      "grid.json",
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,)"
      R"( "ts": 1, "dur": 1, "args": {"grid": [1e99, 1, 1]}}]})",
      "grid");
}

// A trace written by a future rlscope: every command that reads traces refuses it.
TEST(BadInput, WrongSchemaVersion) {
  TempDir dir;
  auto path = dir / "future.sqlite";
  {
    trace::TraceWriter w(path);
    w.setMeta(trace::meta::kSchemaVersion, "99");
    w.commit();
  }
  expectCleanFailure(dir, path, {"info", path.string()}, "schema version 99");
  expectCleanFailure(dir, path, {"export", path.string(), "-o", (dir / "x.json").string()},
                     "schema version 99");
  expectCleanFailure(dir, path,
                     {"merge", path.string(), path.string(), "-o", (dir / "job.sqlite").string()},
                     "schema version 99");
}

// The bytes of a valid trace of 20 000 CPU intervals (several SQLite pages of each table).
std::string validTraceBytes(const TempDir& dir) {
  auto path = dir / "valid.sqlite";
  {
    trace::TraceWriter w(path);
    auto name = w.intern("op");
    for (int i = 0; i < 20000; ++i) {
      w.addCpuInterval({.start = i,
                        .end = i + 1,
                        .globalTid = 1,
                        .category = trace::Category::kBackend,
                        .nameId = name});
    }
    w.commit();
  }
  auto bytes = testing::readFile(path);
  std::filesystem::remove(path);
  return bytes;
}

TEST(BadInput, TruncatedTrace) {
  TempDir dir;
  auto bytes = validTraceBytes(dir);
  auto cut = dir.write("cut.sqlite", bytes.substr(0, bytes.size() / 3));
  expectCleanFailure(dir, cut, {"info", cut.string()}, "cut.sqlite");
}

TEST(BadInput, CorruptTrace) {
  TempDir dir;
  auto bytes = validTraceBytes(dir);
  for (std::size_t i = 4096; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(0xA5);
  auto path = dir.write("corrupt.sqlite", bytes);
  expectCleanFailure(dir, path, {"info", path.string()}, "corrupt.sqlite");
  expectCleanFailure(dir, path,
                     {"merge", path.string(), path.string(), "-o", (dir / "job.sqlite").string()},
                     "corrupt.sqlite");
}

TEST(BadInput, MergeNeverWritesOverAnInput) {
  TempDir dir;
  auto path = dir.write("valid.sqlite", validTraceBytes(dir));
  expectCleanFailure(dir, path, {"merge", path.string(), "-o", path.string()},
                     "is one of the traces to merge");
}

TEST(BadInput, MissingInput) {
  TempDir dir;
  auto result = testing::runCommand(
      {"rlscope", "import", (dir / "nope.json").string(), "-o", (dir / "out.sqlite").string()});
  EXPECT_NE(result.exitCode, 0);
  ASSERT_EQ(testing::lines(result.err).size(), 1u) << result.err;
  EXPECT_NE(result.err.find("no such file"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "out.sqlite"));
}

TEST(BadInput, OutputDirectoryMissing) {
  TempDir dir;
  auto input = dir.write("ok.json", kValidJson);
  expectCleanFailure(dir, input,
                     {"import", input.string(), "-o", (dir / "no/such/dir/out.sqlite").string()},
                     "does not exist");
}

TEST(BadInput, UnknownFlag) {
  auto result =
      testing::runCommand({"rlscope", "import", "in.json", "-o", "out.sqlite", "--frobnicate"});
  EXPECT_EQ(result.exitCode, 2);
  ASSERT_EQ(testing::lines(result.err).size(), 1u) << result.err;
  EXPECT_NE(result.err.find("--frobnicate"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rlscope import --help"), std::string::npos) << result.err;
}

// A failed import must not replace a good trace that is already at the output path.
TEST(BadInput, FailedImportKeepsExistingOutput) {
  TempDir dir;
  auto out = dir.write("existing.sqlite", "precious");
  auto input = dir.write("bad.json", "{\"traceEvents\": [");
  auto result = testing::runCommand({"rlscope", "import", input.string(), "-o", out.string()});
  EXPECT_NE(result.exitCode, 0);
  EXPECT_EQ(testing::readFile(out), "precious");
}

}  // namespace
}  // namespace rlscope
