// rlscope-prof end to end: real programs (tests/collector/programs, samples/) run under the
// collector, and the merged trace is checked with SQL, as a user would query it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "rlscope/trace/sqlite.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using testing::CommandResult;
using testing::runCommand;
using testing::TempDir;

std::string workload() {
  return std::string(RLSCOPE_BIN_DIR) + "/rlscope_test_workload";
}

struct Profiled {
  CommandResult result;
  std::filesystem::path trace;
};

Profiled profile(const TempDir& tmp, std::vector<std::string> command,
                 std::vector<std::string> options = {}) {
  Profiled p;
  p.trace = tmp / "trace.sqlite";
  std::vector<std::string> argv = {"rlscope-prof", "-o", p.trace.string()};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  p.result = runCommand(argv);
  return p;
}

class Trace {
 public:
  explicit Trace(const std::filesystem::path& path)
      : db_(path, trace::Database::Mode::kReadOnlyUntrusted) {}
  std::int64_t count(const std::string& sql) { return db_.queryInt(sql).value_or(-1); }
  std::string text(const std::string& sql) {
    auto st = db_.prepare(sql);
    return st.step() ? st.columnAsText(0) : std::string("<no row>");
  }
  std::vector<std::string> texts(const std::string& sql) {
    std::vector<std::string> out;
    auto st = db_.prepare(sql);
    while (st.step()) out.push_back(st.columnAsText(0));
    return out;
  }

 private:
  trace::Database db_;
};

// Under ThreadSanitizer the collector is instrumented: /bin/sh (system()) cannot load it, and
// TSan does not support a fork child of a threaded process starting threads (the child's writer).
#ifdef RLSCOPE_TSAN_BUILD
constexpr bool kTsanBuild = true;
#else
constexpr bool kTsanBuild = false;
#endif

constexpr const char* kOperationNames =
    "SELECT s.value FROM rlscope_operations o JOIN StringIds s ON s.id = o.nameId ";

TEST(Prof, RecordsEveryKindOfNvtxCall) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "nvtx"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  // Push/pop nesting and the innermost-first attribution.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON s.id = o.nameId "
                    "JOIN rlscope_operations parent ON parent.id = o.parentId "
                    "JOIN StringIds ps ON ps.id = parent.nameId "
                    "WHERE s.value = 'inner' AND ps.value = 'outer' AND o.depth = 1"),
            1);
  // A registered string in a domain, with its color and category.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId "
                    "WHERE s.value = 'registered range' AND n.eventType = 59 "
                    "AND n.color = 4278255360 AND n.category = 7 AND n.domainId != 0"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'my.domain'"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 33 AND category = 7 "
                    "AND text = 'my category'"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 34 AND text = 'a mark'"),
            1);
  // A start/end range closed by another thread.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 60 AND "
                    "text = 'across threads' AND endGlobalTid != 0 AND endGlobalTid != globalTid "
                    "AND end > start"),
            1);
  // Names of any length and bytes, and wide strings as UTF-8.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE length(text) = 100000"), 1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE "
                    "CAST(text AS BLOB) = CAST(X'627974657320FFFE0120E282AC' AS BLOB)"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE text = 'wide ' || char(233)"), 1);
  // rlscope annotations: an annotation operation, a phase, a progress mark with its payload.
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'annotated' AND o.source = 0)"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_phases p JOIN StringIds s ON s.id = p.nameId "
                    "WHERE s.value = 'training' AND p.end > p.start"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 34 AND text = 'iteration'"),
            1);
  // Stored once: an annotation is its operation and a phase its phase, with no NVTX_EVENTS row,
  // unless the row says more (here: the thread that ended it). Other domains' ranges keep theirs.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE text IN ('annotated', 'training')"), 0);
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'handed on' AND o.source = 0)"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 60 AND text = 'handed on' "
                    "AND endGlobalTid != globalTid"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59 AND "
                    "text IN ('outer', 'inner')"),
            2);
  // NVTX ranges are operations of source 1; the range left open is closed at exit and flagged.
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'open at exit' AND o.source = 1 "
                    "AND o.args = '{\"unterminated\":true}')"),
            1);
  EXPECT_NE(p.result.err.find("1 NVTX push/pop ranges still open"), std::string::npos)
      << p.result.err;
  EXPECT_NE(p.result.err.find("1 NVTX pops without a matching push"), std::string::npos)
      << p.result.err;
  // Thread names: nvtxNameOsThread wins over the OS name of the main thread.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_threads WHERE name = 'main thread'"), 1);
  EXPECT_EQ(t.text("SELECT value FROM rlscope_meta WHERE key = 'source_format'"), "rlscope-prof");
  EXPECT_EQ(t.text("SELECT substr(value, 1, 12) FROM rlscope_meta WHERE key = 'gpu_activity'"),
            "unavailable:");
}

