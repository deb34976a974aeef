#include "rlscope/trace/trace_copy.h"

#include <algorithm>
#include <unordered_map>

#include "rlscope/trace/global_id.h"

namespace rlscope::trace {

namespace {

class Copier {
 public:
  Copier(TraceReader& from, TraceWriter& to, const CopyMapping& m) : from_(from), to_(to), m_(m) {}

  CopyStats run() {
    const EventFilter all{.storageOrder = true};
    copyProcessesAndThreads();
    from_.forEachCpuInterval(all, [&](CpuIntervalRecord r) {
      moveOnThread(r);
      to_.addCpuInterval(r);
    });
    from_.forEachOperation(all, [&](OperationRecord r) {
      moveOnThread(r);
      r.id = operation(r.id);
      r.parentId = r.parentId ? operation(r.parentId) : 0;
      stats_.maxOperationId = std::max(stats_.maxOperationId, r.id);
      to_.addOperation(r);
    });
    from_.forEachPhase(all, [&](PhaseRecord r) {
      r.start = time(r.start);
      r.end = time(r.end);
      r.globalPid = pid(r.globalPid);
      r.nameId = string(r.nameId);
      to_.addPhase(r);
      ++stats_.rows;
    });
    from_.forEachPlainEvent([&](PlainEventRecord r) {
      r.start = time(r.start);
      r.end = time(r.end);
      r.nameId = string(r.nameId);
      r.categoryId = string(r.categoryId);
      to_.addPlainEvent(r);
      ++stats_.rows;
    });
    for (auto r : from_.externalCorrelations()) {
      r.globalPid = pid(r.globalPid);
      r.externalId = operation(r.externalId);
      to_.addExternalCorrelation(r);
      ++stats_.rows;
    }
    copyGpuRecords(all);
    for (auto kind : {ApiKind::kRuntime, ApiKind::kDriver}) {
      from_.forEachApiCall(kind, all, [&](ApiCallRecord r) {
        moveOnThread(r);
        to_.addApiCall(kind, r);
      });
    }
    from_.forEachNvtx(all, [&](NvtxRecord r) {
      r.start = time(r.start);
      if (r.end) r.end = time(*r.end);
      r.globalTid = tid(r.globalTid);
      if (r.endGlobalTid) r.endGlobalTid = tid(r.endGlobalTid);
      r.textId = string(r.textId);
      to_.addNvtx(r);
      ++stats_.rows;
    });
    for (auto r : from_.threadNames()) {
      r.nameId = string(r.nameId);
      r.globalTid = tid(r.globalTid);
      to_.addThreadName(r);
      ++stats_.rows;
    }
    return stats_;
  }

 private:
  TimeNs time(TimeNs t) const { return t + m_.timeOffset; }
  // A CPU-side record with a span on one thread: moved in time and onto its thread's new id.
  template <class Record>
  void moveOnThread(Record& r) {
    r.start = time(r.start);
    r.end = time(r.end);
    r.globalTid = tid(r.globalTid);
    r.nameId = string(r.nameId);
    ++stats_.rows;
  }

  std::int64_t packedPid(std::int64_t packed) const {
    auto it = m_.pids.find(packed);
    return it == m_.pids.end() ? packed : it->second;
  }
  std::int64_t pid(std::int64_t globalPid) const {
    return globalPid ? globalPidOf(packedPid(pidOfGlobalId(globalPid))) : 0;
  }
  std::int64_t tid(std::int64_t globalTid) const {
    return globalTid ? globalTidOf(packedPid(pidOfGlobalId(globalTid)), tidOfGlobalId(globalTid))
                     : 0;
  }
  std::int64_t operation(std::int64_t id) const { return id + m_.operationIdOffset; }
  std::int64_t device(std::int64_t id) {
    std::int64_t d = id + m_.deviceOffset;
    stats_.maxDeviceId = std::max(stats_.maxDeviceId, d);
    return d;
  }

  StringId string(StringId id) {
    if (id == kNoString) return kNoString;
    auto [it, inserted] = strings_.emplace(id, kNoString);
    if (inserted) it->second = to_.intern(from_.string(id));
    return it->second;
  }

  void copyProcessesAndThreads() {
    for (auto r : from_.processes()) {
      r.globalPid = pid(r.globalPid);
      r.start = r.start ? time(r.start) : 0;  // 0: unknown
      r.end = r.end ? time(r.end) : 0;
      to_.addProcess(r);
      ++stats_.rows;
    }
    for (auto r : from_.processIdentities()) {
      r.globalPid = pid(r.globalPid);
      to_.addProcessIdentity(r);
      ++stats_.rows;
    }
    for (auto r : from_.threads()) {
      r.globalTid = tid(r.globalTid);
      r.globalPid = pid(r.globalPid);
      to_.addThread(r);
      ++stats_.rows;
    }
  }

  void copyGpuRecords(const EventFilter& all) {
    for (auto r : from_.gpus()) {
      r.id = device(r.id);
      to_.addGpuInfo(r);
      ++stats_.rows;
    }
    auto move = [&](auto& r) {
      r.start = time(r.start);
      r.end = time(r.end);
      r.deviceId = device(r.deviceId);
      r.globalPid = pid(r.globalPid);
      ++stats_.rows;
    };
    from_.forEachKernel(all, [&](KernelRecord r) {
      move(r);
      r.demangledName = string(r.demangledName);
      r.shortName = string(r.shortName);
      r.mangledName = string(r.mangledName);
      to_.addKernel(r);
    });
    from_.forEachMemcpy(all, [&](MemcpyRecord r) {
      move(r);
      r.srcDeviceId = device(r.srcDeviceId);
      r.dstDeviceId = device(r.dstDeviceId);
      to_.addMemcpy(r);
    });
    from_.forEachMemset(all, [&](MemsetRecord r) {
      move(r);
      to_.addMemset(r);
    });
    from_.forEachSync(all, [&](SyncRecord r) {
      move(r);
      to_.addSync(r);
    });
  }

  TraceReader& from_;
  TraceWriter& to_;
  const CopyMapping& m_;
  CopyStats stats_;
  std::unordered_map<StringId, StringId> strings_;
};

}  // namespace

CopyStats copyTrace(TraceReader& from, TraceWriter& to, const CopyMapping& mapping) {
  return Copier(from, to, mapping).run();
}

}  // namespace rlscope::trace
