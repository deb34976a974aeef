// Round trip: TraceWriter -> `rlscope export --format chrome` -> `rlscope import` gives back every
// row of every table. Rows are compared as normalised JSON: interned strings by their text,
// operation ids by the operation they name (import numbers operations itself), and without the
// few columns the Chrome format does not carry (listed at `normalised`).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "rich_trace.h"
#include "rlscope/export/chrome_exporter.h"
#include "rlscope/import/importer.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/reader.h"
#include "rlscope/trace/schema.h"
#include "support/temp_dir.h"

namespace rlscope::exporter {
namespace {

using nlohmann::json;
using trace::TraceReader;

json argsOf(const std::string& text) {
  return text.empty() ? json::object() : json::parse(text);
}

// Every table of a trace as table -> sorted list of row texts.
//
// Not compared, because a Chrome trace has no place for them (or rlscope import rebuilds them):
// - operation ids, parentId (compared as the parent's name and start) and the source of
//   non-NVTX operations (import marks them all kineto_user_annotation); "External id" in an
//   operation's args (the export sets it to the operation id);
// - the callchainId of CUDA API calls, the sharedMemoryExecuted of kernels, maxIPC of GPUs;
// - the process of GPU records without a launching CUDA API call (their correlation id is 0 or
//   matches no call);
// - process fields other than pid and name; ThreadNames priorities; which of rlscope_threads and
//   ThreadNames holds a thread's name (the name itself is compared);
// - the meta keys the writer of the new trace owns (versions, creation time, provenance), and
//   gpu_vendor NVIDIA, which import infers and absent means.
class Snapshot {
 public:
  Snapshot(TraceReader& r, const std::set<std::int64_t>& launchedCorrelations)
      : r_(r), launched_(launchedCorrelations) {
    readOperations();
    tables_["rlscope_cpu_intervals"];
    r.forEachCpuInterval({}, [&](const trace::CpuIntervalRecord& c) {
      add("rlscope_cpu_intervals", {{"start", c.start},
                                    {"end", c.end},
                                    {"globalTid", c.globalTid},
                                    {"category", static_cast<int>(c.category)},
                                    {"name", str(c.nameId)},
                                    {"args", argsOf(c.args)}});
    });
    r.forEachPhase({}, [&](const trace::PhaseRecord& p) {
      add("rlscope_phases", {{"start", p.start},
                             {"end", p.end},
                             {"globalPid", p.globalPid},
                             {"name", str(p.nameId)}});
    });
    for (auto kind : {trace::ApiKind::kRuntime, trace::ApiKind::kDriver}) {
      std::string table(kind == trace::ApiKind::kRuntime ? trace::table::kRuntime
                                                         : trace::table::kDriver);
      r.forEachApiCall(kind, {}, [&](const trace::ApiCallRecord& a) {
        add(table, {{"start", a.start},
                    {"end", a.end},
                    {"eventClass", a.eventClass},
                    {"globalTid", a.globalTid},
                    {"correlationId", a.correlationId},
                    {"name", str(a.nameId)},
                    {"returnValue", a.returnValue},
                    {"cbid", a.cbid}});
      });
    }
    r.forEachKernel({}, [&](const trace::KernelRecord& k) {
      json row =
          gpuRow(k.start, k.end, k.deviceId, k.contextId, k.streamId, k.correlationId, k.globalPid);
      row.update({{"demangledName", str(k.demangledName)},
                  {"shortName", str(k.shortName)},
                  {"mangledName", str(k.mangledName)},
                  {"launchType", k.launchType},
                  {"cacheConfig", k.cacheConfig},
                  {"registersPerThread", k.registersPerThread},
                  {"grid", {k.gridX, k.gridY, k.gridZ}},
                  {"block", {k.blockX, k.blockY, k.blockZ}},
                  {"staticSharedMemory", k.staticSharedMemory},
                  {"dynamicSharedMemory", k.dynamicSharedMemory},
                  {"localMemoryPerThread", k.localMemoryPerThread},
                  {"localMemoryTotal", k.localMemoryTotal},
                  {"gridId", k.gridId},
                  {"graphNodeId", k.graphNodeId},
                  {"graphId", k.graphId}});
      add(trace::table::kKernel, row);
    });
    r.forEachMemcpy({}, [&](const trace::MemcpyRecord& m) {
      json row =
          gpuRow(m.start, m.end, m.deviceId, m.contextId, m.streamId, m.correlationId, m.globalPid);
      row.update({{"bytes", m.bytes},
                  {"copyKind", m.copyKind},
                  {"srcKind", m.srcKind},
                  {"dstKind", m.dstKind},
                  {"srcDeviceId", m.srcDeviceId},
                  {"dstDeviceId", m.dstDeviceId},
                  {"graphNodeId", m.graphNodeId}});
      add(trace::table::kMemcpy, row);
    });
    r.forEachMemset({}, [&](const trace::MemsetRecord& m) {
      json row =
          gpuRow(m.start, m.end, m.deviceId, m.contextId, m.streamId, m.correlationId, m.globalPid);
      row.update({{"value", m.value},
                  {"bytes", m.bytes},
                  {"memKind", m.memKind},
                  {"graphNodeId", m.graphNodeId}});
      add(trace::table::kMemset, row);
    });
    r.forEachSync({}, [&](const trace::SyncRecord& s) {
      json row =
          gpuRow(s.start, s.end, s.deviceId, s.contextId, s.streamId, s.correlationId, s.globalPid);
      row.update({{"syncType", static_cast<int>(s.syncType)},
                  {"eventId", s.eventId},
                  {"eventSyncId", s.eventSyncId}});
      add(trace::table::kSync, row);
    });
    r.forEachNvtx({}, [&](const trace::NvtxRecord& n) {
      add(trace::table::kNvtx, {{"start", n.start},
                                {"end", n.end ? json(*n.end) : json()},
                                {"eventType", static_cast<int>(n.eventType)},
                                {"rangeId", n.rangeId},
                                {"category", n.category},
                                {"color", n.color ? json(*n.color) : json()},
                                {"text", n.text},
                                {"registeredText", str(n.textId)},
                                {"globalTid", n.globalTid},
                                {"endGlobalTid", n.endGlobalTid},
                                {"domainId", n.domainId}});
    });
    r.forEachPlainEvent([&](const trace::PlainEventRecord& p) {
      add(trace::table::kPlainEvents, {{"start", p.start},
                                       {"end", p.end},
                                       {"pid", p.pid},
                                       {"tid", p.tid},
                                       {"name", str(p.nameId)},
                                       {"category", str(p.categoryId)},
                                       {"phase", p.phase},
                                       {"args", argsOf(p.args)}});
    });
    for (const auto& e : r.externalCorrelations()) {
      add(trace::table::kExternalCorrelation, {{"globalPid", e.globalPid},
                                               {"correlationId", e.correlationId},
                                               {"operation", operationKey(e.externalId)}});
    }
    for (const auto& c : r.calibration()) {
      add(trace::table::kCalibration, {{"source", c.source},
                                       {"name", c.name},
                                       {"meanNs", c.meanNs},
                                       {"stdNs", c.stdNs},
                                       {"count", c.count}});
    }
    for (const auto& g : r.gpus()) {
      add(trace::table::kGpuInfo, {{"id", g.id},
                                   {"name", g.name},
                                   {"busLocation", g.busLocation},
                                   {"isDiscrete", g.isDiscrete},
                                   {"l2CacheSize", g.l2CacheSize},
                                   {"totalMemory", g.totalMemory},
                                   {"memoryBandwidth", g.memoryBandwidth},
                                   {"clockRate", g.clockRate},
                                   {"smCount", g.smCount},
                                   {"uuid", g.uuid},
                                   {"chipName", g.chipName},
                                   {"computeMajor", g.computeMajor},
                                   {"computeMinor", g.computeMinor},
                                   {"maxRegistersPerBlock", g.maxRegistersPerBlock},
                                   {"maxShmemPerBlock", g.maxShmemPerBlock},
                                   {"maxShmemPerBlockOptin", g.maxShmemPerBlockOptin},
                                   {"maxShmemPerSm", g.maxShmemPerSm},
                                   {"maxRegistersPerSm", g.maxRegistersPerSm},
                                   {"threadsPerWarp", g.threadsPerWarp},
                                   {"maxWarpsPerSm", g.maxWarpsPerSm},
                                   {"maxBlocksPerSm", g.maxBlocksPerSm},
                                   {"maxThreadsPerBlock", g.maxThreadsPerBlock},
                                   {"memoryClockRate", g.memoryClockRate},
                                   {"memoryBusWidth", g.memoryBusWidth}});
    }
    for (const auto& p : r.processes()) {
      add(trace::table::kProcesses, {{"globalPid", p.globalPid}, {"pid", p.pid}, {"name", p.name}});
    }
    auto optional = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(); };
    for (const auto& id : r.processIdentities()) {
      add(trace::table::kProcessIdentity, {{"globalPid", id.globalPid},
                                           {"host", id.host},
                                           {"launcher", id.launcher},
                                           {"rank", optional(id.rank)},
                                           {"localRank", optional(id.localRank)},
                                           {"worldSize", optional(id.worldSize)},
                                           {"localWorldSize", optional(id.localWorldSize)},
                                           {"nodeRank", optional(id.nodeRank)},
                                           {"backend", id.backend},
                                           {"variables", id.variables}});
    }
    readThreads();
    for (const auto& [key, value] : r.meta()) {
      if (key == trace::meta::kSchemaVersion || key == trace::meta::kRlscopeVersion ||
          key == trace::meta::kCreatedAt || key == trace::meta::kSourceFormat ||
          key == trace::meta::kSourceFile || key == "kineto_schema_version") {
        continue;
      }
      // Absent means NVIDIA; import says so when it sees CUDA calls.
      if (key == trace::meta::kGpuVendor && value == "NVIDIA") continue;
      add(trace::table::kMeta, {{"key", key}, {"value", value}});
    }
    for (auto& [table, rows] : tables_) std::sort(rows.begin(), rows.end());
  }