TEST(Prof, ThousandsOfShortLivedThreads) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "threads", "2000"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations"), 2000);
  EXPECT_EQ(t.count("SELECT COUNT(DISTINCT globalTid) FROM rlscope_operations"), 2000);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                    "s.id = o.nameId WHERE s.value = 'thread 1999'"),
            1);
}

TEST(Prof, ExitStatusMissingAndNonExecutableCommands) {
  EXPECT_EQ(profile(TempDir(), {workload(), "exit", "3"}).result.exitCode, 3);
  TempDir tmp;
  auto missing = profile(tmp, {"/no/such/program"});
  EXPECT_EQ(missing.result.exitCode, 127);
  EXPECT_EQ(testing::lines(missing.result.err).size(), 1u) << missing.result.err;
  EXPECT_FALSE(std::filesystem::exists(missing.trace));
  auto notFound = profile(tmp, {"rlscope-no-such-command-xyz"});
  EXPECT_EQ(notFound.result.exitCode, 127);
  EXPECT_NE(notFound.result.err.find("command not found"), std::string::npos);
  auto script = tmp.write("not-executable.sh", "#!/bin/sh\nexit 0\n");
  auto notExec = profile(tmp, {script.string()});
  EXPECT_EQ(notExec.result.exitCode, 126);
  EXPECT_NE(notExec.result.err.find("not executable"), std::string::npos) << notExec.result.err;
  auto none = runCommand({"rlscope-prof"});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_EQ(testing::lines(none.err).size(), 1u) << none.err;
  // A mistyped option is not the command: with or without `--` after it, in both spellings of
  // the command and in calibrate.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"rlscope-prof", "--bogus", "--", "true"},
        {"rlscope-prof", "-o", (tmp / "x.sqlite").string(), "--bogus", "true"},
        {"rlscope", "prof", "--bogus", "--", "true"},
        {"rlscope", "calibrate", "-o", (tmp / "c.json").string(), "--bogus", "--", "true"}}) {
    auto bogus = runCommand(args);
    EXPECT_EQ(bogus.exitCode, 2) << args[1];
    EXPECT_EQ(testing::lines(bogus.err).size(), 1u) << bogus.err;
    EXPECT_NE(bogus.err.find("unknown option --bogus"), std::string::npos) << bogus.err;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "x.sqlite"));
}

