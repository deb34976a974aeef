#include "rlscope/import/kineto_importer.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kineto_chunk_reader.h"
#include "kineto_event.h"
#include "kineto_json.h"
#include "kineto_layout.h"
#include "rlscope/import/input_file.h"
#include "rlscope/import/kineto_time.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/kernel_names.h"
#include "rlscope/trace/operation_nesting.h"
#include "rlscope/trace/row_counts.h"
#include "rlscope/trace/schema.h"

namespace rlscope::import {

namespace {

namespace od = simdjson::ondemand;
using kineto::classify;
using kineto::errorText;
using kineto::fail;
using kineto::GpuArgs;
using kineto::integerOf;
using kineto::integerOfText;
using kineto::Kind;
using kineto::memcpyKindsOf;
using kineto::memsetKindOf;
using kineto::need;
using kineto::RawEvent;
using kineto::rawValue;
using kineto::readEvent;
using kineto::readTypedArgs;
using kineto::syncTypeOf;
using kineto::Where;
using trace::Category;
using trace::TimeNs;
using trace::TraceError;

// A GPU record's process is the one whose CUDA API call has its correlation id, which only the
// whole input settles (correlation ids can repeat across processes). Records are written as they
// are read, with the process known so far, so SQLite works while the JSON is parsed; what decides
// the final process is kept here, and finish() corrects the rows whose process changed.
struct PendingGpu {
  trace::TraceWriter::GpuTable table;
  std::int64_t row = 0;                  // rowid in its table
  std::optional<std::int64_t> pid, tid;  // the Kineto track, to find its ac2g flow
  TimeNs start = 0;
  std::int64_t correlation = 0;
  std::int64_t writtenPid = 0;  // the globalPid the row was written with
  std::int64_t operationId = 0;
};

// The columns every GPU activity table shares.
template <typename Record>
void place(Record& r, TimeNs start, TimeNs end, std::int64_t device, std::int64_t stream,
           const GpuArgs& a) {
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.contextId = a.context;
  r.streamId = stream;
  r.correlationId = a.correlation;
}

class KinetoImporter {
 public:
  KinetoImporter(trace::TraceWriter& writer, const ImportOptions& options, ImportStats& stats)
      : writer_(writer), options_(options), stats_(stats) {}

  // Parses `json` in one piece; with a layout, parses its skeleton and reads the events chunk
  // by chunk from `json` instead.
  void run(std::string_view json, const KinetoLayout* layout = nullptr) {
    input_ = json;
    layout_ = layout;
    if (layout) json = std::string_view(layout->skeleton.data(), layout->skeletonSize);
    // The input buffer carries kJsonPadding spare bytes after its end (readInput guarantees it).
    auto doc =
        need(parser_.iterate(json.data(), json.size(), json.size() + kJsonPadding), "document");
    od::json_type type = need(doc.type(), "document");
    bool sawEvents = false;
    if (type == od::json_type::array) {
      readEvents(need(doc.get_array(), "document"));
      sawEvents = true;
    } else if (type == od::json_type::object) {
      for (auto field : need(doc.get_object(), "document")) {
        std::string_view key = need(field.unescaped_key(), "document key");
        od::value value = need(field.value(), Where("document").field(key));
        if (key == "traceEvents") {
          readEvents(need(value.get_array(), "traceEvents"));
          sawEvents = true;
        } else if (key == "deviceProperties") {
          readDeviceProperties(value);
        } else if (key == "distributedInfo") {
          readDistributedInfo(value);
        } else if (key == "rlscope") {
          readRlscopeExtension(value);
        } else if (key == "schemaVersion") {
          kinetoSchemaVersion_ = std::string(rawValue(value, "schemaVersion"));
        } else if (key == "baseTimeNanoseconds") {
          std::int64_t base = integerOf(value, Where("baseTimeNanoseconds"));
          if (base > 0) baseTimeNs_ = base;
        }  // other members are skipped by the parser when the loop moves on
      }
    } else {
      throw TraceError("not a Kineto/Chrome trace: the JSON document is not an object or array");
    }
    const char* trailing = nullptr;
    if (!doc.current_location().get(trailing)) {
      throw TraceError(errorText(simdjson::TRAILING_CONTENT));
    }
    if (!sawEvents) throw TraceError("not a Kineto/Chrome trace: no traceEvents array");
    finish();
  }

 private:
  void readEvents(od::array events) {
    std::size_t index = 0;
    if (layout_) {
      // The skeleton's array is empty; its events are in the chunks of the next array.
      readChunks(layout_->arrays.at(arraysRead_++));
      return;
    }
    for (auto element : events) {
      RawEvent& e = event_;  // reused: no allocation per event once warm
      Where where("traceEvents", index);
      kineto::readElement(std::move(element), e, where);
      dispatch(e, where);
      dispatched(index);
    }
  }

  // The events of one array, chunk by chunk (kineto_chunk_reader.h).
  void readChunks(const std::vector<KinetoLayout::Chunk>& chunks) {
    chunkReader_.read(input_, chunks, [&](std::span<const RawEvent> events, std::size_t index) {
      for (const RawEvent& e : events) {
        dispatch(e, Where("traceEvents", index));
        dispatched(index);
      }
    });
  }

