#include "rlscope/merge/part_merger.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "gpu_rows.h"
#include "process_table.h"
#include "record_times.h"
#include "rlscope/merge/category_spans.h"
#include "rlscope/merge/launch_ties.h"
#include "rlscope/merge/nvtx_ranges.h"
#include "rlscope/merge/operation_stream.h"
#include "rlscope/merge/tick_converter.h"
#include "rlscope/part/reader.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/row_counts.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/writer.h"

namespace rlscope::merge {

namespace {

using part::RecordType;
using part::RecordView;

constexpr std::string_view kAnnotationDomain = "rlscope";   // annotations/rlscope.h operations
constexpr std::string_view kPhaseDomain = "rlscope.phase";  // annotations/rlscope.h phases

class Merger {
 public:
  Merger(trace::TraceWriter& writer, const MergeOptions& options, MergeReport& report,
         std::string outputName)
      : w_(writer), options_(options), report_(report), outputName_(std::move(outputName)) {}

  // What the parts in `dir` hold now, but each process's last flush (MergeOptions).
  std::uint64_t mergeAvailable(const std::filesystem::path& dir, std::uint64_t budgetPerPart) {
    discoverParts(dir, false);
    std::uint64_t read = 0;
    for (auto& o : parts_) read += advance(*o, false, budgetPerPart);
    bytesMerged_ += read;
    return read;
  }

  // The run is over: every part in `dir`, to its end.
  void mergeRest(const std::filesystem::path& dir) {
    discoverParts(dir, true);
    std::uint64_t left = 0;
    for (const auto& o : parts_) {
      std::error_code ec;
      auto size = std::filesystem::file_size(o->path, ec);
      if (!ec && size > o->reader->bytesRead()) left += size - o->reader->bytesRead();
    }
    longMerge_ = left >= options_.progressAboveBytes;
    bool started = bytesMerged_ > 0;
    sayIfLong(
        (started ? "merging the last " + std::to_string(left >> 20) + " MiB of " : "merging ") +
        std::to_string(parts_.size()) + (parts_.size() == 1 ? " part" : " parts") +
        (started ? "" : " (" + std::to_string(left >> 20) + " MiB)") + " into " + outputName_);
    std::size_t i = 0, n = parts_.size(), step = std::max<std::size_t>(1, n / 20);
    for (auto& o : parts_) {
      ++i;
      if (options_.progress && n > 1 && (i % step == 0 || i == n || i == 1))
        options_.progress("merging part " + std::to_string(i) + "/" + std::to_string(n) + " (" +
                          o->path.filename().string() + ")");
      completePart(*o);
    }
    parts_.clear();
  }

  // A progress line, for long merges only (MergeOptions::progressAboveBytes).
  void sayIfLong(const std::string& line) const {
    if (longMerge_ && options_.progress) options_.progress(line);
  }

  void finish() {
    processes_.finish();
    // Every operation is written by now (parts finish by closing what is still open).
    launchTies_.finish([this](std::int64_t globalTid, std::int64_t t) {
      return operations_.innermostAt(globalTid, t);
    });
    for (const auto& [id, g] : gpus_) {
      w_.addGpuInfo(g);
      count(trace::table::kGpuInfo);
    }
    w_.setMeta(trace::meta::kSourceFormat, "rlscope-prof");
    w_.setMeta(trace::meta::kCommandLine, options_.commandLine);
    if (!options_.job.empty()) w_.setMeta(trace::meta::kJob, options_.job);
    if (options_.clockSync)
      w_.setMeta(trace::kClockSyncMetaKey, trace::clockSyncToJson(*options_.clockSync));
    if (!processes_.host().empty()) w_.setMeta(trace::meta::kHost, processes_.host());
    if (startMonotonic_) {
      w_.setMeta(trace::meta::kStartMonotonicNs, std::to_string(*startMonotonic_));
      w_.setMeta(trace::meta::kStartWallNs, std::to_string(startWall_));
    }
    nlohmann::json features = {
        {"nvtx", (options_.features & part::kFeatureNvtx) != 0},
        {"cuda_api", (options_.features & part::kFeatureCudaApi) != 0},
        // Asked for and got: a run that had no GPU (or never initialised CUDA) recorded none.
        {"gpu_activity", (options_.features & part::kFeatureGpuActivity) != 0 && gpuRecorded_},
        {"python", (options_.features & part::kFeaturePython) != 0},
    };
    w_.setMeta(trace::meta::kFeatures, features.dump());
    if (options_.features & part::kFeaturePython) {
      w_.setMeta(trace::meta::kPythonTransitions, std::to_string(transitions_));
      w_.setMeta(trace::meta::kPythonEvents, std::to_string(pythonEvents_));
    }
    report_.gpuActivity = gpuActivity();
    w_.setMeta(trace::meta::kGpuActivity, report_.gpuActivity);
    if (options_.commandElapsedNs > 0)
      w_.setMeta(trace::meta::kCommandElapsedNs, std::to_string(options_.commandElapsedNs));
    for (const auto& c : options_.calibration) {
      w_.addCalibration(c);
      count(trace::table::kCalibration);
    }
    rowCounts_.moveTo(report_.rowsPerTable);
  }

