#include "rlscope/gui_model/timeline_data.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "rlscope/trace/enum_labels.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"

namespace rlscope::gui {

// --- StringTable ---------------------------------------------------------------------------------

std::string_view StringTable::operator[](std::uint32_t id) const {
  if (std::size_t{id} + 1 >= offsets_.size()) return {};
  return std::string_view(text_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
}

void StringTable::add(std::uint32_t id, std::string_view text) {
  if (offsets_.empty()) offsets_.push_back(0);
  if (id < size()) return;
  while (offsets_.size() <= id) offsets_.push_back(text_.size());  // skipped ids read as empty
  text_.append(text);
  offsets_.push_back(text_.size());
}

void TimelineData::forEachTrack(const std::function<void(const Track&)>& fn) const {
  for (const auto& p : processes)
    for (const auto& t : p.threads)
      for (const auto& track : t.tracks) fn(track);
  for (const auto& d : devices)
    for (const auto& track : d.streams) fn(track);
}

namespace {

using trace::Statement;

constexpr std::int64_t kNoId = 0;

// A column holding an id that TrackItem keeps in 32 bits (string ids, rowids, CUPTI correlation
// ids); an id that does not fit, from a damaged or hostile trace, becomes 0: "none".
std::uint32_t id32(std::int64_t v) {
  return v > 0 && v <= std::numeric_limits<std::uint32_t>::max() ? static_cast<std::uint32_t>(v)
                                                                 : kNoId;
}

// Which track an item belongs to, before overlapping items are split into rows.
struct TrackKey {
  TrackKind kind = TrackKind::kOperations;
  std::int64_t globalTid = 0;  // CPU tracks
  int depth = 0;               // operations
  std::int64_t deviceId = 0;   // GPU streams
  std::int64_t streamId = 0;
  std::int64_t globalPid = 0;  // GPU streams: the launching process
  auto operator<=>(const TrackKey&) const = default;
};

// A track's items from one table, as one reading thread sees them. Read in storage order, a part
// is usually sorted by start already, and splitIntoRows merges the parts of a track (CPU
// intervals and API calls; kernels, copies, memsets) in linear time.
struct PartKey {
  TrackKey track;
  ItemSource source = ItemSource::kOperation;
  auto operator<=>(const PartKey&) const = default;
};

// Deeper nesting than this is not real; a hostile depth column must not make millions of tracks.
constexpr int kMaxDepth = 255;

// Names the loader gives GPU copies and memsets, which have no name in the trace: ids after the
// trace's own strings.
struct ActivityNames {
  std::vector<std::uint32_t> memcpyByKind;  // index: copyKind (ENUM_CUDA_MEMCPY_OPER)
  std::uint32_t memcpy = 0;                 // a copy kind the enum does not list
  std::uint32_t memset = 0;

  std::uint32_t ofCopy(std::int64_t kind) const {
    return kind >= 0 && static_cast<std::size_t>(kind) < memcpyByKind.size()
               ? memcpyByKind[static_cast<std::size_t>(kind)]
               : memcpy;
  }
};

// The trace's strings. Ids are dense from 1 in rlscope traces; a stranger's sparse ids are
// bounded as TraceReader bounds them, and names beyond the bound read as empty.
void readStrings(trace::Database& db, StringTable& strings) {
  auto count = db.queryInt("SELECT COUNT(*) FROM StringIds").value_or(0);
  std::int64_t bound =
      std::min<std::int64_t>(4 * count + 1024, std::numeric_limits<std::int32_t>::max());
  auto st = db.prepare("SELECT id, value FROM StringIds WHERE id >= 1 AND id <= ? ORDER BY id");
  st.bind(1, bound);
  while (st.step()) strings.add(static_cast<std::uint32_t>(st.columnInt(0)), st.columnText(1));
}

ActivityNames addActivityNames(trace::Database& db, StringTable& strings) {
  ActivityNames names;
  auto add = [&](std::string_view text) {
    auto id = static_cast<std::uint32_t>(std::max<std::size_t>(strings.size(), 1));
    strings.add(id, text);
    return id;
  };
  names.memcpy = add("Memcpy");
  names.memset = add("Memset");
  for (const auto& [id, label] : trace::readEnumLabels(db, "ENUM_CUDA_MEMCPY_OPER")) {
    if (id < 0 || id >= 256) continue;
    auto kind = static_cast<std::size_t>(id);
    names.memcpyByKind.resize(kind + 1, names.memcpy);
    names.memcpyByKind[kind] = add("Memcpy " + label);
  }
  return names;
}

// Rows read by both threads, for the progress callback, which runs on the loading thread only;
// also how a cancel reaches the other thread.
class SharedProgress {
 public:
  SharedProgress(std::int64_t total, const LoadProgress& callback)
      : total_(std::max<std::int64_t>(total, 1)), callback_(callback) {}

  // Adds rows read; on the loading thread, tells the callback. False once the load is cancelled.
  bool add(std::int64_t rows) {
    read_ += rows;
    if (std::this_thread::get_id() == loadingThread_) report();
    return !cancelled_;
  }
  void report() {
    if (callback_ && !cancelled_ && !callback_(fraction())) cancel();
  }
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  double fraction() const { return std::min(1.0, static_cast<double>(read_) / total_); }

  std::int64_t total_;
  const LoadProgress& callback_;
  std::thread::id loadingThread_ = std::this_thread::get_id();
  std::atomic<std::int64_t> read_{0};
  std::atomic<bool> cancelled_{false};
};

// A part's items, in chunks that grow to 16 Ki items: millions of rows come in without a
// reallocation (a copy of everything read so far), and a part holds at most one chunk of spare
// room.
class ItemChunks {
 public:
  void push_back(const TrackItem& item) {
    if (chunks_.empty() || chunks_.back().size() == chunks_.back().capacity()) {
      std::size_t size = chunks_.empty() ? 64 : std::min(2 * chunks_.back().size(), kLargest);
      chunks_.emplace_back().reserve(size);
    }
    chunks_.back().push_back(item);
  }
  std::vector<std::vector<TrackItem>>& chunks() { return chunks_; }

 private:
  static constexpr std::size_t kLargest = std::size_t{1} << 14;
  std::vector<std::vector<TrackItem>> chunks_;
};

// Rows of a table between two rowids, both included.
struct RowRange {
  std::int64_t first = 0;
  std::int64_t last = -1;  // empty by default
};

struct TableScan {
  ItemSource source;
  RowRange halves[2];  // what each reading thread takes
};

constexpr ItemSource kSources[] = {
    ItemSource::kOperation, ItemSource::kCpuInterval, ItemSource::kRuntime, ItemSource::kDriver,
    ItemSource::kKernel,    ItemSource::kMemcpy,      ItemSource::kMemset};

// Each table cut in two halves by rowid, and the number of rows in all (estimated from the rowids:
// exact for the dense rowids of rlscope traces, and found without counting).
std::vector<TableScan> planScans(trace::Database& db, std::int64_t& totalRows) {
  std::vector<TableScan> scans;
  totalRows = 0;
  for (ItemSource source : kSources) {
    // Two subqueries: SQLite reads a lone MIN or MAX of the rowid from the b-tree's end, but
    // scans the whole table for both in one.
    std::string table(sourceTable(source));
    auto st = db.prepare("SELECT (SELECT MIN(rowid) FROM " + table + "), (SELECT MAX(rowid) FROM " +
                         table + ")");
    if (!st.step() || st.columnIsNull(0)) continue;
    std::int64_t first = st.columnInt(0), last = st.columnInt(1);
    auto span = static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first);
    std::int64_t middle = first + static_cast<std::int64_t>(span / 2);
    scans.push_back({source, {{first, middle}, {middle + 1, last}}});
    if (middle == last) scans.back().halves[1] = {};
    totalRows += static_cast<std::int64_t>(std::min<std::uint64_t>(span, 1ULL << 62)) + 1;
  }
  return scans;
}

// What one reading thread collects.
class Collector {
 public:
  explicit Collector(const ActivityNames& names) : names_(names) {}

  // Reads one table's rows in the range, in storage order, with only the columns the timeline
  // keeps. False when the load was cancelled.
  bool read(trace::Database& db, ItemSource source, RowRange range, SharedProgress& progress) {
    if (range.first > range.last) return true;
    auto st = db.prepare("SELECT rowid, start, end, " + std::string(columnsOf(source)) + " FROM " +
                         std::string(sourceTable(source)) +
                         " WHERE rowid >= ? AND rowid <= ? ORDER BY rowid");
    st.bind(1, range.first);
    st.bind(2, range.last);
    constexpr std::int64_t kBatch = 1 << 16;  // rows between progress reports
    std::int64_t rows = 0;
    while (st.step()) {
      add(st, source);
      if (++rows == kBatch) {
        if (!progress.add(rows)) return false;
        rows = 0;
      }
    }
    return progress.add(rows);
  }

  std::map<PartKey, ItemChunks> parts;
  std::int64_t damagedRows = 0;

 private:
  static std::string_view columnsOf(ItemSource source) {
    switch (source) {
      case ItemSource::kOperation:
        return "globalTid, nameId, depth";
      case ItemSource::kCpuInterval:
        return "globalTid, nameId, category";
      case ItemSource::kRuntime:
      case ItemSource::kDriver:
        return "globalTid, nameId, correlationId";
      case ItemSource::kKernel:
        return "deviceId, streamId, globalPid, correlationId, shortName";
      case ItemSource::kMemcpy:
        return "deviceId, streamId, globalPid, correlationId, copyKind";
      case ItemSource::kMemset:
        return "deviceId, streamId, globalPid, correlationId";
    }
    return {};
  }

  // One row: rowid, start, end, then columnsOf(source).
  void add(const Statement& st, ItemSource source) {
    TrackItem item{.start = st.columnInt(1),
                   .end = st.columnInt(2),
                   .rowId = id32(st.columnInt(0)),
                   .source = source};
    if (item.end < item.start) {
      ++damagedRows;
      return;
    }
    TrackKey key;
    switch (source) {
      case ItemSource::kOperation:
        key = {.kind = TrackKind::kOperations,
               .globalTid = st.columnInt(3),
               .depth = static_cast<int>(std::clamp<std::int64_t>(st.columnInt(5), 0, kMaxDepth))};
        item.nameId = id32(st.columnInt(4));
        break;
      case ItemSource::kCpuInterval:
        key = {.kind = TrackKind::kCategories, .globalTid = st.columnInt(3)};
        item.nameId = id32(st.columnInt(4));
        item.categoryId = categoryId(st.columnInt(5));
        break;
      case ItemSource::kRuntime:
      case ItemSource::kDriver:
        key = {.kind = TrackKind::kCategories, .globalTid = st.columnInt(3)};
        item.nameId = id32(st.columnInt(4));
        item.correlationId = id32(st.columnInt(5));
        item.categoryId = static_cast<std::uint8_t>(trace::Category::kCudaApi);
        break;
      case ItemSource::kKernel:
      case ItemSource::kMemcpy:
      case ItemSource::kMemset:
        key = {.kind = TrackKind::kGpuStream,
               .deviceId = st.columnInt(3),
               .streamId = st.columnInt(4),
               .globalPid = st.columnInt(5)};
        item.correlationId = id32(st.columnInt(6));
        item.nameId = source == ItemSource::kKernel   ? id32(st.columnInt(7))
                      : source == ItemSource::kMemcpy ? names_.ofCopy(st.columnInt(7))
                                                      : names_.memset;
        item.categoryId = static_cast<std::uint8_t>(
            source == ItemSource::kKernel   ? trace::Category::kGpuKernel
            : source == ItemSource::kMemcpy ? trace::Category::kGpuMemcpy
                                            : trace::Category::kGpuMemset);
        break;
    }
    part({key, source}).push_back(item);
  }

  static std::uint8_t categoryId(std::int64_t v) {
    return v >= 1 && v <= trace::kCategoryCount ? static_cast<std::uint8_t>(v) : 0;
  }

  // Rows of one track come in long runs: the map is looked up only when the part changes.
  ItemChunks& part(const PartKey& key) {
    if (!last_ || key != lastKey_) {
      last_ = &parts[key];
      lastKey_ = key;
    }
    return *last_;
  }

  const ActivityNames& names_;
  PartKey lastKey_;
  ItemChunks* last_ = nullptr;
};

// Reads the given half of every table. False when the load was cancelled.
bool readHalf(trace::Database& db, const std::vector<TableScan>& scans, int half,
              Collector& collector, SharedProgress& progress) {
  for (const auto& scan : scans)
    if (!collector.read(db, scan.source, scan.halves[half], progress)) return false;
  return true;
}

// Each track's items in pieces: the chunks of its parts, table by table, and the halves of a
// table one after the other.
using TrackPieces = std::map<TrackKey, std::vector<std::vector<TrackItem>>>;

// Reads both halves, the second on a thread of its own with its own connection (opened with the
// reader's read-only, defensive settings). Returns the pieces of each track, and the number of
// damaged rows.
std::pair<TrackPieces, std::int64_t> readPieces(trace::TraceReader& reader,
                                                const std::vector<TableScan>& scans,
                                                const ActivityNames& names,
                                                SharedProgress& progress) {
  Collector first(names), second(names);
  std::promise<void> secondDone;
  auto readSecond = [&, path = reader.db().path()] {
    try {
      trace::Database db(path, trace::Database::Mode::kReadOnlyUntrusted);
      readHalf(db, scans, 1, second, progress);
      secondDone.set_value();
    } catch (...) {
      secondDone.set_exception(std::current_exception());
    }
  };
  std::future<void> secondResult = secondDone.get_future();
  std::thread worker;
  try {
    worker = std::thread(readSecond);
  } catch (const std::system_error&) {
    readSecond();  // no thread to be had: this one reads both halves
  }
  std::exception_ptr firstError;
  try {
    readHalf(reader.db(), scans, 0, first, progress);
  } catch (...) {
    firstError = std::current_exception();
    progress.cancel();  // the other half is of no use now
  }
  while (secondResult.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready)
    progress.report();
  if (worker.joinable()) worker.join();
  if (firstError) std::rethrow_exception(firstError);
  secondResult.get();  // the second half's error, if any
  if (progress.cancelled()) throw LoadCancelled();

  TrackPieces tracks;
  auto add = [&](const PartKey& key, ItemChunks& part) {
    auto& pieces = tracks[key.track];
    for (auto& chunk : part.chunks()) pieces.push_back(std::move(chunk));
  };
  for (auto& [key, part] : first.parts) {
    add(key, part);
    if (auto other = second.parts.find(key); other != second.parts.end()) {
      add(key, other->second);
      second.parts.erase(other);
    }
  }
  for (auto& [key, part] : second.parts) add(key, part);
  return {std::move(tracks), first.damagedRows + second.damagedRows};
}

// --- Labels --------------------------------------------------------------------------------------

std::string rowSuffix(int subRow) {
  return subRow == 0 ? "" : " (" + std::to_string(subRow + 1) + ")";
}

std::string cpuTrackLabel(const TrackKey& key, int subRow) {
  if (key.kind == TrackKind::kCategories)
    return subRow == 0 ? "CPU categories" : "CPU categories, level " + std::to_string(subRow);
  return (key.depth == 0 ? std::string("Operations")
                         : "Operations, depth " + std::to_string(key.depth)) +
         rowSuffix(subRow);
}

// Who the threads and processes are: the trace's own tables, when they list them.
struct Names {
  std::map<std::int64_t, trace::ProcessRecord> processes;           // by globalPid
  std::map<std::int64_t, trace::ThreadRecord> threads;              // by globalTid
  std::map<std::int64_t, std::string> threadNames;                  // ThreadNames, by globalTid
  std::map<std::int64_t, std::string> gpus;                         // by device id
  std::map<std::int64_t, trace::ProcessIdentityRecord> identities;  // by globalPid
  bool severalHosts = false;

  Names(trace::TraceReader& reader, const StringTable& strings) {
    for (auto& p : reader.processes()) processes[p.globalPid] = p;
    for (auto& t : reader.threads()) threads[t.globalTid] = t;
    for (auto& n : reader.threadNames())
      threadNames[n.globalTid] = std::string(strings[id32(n.nameId)]);
    for (auto& g : reader.gpus()) gpus[g.id] = g.name;
    auto all = reader.processIdentities();
    severalHosts = trace::hostsOf(all).size() > 1;
    for (auto& id : all) identities[id.globalPid] = std::move(id);
  }

  std::optional<std::int64_t> rank(std::int64_t globalPid) const {
    auto it = identities.find(globalPid);
    return it != identities.end() ? it->second.rank : std::nullopt;
  }

  std::int64_t pid(std::int64_t globalPid) const {
    auto it = processes.find(globalPid);
    return it != processes.end() ? it->second.pid : trace::pidOfGlobalId(globalPid);
  }
  std::int64_t tid(std::int64_t globalTid) const {
    auto it = threads.find(globalTid);
    return it != threads.end() ? it->second.tid : trace::tidOfGlobalId(globalTid);
  }

  std::string processLabel(std::int64_t globalPid) const {
    std::string id = std::to_string(pid(globalPid));
    auto it = processes.find(globalPid);
    std::string label = it == processes.end() || it->second.name.empty()
                            ? "process " + id
                            : it->second.name + " (pid " + id + ")";
    auto identity = identities.find(globalPid);
    if (identity == identities.end()) return label;
    auto rank = trace::rankLabel(identity->second, severalHosts);
    return rank.empty() ? label : rank + " \u00b7 " + label;
  }

  std::string threadLabel(std::int64_t globalTid) const {
    std::string id = std::to_string(tid(globalTid));
    std::string name;
    if (auto it = threads.find(globalTid); it != threads.end()) name = it->second.name;
    if (auto it = threadNames.find(globalTid); name.empty() && it != threadNames.end())
      name = it->second;
    if (name.empty()) return "thread " + id;
    // Kineto imports name threads "thread 2910249 (pt_main_thread)" already.
    if (name.find(id) != std::string::npos) return name;
    return name + " (tid " + id + ")";
  }

  std::string deviceLabel(std::int64_t deviceId) const {
    std::string label = "GPU " + std::to_string(deviceId);
    auto it = gpus.find(deviceId);
    return it == gpus.end() || it->second.empty() ? label : label + ": " + it->second;
  }
};

// --- Assembly ------------------------------------------------------------------------------------

// The tracks of one key: its items in rows that do not overlap.
std::vector<Track> tracksOf(const TrackKey& key, std::vector<std::vector<TrackItem>> pieces) {
  std::vector<Track> tracks;
  auto rows = splitIntoRows(std::move(pieces));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    Track t{.kind = key.kind,
            .globalPid = key.kind == TrackKind::kGpuStream ? key.globalPid
                                                           : trace::globalPidOfTid(key.globalTid),
            .globalTid = key.globalTid,
            .deviceId = key.deviceId,
            .streamId = key.streamId,
            .depth = key.depth,
            .subRow = static_cast<int>(r),
            .row = LodRow(std::move(rows[r]))};
    tracks.push_back(std::move(t));
  }
  return tracks;
}

// The tracks laid out as the model shows them. Filled in key order (each thread's operations by
// depth, then its categories), then sorted: processes by pid with the main thread (tid == pid)
// first and the others by tid, devices by id with streams by id, then process.
class Layout {
 public:
  explicit Layout(const Names& names) : names_(names) {}