  void dispatched(std::size_t& index) {
    ++index;
    ++stats_.events;
    if (options_.progress && index % 1'000'000 == 0) {
      options_.progress("read " + std::to_string(index / 1'000'000) + " M events");
    }
  }

  TimeNs timeOf(std::string_view token, const Where& where, const char* field) {
    if (token.empty()) return 0;
    auto ns = microsecondsToNs(token);
    if (!ns) {
      fail(where.field(field),
           std::string(token) + " us is not a time rlscope can represent (out of int64 ns range)");
    }
    return *ns;
  }

  void dispatch(const RawEvent& e, const Where& where) {
    if (e.ph.empty()) fail(where, "missing \"ph\"");
    std::optional<Category> category;
    Kind kind = classify(e.ph, e.cat, category);
    if (kind == Kind::kMetadata) return readMetadata(e);
    TimeNs start = timeOf(e.tsToken, where, "ts");
    if (e.tsToken.empty() && kind != Kind::kPlain) fail(where, "missing \"ts\"");
    TimeNs dur = timeOf(e.durToken, where, "dur");
    if (dur < 0) fail(where.field("dur"), "negative duration " + std::string(e.durToken));
    TimeNs end = 0;
    if (__builtin_add_overflow(start, dur, &end)) {
      fail(where, "ts + dur overflows the time range");
    }
    if (kind == Kind::kAc2gFlow) return addFlow(e, start);
    bool cpuSide = kind == Kind::kCpuInterval || kind == Kind::kOperation || kind == Kind::kPhase ||
                   kind == Kind::kRuntime || kind == Kind::kDriver || (kind == Kind::kNvtx);
    if (cpuSide && !(e.pid.isInt && e.tid.isInt)) {
      // A CPU event on a text track cannot be placed on a thread: keep it as it was.
      ++cpuEventsOnTextTracks_;
      kind = Kind::kPlain;
    }
    switch (kind) {
      case Kind::kCpuInterval: {
        auto& r = cpuInterval_;  // reused: its args buffer keeps its capacity
        r.start = start;
        r.end = end;
        r.globalTid = globalTid(e.pid.value, e.tid.value);
        r.category = *category;
        r.nameId = writer_.intern(e.name);
        r.args.assign(argsOrEmpty(e.args));
        writer_.addCpuInterval(r);
        count(trace::table::kCpuIntervals);
        return;
      }
      case Kind::kOperation: {
        trace::OperationRecord r;
        r.start = start;
        r.end = end;
        r.globalTid = globalTid(e.pid.value, e.tid.value);
        r.nameId = writer_.intern(e.name);
        r.source = trace::OperationSource::kKinetoUserAnnotation;
        r.args.assign(argsOrEmpty(e.args));
        operations_.add(r);
        return;
      }
      case Kind::kPhase: {
        trace::PhaseRecord r;
        r.start = start;
        r.end = end;
        r.globalPid = globalPid(e.pid.value);
        r.nameId = writer_.intern(e.name);
        writer_.addPhase(r);
        count(trace::table::kPhases);
        return;
      }
      case Kind::kRuntime:
      case Kind::kDriver: {
        const GpuArgs& a = typedArgs(e, where);
        trace::ApiCallRecord r;
        r.start = start;
        r.end = end;
        r.eventClass = kind == Kind::kRuntime ? 0 : 1;
        r.globalTid = globalTid(e.pid.value, e.tid.value);
        r.correlationId = a.correlation;
        r.nameId = writer_.intern(e.name);
        r.returnValue = a.returnValue;
        r.cbid = a.cbid;
        if (a.correlation) {
          auto [it, inserted] =
              launchPid_.emplace(a.correlation, trace::globalPidOfTid(r.globalTid));
          if (!inserted && it->second != trace::globalPidOfTid(r.globalTid)) {
            it->second = kAmbiguousPid;
          }
        }
        noteVendorOfCall(e.name);
        auto apiKind = kind == Kind::kRuntime ? trace::ApiKind::kRuntime : trace::ApiKind::kDriver;
        writer_.addApiCall(apiKind, r);
        if (a.operationId)
          addExternalCorrelation(trace::globalPidOfTid(r.globalTid), r.correlationId,
                                 a.operationId);
        count(kind == Kind::kRuntime ? trace::table::kRuntime : trace::table::kDriver);
        return;
      }
      case Kind::kKernel:
      case Kind::kMemcpy:
      case Kind::kMemset:
        // Kept (its launch and name still count), but its time on the GPU is unknown.
        if (e.durToken.empty()) ++activitiesWithoutDuration_;
        return addGpuRecord(kind, e, start, end, where);
      case Kind::kSync:
        return addGpuRecord(kind, e, start, end, where);
      case Kind::kNvtx:
        return addNvtx(e, start, end, where);
      case Kind::kPlain:
        return addPlain(e, start, end);
      case Kind::kMetadata:
      case Kind::kAc2gFlow:
        return;
    }
  }

  // "{}" and "{ }" carry nothing worth a column value.
  static std::string_view argsOrEmpty(std::string_view args) {
    if (args.size() >= 2) {
      auto inner = args.substr(1, args.size() - 2);
      // A plain loop that stops at the first non-blank byte: find_first_not_of with a set
      // searches the set once per byte.
      bool blank = true;
      for (char c : inner) {
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
          blank = false;
          break;
        }
      }
      if (blank) return {};
    }
    return args;
  }