 private:
  struct Part {
    std::uint32_t pid = 0;
    std::uint64_t serial = 0;  // unique per part: CUDA ids restart in every image
    std::int64_t tracePid = 0;
    std::int64_t globalPid = 0;
    std::int64_t start = 0;
    std::int64_t lastTime = 0;
    ProcessImage image;  // what the part says of its process
    std::unordered_map<std::uint64_t, std::string> domains, strings;
    std::unique_ptr<NvtxRanges> ranges;    // refers to this Part: made where it stays
    std::uint64_t droppedCudaRecords = 0;  // summed over the part's flushes
    std::unordered_map<std::uint64_t, std::string> categoryNames;
    std::unique_ptr<CategorySpans> categories;  // refers to this Part: made where it stays
    TickConverter clock;
  };

  // A part being read: what its process has written so far.
  struct OpenPart {
    std::filesystem::path path;
    std::unique_ptr<part::PartReader> reader;
    Part p;
    std::size_t named = 0;               // blocks held whose pass 1 is done
    std::vector<std::size_t> flushEnds;  // among the blocks held, the end of each writer flush
  };

  // Opens a part that has its header: a part that continues the process of the pid's previous
  // one (an exec) shares its process row; any other starts a new process. The pid's previous part
  // must be complete (completePart) before.
  void openPart(const std::filesystem::path& path, std::unique_ptr<part::PartReader> reader) {
    const part::FileHeader& h = reader->header();
    ProcessTable::Ids ids = processes_.open(h);
    auto open = std::make_unique<OpenPart>();
    open->path = path;
    Part& p = open->p;
    p.pid = h.pid;
    p.serial = ++partsRead_;
    p.tracePid = ids.tracePid;
    p.globalPid = ids.globalPid;
    p.start = h.startMonotonicNs;
    p.lastTime = p.start;
    if (!startMonotonic_ || p.start < *startMonotonic_) {
      startMonotonic_ = p.start;
      startWall_ = h.startWallNs;
    }
    p.clock = TickConverter(static_cast<part::ClockKind>(h.clock));
    p.ranges = std::make_unique<NvtxRanges>(
        [this, &p](const OpenRange& o, std::int64_t end, std::uint32_t endTid,
                   trace::NvtxEventType type,
                   bool unterminated) { closeRange(p, o, end, endTid, type, unterminated); });
    p.categories = std::make_unique<CategorySpans>(
        [this, &p](const CategorySpans::Span& span) { writeCpuInterval(p, span); });
    p.clock.add(h.startTicks, h.startMonotonicNs);
    open->reader = std::move(reader);
    parts_.push_back(std::move(open));
  }

