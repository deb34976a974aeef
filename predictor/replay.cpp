#include "rlscope/predictor/replay.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "rlscope/breakdown/breakdown.h"
#include "rlscope/trace/global_id.h"

namespace rlscope::predictor {
namespace {

using trace::TimeNs;

constexpr double kNever = -std::numeric_limits<double>::infinity();

// How many launches a stream holds that have not finished: a launch into a full queue blocks
// the call until the oldest is done (CUDA's launch queue, about 1024 entries deep).
constexpr std::size_t kLaunchQueueDepth = 1024;

// A stream of one process's device: when its work ends, as recorded and as replayed, and the
// ends of the work queued on it, oldest first.
struct StreamState {
  double originFree = kNever, replayedFree = kNever;
  double predictedWork = 0;
  std::deque<double> originQueue, replayedQueue;
};

// When a launch at `t` finds a slot in a stream's queue of ends: kNever when one is free, else
// when enough of the queued work will have finished. Drops the ends at or before `t`.
double slotFree(std::deque<double>& queue, double t) {
  while (!queue.empty() && queue.front() <= t) queue.pop_front();
  return queue.size() < kLaunchQueueDepth ? kNever : queue[queue.size() - kLaunchQueueDepth];
}

struct StreamKey {
  std::int64_t pid, device, stream;
  bool operator==(const StreamKey&) const = default;
};
struct StreamKeyHash {
  std::size_t operator()(const StreamKey& k) const {
    return std::hash<std::int64_t>()(k.pid) * 1000003u ^ std::hash<std::int64_t>()(k.device) * 31u ^
           std::hash<std::int64_t>()(k.stream);
  }
};

struct Call {
  TimeNs start = 0, end = 0;
  std::int64_t globalTid = 0, correlation = 0;
  trace::StringId name = trace::kNoString;
};

// What a call waits for, when it waits: every stream of its process (device and context
// synchronisation, event synchronisation, whose event's stream the trace does not say), one
// stream, or only the copies it made itself (a synchronous cudaMemcpy).
enum class Wait { kNone, kProcess, kStream, kOwnWork };

Wait waitOfName(std::string_view n) {
  for (std::string_view s : {"cudaDeviceSynchronize", "cudaEventSynchronize", "cudaCtxSynchronize",
                             "cuCtxSynchronize", "cuEventSynchronize"})
    if (n.starts_with(s)) return Wait::kProcess;
  for (std::string_view s : {"cudaStreamSynchronize", "cuStreamSynchronize"})
    if (n.starts_with(s)) return Wait::kStream;
  if ((n.starts_with("cudaMemcpy") || n.starts_with("cuMemcpy") || n.starts_with("cudaMemset") ||
       n.starts_with("cuMemset")) &&
      n.find("Async") == std::string_view::npos)
    return Wait::kOwnWork;
  return Wait::kNone;
}

class Replayer {
 public:
  Replayer(trace::TraceReader& reader, std::vector<GpuActivity> activities)
      : reader_(reader), activities_(std::move(activities)) {}

  ReplayResult run() {
    // Times as doubles relative to the trace's start: epoch nanoseconds (~1.7e18) would keep
    // only 256 ns of resolution in a double.
    if (auto span = reader_.timeSpan()) base_ = span->start;
    loadCalls();
    if (calls_.empty()) return {};
    indexActivities();
    loadSyncs();
    loadThreadSpans();
    result_.replayed = true;
    // The expected range: every duration at the low, then the high end of its expected error.
    result_.predictedLowNs = sweep(-1);
    result_.predictedHighNs = sweep(1);
    result_.predictedNs = sweep(0);
    return result_;
  }

 private:
  void loadCalls() {
    auto kind = reader_.rowCount("CUPTI_ACTIVITY_KIND_RUNTIME") > 0 ? trace::ApiKind::kRuntime
                                                                    : trace::ApiKind::kDriver;
    reader_.forEachApiCall(kind, {}, [&](const trace::ApiCallRecord& r) {
      calls_.push_back({r.start, r.end, r.globalTid, r.correlationId, r.nameId});
    });
    result_.calls = calls_.size();
  }

