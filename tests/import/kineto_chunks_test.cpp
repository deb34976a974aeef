// Kineto import in chunks (ImportOptions::kinetoChunkBytes): the trace is the same, row for row,
// whatever the chunk size, and a malformed input fails with the same message as when the
// document is parsed in one piece. Chunk size 1 makes every event its own chunk.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rlscope/import/importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "support/temp_dir.h"

namespace rlscope::import {
namespace {

using nlohmann::json;

constexpr std::size_t kChunkSizes[] = {0, 1, 100, 4096, std::size_t{64} << 10};

// Every row of every table, with storage classes, ordered by rowid; the creation time is left
// out (it differs between runs).
std::string dumpTrace(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto rows = [&](const std::string& sql, std::string& out) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        out += std::to_string(sqlite3_column_type(st, c)) + ":";
        if (auto* text = sqlite3_column_text(st, c)) out += reinterpret_cast<const char*>(text);
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(st);
  };
  std::string tables, out;
  rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", tables);
  std::size_t start = 0;
  while (start < tables.size()) {
    auto end = tables.find('\n', start);
    auto name = tables.substr(start + 2, end - start - 3);  // "3:name|"
    start = end + 1;
    out += "== " + name + "\n";
    rows("SELECT * FROM \"" + name + "\"" +
             (name == "rlscope_meta" ? " WHERE key != 'created_at'" : "") + " ORDER BY rowid",
         out);
  }
  sqlite3_close(db);
  return out;
}

// The dump of `text` imported with each chunk size; they must all be equal.
std::vector<std::string> importEachWay(const std::string& text) {
  testing::TempDir dir;
  auto in = dir.write("in.json", text);
  std::vector<std::string> dumps;
  for (auto chunk : kChunkSizes) {
    auto out = dir / (std::string("out") + std::to_string(chunk) + ".sqlite");
    ImportOptions options;
    options.kinetoChunkBytes = chunk;
    importFile(in, out, options);
    dumps.push_back(dumpTrace(out));
  }
  return dumps;
}

// The error message of importing `text` with each chunk size.
std::vector<std::string> errorsEachWay(const std::string& text) {
  testing::TempDir dir;
  auto in = dir.write("in.json", text);
  std::vector<std::string> errors;
  for (auto chunk : kChunkSizes) {
    ImportOptions options;
    options.kinetoChunkBytes = chunk;
    try {
      importFile(in, dir / "out.sqlite", options);
      errors.push_back("(imported)");
    } catch (const trace::TraceError& e) {
      errors.push_back(e.what());
    }
  }
  return errors;
}

void expectAllEqual(const std::vector<std::string>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    EXPECT_EQ(v[i], v[0]) << "chunk size " << kChunkSizes[i] << " differs from one piece";
  }
}

// Names and args full of what a lexical scan must not take for structure.
std::string awkward(int i) {
  static const std::string pieces[] = {"\\\"", "{", "}", "[", "]", ",", "\\\\", "\\n", "é", " "};
  std::string s;
  for (int k = 0; k < i % 23; ++k) s += pieces[(i * 7 + k * 3) % std::size(pieces)];
  return s;
}

std::string mixedTrace(bool pretty) {
  json events = json::array();
  int flow = 1;
  for (int i = 0; i < 400; ++i) {
    int pid = 1000 + i % 3;
    int correlation = i / 3;  // repeats across the three processes
    double ts = 10.0 * i;
    if (i % 5 == 0) {  // before its launch
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name", std::string("k") + std::to_string(i % 4)},
                        {"pid", 0},
                        {"tid", 7 + i % 3},
                        {"ts", ts + 2},
                        {"dur", 1},
                        {"args",
                         {{"device", 0},
                          {"stream", 7 + i % 3},
                          {"correlation", correlation},
                          {"grid", {i, 1, 1}}}}});
    }
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", "cudaLaunchKernel"},
                      {"pid", pid},
                      {"tid", pid},
                      {"ts", ts},
                      {"dur", 1.5},
                      {"args", {{"correlation", correlation}, {"cbid", 211}}}});
    events.push_back({{"ph", "s"},
                      {"id", flow},
                      {"pid", pid},
                      {"tid", pid},
                      {"ts", ts},
                      {"cat", "ac2g"},
                      {"name", "ac2g"}});
    events.push_back({{"ph", "f"},
                      {"id", flow++},
                      {"pid", 0},
                      {"tid", 7 + i % 3},
                      {"ts", ts + 2},
                      {"cat", "ac2g"},
                      {"name", "ac2g"},
                      {"bp", "e"}});
    if (i % 5 != 0) {
      events.push_back(
          {{"ph", "X"},
           {"cat", "kernel"},
           {"name", std::string("k") + std::to_string(i % 4)},
           {"pid", 0},
           {"tid", 7 + i % 3},
           {"ts", ts + 2},
           {"dur", 1},
           {"args", {{"device", 0}, {"stream", 7 + i % 3}, {"correlation", correlation}}}});
    }
    events.push_back({{"ph", "X"},
                      {"cat", i % 2 ? "cpu_op" : "python_function"},
                      {"name", awkward(i)},
                      {"pid", pid},
                      {"tid", pid + 1},
                      {"ts", ts},
                      {"dur", 3},
                      {"args", {{"s", awkward(i + 1)}, {"x", {awkward(i + 2)}}}}});
    if (i % 7 == 0) {
      events.push_back({{"ph", "X"},
                        {"cat", "misc"},
                        {"name", awkward(i + 3)},
                        {"pid", "Spans"},
                        {"tid", awkward(i)},
                        {"ts", ts},
                        {"dur", 1},
                        {awkward(i + 4), {{"y", awkward(i + 5)}}}});
    }
    if (i % 50 == 0) {
      events.push_back({{"ph", "X"},
                        {"cat", "user_annotation"},
                        {"name", "step"},
                        {"pid", pid},
                        {"tid", pid + 1},
                        {"ts", ts - 1},
                        {"dur", 600}});
    }
  }
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", 1000},
                    {"tid", 0},
                    {"args", {{"name", "trainer"}}}});
  auto text = json{{"traceEvents", events}}.dump(pretty ? 1 : -1);
  // Members after the events, as Kineto writes some of them.
  text.pop_back();
  return text + R"(, "deviceProperties": [{"id": 0, "name": "G}P{U", "numSms": 108}]})";
}