  // Reads what the part has appended and merges its records as far as their times are known:
  // a flush's records are converted with the clock pair of the next flush, so the last flush
  // waits for the next, unless `complete` (the process is gone: everything is merged). Stops
  // after about `budget` bytes. Returns the bytes read.
  std::uint64_t advance(OpenPart& o, bool complete, std::uint64_t budget) {
    part::PartReader& reader = *o.reader;
    std::uint64_t read = 0;
    for (;;) {
      std::size_t got = reader.readMore();
      read += got;
      // Pass 1: the names records refer to and the clock pairs, for every block as it is read.
      for (std::size_t i = o.named; i < reader.blockCount(); ++i) {
        reader.forEachRecord(i, i + 1,
                             [&](std::uint32_t, const RecordView& r) { readNames(o.p, r); });
        // The writer ends each flush with the process stream's block (tid 0).
        if (reader.block(i).tid == 0) o.flushEnds.push_back(i + 1);
      }
      o.named = reader.blockCount();
      // Pass 2: everything else, up to the end of the second-to-last flush read.
      std::size_t ready = complete && got == 0      ? reader.blockCount()
                          : o.flushEnds.size() >= 2 ? o.flushEnds[o.flushEnds.size() - 2]
                                                    : 0;
      if (ready > 0) {
        reader.forEachRecord(
            0, ready, [&](std::uint32_t tid, const RecordView& r) { readRecord(o.p, tid, r); });
        reader.drop(ready);
        o.named -= ready;
        std::erase_if(o.flushEnds, [&](std::size_t end) { return end <= ready; });
        for (auto& end : o.flushEnds) end -= ready;
      }
      if (got == 0 || read >= budget) return read;
    }
  }

  // Merges the rest of a part whose process is gone, and closes it.
  void completePart(OpenPart& o) {
    advance(o, true, std::numeric_limits<std::uint64_t>::max());
    finishPart(o.p, o.reader->cutShort());
  }

  // The parts in the directory not seen before: opened in (pid, start) order, after completing
  // the part of an earlier image of the same pid (a pid has one live image at a time, so a new
  // part means the old one has ended). A part whose header is not written yet is left for the
  // next call, unless `final`.
  void discoverParts(const std::filesystem::path& dir, bool final) {
    std::error_code ec;
    struct Found {
      std::filesystem::path path;
      std::unique_ptr<part::PartReader> reader;
    };
    std::vector<Found> found;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.path().extension() != ".part" || seenParts_.count(e.path().filename().string()))
        continue;
      try {
        found.push_back({e.path(), std::make_unique<part::PartReader>(e.path())});
        seenParts_.insert(e.path().filename().string());
      } catch (const std::runtime_error& err) {
        // A part that is not even readable (a process killed before writing its header).
        if (final) {
          warn(err.what());
          seenParts_.insert(e.path().filename().string());
        }
      }
    }
    if (ec) throw std::runtime_error("cannot read " + dir.string() + ": " + ec.message());
    auto key = [](const Found& f) {
      return std::tuple(f.reader->header().pid, f.reader->header().startMonotonicNs,
                        f.path.string());
    };
    std::sort(found.begin(), found.end(),
              [&](const Found& a, const Found& b) { return key(a) < key(b); });
    for (auto& f : found) {
      auto previous = std::find_if(parts_.begin(), parts_.end(), [&](const auto& o) {
        return o->p.pid == f.reader->header().pid;
      });
      if (previous != parts_.end()) {
        completePart(**previous);
        parts_.erase(previous);
      }
      openPart(f.path, std::move(f.reader));
    }
  }

  template <class P>
  static std::optional<P> payloadOf(const Part& p, const RecordView& r) {
    auto v = r.payload<P>();
    if (v) toNs(p.clock, *v);
    return v;
  }

  std::int64_t globalTid(const Part& p, std::uint32_t tid) const {
    return globalTidIn(p.tracePid, tid);
  }

  void seen(Part& p, std::int64_t time) { p.lastTime = std::max(p.lastTime, time); }

  void readNames(Part& p, const RecordView& r) {
    switch (r.type) {
      case RecordType::kProcessInfo:
        p.image.readProcessInfo(r);
        break;
      case RecordType::kProcessIdentity:
        p.image.readIdentity(r);
        break;
      case RecordType::kClockSync:
        if (auto c = r.payload<part::ClockSync>()) p.clock.add(c->ticks, c->monotonicNs);
        break;
      case RecordType::kDomainCreate:
        if (auto h = r.payload<part::NvtxHandleName>())
          p.domains[h->handle] = std::string(r.string<part::NvtxHandleName>(0).value_or(""));
        break;
      case RecordType::kRegisterString:
        if (auto h = r.payload<part::NvtxHandleName>())
          p.strings[h->handle] = std::string(r.string<part::NvtxHandleName>(0).value_or(""));
        break;
      case RecordType::kCategoryName:
        if (auto h = r.payload<part::NvtxHandleName>())
          p.categoryNames[h->handle] = std::string(r.string<part::NvtxHandleName>(0).value_or(""));
        break;
      default:
        break;
    }
  }