  const std::map<std::string, std::vector<std::string>>& tables() const { return tables_; }

 private:
  // A string's text; a very long one by its length and hash, which keeps failure output short
  // while still comparing every byte.
  std::string str(trace::StringId id) {
    std::string_view s = r_.string(id);
    if (s.size() <= 200) return std::string(s);
    return "(" + std::to_string(s.size()) + " bytes, hash " +
           std::to_string(std::hash<std::string_view>{}(s)) + ")";
  }

  void add(std::string_view table, const json& row) {
    tables_[std::string(table)].push_back(row.dump());
  }

  json gpuRow(trace::TimeNs start, trace::TimeNs end, std::int64_t device, std::int64_t context,
              std::int64_t stream, std::int64_t correlation, std::int64_t globalPid) {
    return {{"start", start},
            {"end", end},
            {"deviceId", device},
            {"contextId", context},
            {"streamId", stream},
            {"correlationId", correlation},
            {"globalPid", launched_.count(correlation) ? json(globalPid) : json("(unknown)")}};
  }

  // An operation by what it is rather than by its id.
  json operationKey(std::int64_t id) {
    auto it = operations_.find(id);
    if (it == operations_.end()) return "(no operation " + std::to_string(id) + ")";
    const auto& op = it->second;
    return {{"name", str(op.nameId)}, {"start", op.start}, {"globalTid", op.globalTid}};
  }