TEST(KinetoChunks, SameTraceWhateverTheChunkSize) {
  expectAllEqual(importEachWay(mixedTrace(false)));
  expectAllEqual(importEachWay(mixedTrace(true)));
  // A bare event array, and two traceEvents members (the importer reads both).
  expectAllEqual(importEachWay(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, )"
                               R"("tid": 1, "ts": 1, "dur": 1}, {"ph": "i", "name": "b", )"
                               R"("pid": 1, "tid": 1, "ts": 2, "s": "t"}])"));
  expectAllEqual(importEachWay(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, )"
      R"("ts": 1, "dur": 1}], "schemaVersion": 1, "traceEvents": [ ]})"));
}

TEST(KinetoChunks, GpuRecordsBeforeTheirLaunchGetTheLaunchingProcess) {
  // Correlation ids repeat across processes; the ac2g flows settle which launch is whose.
  json events = json::array();
  for (int pid : {1000, 1001}) {
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", "k"},
                      {"pid", 0},
                      {"tid", pid - 993},
                      {"ts", 5},
                      {"dur", 1},
                      {"args", {{"device", 0}, {"stream", pid - 993}, {"correlation", 1}}}});
  }
  for (int pid : {1000, 1001}) {
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", "cudaLaunchKernel"},
                      {"pid", pid},
                      {"tid", pid},
                      {"ts", 1},
                      {"dur", 1},
                      {"args", {{"correlation", 1}}}});
    events.push_back({{"ph", "s"},
                      {"id", pid},
                      {"pid", pid},
                      {"tid", pid},
                      {"ts", 1},
                      {"cat", "ac2g"},
                      {"name", "ac2g"}});
    events.push_back({{"ph", "f"},
                      {"id", pid},
                      {"pid", 0},
                      {"tid", pid - 993},
                      {"ts", 5},
                      {"cat", "ac2g"},
                      {"name", "ac2g"},
                      {"bp", "e"}});
  }
  auto text = json{{"traceEvents", events}}.dump();
  expectAllEqual(importEachWay(text));
  testing::TempDir dir;
  auto out = dir / "out.sqlite";
  importFile(dir.write("in.json", text), out);
  trace::TraceReader reader(out);
  std::map<std::int64_t, std::int64_t> pidOfStream;
  reader.forEachKernel({}, [&](const trace::KernelRecord& k) {
    pidOfStream[k.streamId] = trace::pidOfGlobalId(k.globalPid);
  });
  EXPECT_EQ(pidOfStream, (std::map<std::int64_t, std::int64_t>{{7, 1000}, {8, 1001}}));
}

TEST(KinetoChunks, RealTracesAreTheSameInChunks) {
  auto dir = testing::sharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  for (const char* name : {"a100_alexnet.json.gz", "cpu_only.json.gz", "sampled_rank0.json.gz"}) {
    SCOPED_TRACE(name);
    expectAllEqual(importEachWay(testing::readMaybeGzip(dir / name)));
  }
}

TEST(KinetoChunks, MalformedInputFailsWithTheSameMessage) {
  std::string good;
  for (int i = 0; i < 300; ++i) {
    good += R"({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(i) + R"(, "dur": 1},)" + "\n";
  }
  const std::string bad[] = {
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": "x"}]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": tru}]})",
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\xc3\", \"ts\": 1}]}",
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\nc\", \"ts\": 1}]}",
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, )"
      R"("args": {"grid": [1, 2.5, 1]}}]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": -1}]})",
      R"({"cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1}]})",
      R"(5]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1},]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1},,{}]})",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1}]} x)",
      R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1})",
      R"({"ph": "X", "cat": "cpu_op", "args": {"a": [1}]}]})",
  };
  for (const auto& tail : bad) {
    SCOPED_TRACE(tail);
    auto errors = errorsEachWay("{\"traceEvents\": [\n" + good + tail);
    EXPECT_NE(errors[0], "(imported)");
    expectAllEqual(errors);
  }
}

}  // namespace
}  // namespace rlscope::import