  std::string_view domainName(const Part& p, std::uint64_t domain) const {
    auto it = p.domains.find(domain);
    return it == p.domains.end() ? std::string_view() : std::string_view(it->second);
  }

  OpenRange openFrom(const Part& p, std::uint32_t tid, const part::NvtxEvent& e,
                     std::string_view text) {
    OpenRange o;
    o.start = e.time;
    o.tid = tid;
    o.domain = e.domain;
    o.category = e.category;
    if (e.hasColor) o.color = e.color;
    if (e.payloadType <= static_cast<std::uint8_t>(trace::NvtxPayloadType::kFloat)) {
      o.payloadType = e.payloadType;
      o.payload = e.payload;
    }
    if (e.stringHandle) {
      o.stringHandle = e.stringHandle;
      auto it = p.strings.find(e.stringHandle);
      if (it != p.strings.end()) o.text = it->second;
    } else {
      o.text = text;
    }
    return o;
  }

  void readRecord(Part& p, std::uint32_t tid, const RecordView& r) {
    switch (r.type) {
      case RecordType::kProcessEnd:
        p.image.end = payloadOf<part::ProcessEnd>(p, r);
        if (p.image.end) seen(p, p.image.end->end);
        break;
      case RecordType::kThreadStart:
        if (auto t = payloadOf<part::ThreadStart>(p, r)) {
          p.image.touchThread(t->tid, t->start);
          seen(p, t->start);
        }
        break;
      case RecordType::kThreadName:
        if (auto t = payloadOf<part::ThreadName>(p, r))
          p.image.nameThread(t->tid, std::string(r.string<part::ThreadName>(0).value_or("")),
                             t->fromNvtx != 0);
        break;
      case RecordType::kWarning:
        warn("process " + std::to_string(p.pid) + ": " +
             std::string(r.string<part::Instant>(0).value_or("")));
        break;
      case RecordType::kRangePushA:
        if (auto e = payloadOf<part::Instant>(p, r)) {
          part::NvtxEvent ev{};
          ev.time = e->time;
          push(p, tid, openFrom(p, tid, ev, r.string<part::Instant>(0).value_or("")));
        }
        break;
      case RecordType::kRangePush:
        if (auto e = payloadOf<part::NvtxEvent>(p, r))
          push(p, tid, openFrom(p, tid, *e, r.string<part::NvtxEvent>(0).value_or("")));
        break;
      case RecordType::kRangePop:
        if (auto e = payloadOf<part::NvtxPop>(p, r)) {
          seen(p, e->time);
          p.ranges->pop(tid, e->domain, e->time);
        }
        break;
      case RecordType::kRangeStart:
        if (auto e = payloadOf<part::NvtxEvent>(p, r)) {
          p.image.touchThread(tid, e->time);
          seen(p, e->time);
          OpenRange o = openFrom(p, tid, *e, r.string<part::NvtxEvent>(0).value_or(""));
          openOperation(p, o, false);
          p.ranges->start(e->rangeId, std::move(o));
        }
        break;
      case RecordType::kRangeEnd:
        if (auto e = payloadOf<part::NvtxRangeEnd>(p, r)) {
          seen(p, e->time);
          p.ranges->end(e->rangeId, tid, e->time);
        }
        break;
      case RecordType::kMark:
        if (auto e = payloadOf<part::NvtxEvent>(p, r)) {
          p.image.touchThread(tid, e->time);
          seen(p, e->time);
          OpenRange o = openFrom(p, tid, *e, r.string<part::NvtxEvent>(0).value_or(""));
          trace::NvtxRecord n = nvtxRow(p, o, trace::NvtxEventType::kMark);
          w_.addNvtx(n);
          count(trace::table::kNvtx);
        }
        break;
      case RecordType::kDomainCreate:
      case RecordType::kNameCategory:
        if (auto h = payloadOf<part::NvtxHandleName>(p, r)) {
          trace::NvtxRecord n;
          n.start = p.start;
          n.globalTid = globalTid(p, tid);
          n.text = std::string(r.string<part::NvtxHandleName>(0).value_or(""));
          if (r.type == RecordType::kDomainCreate) {
            n.eventType = trace::NvtxEventType::kDomainCreate;
            n.domainId = static_cast<std::int64_t>(h->handle);
          } else {
            n.eventType = trace::NvtxEventType::kCategory;
            n.domainId = static_cast<std::int64_t>(h->domain);
            n.category = static_cast<std::int64_t>(h->handle);
          }
          w_.addNvtx(n);
          count(trace::table::kNvtx);
        }
        break;
      case RecordType::kCategoryPush:
        if (auto c = payloadOf<part::CategoryPush>(p, r)) {
          p.image.touchThread(tid, c->time);
          seen(p, c->time);
          p.categories->push(tid, *c);
        }
        break;
      case RecordType::kThreadEnd:
        if (auto e = payloadOf<part::Instant>(p, r)) {
          seen(p, e->time);
          p.categories->threadEnded(tid, e->time);
        }
        break;
      case RecordType::kCategoryPop:
        if (auto e = payloadOf<part::Instant>(p, r)) {
          seen(p, e->time);
          p.categories->pop(tid, e->time, 0);
        }
        break;
      case RecordType::kCategoryPopEvents:
        if (auto e = payloadOf<part::CategoryPopEvents>(p, r)) {
          seen(p, e->time);
          p.categories->pop(tid, e->time, e->events);
        }
        break;
      case RecordType::kPythonEvents:
        if (auto e = payloadOf<part::PythonEvents>(p, r)) pythonEvents_ += e->events;
        break;
      case RecordType::kKernel:
        if (auto k = payloadOf<part::Kernel>(p, r))
          addGpuRow(p, kernelRow(*k, r.string<part::Kernel>(0).value_or(""), p.globalPid, w_),
                    &trace::TraceWriter::addKernel, trace::table::kKernel);
        break;
      case RecordType::kMemcpy:
        if (auto m = payloadOf<part::Memcpy>(p, r))
          addGpuRow(p, memcpyRow(*m, p.globalPid), &trace::TraceWriter::addMemcpy,
                    trace::table::kMemcpy);
        break;
      case RecordType::kMemset:
        if (auto m = payloadOf<part::Memset>(p, r))
          addGpuRow(p, memsetRow(*m, p.globalPid), &trace::TraceWriter::addMemset,
                    trace::table::kMemset);
        break;
      case RecordType::kApiCall:
        if (auto a = payloadOf<part::ApiCall>(p, r)) addApiCall(p, *a, r.string<part::ApiCall>(0));
        break;
      case RecordType::kSynchronization:
        if (auto s = payloadOf<part::Synchronization>(p, r))
          addGpuRow(p, syncRow(*s, p.globalPid), &trace::TraceWriter::addSync, trace::table::kSync);
        break;
      case RecordType::kOverhead:
        if (auto o = payloadOf<part::Overhead>(p, r)) addOverhead(p, *o);
        break;
      case RecordType::kExternalCorrelation:
        if (auto x = payloadOf<part::ExternalCorrelation>(p, r))
          launchTies_.correlated(p.serial, x->correlationId, x->externalId);
        break;
      case RecordType::kGpuInfo:
        if (auto g = payloadOf<part::GpuInfo>(p, r)) addGpu(*g, r);
        break;
      case RecordType::kGpuActivityStatus:
        if (auto s = payloadOf<part::GpuActivityStatus>(p, r)) {
          if (s->recording) {
            gpuRecorded_ = true;
          } else if (gpuReason_.empty()) {
            gpuReason_ = std::string(r.string<part::GpuActivityStatus>(0).value_or(""));
          }
        }
        break;
      case RecordType::kDroppedRecords:
        if (auto d = payloadOf<part::DroppedRecords>(p, r)) p.droppedCudaRecords += d->count;
        break;
      default:
        break;  // records of names (pass 1) and types a newer collector writes
    }
  }