  // The typed args of a GPU record, CUDA API call or NVTX event. From the raw text when the
  // first pass kept it (the event's category was not known yet when its args came by).
  const GpuArgs& typedArgs(const RawEvent& e, const Where& where) {
    if (e.hasTypedArgs) return e.typedArgs;
    scratchArgs_ = GpuArgs{};
    if (e.args.empty()) return scratchArgs_;
    // `args` lies inside the input buffer, so the padding after the buffer's end is also
    // readable after this substring.
    auto doc = need(argsParser_.iterate(e.args.data(), e.args.size(), e.args.size() + kJsonPadding),
                    where.field("args"));
    readTypedArgs(need(doc.get_object(), where.field("args")), scratchArgs_, where);
    return scratchArgs_;
  }

  void addGpuRecord(Kind kind, const RawEvent& e, TimeNs start, TimeNs end, const Where& where) {
    const GpuArgs& a = typedArgs(e, where);
    std::int64_t device = a.device >= 0 ? a.device : (e.pid.isInt ? e.pid.value : 0);
    std::int64_t stream = a.stream >= 0 ? a.stream : (e.tid.isInt ? e.tid.value : 0);
    if (e.pid.isInt) gpuEventPids_.insert(e.pid.value);
    PendingGpu g;
    if (e.pid.isInt) g.pid = e.pid.value;
    if (e.tid.isInt) g.tid = e.tid.value;
    g.start = start;
    g.correlation = a.correlation;
    g.operationId = a.operationId;
    g.writtenPid = provisionalPid(a.correlation);
    switch (kind) {
      case Kind::kKernel: {
        auto& k = kernel_;  // reused: no allocation per record
        k = trace::KernelRecord{};
        place(k, start, end, device, stream, a);
        k.demangledName = writer_.intern(e.name);
        // Kineto names kernels by their demangled name; the short one as every producer does.
        k.shortName = writer_.intern(a.shortName.empty() ? trace::shortKernelName(e.name)
                                                         : std::string_view(a.shortName));
        k.mangledName = a.mangledName.empty() ? trace::kNoString : writer_.intern(a.mangledName);
        k.registersPerThread = a.registers;
        k.gridX = a.grid[0], k.gridY = a.grid[1], k.gridZ = a.grid[2];
        k.blockX = a.block[0], k.blockY = a.block[1], k.blockZ = a.block[2];
        // Kineto reports only the total shared memory of a block.
        k.staticSharedMemory = a.staticShared >= 0 ? a.staticShared : a.sharedMemory;
        k.dynamicSharedMemory = a.dynamicShared >= 0 ? a.dynamicShared : 0;
        k.localMemoryPerThread = a.localPerThread;
        k.localMemoryTotal = a.localTotal;
        k.gridId = a.gridId;
        k.launchType = a.launchType;
        k.cacheConfig = a.cacheConfig;
        k.graphId = a.graphId;
        k.graphNodeId = a.graphNodeId;
        k.globalPid = g.writtenPid;
        writer_.addKernel(k);
        g.table = trace::TraceWriter::GpuTable::kKernel;
        g.row = ++kernelRows_;
        count(trace::table::kKernel);
        break;
      }
      case Kind::kMemcpy: {
        trace::MemcpyRecord m;
        place(m, start, end, device, stream, a);
        m.bytes = a.bytes;
        auto kinds = memcpyKindsOf(e.name);
        m.copyKind = a.copyKind >= 0 ? a.copyKind : kinds.copy;
        m.srcKind = a.srcKind >= 0 ? a.srcKind : kinds.src;
        m.dstKind = a.dstKind >= 0 ? a.dstKind : kinds.dst;
        m.srcDeviceId = a.srcDevice >= 0 ? a.srcDevice : device;
        m.dstDeviceId = a.dstDevice >= 0 ? a.dstDevice : device;
        m.graphNodeId = a.graphNodeId;
        m.globalPid = g.writtenPid;
        writer_.addMemcpy(m);
        g.table = trace::TraceWriter::GpuTable::kMemcpy;
        g.row = ++memcpyRows_;
        count(trace::table::kMemcpy);
        break;
      }
      case Kind::kMemset: {
        trace::MemsetRecord m;
        place(m, start, end, device, stream, a);
        m.value = a.value;
        m.bytes = a.bytes;
        m.memKind = a.memKind >= 0 ? a.memKind : memsetKindOf(e.name);
        m.graphNodeId = a.graphNodeId;
        m.globalPid = g.writtenPid;
        writer_.addMemset(m);
        g.table = trace::TraceWriter::GpuTable::kMemset;
        g.row = ++memsetRows_;
        count(trace::table::kMemset);
        break;
      }
      default: {
        trace::SyncRecord sy;
        place(sy, start, end, device, stream, a);
        sy.syncType =
            static_cast<trace::SyncType>(syncTypeOf(a.syncKind.empty() ? e.name : a.syncKind));
        sy.eventId = a.eventId;
        sy.eventSyncId = a.eventSyncId;
        sy.globalPid = g.writtenPid;
        writer_.addSync(sy);
        g.table = trace::TraceWriter::GpuTable::kSync;
        g.row = ++syncRows_;
        count(trace::table::kSync);
        break;
      }
    }
    gpu_.push_back(g);
  }

