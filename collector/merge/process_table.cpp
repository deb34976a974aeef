#include "process_table.h"

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"

namespace rlscope::merge {

namespace {

std::string_view firstArgument(std::string_view nulSeparated) {
  return nulSeparated.substr(0, nulSeparated.find('\0'));
}

std::string joinArgv(std::string_view nulSeparated) {
  std::string out(nulSeparated);
  std::replace(out.begin(), out.end(), '\0', ' ');
  return out;
}

std::string hostName() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string();
}

std::string baseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void ProcessImage::readProcessInfo(const part::RecordView& r) {
  auto info = r.payload<part::ProcessInfo>();
  if (!info) return;
  // Again later in the part when the process renamed itself (setproctitle).
  auto argv = r.string<part::ProcessInfo>(1).value_or("");
  if (std::exchange(described, true)) renamedTo = firstArgument(argv);
  exe = std::string(r.string<part::ProcessInfo>(0).value_or(""));
  commandLine = joinArgv(argv);
  parentPid = info->parentPid;
  forkedFrom = info->forkedFromPid;
}

// The host and the launcher's variables, read into an identity.
void ProcessImage::readIdentity(const part::RecordView& r) {
  if (!r.payload<part::ProcessIdentity>()) return;
  std::vector<trace::EnvironmentVariable> variables;
  std::string_view list = r.string<part::ProcessIdentity>(1).value_or("");
  while (!list.empty()) {
    auto nul = list.find('\0');
    std::string_view entry = list.substr(0, nul);
    list = nul == std::string_view::npos ? std::string_view{} : list.substr(nul + 1);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    variables.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  identity = trace::identityFromEnvironment(variables);
  identity->host = std::string(r.string<part::ProcessIdentity>(0).value_or(""));
}

void ProcessImage::nameThread(std::uint32_t tid, std::string name, bool fromNvtx) {
  touchThread(tid, 0);
  ThreadInfo& info = threads[tid];
  if (fromNvtx || !info.nameFromNvtx) {
    info.name = std::move(name);
    info.nameFromNvtx = fromNvtx;
  }
}

std::string ProcessImage::exeName() const {
  return baseName(exe);
}

std::int64_t globalTidIn(std::int64_t tracePid, std::uint32_t tid) {
  return trace::globalTidOf(tracePid, trace::fitsGlobalIdField(tid) ? tid : 0);
}

ProcessTable::ProcessTable(trace::TraceWriter& writer, trace::RowCounts& counts,
                           MergeReport& report)
    : w_(writer), counts_(counts), report_(report), host_(hostName()) {}

ProcessTable::Ids ProcessTable::open(const part::FileHeader& h) {
  auto known = processes_.find(h.pid);
  Process& pr = known != processes_.end() && continues(known->second, h) ? known->second : start(h);
  pr.lastHeader = h;
  return {pr.tracePid, pr.globalPid};
}

// The same pid as the last part, which exec'd, or ended unseen (an exec the collector did not
// see, or a kill: then only from the same parent, since a killed process's pid reused by an
// unrelated one is a new process).
bool ProcessTable::continues(const Process& pr, const part::FileHeader& h) {
  if (pr.lastHeader.pid != h.pid) return false;
  if (!pr.end) return pr.lastHeader.parentPid == h.parentPid;
  return pr.end->reason == static_cast<std::uint32_t>(part::EndReason::kExec);
}

ProcessTable::Process& ProcessTable::start(const part::FileHeader& h) {
  if (auto it = processes_.find(h.pid); it != processes_.end()) {
    write(it->second);
    processes_.erase(it);
  }
  Process& pr = processes_[h.pid];
  pr.pid = h.pid;
  if (!trace::fitsGlobalIdField(pr.pid) || !usedPids_.insert(pr.pid).second) {
    // pid reuse within the run (or an out-of-range pid): give the process a free one.
    std::int64_t sub = trace::kGlobalIdFieldLimit - 1;
    while (usedPids_.count(sub)) --sub;
    usedPids_.insert(sub);
    warn("process " + std::to_string(pr.pid) + ": pid used twice in the run; stored as pid " +
         std::to_string(sub));
    pr.tracePid = sub;
  } else {
    pr.tracePid = pr.pid;
  }
  pr.globalPid = trace::globalPidOf(pr.tracePid);
  pr.start = h.startMonotonicNs;
  return pr;
}

void ProcessTable::addImage(std::uint32_t pid, const ProcessImage& image, std::int64_t end) {
  Process& pr = processes_.at(pid);
  if (pr.images++ == 0) pr.parentPid = image.forkedFrom ? image.forkedFrom : image.parentPid;
  pr.exe = image.exe;
  pr.commandLine = image.commandLine;
  pr.renamedTo = image.renamedTo;
  pr.end = image.end;
  if (image.identity) pr.identity = image.identity;
  pr.lastTime = std::max(pr.lastTime, end);
  for (const auto& [tid, t] : image.threads) {
    ThreadInfo& mine = pr.threads[tid];
    if (t.start && (!mine.start || t.start < mine.start)) mine.start = t.start;
    if (!t.name.empty() && (t.nameFromNvtx || !mine.nameFromNvtx)) {
      mine.name = t.name;
      mine.nameFromNvtx = t.nameFromNvtx;
    }
  }
}

void ProcessTable::finish() {
  for (const auto& [pid, process] : processes_) write(process);
  processes_.clear();
}

// The process of the parts read so far, with the threads of all its images.
void ProcessTable::write(const Process& p) {
  trace::ProcessRecord pr;
  pr.globalPid = p.globalPid;
  pr.pid = p.pid;
  pr.parentPid = p.parentPid;
  pr.name = p.renamedTo.empty() ? baseName(p.exe) : p.renamedTo;
  pr.commandLine = p.commandLine;
  pr.start = p.start;
  pr.end = p.lastTime;
  // No status for a process killed without warning, nor for one that exec'd a program the
  // collector could not follow.
  if (p.end && p.end->reason == static_cast<std::uint32_t>(part::EndReason::kExit))
    pr.exitStatus = p.end->status;
  else if (p.end && p.end->reason == static_cast<std::uint32_t>(part::EndReason::kSignal))
    pr.exitStatus = 128 + p.end->status;
  w_.addProcess(pr);
  counts_.add(trace::table::kProcesses);
  // Parts of collectors older than the record have no identity: the merging host is theirs.
  trace::ProcessIdentityRecord identity = p.identity.value_or(trace::ProcessIdentityRecord{});
  identity.globalPid = p.globalPid;
  if (identity.host.empty()) identity.host = host_;
  w_.addProcessIdentity(identity);
  counts_.add(trace::table::kProcessIdentity);
  ++report_.processes;
  for (const auto& [tid, t] : p.threads) {
    w_.addThread({globalTidIn(p.tracePid, tid), p.globalPid, tid, t.name});
    counts_.add(trace::table::kThreads);
    ++report_.threads;
    if (!t.name.empty()) {
      w_.addThreadName({w_.intern(t.name), 0, globalTidIn(p.tracePid, tid)});
      counts_.add(trace::table::kThreadNames);
    }
  }
  if (!p.end)
    warn("process " + std::to_string(p.pid) + " (" + pr.name +
         ") ended without finishing its trace (killed, crashed, or still running): what "
         "it did after its last flush (--flush-ms) may be missing");
}

}  // namespace rlscope::merge