  void push(Part& p, std::uint32_t tid, OpenRange o) {
    p.image.touchThread(tid, o.start);
    seen(p, o.start);
    openOperation(p, o, true);
    std::int64_t id = o.operationId;
    // A launch made while this push is the innermost belongs to its operation; while a phase
    // is, to the operation around the phase. A domain not named yet is left to the tie by time.
    bool named = o.domain == 0 || p.domains.count(o.domain) != 0;  // 0: NVTX's default domain
    std::uint32_t pushIndex = p.ranges->push(tid, std::move(o));
    if (tieLaunches_ && named)
      launchTies_.pushed(p.serial, tid, pushIndex,
                         id ? id : operations_.innermostOpen(partKey(p.serial, tid)));
  }

  // Phases are no operations; a domain whose name is not known yet counts as one until it closes.
  void openOperation(const Part& p, OpenRange& o, bool pushPop) {
    if (domainName(p, o.domain) != kPhaseDomain)
      o.operationId = operations_.open(partKey(p.serial, o.tid), {o.domain, pushPop});
  }

  // A span of what a thread ran (CategorySpans), as an rlscope_cpu_intervals row.
  void writeCpuInterval(const Part& p, const CategorySpans::Span& s) {
    trace::CpuIntervalRecord r;
    r.start = s.start;
    r.end = s.end;
    r.globalTid = globalTid(p, s.tid);
    r.category = categoryOf(s.category);
    if (s.name) {
      auto it = p.categoryNames.find(s.name);
      if (it != p.categoryNames.end()) r.nameId = w_.intern(it->second);
    }
    r.pythonEvents = static_cast<std::int64_t>(s.pythonEvents);
    w_.addCpuInterval(r);
    count(trace::table::kCpuIntervals);
  }