  // The process a GPU record would get if the input ended here (see resolve in
  // writeGpuRecords), without creating processes: usually its final one.
  std::int64_t provisionalPid(std::int64_t correlation) const {
    auto it = correlation ? launchPid_.find(correlation) : launchPid_.end();
    if (it != launchPid_.end() && it->second != kAmbiguousPid) return it->second;
    return cpuPids_.size() == 1 ? cpuPids_.begin()->first : 0;
  }

  // ac2g flows tie a CUDA API call ("s", on the launching thread) to the GPU record it launched
  // ("f", on the record's device/stream at its start). Their ids settle the launching process
  // when correlation ids repeat across processes, as every process's CUPTI counts from 1, and
  // give the launching call of a GPU record that has no "correlation" (ROCm's Kineto writes
  // none on kernels and copies: the flow's id is the call's correlation id). They are only kept
  // here and looked at in finish().
  void addFlow(const RawEvent& e, TimeNs ts) {
    count(kFlowEvents);
    if (e.id.empty() || !e.pid.isInt || !e.tid.isInt || (e.ph != "s" && e.ph != "f")) return;
    flows_.push_back({std::hash<std::string_view>{}(e.id), integerOfText(e.id).value_or(0),
                      e.pid.value, e.tid.value, ts, e.ph == "s"});
  }

  void addNvtx(const RawEvent& e, TimeNs start, TimeNs end, const Where& where) {
    const GpuArgs& a = typedArgs(e, where);
    trace::NvtxRecord r;
    r.start = start;
    if (e.ph == "X") r.end = end;
    // Without an explicit eventType an instant is a mark and a complete event a push/pop range.
    r.eventType = static_cast<trace::NvtxEventType>(
        a.nvtxEventType
            ? a.nvtxEventType
            : static_cast<std::int64_t>(e.ph == "X" ? trace::NvtxEventType::kPushPopRange
                                                    : trace::NvtxEventType::kMark));
    r.rangeId = a.rangeId;
    r.category = a.nvtxCategory;
    r.color = a.color;
    r.globalTid = globalTid(e.pid.value, e.tid.value);
    r.endGlobalTid = a.endGlobalTid;
    r.domainId = a.domainId;
    if (a.registered) {
      r.textId = writer_.intern(e.name);
    } else {
      r.text = std::string(e.name);
    }
    writer_.addNvtx(r);
    count(trace::table::kNvtx);
    if (r.end && (r.eventType == trace::NvtxEventType::kPushPopRange ||
                  r.eventType == trace::NvtxEventType::kStartEndRange)) {
      trace::OperationRecord op;
      op.start = r.start;
      op.end = *r.end;
      op.globalTid = r.globalTid;
      op.nameId = writer_.intern(e.name);
      op.source = trace::OperationSource::kNvtx;
      operations_.add(op);
    }
  }

  void addPlain(const RawEvent& e, TimeNs start, TimeNs end) {
    trace::PlainEventRecord r;
    r.start = start;
    r.end = end;
    r.pid = e.pid.asText();
    r.tid = e.tid.asText();
    r.nameId = e.name.empty() ? trace::kNoString : writer_.intern(e.name);
    r.categoryId = e.cat.empty() ? trace::kNoString : writer_.intern(e.cat);
    r.phase = std::string(e.ph);
    // Top-level members other than the standard ones travel under args["__event"].
    if (e.extras.empty()) {
      r.args.assign(argsOrEmpty(e.args));
    } else {
      std::string_view body = argsOrEmpty(e.args);
      r.args = "{\"__event\":{";
      for (std::size_t i = 0; i < e.extras.size(); ++i) {
        if (i) r.args += ',';
        r.args += '"';
        r.args += e.extras[i].first;  // as written, escapes included
        r.args += "\":";
        r.args += e.extras[i].second;
      }
      r.args += '}';
      if (!body.empty()) {
        r.args += ',';
        r.args.append(body.substr(1));  // drop the leading '{'
      } else {
        r.args += '}';
      }
    }
    writer_.addPlainEvent(r);
    count(trace::table::kPlainEvents);
  }

  void readMetadata(const RawEvent& e) {
    if (!e.pid.isInt || e.args.empty()) return;
    // Only these three metadata events carry something rlscope keeps; sort indexes do not.
    if (e.name == "process_name") {
      processNames_[e.pid.value] = metadataField(e.args, "name");
    } else if (e.name == "thread_name" && e.tid.isInt) {
      threadNames_[{e.pid.value, e.tid.value}] = metadataField(e.args, "name");
    } else if (e.name == "process_labels") {
      auto labels = metadataField(e.args, "labels");
      if (labels.rfind("GPU", 0) == 0) gpuPids_.insert(e.pid.value);
    }
  }

