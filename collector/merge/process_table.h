// The processes of a run as their parts describe them. A process is the parts of its successive
// images (exec); each part says what its image was (ProcessImage); each finished process becomes
// its rows: rlscope_processes, its identity (host, rank), its threads and their names. A pid used
// twice in the run, or one beyond nsys's 24-bit id field, is stored under a free one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "rlscope/merge/part_merger.h"
#include "rlscope/part/reader.h"
#include "rlscope/trace/process_identity.h"
#include "rlscope/trace/row_counts.h"
#include "rlscope/trace/writer.h"

namespace rlscope::merge {

struct ThreadInfo {
  std::int64_t start = 0;
  std::string name;
  bool nameFromNvtx = false;  // nvtxNameOsThread names win over OS thread names
};

// What one part says of its process's image.
struct ProcessImage {
  std::string exe, commandLine;
  std::string renamedTo;   // argv[0] of a later ProcessInfo: the process renamed itself
  bool described = false;  // its first ProcessInfo was read
  std::optional<trace::ProcessIdentityRecord> identity;
  std::uint32_t parentPid = 0, forkedFrom = 0;
  std::optional<part::ProcessEnd> end;
  std::map<std::uint32_t, ThreadInfo> threads;

  void readProcessInfo(const part::RecordView& r);  // a kProcessInfo record
  void readIdentity(const part::RecordView& r);     // a kProcessIdentity record
  // Registers the thread; `time` (0: unknown) moves its start earlier. Inline: called for most
  // records.
  void touchThread(std::uint32_t tid, std::int64_t time) {
    if (tid == 0) return;
    std::int64_t& start = threads[tid].start;
    if (time) start = start ? std::min(start, time) : time;
  }
  void nameThread(std::uint32_t tid, std::string name, bool fromNvtx);
  std::string exeName() const;  // the executable's file name
};

// The globalTid of `tid` in the process stored as `tracePid`; a tid that does not fit nsys's
// 24-bit field is stored as 0.
std::int64_t globalTidIn(std::int64_t tracePid, std::uint32_t tid);

class ProcessTable {
 public:
  // Rows are counted in `counts`; processes, threads and warnings go to `report`.
  ProcessTable(trace::TraceWriter& writer, trace::RowCounts& counts, MergeReport& report);

  struct Ids {
    std::int64_t tracePid = 0, globalPid = 0;
  };
  // The process of a part with header `h`: its pid's process when the part continues it (an
  // exec), else a new one, the pid's previous process written first.
  Ids open(const part::FileHeader& h);
  // The image of `pid`'s process that a part described, finished at `end`.
  void addImage(std::uint32_t pid, const ProcessImage& image, std::int64_t end);
  // Writes the processes not written yet.
  void finish();
  // The merging host: the run's, and that of processes whose parts do not say theirs.
  const std::string& host() const { return host_; }

 private:
  struct Process {
    std::uint32_t pid = 0;
    std::int64_t tracePid = 0, globalPid = 0;
    std::uint32_t parentPid = 0;  // of its first image: the parent, or the pid it forked from
    std::int64_t start = 0, lastTime = 0;
    int images = 0;
    std::string exe, commandLine;  // of its last image
    std::string renamedTo;         // the name its last image gave itself (setproctitle), if it did
    std::optional<part::ProcessEnd> end;                   // of its last image
    std::optional<trace::ProcessIdentityRecord> identity;  // of its last image that said
    std::map<std::uint32_t, ThreadInfo> threads;
    part::FileHeader lastHeader{};  // of its last image's part
  };

  static bool continues(const Process& pr, const part::FileHeader& h);
  Process& start(const part::FileHeader& h);
  void write(const Process& p);
  void warn(std::string line) { report_.warnings.push_back(std::move(line)); }

  trace::TraceWriter& w_;
  trace::RowCounts& counts_;
  MergeReport& report_;
  std::string host_;
  std::map<std::uint32_t, Process> processes_;  // the latest process of each pid
  std::set<std::int64_t> usedPids_;
};

}  // namespace rlscope::merge