  trace::NvtxRecord nvtxRow(const Part& p, const OpenRange& o, trace::NvtxEventType type) {
    trace::NvtxRecord n;
    n.start = o.start;
    n.eventType = type;
    n.category = o.category;
    n.color = o.color;
    n.globalTid = globalTid(p, o.tid);
    n.domainId = static_cast<std::int64_t>(o.domain);
    n.payloadType = static_cast<trace::NvtxPayloadType>(o.payloadType);
    n.payloadBits = o.payload;
    // Registered strings go to StringIds, as nsys stores them; plain messages stay inline.
    if (o.stringHandle)
      n.textId = w_.intern(o.text);
    else
      n.text = o.text;
    return n;
  }

  void closeRange(Part& p, const OpenRange& o, std::int64_t end, std::uint32_t endTid,
                  trace::NvtxEventType type, bool unterminated) {
    std::string_view domain = domainName(p, o.domain);
    bool ownDomain = domain == kAnnotationDomain || domain == kPhaseDomain;
    // rlscope's own annotations are stored once, as the operation or phase they are: an
    // NVTX_EVENTS row of them would repeat it (half the rows and bytes of an annotated trace,
    // docs/performance.md "Trace size"). One that says more (another thread ended it, or NVTX
    // attributes the annotations never set) keeps its row.
    bool saysMore =
        endTid != o.tid || o.category != 0 || o.color || o.payloadType != 0 || o.stringHandle != 0;
    if (!ownDomain || saysMore) {
      trace::NvtxRecord n = nvtxRow(p, o, type);
      n.end = end;
      if (endTid != o.tid) n.endGlobalTid = globalTid(p, endTid);
      w_.addNvtx(n);
      count(trace::table::kNvtx);
    }

    if (domain == kPhaseDomain) {
      w_.addPhase({o.start, end, p.globalPid, w_.intern(o.text)});
      count(trace::table::kPhases);
      if (o.operationId) operations_.cancel(partKey(p.serial, o.tid), o.operationId);
      return;
    }
    trace::OperationRecord op;
    op.id = o.operationId;
    op.start = o.start;
    op.end = end;
    op.globalTid = globalTid(p, o.tid);
    op.nameId = w_.intern(o.text);
    op.source = domain == kAnnotationDomain ? trace::OperationSource::kAnnotation
                                            : trace::OperationSource::kNvtx;
    if (unterminated) op.args = R"({"unterminated":true})";
    operations_.close(partKey(p.serial, o.tid), std::move(op));
  }