  void add(const TrackKey& key, std::vector<Track> tracks) {
    if (key.kind == TrackKind::kGpuStream) {
      auto& streams = devices_[key.deviceId];
      for (auto& t : tracks) streams.push_back(std::move(t));
      return;
    }
    auto& thread = threads_[trace::globalPidOfTid(key.globalTid)][key.globalTid];
    for (auto& t : tracks) {
      t.label = cpuTrackLabel(key, t.subRow);
      thread.push_back(std::move(t));
    }
  }

  void into(TimelineData& data) {
    for (auto& [globalPid, threads] : threads_) {
      ProcessTracks p{.globalPid = globalPid,
                      .pid = names_.pid(globalPid),
                      .rank = names_.rank(globalPid),
                      .label = names_.processLabel(globalPid)};
      for (auto& [globalTid, tracks] : threads) {
        p.threads.push_back({.globalTid = globalTid,
                             .tid = names_.tid(globalTid),
                             .label = names_.threadLabel(globalTid),
                             .tracks = std::move(tracks)});
      }
      std::sort(p.threads.begin(), p.threads.end(), [&](const auto& a, const auto& b) {
        return std::pair(a.tid != p.pid, a.tid) < std::pair(b.tid != p.pid, b.tid);
      });
      data.processes.push_back(std::move(p));
    }
    // The ranks of a job in rank order, then the processes without one (launchers) by pid.
    std::sort(data.processes.begin(), data.processes.end(), [](const auto& a, const auto& b) {
      return std::tuple(!a.rank, a.rank.value_or(0), a.pid) <
             std::tuple(!b.rank, b.rank.value_or(0), b.pid);
    });
    for (auto& [deviceId, streams] : devices_) {
      labelStreams(streams);
      data.devices.push_back({.deviceId = deviceId,
                              .label = names_.deviceLabel(deviceId),
                              .streams = std::move(streams)});
    }
  }

