#include "rlscope/export/chrome_exporter.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "rlscope/export/json_object_text.h"
#include "rlscope/export/json_writer.h"
#include "rlscope/trace/atomic_output.h"
#include "rlscope/trace/enum_labels.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"

namespace rlscope::exporter {

namespace {

using trace::TimeNs;

// Where a Chrome trace draws an event: CPU events on (OS pid, OS tid), GPU events on
// (device, stream) as Kineto does.
struct Track {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  auto operator<=>(const Track&) const = default;
};

struct CorrelationKey {
  std::int64_t globalPid = 0;
  std::int64_t correlationId = 0;
  bool operator==(const CorrelationKey&) const = default;
};

struct CorrelationKeyHash {
  std::size_t operator()(const CorrelationKey& k) const {
    return std::hash<std::uint64_t>{}(
        static_cast<std::uint64_t>(k.globalPid) ^
        (static_cast<std::uint64_t>(k.correlationId) * 0x9E3779B97F4A7C15ull));
  }
};

// A CUDA API call that GPU work points back to through its correlation id.
struct ApiCallRef {
  std::int64_t globalPid = 0;
  std::int64_t correlationId = 0;
  int kindOrder = 0;  // 0 runtime, 1 driver: the runtime call wins when both carry the id
  TimeNs start = 0;
  Track track;
  std::int64_t processRank = 0;  // index of globalPid among the processes with API calls
};

// Chrome `cat` of each rlscope CPU category (docs/trace-format.md lists the Kineto inverse).
std::string_view cpuCategoryCat(trace::Category c) {
  switch (c) {
    case trace::Category::kPython:
      return "python_function";
    case trace::Category::kBackend:
      return "cpu_op";
    case trace::Category::kSimulator:
      return "rlscope.simulator";
    case trace::Category::kCudaApi:
      return "rlscope.cuda_api";
    case trace::Category::kNative:
      return "rlscope.native";
    case trace::Category::kGpuKernel:
      return "rlscope.gpu_kernel";
    case trace::Category::kGpuMemcpy:
      return "rlscope.gpu_memcpy";
    case trace::Category::kGpuMemset:
      return "rlscope.gpu_memset";
    case trace::Category::kWaiting:
      return "rlscope.waiting";
  }
  return "rlscope.unknown_category";
}

// Kineto's names for CUPTI synchronization records.
std::string_view syncName(trace::SyncType t) {
  switch (t) {
    case trace::SyncType::kEventSynchronize:
      return "Event Sync";
    case trace::SyncType::kStreamWaitEvent:
      return "Stream Wait Event";
    case trace::SyncType::kStreamSynchronize:
      return "Stream Sync";
    case trace::SyncType::kContextSynchronize:
      return "Context Sync";
    case trace::SyncType::kUnknown:
      break;
  }
  return "Unknown Sync";
}

// id -> label of one of the trace's ENUM_* tables (schema.cpp), e.g. 1 -> "HtoD".
class EnumLabels {
 public:
  EnumLabels(trace::Database& db, std::string_view table)
      : labels_(trace::readEnumLabels(db, table)) {}
  std::string_view operator()(std::int64_t id) const {
    auto it = labels_.find(id);
    return it == labels_.end() || it->second.empty() ? std::string_view("Unknown")
                                                     : std::string_view(it->second);
  }