  std::string metadataField(std::string_view args, std::string_view wanted) {
    auto doc = argsParser_.iterate(args.data(), args.size(), args.size() + kJsonPadding);
    od::object obj;
    if (doc.get_object().get(obj)) return {};
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key) || key != wanted) continue;
      std::string_view s;
      if (!field.value().get_string().get(s)) return std::string(s);
      return {};
    }
    return {};
  }

  // torch.distributed's view of the profiled process: its rank, the world size and the backend.
  void readDistributedInfo(od::value value) {
    od::object obj = need(value.get_object(), "distributedInfo");
    for (auto field : obj) {
      std::string_view key = need(field.unescaped_key(), "distributedInfo");
      od::value v = need(field.value(), "distributedInfo");
      Where at = Where("distributedInfo").field(key);
      od::json_type type = need(v.type(), at);
      if (key == "backend" && type == od::json_type::string) {
        distributed_.backend = std::string(need(v.get_string(), at));
      } else if (type == od::json_type::number && (key == "rank" || key == "world_size")) {
        std::int64_t n = integerOf(v, at);
        if (n < 0) continue;
        (key == "rank" ? distributed_.rank : distributed_.worldSize) = n;
      }
    }
    // Kineto writes a lone rank even for a process that never joined a process group; only a
    // world size or a backend says torch.distributed was initialised.
    if (distributed_.worldSize || !distributed_.backend.empty())
      distributed_.launcher = "torch.distributed";
  }

  void readDeviceProperties(od::value value) {
    for (auto element : need(value.get_array(), "deviceProperties")) {
      trace::GpuInfoRecord g;
      std::int64_t maxThreadsPerSm = 0;
      od::object obj =
          need(need(std::move(element), "deviceProperties").get_object(), "deviceProperties");
      for (auto field : obj) {
        std::string_view key = need(field.unescaped_key(), "deviceProperties");
        od::value v = need(field.value(), "deviceProperties");
        Where at = Where("deviceProperties").field(key);
        if (need(v.type(), at) == od::json_type::string) {
          std::string s(need(v.get_string(), at));
          if (key == "name") g.name = s;
          if (key == "busLocation") g.busLocation = s;
          if (key == "uuid") g.uuid = s;
          if (key == "chipName") g.chipName = s;
          continue;
        }
        if (need(v.type(), at) != od::json_type::number) continue;
        std::int64_t n = integerOf(v, at);
        if (key == "id")
          g.id = n;
        else if (key == "totalGlobalMem")
          g.totalMemory = n;
        else if (key == "computeMajor")
          g.computeMajor = n;
        else if (key == "computeMinor")
          g.computeMinor = n;
        else if (key == "maxThreadsPerBlock")
          g.maxThreadsPerBlock = n;
        else if (key == "maxThreadsPerMultiprocessor")
          maxThreadsPerSm = n;
        else if (key == "regsPerBlock")
          g.maxRegistersPerBlock = n;
        else if (key == "regsPerMultiprocessor")
          g.maxRegistersPerSm = n;
        else if (key == "warpSize")
          g.threadsPerWarp = n;
        else if (key == "sharedMemPerBlock")
          g.maxShmemPerBlock = n;
        else if (key == "sharedMemPerMultiprocessor" || key == "maxSharedMemoryPerMultiProcessor")
          g.maxShmemPerSm = n;  // the second is ROCm's name
        else if (key == "numSms")
          g.smCount = n;
        else if (key == "sharedMemPerBlockOptin")
          g.maxShmemPerBlockOptin = n;
        else if (key == "l2CacheSize")
          g.l2CacheSize = n;
        else if (key == "memoryBandwidth")
          g.memoryBandwidth = n;
        else if (key == "clockRate")
          g.clockRate = n;
        else if (key == "memoryClockRate")
          g.memoryClockRate = n;
        else if (key == "memoryBusWidth")
          g.memoryBusWidth = n;
        else if (key == "maxBlocksPerSm")
          g.maxBlocksPerSm = n;
        else if (key == "isDiscrete")
          g.isDiscrete = n;
      }
      if (g.threadsPerWarp > 0) g.maxWarpsPerSm = maxThreadsPerSm / g.threadsPerWarp;
      if (isAmdGpuName(g.name)) amdSeen_ = true;
      writer_.addGpuInfo(g);
      count(trace::table::kGpuInfo);
    }
  }

  void readRlscopeExtension(od::value value) {
    for (auto field : need(value.get_object(), "rlscope")) {
      std::string_view key = need(field.unescaped_key(), "rlscope");
      od::value v = need(field.value(), "rlscope");
      if (key == "meta") {
        for (auto m : need(v.get_object(), "rlscope.meta")) {
          std::string k(need(m.unescaped_key(), "rlscope.meta"));
          std::string val(
              need(need(m.value(), "rlscope.meta").get_string(), Where("rlscope.meta").field(k)));
          // The writer owns the version and provenance keys of the new trace.
          if (k == trace::meta::kSchemaVersion || k == trace::meta::kRlscopeVersion ||
              k == trace::meta::kCreatedAt || k == trace::meta::kSourceFormat ||
              k == trace::meta::kSourceFile) {
            continue;
          }
          writer_.setMeta(k, val);
        }
      } else if (key == "calibration") {
        for (auto item : need(v.get_array(), "rlscope.calibration")) {
          trace::CalibrationRecord c;
          for (auto f : need(need(std::move(item), "rlscope.calibration").get_object(),
                             "rlscope.calibration")) {
            std::string_view k = need(f.unescaped_key(), "rlscope.calibration");
            od::value cv = need(f.value(), "rlscope.calibration");
            if (k == "source")
              c.source = std::string(need(cv.get_string(), "source"));
            else if (k == "name")
              c.name = std::string(need(cv.get_string(), "name"));
            else if (k == "mean_ns")
              c.meanNs = need(cv.get_double(), "mean_ns");
            else if (k == "std_ns")
              c.stdNs = need(cv.get_double(), "std_ns");
            else if (k == "count")
              c.count = integerOf(cv, "count");
          }
          writer_.addCalibration(c);
          count(trace::table::kCalibration);
        }
      } else if (key == "process_identity") {
        for (auto item : need(v.get_array(), "rlscope.process_identity")) {
          readProcessIdentity(need(std::move(item), "rlscope.process_identity"));
        }
      }
    }
  }

  // One rlscope_process_identity row of an exported rlscope trace, keyed by its OS pid.
  void readProcessIdentity(od::value value) {
    trace::ProcessIdentityRecord id;
    std::optional<std::int64_t> pid;
    for (auto f : need(value.get_object(), "rlscope.process_identity")) {
      std::string_view k = need(f.unescaped_key(), "rlscope.process_identity");
      od::value v = need(f.value(), "rlscope.process_identity");
      Where at = Where("rlscope.process_identity").field(k);
      if (need(v.type(), at) == od::json_type::string) {
        std::string text(need(v.get_string(), at));
        if (k == "host")
          id.host = std::move(text);
        else if (k == "launcher")
          id.launcher = std::move(text);
        else if (k == "backend")
          id.backend = std::move(text);
        else if (k == "variables")
          id.variables = std::move(text);
      } else if (need(v.type(), at) == od::json_type::number) {
        std::int64_t n = integerOf(v, at);
        if (k == "pid")
          pid = n;
        else if (n < 0)
          continue;
        else if (k == "rank")
          id.rank = n;
        else if (k == "local_rank")
          id.localRank = n;
        else if (k == "world_size")
          id.worldSize = n;
        else if (k == "local_world_size")
          id.localWorldSize = n;
        else if (k == "node_rank")
          id.nodeRank = n;
      }
    }
    if (pid) restoredIdentities_[*pid] = std::move(id);
  }

  // --- ids ----------------------------------------------------------------------------------

  // OS pids and tids are packed into 24-bit fields; values outside get stable substitutes and
  // rlscope_processes / rlscope_threads keep the originals.
  std::int64_t packedPid(std::int64_t pid) {
    if (trace::fitsGlobalIdField(pid) && !remappedPidTaken_.count(pid)) {
      usedPids_.insert(pid);
      return pid;
    }
    auto [it, inserted] = pidRemap_.emplace(pid, 0);
    if (inserted) {
      while (usedPids_.count(nextSyntheticPid_)) --nextSyntheticPid_;
      it->second = nextSyntheticPid_--;
      remappedPidTaken_.insert(it->second);
      ++remappedIds_;
    }
    return it->second;
  }

  std::int64_t globalPid(std::int64_t pid) {
    auto packed = packedPid(pid);
    auto g = trace::globalPidOf(packed);
    cpuPids_.emplace(g, pid);
    return g;
  }

  std::int64_t globalTid(std::int64_t pid, std::int64_t tid) {
    auto key = std::pair{pid, tid};
    auto it = threads_.find(key);
    if (it != threads_.end()) return it->second;
    auto gp = globalPid(pid);
    std::int64_t packedTid = tid;
    auto& used = usedTids_[gp];
    if (!trace::fitsGlobalIdField(tid) || used.count(tid)) {
      packedTid = trace::kGlobalIdFieldLimit - 1;
      while (used.count(packedTid)) --packedTid;
      ++remappedIds_;
    }
    used.insert(packedTid);
    auto g = trace::globalTidOf(trace::pidOfGlobalId(gp), packedTid);
    threads_.emplace(key, g);
    return g;
  }

  // One row per launch: rlscope's export puts the operation id on the API call and again on the
  // GPU work it launched.
  void addExternalCorrelation(std::int64_t globalPid, std::int64_t correlation,
                              std::int64_t operationId) {
    if (!externalCorrelations_.emplace(globalPid, correlation).second) return;
    writer_.addExternalCorrelation({globalPid, correlation, operationId});
    count(trace::table::kExternalCorrelation);
  }

  void count(std::string_view table) { rowCounts_.add(table); }
  static constexpr std::string_view kFlowEvents = "(ac2g flow events, kept as correlation ids)";

  // --- end of input -------------------------------------------------------------------------

  void finish() {
    writeGpuRecords();
    auto ops = operations_.build();
    for (const auto& op : ops) {
      writer_.addOperation(op);
      count(trace::table::kOperations);
    }
    writeProcessesAndThreads();
    rowCounts_.moveTo(stats_.rowsPerTable);
    writer_.setMeta(trace::meta::kSourceFormat, "kineto");
    if (!kinetoSchemaVersion_.empty())
      writer_.setMeta("kineto_schema_version", kinetoSchemaVersion_);
    // Kineto's timestamps count from baseTimeNanoseconds, a Unix-epoch time: the trace's clock
    // origin 0 is that wall-clock time (what `rlscope merge` lines ranks' traces up by).
    if (baseTimeNs_) {
      writer_.setMeta(trace::meta::kStartWallNs, std::to_string(*baseTimeNs_));
      writer_.setMeta(trace::meta::kStartMonotonicNs, "0");
    }
    if (amdSeen_)
      writer_.setMeta(trace::meta::kGpuVendor, "AMD");
    else if (nvidiaSeen_)
      writer_.setMeta(trace::meta::kGpuVendor, "NVIDIA");
    if (cpuEventsOnTextTracks_) {
      stats_.warnings.push_back(std::to_string(cpuEventsOnTextTracks_) +
                                " CPU events on non-numeric pid/tid tracks were kept as plain "
                                "events (rlscope_events)");
    }
    if (remappedIds_) {
      stats_.warnings.push_back(std::to_string(remappedIds_) +
                                " pids/tids outside nsys' 24-bit globalTid fields were given "
                                "substitute ids (originals kept in rlscope_processes/threads)");
    }
    if (activitiesWithoutDuration_) {
      stats_.warnings.push_back(std::to_string(activitiesWithoutDuration_) +
                                " GPU activities (kernels, memcpys, memsets) without \"dur\" "
                                "were imported as zero-length");
    }
    if (unresolvedGpu_) {
      stats_.warnings.push_back(std::to_string(unresolvedGpu_) +
                                " GPU records have no launching CUDA API call in the trace; "
                                "their process was inferred");
    }
  }

  void writeGpuRecords() {
    // The process of a GPU record is the one whose CUDA API call has its correlation id; without
    // one, the only CPU process when there is exactly one.
    std::int64_t onlyPid = cpuPids_.size() == 1 ? cpuPids_.begin()->first : 0;
    bool ambiguous = std::any_of(launchPid_.begin(), launchPid_.end(),
                                 [](const auto& kv) { return kv.second == kAmbiguousPid; });
    bool uncorrelated = std::any_of(gpu_.begin(), gpu_.end(),
                                    [](const PendingGpu& g) { return g.correlation == 0; });
    // Flow ends by (track, start) -> the flow's start (its process) and id, built only when
    // needed.
    struct Launch {
      std::int64_t pid = 0;          // of the flow's start; 0 when it has none
      std::int64_t correlation = 0;  // the flow's id
    };
    std::map<std::tuple<std::int64_t, std::int64_t, TimeNs>, Launch> launchByTrack;
    if (ambiguous || uncorrelated) {
      std::unordered_map<std::size_t, std::int64_t> startPid;
      for (const auto& f : flows_) {
        if (f.isStart) startPid[f.id] = f.pid;
      }
      for (const auto& f : flows_) {
        if (f.isStart) continue;
        auto it = startPid.find(f.id);
        launchByTrack[{f.pid, f.tid, f.ts}] = {it == startPid.end() ? 0 : it->second, f.numericId};
      }
    }
    flows_ = {};
    auto flowOf = [&](const PendingGpu& g) -> const Launch* {
      if (launchByTrack.empty() || !g.pid || !g.tid) return nullptr;
      auto f = launchByTrack.find({*g.pid, *g.tid, g.start});
      return f == launchByTrack.end() ? nullptr : &f->second;
    };
    for (const auto& g : gpu_) {
      const Launch* flow = flowOf(g);
      std::int64_t correlation = g.correlation ? g.correlation : flow ? flow->correlation : 0;
      std::int64_t pid = 0;
      if (ambiguous && flow && flow->pid) {
        pid = globalPid(flow->pid);
      } else if (auto it = correlation ? launchPid_.find(correlation) : launchPid_.end();
                 it != launchPid_.end() && it->second != kAmbiguousPid) {
        pid = it->second;
      } else {
        ++unresolvedGpu_;
        pid = onlyPid;
      }
      if (pid != g.writtenPid || correlation != g.correlation)
        writer_.setGpuLaunch(g.table, g.row, pid, correlation);
      if (g.operationId) addExternalCorrelation(pid, correlation, g.operationId);
    }
    gpu_ = {};
  }

  void writeProcessesAndThreads() {
    // Named processes without events are still processes of the run (unless they are GPUs).
    for (const auto& [pid, name] : processNames_) {
      if (!gpuPids_.count(pid) && !gpuEventPids_.count(pid)) globalPid(pid);
    }
    for (const auto& [gp, osPid] : cpuPids_) {
      trace::ProcessRecord p;
      p.globalPid = gp;
      p.pid = osPid;
      auto it = processNames_.find(osPid);
      if (it != processNames_.end()) p.name = it->second;
      writer_.addProcess(p);
      count(trace::table::kProcesses);
      // An exported rlscope trace says who each process was; a Kineto trace is one rank's, so
      // its processes are that rank's (Kineto does not record the host).
      auto restored = restoredIdentities_.find(osPid);
      const trace::ProcessIdentityRecord* identity =
          restored != restoredIdentities_.end()                ? &restored->second
          : distributed_.rank || !distributed_.backend.empty() ? &distributed_
                                                               : nullptr;
      if (identity) {
        trace::ProcessIdentityRecord id = *identity;
        id.globalPid = gp;
        writer_.addProcessIdentity(id);
        count(trace::table::kProcessIdentity);
      }
    }
    for (const auto& [key, gt] : threads_) {
      trace::ThreadRecord t;
      t.globalTid = gt;
      t.globalPid = trace::globalPidOfTid(gt);
      t.tid = unwrappedTid(key.second);
      auto it = threadNames_.find(key);
      if (it != threadNames_.end()) {
        t.name = it->second;
        writer_.addThreadName({writer_.intern(t.name), 0, gt});
        count(trace::table::kThreadNames);
      }
      writer_.addThread(t);
      count(trace::table::kThreads);
    }
  }

  // Kineto writes a thread id as a signed 32-bit number; a negative one is an unsigned id (a
  // thread handle CUPTI reported) wrapped around.
  static std::int64_t unwrappedTid(std::int64_t tid) {
    constexpr std::int64_t kInt32Min = -(std::int64_t{1} << 31);
    return tid < 0 && tid >= kInt32Min ? tid + (std::int64_t{1} << 32) : tid;
  }

  static constexpr std::int64_t kAmbiguousPid = -1;

  // PyTorch on ROCm writes HIP calls under Kineto's CUDA categories: their names tell the vendor.
  void noteVendorOfCall(std::string_view name) {
    if (name.starts_with("hip"))
      amdSeen_ = true;
    else if (name.starts_with("cuda") || name.starts_with("cu"))
      nvidiaSeen_ = true;
  }
  static bool isAmdGpuName(std::string_view name) {
    return name.starts_with("AMD") || name.find("Radeon") != std::string_view::npos ||
           name.find("Instinct") != std::string_view::npos;
  }
  bool amdSeen_ = false, nvidiaSeen_ = false;

  trace::TraceWriter& writer_;
  const ImportOptions& options_;
  ImportStats& stats_;
  od::parser parser_;
  od::parser argsParser_;
  kineto::ChunkReader chunkReader_;
  std::string_view input_;
  const KinetoLayout* layout_ = nullptr;
  std::size_t arraysRead_ = 0;
  GpuArgs scratchArgs_;
  RawEvent event_;
  trace::CpuIntervalRecord cpuInterval_;
  trace::OperationNesting operations_;
  std::vector<PendingGpu> gpu_;
  trace::RowCounts rowCounts_;
  trace::KernelRecord kernel_;
  std::int64_t kernelRows_ = 0, memcpyRows_ = 0, memsetRows_ = 0, syncRows_ = 0;
  std::unordered_map<std::int64_t, std::int64_t> launchPid_;  // correlation id -> globalPid
  std::set<std::pair<std::int64_t, std::int64_t>> externalCorrelations_;  // (globalPid, corr.)
  struct Flow {
    std::size_t id;          // hash of the id token
    std::int64_t numericId;  // the token as an integer; 0 when it is not one
    std::int64_t pid, tid;
    TimeNs ts;
    bool isStart;
  };
  std::vector<Flow> flows_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> threads_;  // (pid, tid) -> gTid
  std::map<std::int64_t, std::int64_t> cpuPids_;                           // globalPid -> OS pid
  std::map<std::int64_t, std::int64_t> pidRemap_;
  std::set<std::int64_t> usedPids_, remappedPidTaken_;
  std::map<std::int64_t, std::set<std::int64_t>> usedTids_;
  std::int64_t nextSyntheticPid_ = trace::kGlobalIdFieldLimit - 1;
  std::map<std::int64_t, std::string> processNames_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> threadNames_;
  std::set<std::int64_t> gpuPids_;       // labelled "GPU n" by process_labels
  std::set<std::int64_t> gpuEventPids_;  // pids that host GPU records
  std::string kinetoSchemaVersion_;
  std::optional<std::int64_t> baseTimeNs_;    // baseTimeNanoseconds
  trace::ProcessIdentityRecord distributed_;  // from distributedInfo
  std::unordered_map<std::int64_t, trace::ProcessIdentityRecord> restoredIdentities_;  // by pid
  std::uint64_t cpuEventsOnTextTracks_ = 0, remappedIds_ = 0, unresolvedGpu_ = 0;
  std::uint64_t activitiesWithoutDuration_ = 0;
};

}  // namespace

void importKineto(std::string_view json, trace::TraceWriter& writer, const ImportOptions& options,
                  ImportStats& stats) {
  // By default chunks of about 64 KiB: their text, structural index and parsed events stay in L2.
  std::optional<KinetoLayout> layout;
  if (options.kinetoChunkBytes) layout = scanKinetoLayout(json, options.kinetoChunkBytes);
  if (!layout) return KinetoImporter(writer, options, stats).run(json);
  ImportStats before = stats;
  try {
    KinetoImporter(writer, options, stats).run(json, &*layout);
  } catch (const TraceError&) {
    // Invalid input. Parsing it in one piece words the error as it always has (the first error in
    // document order); the rows already sent to the writer are discarded with it, as on any
    // failed import. Should that parse succeed, the chunked error stands: never keep a result
    // the chunked parse did not finish.
    stats = before;
    KinetoImporter(writer, options, stats).run(json);
    throw;
  }
}

}  // namespace rlscope::import