// Where rlscope-prof may use one CPU (taskset), merging beside the command could only take the
// command's time: the merge waits for its end and says so; --merge-live merges beside it anyway.
TEST(Prof, OnOneCpuTheMergeWaitsForTheEndUnlessAskedToMergeLive) {
  if (::access("/usr/bin/taskset", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/taskset";
  TempDir tmp;
  const std::string prof = std::string(RLSCOPE_BIN_DIR) + "/rlscope-prof";
  const std::string said = "one CPU to run on: the trace is merged after";
  auto pinned = runCommand({"/usr/bin/taskset", "-c", "0", prof, "-o", (tmp / "a.sqlite").string(),
                            "--", workload(), "exit", "0"});
  EXPECT_EQ(pinned.exitCode, 0) << pinned.err;
  EXPECT_NE(pinned.err.find(said), std::string::npos) << pinned.err;
  EXPECT_TRUE(std::filesystem::exists(tmp / "a.sqlite"));
  auto live = runCommand({"/usr/bin/taskset", "-c", "0", prof, "--merge-live", "-o",
                          (tmp / "b.sqlite").string(), "--", workload(), "exit", "0"});
  EXPECT_EQ(live.exitCode, 0) << live.err;
  EXPECT_EQ(live.err.find(said), std::string::npos) << live.err;
  EXPECT_TRUE(std::filesystem::exists(tmp / "b.sqlite"));
  auto both = runCommand({prof, "--merge-live", "--merge-after-exit", "--", "true"});
  EXPECT_EQ(both.exitCode, 2);
  EXPECT_EQ(testing::lines(both.err).size(), 1u) << both.err;
  if (std::thread::hardware_concurrency() > 1) {
    auto free = profile(tmp, {workload(), "exit", "0"});
    EXPECT_EQ(free.result.err.find(said), std::string::npos) << free.result.err;
  }
}

TEST(Prof, ForkWithoutExecGetsItsOwnProcess) {
  if (kTsanBuild) GTEST_SKIP() << "ThreadSanitizer build: no threads in fork children";
  for (const char* mode : {"fork", "fork-underscore-exit"}) {
    SCOPED_TRACE(mode);
    TempDir tmp;
    auto p = profile(tmp, {workload(), mode});
    ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
    Trace t(p.trace);
    EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 2);
    // The child: its own pid, its parent recorded, its range, its exit status; and none of
    // the parent's ranges are duplicated into it.
    EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes c JOIN rlscope_processes p "
                      "ON c.parentPid = p.pid WHERE c.exitStatus = 5"),
              1);
    EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                      "s.id = o.nameId JOIN rlscope_processes c ON c.exitStatus = 5 AND "
                      "(o.globalTid >> 24) = (c.globalPid >> 24) WHERE s.value = 'child work'"),
              1);
    EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                      "s.id = o.nameId WHERE s.value = 'parent before fork'"),
              1);
    // _exit is seen by the collector: the child's part is complete, nothing is cut short.
    EXPECT_EQ(p.result.err.find("ended without finishing"), std::string::npos) << p.result.err;
  }
}

TEST(Prof, AProcessThatRenamesItselfIsNamedAsItEnded) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "rename", "with", "arguments"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.text("SELECT name FROM rlscope_processes"), "renamed-worker");
  EXPECT_EQ(t.text("SELECT commandLine FROM rlscope_processes"), "renamed-worker");
}

TEST(Prof, ChildProcessesOfAllKinds) {
  if (kTsanBuild) GTEST_SKIP() << "ThreadSanitizer build: sh cannot load the collector";
  TempDir tmp;
  auto p = profile(tmp, {workload(), "multiprocess"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  // The parent, the spawned child, the shell of system() and the child it runs.
  EXPECT_GE(t.count("SELECT COUNT(*) FROM rlscope_processes"), 3);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                    "s.id = o.nameId WHERE s.value = 'child'"),
            2);
  EXPECT_EQ(t.count("SELECT COUNT(DISTINCT globalTid >> 24) FROM rlscope_operations"), 3);
}

