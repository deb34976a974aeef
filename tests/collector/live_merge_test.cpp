// Merging while the run runs (merge::PartMerge::mergeAvailable, merge::LiveMerge) must give the
// trace that merging after the run gives. Real parts (rlscope-prof --keep-parts on the test
// workload and the C++ sample) are replayed into a fresh directory a few irregular slices of
// bytes at a time, cutting headers, blocks and records anywhere, with a merge after each slice;
// every table of the result is compared, row for row, with a merge of the whole parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rlscope/merge/live_merge.h"
#include "rlscope/merge/part_merger.h"
#include "rlscope/part/format.h"
#include "rlscope/trace/sqlite.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// The part files rlscope-prof kept for `command` (run with a short flush, so that its parts are
// many flushes long).
fs::path keptParts(const TempDir& tmp, std::vector<std::string> command) {
  std::vector<std::string> argv = {
      "rlscope-prof", "-o", (tmp / "run.sqlite").string(), "--keep-parts", "--flush-ms", "5", "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  auto r = testing::runCommand(argv);  // the exec workload exits with 3 on purpose
  const std::string marker = "part files kept in ";
  auto at = r.err.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no part directory in: " << r.err;
    return {};
  }
  auto end = r.err.find('\n', at);
  return r.err.substr(at + marker.size(), end - at - marker.size());
}