  // Activities by the call that launched them; the launch latency of each process: the least
  // time from a launching call's start to its work's start.
  void indexActivities() {
    std::unordered_map<std::int64_t, std::size_t> firstCall;
    for (std::size_t i = 0; i < calls_.size(); ++i)
      firstCall.try_emplace(analysis::runCorrelation(trace::globalPidOfTid(calls_[i].globalTid),
                                                     calls_[i].correlation),
                            i);
    std::sort(activities_.begin(), activities_.end(),
              [](const auto& a, const auto& b) { return a.start < b.start; });
    for (std::size_t a = 0; a < activities_.size(); ++a) {
      const GpuActivity& g = activities_[a];
      auto call = g.correlation
                      ? firstCall.find(analysis::runCorrelation(g.globalPid, g.correlation))
                      : firstCall.end();
      if (call == firstCall.end()) {
        unlaunched_.push_back(a);
        continue;
      }
      byCall_[call->second].push_back(a);
      double latency = static_cast<double>(g.start - calls_[call->second].start);
      if (latency >= 0) {
        auto [l, added] = launchLatency_.try_emplace(g.globalPid, latency);
        if (!added) l->second = std::min(l->second, latency);
      }
    }
    result_.unlaunched = unlaunched_.size();
  }

  void loadSyncs() {
    reader_.forEachSync({.storageOrder = true}, [&](const trace::SyncRecord& r) {
      if (r.correlationId && r.syncType != trace::SyncType::kStreamWaitEvent)
        syncs_[analysis::runCorrelation(r.globalPid, r.correlationId)] = r;
    });
  }

  // Work goes on its stream once its launch has reached the GPU and the stream is free. Work
  // that found its stream idle when recorded keeps its recorded delay after the call (the launch
  // latency then, contention included); work that queued behind its stream takes the process's
  // least latency, as its recorded delay was the queue's.
  void place(const GpuActivity& a, double callStart, double sinceCall, double leastLatency) {
    StreamState& s = streams_[{a.globalPid, a.device, a.stream}];
    bool queued = at(a.start) <= s.originFree;
    double ready =
        callStart + (queued ? std::clamp(sinceCall, 0.0, leastLatency) : std::max(sinceCall, 0.0));
    // Malformed traces can hold activities that end before they start: no time, not negative.
    double duration = std::max(0.0, a.predictedNs) * std::max(0.0, 1 + errors_ * a.expectedError);
    double start = std::max(ready, s.replayedFree);
    s.replayedFree = start + duration;
    s.originFree = std::max(s.originFree, at(a.end));
    s.predictedWork += duration;
    s.replayedQueue.push_back(s.replayedFree);
    s.originQueue.push_back(s.originFree);
  }

  void replayCall(const Call& call) {
    std::int64_t pid = trace::globalPidOfTid(call.globalTid);
    double& shift = shifts_[call.globalTid];
    double start = at(call.start) + shift;
    double duration = std::max(0.0, static_cast<double>(call.end - call.start));
    double awaitedOrigin = kNever, awaitedReplayed = kNever;

    auto launched = byCall_.find(static_cast<std::size_t>(&call - calls_.data()));
    double latency = launchLatency_.count(pid) ? launchLatency_[pid] : 0;
    Wait wait = waitOf(call, pid);
    if (launched != byCall_.end()) {
      // A full launch queue holds the call until a slot frees; the time the recorded call spent
      // so is not its own (replayed, it blocks as long as the replayed queue says).
      double blockedUntil = kNever, recordedBlock = 0;
      for (std::size_t i : launched->second) {
        const GpuActivity& a = activities_[i];
        StreamState& s = streams_[{a.globalPid, a.device, a.stream}];
        blockedUntil = std::max(blockedUntil, slotFree(s.replayedQueue, start));
        double origin = slotFree(s.originQueue, at(call.start));
        if (origin != kNever)
          recordedBlock =
              std::max(recordedBlock, std::clamp(origin - at(call.start), 0.0, duration));
      }
      start = std::max(start, blockedUntil);
      duration -= recordedBlock;
      waits_[call.globalTid] += recordedBlock;
      for (std::size_t i : launched->second) {
        const GpuActivity& a = activities_[i];
        double sinceCall = static_cast<double>(a.start - call.start);
        place(a, start, sinceCall, latency);
        if (wait == Wait::kOwnWork) {
          awaitedOrigin = std::max(awaitedOrigin, at(a.end));
          awaitedReplayed =
              std::max(awaitedReplayed, streams_[{pid, a.device, a.stream}].replayedFree);
        }
      }
    }
    if (wait == Wait::kProcess || wait == Wait::kStream) {
      const trace::SyncRecord* sync = syncOf(pid, call.correlation);
      for (const auto& [key, s] : streams_) {
        if (key.pid != pid) continue;
        if (wait == Wait::kStream && sync &&
            (key.device != sync->deviceId || key.stream != sync->streamId))
          continue;
        awaitedOrigin = std::max(awaitedOrigin, s.originFree);
        awaitedReplayed = std::max(awaitedReplayed, s.replayedFree);
      }
    }
    double end = start + duration;
    if (awaitedOrigin != kNever) {
      // The recorded call waited until its GPU work was done, then returned: it returns as long
      // after the replayed work is done, or after its own start if that is later.
      double waited = std::clamp(awaitedOrigin - at(call.start), 0.0, duration);
      waits_[call.globalTid] += waited;
      if (waited > 0) ++result_.waits;
      end = std::max(start, awaitedReplayed) + (duration - waited);
    }
    shift = end - at(call.end);
  }