  void readOperations() {
    r_.forEachOperation({}, [&](const trace::OperationRecord& op) { operations_[op.id] = op; });
    for (const auto& [id, op] : operations_) {
      json args = argsOf(op.args);
      args.erase("External id");
      add(trace::table::kOperations, {{"start", op.start},
                                      {"end", op.end},
                                      {"globalTid", op.globalTid},
                                      {"name", str(op.nameId)},
                                      {"parent", op.parentId ? operationKey(op.parentId) : json()},
                                      {"depth", op.depth},
                                      {"nvtx", op.source == trace::OperationSource::kNvtx},
                                      {"args", args}});
    }
  }

  void readThreads() {
    std::map<std::int64_t, json> threads;
    for (const auto& t : r_.threads()) {
      threads[t.globalTid] = {{"globalPid", t.globalPid}, {"tid", t.tid}, {"name", t.name}};
    }
    for (const auto& n : r_.threadNames()) {
      auto& t = threads[n.globalTid];
      if (t.is_null()) {
        t = {{"globalPid", trace::globalPidOfTid(n.globalTid)},
             {"tid", trace::tidOfGlobalId(n.globalTid)},
             {"name", ""}};
      }
      if (t["name"] == "") t["name"] = str(n.nameId);
    }
    for (auto& [globalTid, t] : threads) {
      t["globalTid"] = globalTid;
      add("threads and their names", t);
    }
  }