std::string bytesOf(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

merge::MergeOptions options() {
  merge::MergeOptions o;
  o.commandLine = "replayed";
  o.features = part::kFeatureNvtx | part::kFeaturePython | part::kFeatureCudaApi;
  o.commandElapsedNs = 123;
  return o;
}

// Every table's rows, each as text, sorted: the trace's content whatever order rows were
// inserted in.
std::map<std::string, std::vector<std::string>> contentOf(const fs::path& trace) {
  trace::Database db(trace, trace::Database::Mode::kReadOnlyUntrusted);
  std::vector<std::string> tables;
  auto list = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (list.step()) tables.push_back(list.columnAsText(0));
  std::map<std::string, std::vector<std::string>> content;
  for (const auto& t : tables) {
    auto rows = db.prepare("SELECT * FROM \"" + t + "\"");
    auto& out = content[t];
    while (rows.step()) {
      std::string row;
      for (int c = 0; c < rows.columnCount(); ++c) row += rows.columnAsText(c) + "|";
      if (!row.starts_with("created_at|")) out.push_back(std::move(row));  // the clock's
    }
    std::sort(out.begin(), out.end());
  }
  return content;
}

// Replays the parts in `parts` into a new directory, each growing by an irregular slice per
// step, merging after every step; returns the trace.
fs::path replayLive(const TempDir& tmp, const fs::path& parts, std::uint64_t budget) {
  fs::path dir = tmp / "replay";
  fs::create_directories(dir);
  std::vector<std::pair<fs::path, std::string>> files;
  for (const auto& e : fs::directory_iterator(parts))
    if (e.path().extension() == ".part") files.emplace_back(e.path().filename(), bytesOf(e.path()));
  std::sort(files.begin(), files.end());
  fs::path out = tmp / "live.sqlite";
  merge::PartMerge live(dir, out, options());
  std::vector<std::size_t> written(files.size(), 0);
  std::uint64_t seed = 12345;
  bool more = true;
  for (int step = 0; more; ++step) {
    more = false;
    for (std::size_t i = 0; i < files.size(); ++i) {
      // Later parts start later, as later processes do.
      if (step < static_cast<int>(i)) {
        more = true;
        continue;
      }
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      std::size_t slice = 1 + (seed >> 33) % 24000;
      const std::string& bytes = files[i].second;
      std::size_t n = std::min(slice, bytes.size() - written[i]);
      std::ofstream(dir / files[i].first, std::ios::binary | std::ios::app)
          .write(bytes.data() + written[i], static_cast<std::streamsize>(n));
      written[i] += n;
      if (written[i] < bytes.size()) more = true;
    }
    live.mergeAvailable(budget);
  }
  live.finish();
  return out;
}

void expectSameTraceLiveAndAfter(const TempDir& tmp, const fs::path& parts) {
  ASSERT_FALSE(parts.empty());
  fs::path after = tmp / "after.sqlite";
  merge::mergeParts(parts, after, options());
  auto expected = contentOf(after);
  ASSERT_GT(expected.at("rlscope_processes").size(), 0u);
  for (std::uint64_t budget : {std::uint64_t{4096}, std::uint64_t{64} << 20}) {
    TempDir replay;
    auto got = contentOf(replayLive(replay, parts, budget));
    ASSERT_EQ(got.size(), expected.size());
    for (const auto& [table, rows] : expected) {
      EXPECT_EQ(got.at(table).size(), rows.size()) << table << ", budget " << budget;
      EXPECT_TRUE(got.at(table) == rows) << table << " differs, budget " << budget;
    }
  }
}

TEST(LiveMerge, TheSampleMergedAsItGrowsIsTheTraceMergedAfter) {
  TempDir tmp;
  auto parts = keptParts(
      tmp, {std::string(RLSCOPE_BIN_DIR) + "/rlscope_sample_cpu_training", "--iterations", "600"});
  expectSameTraceLiveAndAfter(tmp, parts);
}

TEST(LiveMerge, ProcessesForkedAndExecdMergedAsTheyGrowAreTheTraceMergedAfter) {
  for (const char* mode : {"multiprocess", "exec", "fork"}) {
    SCOPED_TRACE(mode);
    TempDir tmp;
    auto parts = keptParts(tmp, {std::string(RLSCOPE_BIN_DIR) + "/rlscope_test_workload", mode});
    expectSameTraceLiveAndAfter(tmp, parts);
  }
}

// rlscope-prof merges on its own thread while the command runs; the trace it writes is the one
// --merge-after-exit writes.
TEST(LiveMerge, RlscopeProfMergesWhileTheCommandRuns) {
  TempDir tmp;
  std::string sample = std::string(RLSCOPE_BIN_DIR) + "/rlscope_sample_cpu_training";
  auto live = testing::runCommand({"rlscope-prof", "-o", (tmp / "live.sqlite").string(),
                                   "--keep-parts", "--", sample, "--iterations", "300"});
  ASSERT_EQ(live.exitCode, 0) << live.err;
  EXPECT_NE(live.err.find("after it;"), std::string::npos) << live.err;
  auto after = testing::runCommand({"rlscope-prof", "-o", (tmp / "after.sqlite").string(),
                                    "--merge-after-exit", "--", sample, "--iterations", "300"});
  ASSERT_EQ(after.exitCode, 0) << after.err;
  auto a = contentOf(tmp / "live.sqlite");
  auto b = contentOf(tmp / "after.sqlite");
  // Two runs: times differ, what was recorded does not.
  for (const char* table : {"rlscope_operations", "NVTX_EVENTS", "rlscope_phases"})
    EXPECT_EQ(a.at(table).size(), b.at(table).size()) << table;
  // The parts the live merge read are whole: merged again after the run, they give its trace.
  const std::string marker = "part files kept in ";
  auto at = live.err.find(marker);
  ASSERT_NE(at, std::string::npos);
  fs::path parts =
      live.err.substr(at + marker.size(), live.err.find('\n', at) - at - marker.size());
  merge::MergeOptions o;
  auto again = tmp / "again.sqlite";
  merge::mergeParts(parts, again, o);
  auto c = contentOf(again);
  for (const char* table : {"rlscope_operations", "NVTX_EVENTS", "rlscope_phases",
                            "rlscope_cpu_intervals", "rlscope_processes"})
    EXPECT_TRUE(a.at(table) == c.at(table)) << table;
}

// A trace that cannot be written is said when the merge starts (before the run), and a merge
// that fails on the thread (here: the parts' directory is gone) at finish; neither leaves a
// trace behind.
TEST(LiveMerge, FailuresAreSaidAndLeaveNoTrace) {
  TempDir tmp;
  fs::create_directories(tmp / "parts");
  EXPECT_THROW(merge::LiveMerge(tmp / "parts", tmp / "missing" / "t.sqlite", options()),
               std::runtime_error);
  merge::LiveMerge live(tmp / "parts", tmp / "t.sqlite", options(),
                        {.niceness = 0, .interval = std::chrono::milliseconds(1)});
  fs::remove_all(tmp / "parts");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_THROW(live.finish(), std::runtime_error);
  EXPECT_FALSE(fs::exists(tmp / "t.sqlite"));
}

}  // namespace
}  // namespace rlscope