  void finishPart(Part& p, const std::string& cutShort) {
    if (!p.clock.calibrated())
      warn("process " + std::to_string(p.pid) +
           ": its clock could not be calibrated (it ended too early); its times are approximate");
    std::int64_t end = p.image.end ? p.image.end->end : p.lastTime;
    // Start/end ranges, matched now that every thread's records are read.
    NvtxRanges::Leftovers left = p.ranges->finish(end);
    if (left.endsNeverStarted)
      warn("process " + std::to_string(p.pid) + ": " + std::to_string(left.endsNeverStarted) +
           " nvtxRangeEnd calls for ranges never started (ignored)");
    if (left.stillOpen)
      warn("process " + std::to_string(p.pid) + ": " + std::to_string(left.stillOpen) +
           " NVTX push/pop ranges still open when it ended; closed at its end and marked "
           "{\"unterminated\":true} in rlscope_operations.args");
    // What each thread ran when the image ended (its base Python frame, at least).
    p.categories->finish(end);
    transitions_ += p.categories->transitions();
    if (p.categories->unmatchedPops())
      warn("process " + std::to_string(p.pid) + ": " +
           std::to_string(p.categories->unmatchedPops()) +
           " CPU category pops without a push (ignored)");
    if (p.droppedCudaRecords)
      warn("process " + std::to_string(p.pid) + ": CUPTI dropped " +
           std::to_string(p.droppedCudaRecords) + " activity records (its buffers were full)");
    for (auto& [tid, n] : left.popsWithoutPush)
      warn("process " + std::to_string(p.pid) + " thread " + std::to_string(tid) + ": " +
           std::to_string(n) + " NVTX pops without a matching push (ignored)");

    processes_.addImage(p.pid, p.image, end);
    if (!cutShort.empty())
      warn("process " + std::to_string(p.pid) + " (" + p.image.exeName() +
           "): its part file is damaged (" + cutShort + "); merged up to there");
  }

  // The interval every kernel, copy, memset and sync row carries is the part's last time.
  template <class Row>
  void addGpuRow(Part& p, const Row& r, void (trace::TraceWriter::*add)(const Row&),
                 std::string_view table) {
    seen(p, r.end);
    (w_.*add)(r);
    count(table);
  }

  void addApiCall(Part& p, const part::ApiCall& a, std::optional<std::string_view> name) {
    seen(p, a.end);
    p.image.touchThread(a.tid, a.start);
    trace::ApiCallRecord r;
    r.start = a.start;
    r.end = a.end;
    bool driver = a.kind == static_cast<std::uint32_t>(part::ApiKind::kDriver);
    r.eventClass = driver ? 1 : 0;
    r.globalTid = globalTid(p, a.tid);
    r.correlationId = a.correlationId;
    r.nameId = w_.intern(name.value_or(""));
    r.returnValue = a.returnValue;
    r.cbid = a.cbid;
    w_.addApiCall(driver ? trace::ApiKind::kDriver : trace::ApiKind::kRuntime, r);
    count(driver ? trace::table::kDriver : trace::table::kRuntime);
    if (a.correlationId)
      launchTies_.launched({p.serial, p.globalPid, r.globalTid, a.start, a.correlationId});
  }

  void addOverhead(Part& p, const part::Overhead& o) {
    seen(p, o.end);
    w_.addPlainEvent(overheadRow(o, p.pid, w_));
    count(trace::table::kPlainEvents);
  }

  void addGpu(const part::GpuInfo& g, const RecordView& r) {
    if (gpus_.count(g.deviceId)) return;  // every process of the run reports the same devices
    gpus_.emplace(g.deviceId, gpuInfoRow(g, r));
  }

  std::string gpuActivity() const {
    if (gpuRecorded_) return "recorded";
    if (!gpuReason_.empty()) return "unavailable: " + gpuReason_;
    if (!(options_.features & (part::kFeatureCudaApi | part::kFeatureGpuActivity)))
      return "unavailable: switched off (--no-cuda-api --no-gpu-activity)";
    if (!options_.gpuUnavailableReason.empty())
      return "unavailable: " + options_.gpuUnavailableReason;
    return "unavailable: no process of the run initialised CUDA";
  }