 private:
  // Stream labels name the process only where a device runs the work of several.
  void labelStreams(std::vector<Track>& streams) const {
    std::sort(streams.begin(), streams.end(), [](const Track& a, const Track& b) {
      return std::tuple(a.streamId, a.globalPid, a.subRow) <
             std::tuple(b.streamId, b.globalPid, b.subRow);
    });
    bool shared = std::any_of(streams.begin(), streams.end(), [&](const Track& s) {
      return s.globalPid != streams.front().globalPid;
    });
    for (auto& s : streams) {
      s.label = "Stream " + std::to_string(s.streamId) +
                (shared ? ", pid " + std::to_string(names_.pid(s.globalPid)) : "") +
                rowSuffix(s.subRow);
    }
  }

  const Names& names_;
  std::map<std::int64_t, std::map<std::int64_t, std::vector<Track>>> threads_;  // by pid, tid
  std::map<std::int64_t, std::vector<Track>> devices_;
};

void measure(TimelineData& data) {
  bool any = false;
  data.forEachTrack([&](const Track& t) {
    const auto& items = t.row.items();
    if (items.empty()) return;
    data.itemCount += static_cast<std::int64_t>(items.size());
    // A row's last item ends last: rows do not overlap.
    data.span.start = any ? std::min(data.span.start, items.front().start) : items.front().start;
    data.span.end = any ? std::max(data.span.end, items.back().end) : items.back().end;
    any = true;
  });
}

}  // namespace

TimelineData loadTimeline(trace::TraceReader& reader, const LoadProgress& progress) {
  TimelineData data;
  readStrings(reader.db(), data.strings);
  ActivityNames activityNames = addActivityNames(reader.db(), data.strings);
  std::int64_t totalRows = 0;
  auto scans = planScans(reader.db(), totalRows);
  SharedProgress shared(totalRows, progress);
  auto [pieces, damaged] = readPieces(reader, scans, activityNames, shared);
  data.damagedRows = damaged;

  Names names(reader, data.strings);
  Layout layout(names);
  for (auto& [key, trackPieces] : pieces) layout.add(key, tracksOf(key, std::move(trackPieces)));
  layout.into(data);
  measure(data);
  if (progress) progress(1.0);
  return data;
}

}  // namespace rlscope::gui