TEST(Prof, RanksComeFromTheLauncherVariablesAndNothingElseIsKept) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "ranks"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 3);
  // Every process has a row; the parent has no rank, the children are torchrun's 0 and 1.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity i JOIN rlscope_processes p "
                    "USING (globalPid)"),
            3);
  EXPECT_EQ(t.texts("SELECT launcher || ' ' || rank || '/' || worldSize || ' local ' || "
                    "localRank FROM rlscope_process_identity WHERE rank IS NOT NULL ORDER BY rank"),
            (std::vector<std::string>{"torchrun 0/2 local 0", "torchrun 1/2 local 1"}));
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity WHERE rank IS NULL AND "
                    "launcher IS NULL"),
            1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity WHERE host = "
                    "(SELECT value FROM rlscope_meta WHERE key = 'host')"),
            3);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity WHERE "
                    "json_extract(variables, '$.TORCHELASTIC_RUN_ID') = 'test-run'"),
            2);
  // Only the launchers' variables: not PATH, not a token.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity WHERE variables LIKE "
                    "'%API_TOKEN%' OR variables LIKE '%secret%' OR variables LIKE '%PATH%'"),
            0);
  // The helper thread recorded nothing, yet it is named: it was alive at the end.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_threads WHERE name = 'idle-helper'"), 2);
  auto info = runCommand({"rlscope", "info", p.trace.string()});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("processes (3, 2 with a rank)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("rank 1 of 2 (local 1, torchrun)"), std::string::npos) << info.out;
  auto json = runCommand({"rlscope", "info", "--format", "json", p.trace.string()});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["ranks"], 2);
  EXPECT_EQ(doc["hosts"].size(), 1u);
  std::vector<std::string> ranks;
  for (const auto& process : doc["processes"]) {
    EXPECT_EQ(process["host"], doc["hosts"][0]);
    if (process["rank"].is_null()) continue;
    ranks.push_back(process["launcher"].get<std::string>() + " " +
                    std::to_string(process["rank"].get<int>()) + "/" +
                    std::to_string(process["world_size"].get<int>()));
  }
  std::sort(ranks.begin(), ranks.end());
  EXPECT_EQ(ranks, (std::vector<std::string>{"torchrun 0/2", "torchrun 1/2"}));
}

TEST(Prof, EachNodeOfAJobWritesItsOwnTraceAndMergeJoinsThem) {
  TempDir tmp;
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::vector<std::filesystem::path> traces;
  for (int run = 0; run < 2; ++run) {
    auto dir = tmp / ("run" + std::to_string(run));
    std::filesystem::create_directories(dir);
    auto r = runCommand(
        {"rlscope-prof", "-q", "--job", "ppo", "-o", dir.string(), "--", workload(), "ranks"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    traces.push_back(dir / (std::string("ppo.") + host + ".sqlite"));
    ASSERT_TRUE(std::filesystem::exists(traces.back())) << traces.back();
    EXPECT_EQ(Trace(traces.back()).text("SELECT value FROM rlscope_meta WHERE key = 'job'"), "ppo");
  }
  // Two traces of one host: one clock, no alignment to make.
  auto job = tmp / "job.sqlite";
  auto m =
      runCommand({"rlscope", "merge", traces[0].string(), traces[1].string(), "-o", job.string()});
  ASSERT_EQ(m.exitCode, 0) << m.err;
  EXPECT_NE(m.out.find("+0.000000000 s by same host"), std::string::npos) << m.out;
  Trace t(job);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 6);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_process_identity WHERE rank IS NOT NULL"), 4);
  EXPECT_EQ(t.text("SELECT value FROM rlscope_meta WHERE key = 'host'"), host);
  EXPECT_EQ(t.text("SELECT json_extract(value, '$[1].method') FROM rlscope_meta "
                   "WHERE key = 'merged_traces'"),
            "same host");
  auto info = runCommand({"rlscope", "info", job.string()});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("merged from  " + traces[1].string() + " (" + host +
                          "): +0.000000000 s by same host\n"),
            std::string::npos)
      << info.out;
}

TEST(Prof, ExecContinuesTheProcessAndAFailedExecGoesOn) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "exec"});
  ASSERT_EQ(p.result.exitCode, 3) << p.result.err;
  Trace t(p.trace);
  // One process: its first image's ranges, the one open at the exec (closed there, flagged),
  // and the exit status of its last image.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 1);
  EXPECT_EQ(t.count("SELECT exitStatus FROM rlscope_processes"), 3);
  EXPECT_EQ(t.text("SELECT commandLine FROM rlscope_processes"), workload() + " exit 3");
  auto names = t.texts(std::string(kOperationNames) + "ORDER BY o.start");
  EXPECT_EQ(names, (std::vector<std::string>{"before exec", "after failed exec", "open at exec"}));
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'open at exec' AND o.args = '{\"unterminated\":true}')"),
            1);
  EXPECT_EQ(p.result.err.find("ended without finishing"), std::string::npos) << p.result.err;
  EXPECT_EQ(p.result.err.find("pid used twice"), std::string::npos) << p.result.err;
}