 private:
  std::map<std::int64_t, std::string> labels_;
};

// Plain-event pid/tid text that the trace writer stores as an INTEGER (optional '-', at most 18
// digits, no leading zero) goes back out as a JSON number; anything else as a string.
bool isIntegerText(std::string_view v) {
  std::size_t pos = !v.empty() && v[0] == '-' ? 1 : 0;
  std::size_t digits = v.size() - pos;
  if (digits == 0 || digits > 18 || (digits > 1 && v[pos] == '0')) return false;
  return std::all_of(v.begin() + static_cast<std::ptrdiff_t>(pos), v.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Keys the exporter writes itself on a plain event; a stored "__event" member never repeats them.
bool isReservedEventKey(std::string_view quotedKey) {
  for (std::string_view k : {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"}) {
    if (keyEquals(quotedKey, k)) return true;
  }
  return false;
}

// end - start, computed without signed overflow even for a corrupt row.
std::int64_t duration(TimeNs start, TimeNs end) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(end) -
                                   static_cast<std::uint64_t>(start));
}

// Kineto's "memory bandwidth (GB/s)": bytes per nanosecond.
double bandwidthGBps(std::int64_t bytes, TimeNs start, TimeNs end) {
  return end > start ? static_cast<double>(bytes) / static_cast<double>(end - start) : 0.0;
}

constexpr std::string_view kInvalidArgsKey = "rlscope.invalid_args";

// Every row of a table, in storage order: a Chrome trace needs no order, and skipping the sort by
// start roughly halves the time SQLite takes.
const trace::EventFilter kAnyOrder{.storageOrder = true};

class ChromeExporter {
 public:
  ChromeExporter(trace::TraceReader& reader, JsonWriter& out)
      : reader_(reader),
        out_(out),
        copyKinds_(reader.db(), "ENUM_CUDA_MEMCPY_OPER"),
        memKinds_(reader.db(), "ENUM_CUDA_MEM_KIND") {}

  ExportStats run() {
    loadProcessesAndThreads();
    for (const auto& e : reader_.externalCorrelations()) {
      externalIds_.emplace(CorrelationKey{e.globalPid, e.correlationId}, e.externalId);
    }
    auto gpus = reader_.gpus();
    out_.raw("{\"schemaVersion\":1,\"deviceProperties\":[");
    writeDeviceProperties(gpus);
    out_.raw(']');
    writeDistributedInfo();
    out_.raw(",\"traceEvents\":[");
    writeCpuIntervals();
    writeOperations();
    writePhases();
    writeApiCalls(trace::ApiKind::kRuntime, "cuda_runtime");
    writeApiCalls(trace::ApiKind::kDriver, "cuda_driver");
    prepareFlows();
    writeKernels();
    writeMemcpys();
    writeMemsets();
    writeSyncs();
    writeNvtx();
    writePlainEvents();
    writeMetadataEvents(gpus);
    out_.raw("\n],\"displayTimeUnit\":\"ns\",\"rlscope\":");
    writeRlscopeObject();
    out_.raw("}\n");
    return stats_;
  }

 private:
  // --- tracks ---------------------------------------------------------------------------------

  void loadProcessesAndThreads() {
    processes_ = reader_.processes();
    for (const auto& p : processes_) processPid_[p.globalPid] = p.pid;
    identities_ = reader_.processIdentities();
    threads_ = reader_.threads();
    for (const auto& t : threads_) {
      threadTrack_[t.globalTid] = {processPid(t.globalPid), t.tid};
    }
  }

  std::int64_t processPid(std::int64_t globalPid) const {
    auto it = processPid_.find(globalPid);
    return it != processPid_.end() ? it->second : trace::pidOfGlobalId(globalPid);
  }

  Track cpuTrack(std::int64_t globalTid) {
    if (globalTid == lastGlobalTid_) return lastTrack_;
    auto it = threadTrack_.find(globalTid);
    if (it == threadTrack_.end()) {
      Track t{processPid(trace::globalPidOfTid(globalTid)), trace::tidOfGlobalId(globalTid)};
      it = threadTrack_.emplace(globalTid, t).first;
    }
    lastGlobalTid_ = globalTid;
    lastTrack_ = it->second;
    return lastTrack_;
  }

  Track gpuTrack(std::int64_t deviceId, std::int64_t streamId) {
    Track t{deviceId, streamId};
    if (gpuTracks_.empty() || t != lastGpuTrack_) {
      gpuTracks_.insert(t);
      lastGpuTrack_ = t;
    }
    return t;
  }

  std::optional<std::int64_t> externalId(std::int64_t globalPid, std::int64_t correlationId) const {
    if (externalIds_.empty()) return std::nullopt;
    auto it = externalIds_.find({globalPid, correlationId});
    if (it == externalIds_.end()) return std::nullopt;
    return it->second;
  }

  // --- event pieces -----------------------------------------------------------------------------

  void beginEvent() {
    out_.raw(firstEvent_ ? std::string_view("\n{") : std::string_view(",\n{"));
    firstEvent_ = false;
  }

  void noteTime(TimeNs t) {
    if (t < minStart_) minStart_ = t;
  }

  void trackAndTime(Track track, TimeNs start) {
    out_.raw(",\"pid\":");
    out_.integer(track.pid);
    out_.raw(",\"tid\":");
    out_.integer(track.tid);
    out_.raw(",\"ts\":");
    out_.micros(start);
    noteTime(start);
  }

  // {"ph":"X","cat":..,"name":..,"pid":..,"tid":..,"ts":..,"dur":..   (left open for args)
  void completeEvent(std::string_view cat, std::string_view name, Track track, TimeNs start,
                     TimeNs end) {
    beginEvent();
    out_.raw("\"ph\":\"X\",\"cat\":\"");
    out_.raw(cat);
    out_.raw("\",\"name\":");
    out_.string(name);
    trackAndTime(track, start);
    out_.raw(",\"dur\":");
    out_.micros(duration(start, end));
    ++stats_.events;
  }

  // ,"key":value for keys that need no escaping.
  void field(std::string_view key, std::int64_t value) {
    out_.raw(",\"");
    out_.raw(key);
    out_.raw("\":");
    out_.integer(value);
  }
  void field(std::string_view key, std::string_view value) {
    out_.raw(",\"");
    out_.raw(key);
    out_.raw("\":");
    out_.string(value);
  }
  void fieldIfNonzero(std::string_view key, std::int64_t value) {
    if (value != 0) field(key, value);
  }
  void fieldIfSet(std::string_view key, const std::optional<std::int64_t>& value) {
    if (value) field(key, *value);
  }

  // The `args` object from a stored args column: the stored members verbatim (a valid object
  // is embedded as is), with "External id" set to `externalId` when given.
  void storedArgs(std::string_view text, std::optional<std::int64_t> externalId = std::nullopt) {
    if (text.empty()) {
      if (!externalId) {
        out_.raw("{}");
        return;
      }
      out_.raw("{\"External id\":");
      out_.integer(*externalId);
      out_.raw('}');
      return;
    }
    if (!validator_.isObject(text)) {
      out_.raw("{\"");
      out_.raw(kInvalidArgsKey);
      out_.raw("\":");
      out_.string(text);
      fieldIfSet("External id", externalId);
      out_.raw('}');
      return;
    }
    if (!externalId) {
      out_.raw(text);
      return;
    }
    splitMembers(text, members_);
    out_.raw('{');
    for (const auto& m : members_) {
      if (keyEquals(m.key, "External id")) continue;
      writeMember(m);
      out_.raw(',');
    }
    out_.raw("\"External id\":");
    out_.integer(*externalId);
    out_.raw('}');
  }

  void writeMember(const JsonMember& m) {
    out_.raw(m.key);
    out_.raw(':');
    out_.raw(m.value);
  }

  // --- rlscope's own tables ----------------------------------------------------------------------

  void writeCpuIntervals() {
    reader_.forEachCpuInterval(kAnyOrder, [&](const trace::CpuIntervalRecord& r) {
      completeEvent(cpuCategoryCat(r.category), reader_.string(r.nameId), cpuTrack(r.globalTid),
                    r.start, r.end);
      out_.raw(",\"args\":");
      storedArgs(r.args);
      out_.raw('}');
    });
  }

  void writeOperations() {
    reader_.forEachOperation(kAnyOrder, [&](const trace::OperationRecord& r) {
      // NVTX-derived operations come back from the NVTX_EVENTS rows on import.
      if (r.source == trace::OperationSource::kNvtx) return;
      completeEvent("user_annotation", reader_.string(r.nameId), cpuTrack(r.globalTid), r.start,
                    r.end);
      out_.raw(",\"args\":");
      storedArgs(r.args, r.id);
      out_.raw('}');
    });
  }

  void writePhases() {
    reader_.forEachPhase(kAnyOrder, [&](const trace::PhaseRecord& r) {
      std::int64_t pid = processPid(r.globalPid);
      completeEvent("rlscope.phase", reader_.string(r.nameId), {pid, pid}, r.start, r.end);
      out_.raw('}');
    });
  }

  void writePlainEvents() {
    reader_.forEachPlainEvent([&](const trace::PlainEventRecord& r) {
      beginEvent();
      out_.raw("\"ph\":");
      out_.string(r.phase);
      if (r.categoryId != trace::kNoString) {
        out_.raw(",\"cat\":");
        out_.string(reader_.string(r.categoryId));
      }
      if (r.nameId != trace::kNoString) {
        out_.raw(",\"name\":");
        out_.string(reader_.string(r.nameId));
      }
      looseField("pid", r.pid);
      looseField("tid", r.tid);
      out_.raw(",\"ts\":");
      out_.micros(r.start);
      noteTime(r.start);
      if (r.phase == "X" || r.end != r.start) {
        out_.raw(",\"dur\":");
        out_.micros(duration(r.start, r.end));
      }
      plainEventArgs(r.args);
      out_.raw('}');
      ++stats_.events;
    });
  }

  void looseField(std::string_view key, const std::string& value) {
    if (value.empty()) return;
    out_.raw(",\"");
    out_.raw(key);
    out_.raw("\":");
    if (isIntegerText(value)) {
      out_.raw(value);
    } else {
      out_.string(value);
    }
  }

  // Stored args of a plain event: "__event" holds the source event's other top-level fields
  // (id, bp, s, ...), which go back to the top level; the remaining members are its args.
  void plainEventArgs(std::string_view text) {
    if (text.empty()) return;
    if (!validator_.isObject(text)) {
      out_.raw(",\"args\":{\"");
      out_.raw(kInvalidArgsKey);
      out_.raw("\":");
      out_.string(text);
      out_.raw('}');
      return;
    }
    splitMembers(text, members_);
    std::size_t argCount = members_.size();
    for (const auto& m : members_) {
      if (!keyEquals(m.key, "__event") || m.value.empty() || m.value[0] != '{') continue;
      --argCount;
      splitMembers(m.value, eventMembers_);
      for (const auto& e : eventMembers_) {
        if (isReservedEventKey(e.key)) continue;
        out_.raw(',');
        writeMember(e);
      }
    }
    if (argCount == 0) return;
    out_.raw(",\"args\":{");
    bool first = true;
    for (const auto& m : members_) {
      if (keyEquals(m.key, "__event") && !m.value.empty() && m.value[0] == '{') continue;
      if (!first) out_.raw(',');
      first = false;
      writeMember(m);
    }
    out_.raw('}');
  }

  // --- CUDA API calls and GPU activity -----------------------------------------------------------

  void writeApiCalls(trace::ApiKind kind, std::string_view cat) {
    int kindOrder = kind == trace::ApiKind::kRuntime ? 0 : 1;
    reader_.forEachApiCall(kind, kAnyOrder, [&](const trace::ApiCallRecord& r) {
      Track track = cpuTrack(r.globalTid);
      std::int64_t globalPid = trace::globalPidOfTid(r.globalTid);
      completeEvent(cat, reader_.string(r.nameId), track, r.start, r.end);
      out_.raw(",\"args\":{\"correlation\":");
      out_.integer(r.correlationId);
      fieldIfNonzero("cbid", r.cbid);
      fieldIfNonzero("returnValue", r.returnValue);
      if (r.correlationId != 0) {
        operationIdFields(globalPid, r.correlationId);
        apiCalls_.push_back({globalPid, r.correlationId, kindOrder, r.start, track, 0});
      }
      out_.raw("}}");
    });
  }

  // Sorts the API calls for lookup and picks flow ids: the correlation ids themselves when no id
  // is used by two processes, else ids that combine the process with the correlation id.
  void prepareFlows() {
    std::sort(apiCalls_.begin(), apiCalls_.end(), [](const ApiCallRef& a, const ApiCallRef& b) {
      return std::tie(a.globalPid, a.correlationId, a.kindOrder, a.start) <
             std::tie(b.globalPid, b.correlationId, b.kindOrder, b.start);
    });
    apiCalls_.erase(std::unique(apiCalls_.begin(), apiCalls_.end(),
                                [](const ApiCallRef& a, const ApiCallRef& b) {
                                  return a.globalPid == b.globalPid &&
                                         a.correlationId == b.correlationId;
                                }),
                    apiCalls_.end());
    std::vector<std::int64_t> ids;
    ids.reserve(apiCalls_.size());
    std::int64_t rank = -1;
    bool fitsCombined = true;
    for (std::size_t i = 0; i < apiCalls_.size(); ++i) {
      auto& c = apiCalls_[i];
      if (i == 0 || c.globalPid != apiCalls_[i - 1].globalPid) ++rank;
      c.processRank = rank;
      ids.push_back(c.correlationId);
      if (c.correlationId < 0 || c.correlationId > 0xFFFFFFFFll) fitsCombined = false;
    }
    std::sort(ids.begin(), ids.end());
    combineFlowIds_ = std::adjacent_find(ids.begin(), ids.end()) != ids.end();
    // (rank + 1) << 32 stays below 2^53, so JavaScript viewers read the id exactly.
    sequentialFlowIds_ = combineFlowIds_ && (!fitsCombined || rank >= (std::int64_t{1} << 20));
  }

  const ApiCallRef* findApiCall(std::int64_t globalPid, std::int64_t correlationId) const {
    auto it = std::lower_bound(
        apiCalls_.begin(), apiCalls_.end(), CorrelationKey{globalPid, correlationId},
        [](const ApiCallRef& a, const CorrelationKey& k) {
          return std::tie(a.globalPid, a.correlationId) < std::tie(k.globalPid, k.correlationId);
        });
    if (it == apiCalls_.end() || it->globalPid != globalPid || it->correlationId != correlationId) {
      return nullptr;
    }
    return &*it;
  }

  std::int64_t flowId(const ApiCallRef& call) {
    if (!combineFlowIds_) return call.correlationId;
    if (sequentialFlowIds_) return ++lastSequentialFlowId_;
    return ((call.processRank + 1) << 32) | call.correlationId;
  }

  // The ac2g flow from the API call that launched GPU work to the work itself.
  void writeFlow(std::int64_t globalPid, std::int64_t correlationId, Track gpu, TimeNs start) {
    if (correlationId == 0) return;
    const ApiCallRef* call = findApiCall(globalPid, correlationId);
    if (!call) return;
    std::int64_t id = flowId(*call);
    beginEvent();
    out_.raw("\"ph\":\"s\",\"id\":");
    out_.integer(id);
    trackAndTime(call->track, call->start);
    out_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
    beginEvent();
    out_.raw("\"ph\":\"f\",\"id\":");
    out_.integer(id);
    trackAndTime(gpu, start);
    out_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
    ++stats_.flows;
  }

  // The operation open when a CUDA call was made (rlscope_external_correlation): "External id",
  // as Kineto links launches and GPU work to CPU ops, and "rlscope operation id", which
  // `rlscope import` reads (in a Kineto trace "External id" may name a cpu_op instead).
  void operationIdFields(std::int64_t globalPid, std::int64_t correlationId) {
    auto id = externalId(globalPid, correlationId);
    if (!id) return;
    field("External id", *id);
    field("rlscope operation id", *id);
  }

  // "device", "context", "stream", "correlation" of every GPU record.
  void gpuArgs(std::int64_t device, std::int64_t context, std::int64_t stream,
               std::int64_t correlation) {
    out_.raw(",\"args\":{\"device\":");
    out_.integer(device);
    field("context", context);
    field("stream", stream);
    field("correlation", correlation);
  }

  void writeKernels() {
    reader_.forEachKernel(kAnyOrder, [&](const trace::KernelRecord& r) {
      Track track = gpuTrack(r.deviceId, r.streamId);
      std::string_view name = reader_.string(r.demangledName);
      completeEvent("kernel", name, track, r.start, r.end);
      gpuArgs(r.deviceId, r.contextId, r.streamId, r.correlationId);
      field("registers per thread", r.registersPerThread);
      field("shared memory", r.staticSharedMemory + r.dynamicSharedMemory);
      out_.raw(",\"grid\":[");
      out_.integer(r.gridX);
      out_.raw(',');
      out_.integer(r.gridY);
      out_.raw(',');
      out_.integer(r.gridZ);
      out_.raw("],\"block\":[");
      out_.integer(r.blockX);
      out_.raw(',');
      out_.integer(r.blockY);
      out_.raw(',');
      out_.integer(r.blockZ);
      out_.raw(']');
      field("static shared memory", r.staticSharedMemory);
      field("dynamic shared memory", r.dynamicSharedMemory);
      field("local memory per thread", r.localMemoryPerThread);
      field("local memory total", r.localMemoryTotal);
      field("grid id", r.gridId);
      field("launch type", r.launchType);
      field("cache config", r.cacheConfig);
      if (r.shortName != trace::kNoString) {
        std::string_view shortName = reader_.string(r.shortName);
        if (shortName != name) field("short name", shortName);
      }
      if (r.mangledName != trace::kNoString) {
        std::string_view mangled = reader_.string(r.mangledName);
        if (!mangled.empty()) field("mangled name", mangled);
      }
      fieldIfNonzero("graph id", r.graphId);
      fieldIfNonzero("graph node id", r.graphNodeId);
      fieldIfNonzero("shared memory executed", r.sharedMemoryExecuted);
      operationIdFields(r.globalPid, r.correlationId);
      out_.raw("}}");
      writeFlow(r.globalPid, r.correlationId, track, r.start);
    });
  }

  void writeMemcpys() {
    std::string name;
    reader_.forEachMemcpy(kAnyOrder, [&](const trace::MemcpyRecord& r) {
      Track track = gpuTrack(r.deviceId, r.streamId);
      name.assign("Memcpy ");
      name.append(copyKinds_(r.copyKind));
      name.append(" (");
      name.append(memKinds_(r.srcKind));
      name.append(" -> ");
      name.append(memKinds_(r.dstKind));
      name.append(")");
      completeEvent("gpu_memcpy", name, track, r.start, r.end);
      gpuArgs(r.deviceId, r.contextId, r.streamId, r.correlationId);
      field("bytes", r.bytes);
      out_.raw(",\"memory bandwidth (GB/s)\":");
      out_.number(bandwidthGBps(r.bytes, r.start, r.end));
      field("copy kind", r.copyKind);
      field("src kind", r.srcKind);
      field("dst kind", r.dstKind);
      field("src device", r.srcDeviceId);
      field("dst device", r.dstDeviceId);
      fieldIfNonzero("graph node id", r.graphNodeId);
      operationIdFields(r.globalPid, r.correlationId);
      out_.raw("}}");
      writeFlow(r.globalPid, r.correlationId, track, r.start);
    });
  }

  void writeMemsets() {
    std::string name;
    reader_.forEachMemset(kAnyOrder, [&](const trace::MemsetRecord& r) {
      Track track = gpuTrack(r.deviceId, r.streamId);
      name.assign("Memset (");
      name.append(memKinds_(r.memKind));
      name.append(")");
      completeEvent("gpu_memset", name, track, r.start, r.end);
      gpuArgs(r.deviceId, r.contextId, r.streamId, r.correlationId);
      field("bytes", r.bytes);
      out_.raw(",\"memory bandwidth (GB/s)\":");
      out_.number(bandwidthGBps(r.bytes, r.start, r.end));
      field("value", r.value);
      field("mem kind", r.memKind);
      fieldIfNonzero("graph node id", r.graphNodeId);
      operationIdFields(r.globalPid, r.correlationId);
      out_.raw("}}");
      writeFlow(r.globalPid, r.correlationId, track, r.start);
    });
  }

  void writeSyncs() {
    reader_.forEachSync(kAnyOrder, [&](const trace::SyncRecord& r) {
      std::string_view name = syncName(r.syncType);
      completeEvent("cuda_sync", name, gpuTrack(r.deviceId, r.streamId), r.start, r.end);
      out_.raw(",\"args\":{\"cuda_sync_kind\":\"");
      out_.raw(name);
      out_.raw("\",\"device\":");
      out_.integer(r.deviceId);
      field("context", r.contextId);
      field("stream", r.streamId);
      field("correlation", r.correlationId);
      field("event id", r.eventId);
      field("event sync id", r.eventSyncId);
      operationIdFields(r.globalPid, r.correlationId);
      out_.raw("}}");
    });
  }

  void writeNvtx() {
    reader_.forEachNvtx(kAnyOrder, [&](const trace::NvtxRecord& r) {
      std::string_view name = r.text.empty() ? reader_.string(r.textId) : r.text;
      Track track = cpuTrack(r.globalTid);
      if (r.end) {
        completeEvent("rlscope.nvtx", name, track, r.start, *r.end);
      } else {
        beginEvent();
        out_.raw("\"ph\":\"i\",\"s\":\"t\",\"cat\":\"rlscope.nvtx\",\"name\":");
        out_.string(name);
        trackAndTime(track, r.start);
        ++stats_.events;
      }
      out_.raw(",\"args\":{\"eventType\":");
      out_.integer(static_cast<std::int64_t>(r.eventType));
      field("rangeId", r.rangeId);
      field("category", r.category);
      fieldIfSet("color", r.color);
      field("domainId", r.domainId);
      // Whether the name is a registered string (textId) rather than text.
      bool registered = r.textId != trace::kNoString;
      out_.raw(",\"registered\":");
      out_.boolean(registered);
      fieldIfNonzero("endGlobalTid", r.endGlobalTid);
      out_.raw("}}");
    });
  }

  // --- metadata ---------------------------------------------------------------------------------

  void metadataEvent(std::string_view kind, Track track, std::string_view argKey,
                     std::string_view value) {
    beginEvent();
    out_.raw("\"name\":\"");
    out_.raw(kind);
    out_.raw("\",\"ph\":\"M\",\"ts\":");
    out_.micros(minStart_ == std::numeric_limits<TimeNs>::max() ? 0 : minStart_);
    out_.raw(",\"pid\":");
    out_.integer(track.pid);
    out_.raw(",\"tid\":");
    out_.integer(track.tid);
    out_.raw(",\"args\":{\"");
    out_.raw(argKey);
    out_.raw("\":");
    out_.string(value);
    out_.raw("}}");
  }

  void writeMetadataEvents(const std::vector<trace::GpuInfoRecord>& gpus) {
    for (const auto& p : processes_) {
      metadataEvent("process_name", {p.pid, 0}, "name", p.name);
      metadataEvent("process_labels", {p.pid, 0}, "labels", "CPU");
    }
    std::map<std::int64_t, std::string> devices;
    for (const auto& t : gpuTracks_) devices[t.pid];
    for (const auto& g : gpus) devices[g.id] = g.name;
    for (const auto& [id, gpuName] : devices) {
      std::string label = "GPU " + std::to_string(id);
      metadataEvent("process_name", {id, 0}, "name", gpuName.empty() ? label : gpuName);
      metadataEvent("process_labels", {id, 0}, "labels", label);
    }
    // Thread names: rlscope_threads first, ThreadNames where that has none.
    std::map<std::int64_t, std::string> names;
    for (const auto& t : threads_) names[t.globalTid] = t.name;
    for (const auto& n : reader_.threadNames()) {
      auto& name = names[n.globalTid];
      if (name.empty()) name = reader_.string(n.nameId);
    }
    for (const auto& [globalTid, name] : names) {
      metadataEvent("thread_name", cpuTrack(globalTid), "name", name);
    }
    for (const auto& t : gpuTracks_) {
      metadataEvent("thread_name", t, "name", "stream " + std::to_string(t.tid));
    }
  }

  void writeDeviceProperties(const std::vector<trace::GpuInfoRecord>& gpus) {
    bool first = true;
    for (const auto& g : gpus) {
      out_.raw(first ? "\n{\"id\":" : ",\n{\"id\":");
      first = false;
      out_.integer(g.id);
      field("name", g.name);
      field("totalGlobalMem", g.totalMemory);
      field("computeMajor", g.computeMajor);
      field("computeMinor", g.computeMinor);
      field("maxThreadsPerBlock", g.maxThreadsPerBlock);
      field("maxThreadsPerMultiprocessor", g.maxWarpsPerSm * g.threadsPerWarp);
      field("regsPerBlock", g.maxRegistersPerBlock);
      field("regsPerMultiprocessor", g.maxRegistersPerSm);
      field("warpSize", g.threadsPerWarp);
      field("sharedMemPerBlock", g.maxShmemPerBlock);
      field("sharedMemPerMultiprocessor", g.maxShmemPerSm);
      field("numSms", g.smCount);
      field("sharedMemPerBlockOptin", g.maxShmemPerBlockOptin);
      field("l2CacheSize", g.l2CacheSize);
      field("memoryBandwidth", g.memoryBandwidth);
      field("clockRate", g.clockRate);
      field("memoryClockRate", g.memoryClockRate);
      field("memoryBusWidth", g.memoryBusWidth);
      field("maxBlocksPerSm", g.maxBlocksPerSm);
      field("busLocation", g.busLocation);
      field("uuid", g.uuid);
      field("chipName", g.chipName);
      field("isDiscrete", g.isDiscrete);
      field("maxIPC", g.maxIPC);
      out_.raw('}');
    }
  }

  // Kineto's `distributedInfo` (which HTA reads a trace's rank from) describes one rank; it is
  // written when every ranked process of the trace has the same rank.
  void writeDistributedInfo() {
    const trace::ProcessIdentityRecord* ranked = nullptr;
    for (const auto& id : identities_) {
      if (!id.rank) continue;
      if (ranked && ranked->rank != id.rank) return;
      ranked = &id;
    }
    if (!ranked) return;
    out_.raw(",\"distributedInfo\":{\"rank\":");
    out_.integer(*ranked->rank);
    fieldIfSet("world_size", ranked->worldSize);
    if (!ranked->backend.empty()) field("backend", ranked->backend);
    out_.raw('}');
  }

  void writeProcessIdentities() {
    bool first = true;
    for (const auto& id : identities_) {
      out_.raw(first ? "\n{\"pid\":" : ",\n{\"pid\":");
      first = false;
      out_.integer(processPid(id.globalPid));
      field("host", id.host);
      field("launcher", id.launcher);
      fieldIfSet("rank", id.rank);
      fieldIfSet("local_rank", id.localRank);
      fieldIfSet("world_size", id.worldSize);
      fieldIfSet("local_world_size", id.localWorldSize);
      fieldIfSet("node_rank", id.nodeRank);
      field("backend", id.backend);
      field("variables", id.variables);  // JSON text kept as a string: the trace is not trusted
      out_.raw('}');
    }
  }

  // "rlscope": what a Chrome trace has no place for, so that `rlscope import` restores it.
  void writeRlscopeObject() {
    out_.raw("{\"schema_version\":");
    out_.integer(reader_.schemaVersion());
    out_.raw(",\"meta\":{");
    bool first = true;
    for (const auto& [key, value] : reader_.meta()) {
      if (!first) out_.raw(',');
      first = false;
      out_.string(key);
      out_.raw(':');
      out_.string(value);
    }
    out_.raw("},\"calibration\":[");
    first = true;
    for (const auto& c : reader_.calibration()) {
      out_.raw(first ? "\n{\"source\":" : ",\n{\"source\":");
      first = false;
      out_.string(c.source);
      field("name", c.name);
      out_.raw(",\"mean_ns\":");
      out_.number(c.meanNs);
      out_.raw(",\"std_ns\":");
      out_.number(c.stdNs);
      field("count", c.count);
      out_.raw('}');
    }
    out_.raw("],\"processes\":[");
    first = true;
    for (const auto& p : processes_) {
      out_.raw(first ? "\n{\"globalPid\":" : ",\n{\"globalPid\":");
      first = false;
      out_.integer(p.globalPid);
      field("pid", p.pid);
      field("parentPid", p.parentPid);
      field("name", p.name);
      field("commandLine", p.commandLine);
      field("start", p.start);
      field("end", p.end);
      if (p.exitStatus) field("exitStatus", std::int64_t{*p.exitStatus});
      out_.raw('}');
    }
    out_.raw("],\"process_identity\":[");
    writeProcessIdentities();
    out_.raw("],\"threads\":[");
    first = true;
    for (const auto& t : threads_) {
      out_.raw(first ? "\n{\"globalTid\":" : ",\n{\"globalTid\":");
      first = false;
      out_.integer(t.globalTid);
      field("globalPid", t.globalPid);
      field("tid", t.tid);
      field("name", t.name);
      out_.raw('}');
    }
    out_.raw("],\"thread_names\":[");
    first = true;
    for (const auto& n : reader_.threadNames()) {
      out_.raw(first ? "\n{\"globalTid\":" : ",\n{\"globalTid\":");
      first = false;
      out_.integer(n.globalTid);
      field("name", reader_.string(n.nameId));
      field("priority", n.priority);
      out_.raw('}');
    }
    out_.raw("]}");
  }

  trace::TraceReader& reader_;
  JsonWriter& out_;
  EnumLabels copyKinds_;
  EnumLabels memKinds_;
  ExportStats stats_;
  bool firstEvent_ = true;
  TimeNs minStart_ = std::numeric_limits<TimeNs>::max();

  std::vector<trace::ProcessRecord> processes_;
  std::vector<trace::ProcessIdentityRecord> identities_;
  std::vector<trace::ThreadRecord> threads_;
  std::unordered_map<std::int64_t, std::int64_t> processPid_;  // globalPid -> OS pid
  std::unordered_map<std::int64_t, Track> threadTrack_;        // globalTid -> (pid, tid)
  std::int64_t lastGlobalTid_ = -1;
  Track lastTrack_;
  std::set<Track> gpuTracks_;  // (device, stream) pairs seen
  Track lastGpuTrack_;

  std::unordered_map<CorrelationKey, std::int64_t, CorrelationKeyHash> externalIds_;
  std::vector<ApiCallRef> apiCalls_;  // sorted by (globalPid, correlationId) after prepareFlows
  bool combineFlowIds_ = false;
  bool sequentialFlowIds_ = false;
  std::int64_t lastSequentialFlowId_ = 0;

  JsonObjectValidator validator_;
  std::vector<JsonMember> members_;  // scratch for stored args
  std::vector<JsonMember> eventMembers_;
};

// Writing over the trace being read would replace it: refused.
void refuseOverwritingInput(trace::TraceReader& reader, const std::filesystem::path& output) {
  std::error_code ec;
  if (std::filesystem::equivalent(output, reader.db().path(), ec)) {
    throw trace::TraceError(output.string() + ": is the input trace; choose another output file");
  }
}

}  // namespace

ExportStats exportChrome(trace::TraceReader& reader, const std::filesystem::path& output) {
  refuseOverwritingInput(reader, output);
  trace::AtomicOutput file(output);
  JsonWriter out(file.tempPath());
  ExportStats stats = ChromeExporter(reader, out).run();
  out.close();
  file.commit();
  return stats;
}

}  // namespace rlscope::exporter