  void warn(std::string line) { report_.warnings.push_back(std::move(line)); }
  void count(std::string_view table) { rowCounts_.add(table); }

  trace::TraceWriter& w_;
  const MergeOptions& options_;
  MergeReport& report_;
  trace::RowCounts rowCounts_;
  bool longMerge_ = false;  // MergeOptions::progressAboveBytes left at the end: say what goes on
  std::optional<std::int64_t> startMonotonic_;
  std::int64_t startWall_ = 0;
  ProcessTable processes_{w_, rowCounts_, report_};
  std::vector<std::unique_ptr<OpenPart>> parts_;  // parts still being written, or not yet read
  std::set<std::string> seenParts_;               // file names of the parts opened so far
  std::uint64_t bytesMerged_ = 0;                 // by mergeAvailable
  std::string outputName_;                        // the trace's file name, for progress lines
  std::uint64_t partsRead_ = 0;
  std::uint64_t transitions_ = 0;   // CPU category transitions of the parts finished
  std::uint64_t pythonEvents_ = 0;  // the processes' Python tracker callbacks (kPythonEvents)
  // Whether launches can be tied to operations at all (a run that could use CUDA).
  bool tieLaunches_ =
      (options_.features & part::kFeatureCudaApi) != 0 && options_.gpuUnavailableReason.empty();
  // Written as they close; kept (40 bytes each) only to tie launches to them.
  OperationStream operations_{[this](const trace::OperationRecord& op) {
                                w_.addOperation(op);
                                count(trace::table::kOperations);
                              },
                              tieLaunches_};
  LaunchTies launchTies_{[this](const trace::ExternalCorrelationRecord& r) {
    w_.addExternalCorrelation(r);
    count(trace::table::kExternalCorrelation);
  }};
  std::map<std::uint32_t, trace::GpuInfoRecord> gpus_;
  bool gpuRecorded_ = false;
  std::string gpuReason_;
};

}  // namespace

struct PartMerge::State {
  State(const std::filesystem::path& dir, const std::filesystem::path& out,
        const MergeOptions& opts)
      : partDir(readableDirectory(dir)),
        options(opts),
        writer(out, writerOptions()),
        merger(writer, options, report, out.filename().string()) {}

  static std::filesystem::path readableDirectory(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::directory_iterator probe(dir, ec);
    if (ec) throw std::runtime_error("cannot read " + dir.string() + ": " + ec.message());
    return dir;
  }

  // The merge reads parts and nests operations on its thread while the writer thread inserts:
  // the writer thread has time to keep the indexes up to date, so commit() does not build them
  // at the end on one core (1.7 s for 1.8 M operations).
  static trace::WriterOptions writerOptions() {
    trace::WriterOptions w;
    w.indexing = trace::WriterOptions::Indexing::kDuringLoad;
    return w;
  }

  std::filesystem::path partDir;
  MergeOptions options;
  MergeReport report;
  trace::TraceWriter writer;
  Merger merger;
  bool finished = false;
};

PartMerge::PartMerge(const std::filesystem::path& partDir, const std::filesystem::path& out,
                     const MergeOptions& options)
    : state_(std::make_unique<State>(partDir, out, options)) {}

PartMerge::~PartMerge() = default;

std::uint64_t PartMerge::mergeAvailable(std::uint64_t budgetPerPart) {
  if (state_->finished) throw std::logic_error("PartMerge::mergeAvailable after finish");
  return state_->merger.mergeAvailable(state_->partDir, budgetPerPart);
}

MergeOptions& PartMerge::options() {
  return state_->options;
}

MergeReport PartMerge::finish() {
  if (std::exchange(state_->finished, true))
    throw std::logic_error("PartMerge::finish called twice");
  State& s = *state_;
  s.merger.mergeRest(s.partDir);
  s.merger.finish();
  s.merger.sayIfLong("finishing the trace");
  s.writer.commit();
  s.report.rows = s.writer.rowsWritten();
  return std::move(s.report);
}

MergeReport mergeParts(const std::filesystem::path& partDir, const std::filesystem::path& out,
                       const MergeOptions& options) {
  PartMerge merge(partDir, out, options);
  return merge.finish();
}

}  // namespace rlscope::merge