TEST(Prof, AChildExecdWithoutRlscopesEnvironmentIsProfiledToo) {
  if (kTsanBuild) GTEST_SKIP() << "ThreadSanitizer build: no threads in fork children";
  TempDir tmp;
  auto p = profile(tmp, {workload(), "clean-environment-child"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 2);
  EXPECT_EQ(
      t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames + "WHERE s.value = 'child')"),
      1);
}

TEST(Prof, SignalActionsLookUntouchedToTheProgram) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "signal-actions"});
  // 10..14 name the check that failed (see the workload); 128+SIGTERM is the expected end.
  ASSERT_EQ(p.result.exitCode, 128 + SIGTERM) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'terminated')"),
            1);
  EXPECT_EQ(p.result.err.find("ended without finishing"), std::string::npos) << p.result.err;
}

TEST(Prof, WaitsForProcessesTheProgramLeftRunning) {
  if (kTsanBuild) GTEST_SKIP() << "ThreadSanitizer build: no threads in fork children";
  TempDir tmp;
  auto p = profile(tmp, {workload(), "orphan"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes WHERE exitStatus = 0"), 2);
  EXPECT_EQ(t.count(std::string("SELECT COUNT(*) FROM (") + kOperationNames +
                    "WHERE s.value = 'orphan work')"),
            1);
  EXPECT_NE(p.result.err.find("left running"), std::string::npos) << p.result.err;
  // With no wait, the orphan is still running at the merge, and rlscope-prof says so.
  TempDir tmp2;
  auto q = profile(tmp2, {workload(), "orphan"}, {"--wait-descendants", "0"});
  ASSERT_EQ(q.result.exitCode, 0) << q.result.err;
  EXPECT_NE(q.result.err.find("still running"), std::string::npos) << q.result.err;
}

// Python's multiprocessing with each start method (forkserver restores the SIGINT action it
// found, which must be one Python can set back), when a python3 is on PATH.
TEST(Prof, PythonMultiprocessingEveryStartMethod) {
  if (kTsanBuild) GTEST_SKIP() << "ThreadSanitizer build: python cannot load the collector";
  if (runCommand({"/usr/bin/env", "python3", "-c", "pass"}).exitCode != 0)
    GTEST_SKIP() << "no python3 on PATH";
  TempDir tmp;
  auto script = tmp.write("mp.py",
                          "import multiprocessing as mp, sys\n"
                          "def work(i):\n"
                          "    return sum(range(i * 1000))\n"
                          "if __name__ == '__main__':\n"
                          "    with mp.get_context(sys.argv[1]).Pool(2) as pool:\n"
                          "        print(sum(pool.map(work, range(8))))\n");
  for (const char* method : {"fork", "spawn", "forkserver"}) {
    SCOPED_TRACE(method);
    auto p = profile(tmp, {"python3", script.string(), method}, {"--wait-descendants", "10"});
    ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
    EXPECT_EQ(p.result.out, "69986000\n");
    Trace t(p.trace);
    // The main interpreter and at least its two pool workers.
    EXPECT_GE(t.count("SELECT COUNT(*) FROM rlscope_processes WHERE name LIKE 'python%'"), 3);
    EXPECT_EQ(p.result.err.find("Traceback"), std::string::npos) << p.result.err;
    EXPECT_EQ(p.result.err.find("ended without finishing"), std::string::npos) << p.result.err;
  }
}

TEST(Prof, CrashSigkillAndSigtermKeepWhatWasRecorded) {
  struct Case {
    const char* mode;
    int status;
    bool finished;  // the collector saw the end (it handles SIGTERM, not SEGV or KILL)
  };
  for (Case c : {Case{"segv", 128 + SIGSEGV, false}, Case{"sigkill", 128 + SIGKILL, false},
                 Case{"sigterm", 128 + SIGTERM, true},
                 // Returns from main right after raise(): the collector's writer thread may act on
                 // the signal after the exit began, and the signal must still end the process.
                 Case{"sigterm-then-return", 128 + SIGTERM, true}}) {
    SCOPED_TRACE(c.mode);
    // ThreadSanitizer catches SIGSEGV itself and exits with its own status.
    if (kTsanBuild && std::string_view(c.mode) == "segv") continue;
    TempDir tmp;
    auto p = profile(tmp, {workload(), c.mode});
    EXPECT_EQ(p.result.exitCode, c.status) << p.result.err;
    ASSERT_TRUE(std::filesystem::exists(p.trace)) << p.result.err;
    Trace t(p.trace);
    EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                      "s.id = o.nameId WHERE s.value = 'before the end'"),
              1);
    EXPECT_NE(p.result.err.find("was killed by signal"), std::string::npos) << p.result.err;
    bool cutShort = p.result.err.find("ended without finishing") != std::string::npos;
    EXPECT_EQ(cutShort, !c.finished) << p.result.err;
    if (c.finished) {
      // The range open at the signal is kept, closed at the end, flagged.
      EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON "
                        "s.id = o.nameId WHERE s.value = 'open when killed' AND "
                        "o.args = '{\"unterminated\":true}'"),
                1);
      EXPECT_EQ(t.count("SELECT exitStatus FROM rlscope_processes"), 128 + SIGTERM);
    }
  }
}