  // A CUPTI synchronisation record says what a call waited for; without one, its name.
  Wait waitOf(const Call& call, std::int64_t pid) {
    if (const trace::SyncRecord* s = syncOf(pid, call.correlation))
      return s->syncType == trace::SyncType::kStreamSynchronize ? Wait::kStream : Wait::kProcess;
    return waitOfName(reader_.string(call.name));
  }

  const trace::SyncRecord* syncOf(std::int64_t pid, std::int64_t correlation) const {
    auto it = syncs_.find(analysis::runCorrelation(pid, correlation));
    return it == syncs_.end() ? nullptr : &it->second;
  }

  // Each thread's first and last event: what moves with its shift.
  void loadThreadSpans() {
    auto extend = [&](std::int64_t tid, TimeNs start, TimeNs end) {
      auto [it, added] = threadSpans_.try_emplace(tid, start, end);
      if (!added) {
        it->second.first = std::min(it->second.first, start);
        it->second.second = std::max(it->second.second, end);
      }
    };
    trace::EventFilter all{.storageOrder = true};
    reader_.forEachCpuInterval(all, [&](const auto& r) { extend(r.globalTid, r.start, r.end); });
    reader_.forEachOperation(all, [&](const auto& r) { extend(r.globalTid, r.start, r.end); });
    for (const Call& c : calls_) extend(c.globalTid, c.start, c.end);
  }

  // One replay with every GPU duration at predicted x (1 + errors x expected error); the
  // replayed span from the first recorded event. The central one (errors 0) sets the bounds.
  double sweep(double errors) {
    errors_ = errors;
    streams_.clear();
    shifts_.clear();
    waits_.clear();
    result_.waits = 0;
    // Calls and the activities no call launched, in recorded start order.
    std::size_t c = 0;
    for (std::size_t a : unlaunched_) {
      while (c < calls_.size() && calls_[c].start <= activities_[a].start) replayCall(calls_[c++]);
      place(activities_[a], at(activities_[a].start), 0, 0);
    }
    while (c < calls_.size()) replayCall(calls_[c++]);

    double originStart = std::numeric_limits<double>::infinity(), originEnd = kNever,
           replayedEnd = kNever;
    result_.longestCpuPathNs = result_.longestStreamNs = 0;
    for (const auto& [tid, span] : threadSpans_) {
      double first = at(span.first), last = at(span.second);
      double shift = shifts_.count(tid) ? shifts_[tid] : 0;
      originStart = std::min(originStart, first);
      originEnd = std::max(originEnd, last);
      replayedEnd = std::max(replayedEnd, last + shift);
      result_.longestCpuPathNs = std::max(result_.longestCpuPathNs, last - first - waits_[tid]);
    }
    for (const GpuActivity& a : activities_) {
      originStart = std::min(originStart, at(a.start));
      originEnd = std::max(originEnd, at(a.end));
    }
    for (const auto& [key, st] : streams_) {
      replayedEnd = std::max(replayedEnd, st.replayedFree);
      result_.longestStreamNs = std::max(result_.longestStreamNs, st.predictedWork);
    }
    result_.originNs = originEnd - originStart;
    return replayedEnd - originStart;
  }

  double at(TimeNs t) const { return static_cast<double>(t - base_); }

  trace::TraceReader& reader_;
  TimeNs base_ = 0;
  std::vector<GpuActivity> activities_;
  std::vector<Call> calls_;                                           // in start order
  std::unordered_map<std::size_t, std::vector<std::size_t>> byCall_;  // call -> activities
  std::vector<std::size_t> unlaunched_;
  std::unordered_map<std::int64_t, double> launchLatency_;  // per process
  std::unordered_map<std::int64_t, trace::SyncRecord> syncs_;
  std::unordered_map<StreamKey, StreamState, StreamKeyHash> streams_;
  std::unordered_map<std::int64_t, double> shifts_;  // per thread: replayed - recorded time
  std::unordered_map<std::int64_t, double> waits_;   // per thread: recorded waiting
  std::unordered_map<std::int64_t, std::pair<TimeNs, TimeNs>> threadSpans_;  // first, last
  double errors_ = 0;                                                        // of this sweep
  ReplayResult result_;
};

}  // namespace

ReplayResult replayRun(trace::TraceReader& reader, std::vector<GpuActivity> activities) {
  return Replayer(reader, std::move(activities)).run();
}

}  // namespace rlscope::predictor