  TraceReader& r_;
  const std::set<std::int64_t>& launched_;
  std::map<std::int64_t, trace::OperationRecord> operations_;
  std::map<std::string, std::vector<std::string>> tables_;
};

// Correlation ids that some CUDA API call of the trace carries.
std::set<std::int64_t> launchedCorrelations(TraceReader& r) {
  std::set<std::int64_t> ids;
  for (auto kind : {trace::ApiKind::kRuntime, trace::ApiKind::kDriver}) {
    r.forEachApiCall(kind, {}, [&](const trace::ApiCallRecord& a) {
      if (a.correlationId) ids.insert(a.correlationId);
    });
  }
  return ids;
}

// Exports `original`, imports the export, and compares the two traces table by table.
void expectRoundTrip(const std::filesystem::path& original, const rlscope::testing::TempDir& dir) {
  {
    TraceReader reader(original);
    exportChrome(reader, dir / "exported.json");
  }
  import::importFile(dir / "exported.json", dir / "imported.sqlite");

  TraceReader before(original);
  TraceReader after(dir / "imported.sqlite");
  auto launched = launchedCorrelations(before);
  Snapshot expected(before, launched);
  Snapshot actual(after, launched);
  std::set<std::string> tables;
  for (const auto& [t, rows] : expected.tables()) tables.insert(t);
  for (const auto& [t, rows] : actual.tables()) tables.insert(t);
  auto rowsOf = [](const Snapshot& s, const std::string& t) {
    auto it = s.tables().find(t);
    return it == s.tables().end() ? std::vector<std::string>{} : it->second;
  };
  for (const auto& t : tables) {
    auto e = rowsOf(expected, t);
    auto a = rowsOf(actual, t);
    std::vector<std::string> lost, added;
    std::set_difference(e.begin(), e.end(), a.begin(), a.end(), std::back_inserter(lost));
    std::set_difference(a.begin(), a.end(), e.begin(), e.end(), std::back_inserter(added));
    std::string message;
    for (const auto& row : lost) message += "\n  lost:  " + row;
    for (const auto& row : added) message += "\n  added: " + row;
    EXPECT_TRUE(lost.empty() && added.empty()) << "table " << t << message;
  }
}

void expectRoundTrip(const testing::RichTraceOptions& options) {
  rlscope::testing::TempDir dir;
  testing::writeRichTrace(dir / "original.sqlite", options);
  expectRoundTrip(dir / "original.sqlite", dir);
}

TEST(ChromeRoundTrip, KeepsEveryRowOfEveryTable) {
  expectRoundTrip({.overlappingCorrelationIds = false});
}

// Two processes whose CUDA correlation ids overlap (each CUPTI counts from 1): only the ac2g flows
// tell which process launched a kernel, so import has to follow them.
TEST(ChromeRoundTrip, KeepsTheLaunchingProcessWhenCorrelationIdsOverlap) {
  expectRoundTrip({.overlappingCorrelationIds = true});
}

// Real PyTorch profiler traces: what `rlscope import` made of them survives export and import.
TEST(ChromeRoundTrip, RealKinetoTracesSurviveExportAndImport) {
  auto traces = rlscope::testing::sharedTracesDir();
  if (traces.empty()) GTEST_SKIP() << "shared Kineto traces not found";
  for (const auto& entry : std::filesystem::directory_iterator(traces)) {
    if (entry.path().extension() != ".gz") continue;
    SCOPED_TRACE(entry.path().filename().string());
    rlscope::testing::TempDir dir;
    import::importFile(entry.path(), dir / "original.sqlite");
    expectRoundTrip(dir / "original.sqlite", dir);
  }
}

}  // namespace
}  // namespace rlscope::exporter