TEST(Prof, CpuSampleOperationsAndPhases) {
  TempDir tmp;
  auto p = profile(
      tmp, {std::string(RLSCOPE_BIN_DIR) + "/rlscope_sample_cpu_training", "--iterations", "5"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  EXPECT_NE(p.result.out.find("cpu_training: 5 iterations"), std::string::npos);
  EXPECT_NE(p.result.err.find("trace written to"), std::string::npos) << p.result.err;
  Trace t(p.trace);
  auto names = t.texts(std::string(kOperationNames) + "GROUP BY s.value ORDER BY s.value");
  EXPECT_EQ(names, (std::vector<std::string>{"backpropagation", "inference", "simulation",
                                             "training_loop"}));
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_phases"), 10);
  EXPECT_EQ(t.count("SELECT MAX(depth) FROM rlscope_operations"), 1);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_operations WHERE source != 0"), 0);
  // The annotations are their operations and phases only: no NVTX_EVENTS range repeats them.
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)"), 0);
  // GPU activity was asked for (the default) but this program never initialised CUDA: the
  // features say what was recorded, not what was asked for.
  EXPECT_EQ(t.text("SELECT value FROM rlscope_meta WHERE key = 'features'"),
            R"({"cuda_api":true,"gpu_activity":false,"nvtx":true,"python":true})");
  EXPECT_EQ(
      t.text("SELECT value FROM rlscope_meta WHERE key = 'gpu_activity'").rfind("unavailable: ", 0),
      0u);
}

TEST(Prof, NoNvtxRecordsNoRanges) {
  TempDir tmp;
  auto p = profile(tmp, {workload(), "nvtx"},
                   {"--no-nvtx", "--no-cuda-api", "--no-gpu-activity", "--no-python"});
  ASSERT_EQ(p.result.exitCode, 0) << p.result.err;
  Trace t(p.trace);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM NVTX_EVENTS"), 0);
  EXPECT_EQ(t.count("SELECT COUNT(*) FROM rlscope_processes"), 1);
  EXPECT_EQ(t.text("SELECT value FROM rlscope_meta WHERE key = 'features'"),
            R"({"cuda_api":false,"gpu_activity":false,"nvtx":false,"python":false})");
  // No GPU warning when CUDA recording is switched off.
  EXPECT_EQ(p.result.err.find("warning: GPU activity unavailable"), std::string::npos)
      << p.result.err;
}

TEST(Prof, RlscopeProfIsTheSameCommand) {
  TempDir tmp;
  auto out = tmp / "t.sqlite";
  auto r = runCommand({"rlscope", "prof", "-q", "-o", out.string(), "--", workload(), "exit", "4"});
  EXPECT_EQ(r.exitCode, 4) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
  auto help = runCommand({"rlscope-prof", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  for (const char* option : {"--no-cuda-api", "--no-gpu-activity", "--no-nvtx", "--output"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace rlscope
