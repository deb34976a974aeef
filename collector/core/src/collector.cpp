// The collector's life in a process: started by the library constructor when rlscope-prof set
// RLSCOPE_PART_DIR, a writer thread that drains every thread's buffer into the part file every
// RLSCOPE_FLUSH_MS (default 25 ms), and a clean end at exit, _exit, SIGINT/SIGTERM/SIGHUP and in
// fork children (docs/architecture.md, "Collector").
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector_state.h"
#include "part_file.h"
#include "rlscope/trace/launcher_variables.h"

extern char** environ;

namespace rlscope::collector {

thread_local ThreadBuffer* t_threadBuffer __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {
thread_local bool t_isWriter __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

std::uint64_t timestamp() {
  return ticks();
}

std::int64_t nowNs() {
  return monotonicNs();
}

namespace {

std::int64_t wallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::uint32_t currentTid() {
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

std::string readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string threadNameOf(std::uint32_t tid) {
  std::string name = readFile(("/proc/self/task/" + std::to_string(tid) + "/comm").c_str());
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return {};
  return host;
}

// The launcher variables set in this process's environment, each `NAME=value` and a NUL.
std::string launcherVariables(std::uint32_t& count) {
  std::string out;
  count = 0;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos || !trace::isLauncherVariable(entry.substr(0, eq))) continue;
    out.append(entry).push_back('\0');
    ++count;
  }
  return out;
}

struct Config {
  std::string partDir;
  std::uint32_t features = part::kFeatureNvtx | part::kFeatureCudaApi | part::kFeatureGpuActivity;
  int flushMs = 25;
};

// RLSCOPE_FEATURES lists what is on ("nvtx,cuda-api,gpu-activity"); unset means everything.
Config configFromEnvironment() {
  Config c;
  if (const char* dir = std::getenv("RLSCOPE_PART_DIR")) c.partDir = dir;
  if (const char* f = std::getenv("RLSCOPE_FEATURES")) {
    std::string s = f;
    c.features = 0;
    if (s.find("nvtx") != std::string::npos) c.features |= part::kFeatureNvtx;
    if (s.find("cuda-api") != std::string::npos) c.features |= part::kFeatureCudaApi;
    if (s.find("gpu-activity") != std::string::npos) c.features |= part::kFeatureGpuActivity;
    if (s.find("python") != std::string::npos) c.features |= part::kFeaturePython;
  }
  if (const char* ms = std::getenv("RLSCOPE_FLUSH_MS")) {
    int v = std::atoi(ms);
    if (v > 0) c.flushMs = v;
  }
  return c;
}

class Collector {
 public:
  // Opens the part and starts the writer thread. forkedFrom != 0 in a fork child.
  std::string start(const Config& config, std::uint32_t forkedFrom) {
    config_ = config;
    pid_ = static_cast<std::uint32_t>(::getpid());
    part::FileHeader h{};
    std::memcpy(h.magic, part::kFileMagic, sizeof h.magic);
    h.version = part::kFormatVersion;
    h.pid = pid_;
    h.parentPid = static_cast<std::uint32_t>(::getppid());
    h.clock = static_cast<std::uint32_t>(g_clockKind);
    part::ClockSync sync = clockSync();
    h.startMonotonicNs = sync.monotonicNs;
    h.startWallNs = wallNs() - (monotonicNs() - sync.monotonicNs);
    h.startTicks = sync.ticks;
    if (auto err = file_.open(config.partDir, h); !err.empty()) return err;
    if (wakeFd_ >= 0) ::close(wakeFd_);
    wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    std::string exe(4096, '\0');
    ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size());
    exe.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    append(part::RecordType::kClockSync, sync);
    info_ = {static_cast<std::int64_t>(sync.ticks), pid_, h.parentPid, config.features, forkedFrom};
    exe_ = std::move(exe);
    title_ = commandLine();
    append(part::RecordType::kProcessInfo, info_, {exe_, title_});
    part::ProcessIdentity identity{pid_, 0};
    std::string variables = launcherVariables(identity.variableCount);
    append(part::RecordType::kProcessIdentity, identity, {hostName(), variables});
    finished_.store(false);
    closed_.store(false);
    stop_.store(false);
    writerReady_.store(false);
    writer_ = new std::thread([this] { writerLoop(); });
    // A fork while the new thread is still starting would copy locks its start-up holds (a
    // sanitizer runtime's allocator, for one) into the child, locked for good: the child then
    // hangs starting its own writer. Past this point the writer only allocates under
    // drainMutex_, which beforeFork holds.
    writerReady_.wait(false);
    return {};
  }

  std::uint32_t pid() const { return pid_; }
  std::uint32_t features() const { return config_.features; }

  ThreadBuffer* attach() {
    std::uint32_t tid = currentTid();
    auto* b = new ThreadBuffer(tid);
    {
      std::lock_guard lock(registryMutex_);
      buffers_.push_back(b);
    }
    t_threadBuffer = b;
    // Register for the thread-exit callback (a key destructor runs for every thread but main).
    pthread_setspecific(threadKey_, b);
    record(b, part::RecordType::kThreadStart, part::ThreadStart{now(), tid, 0});
    char name[64] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0])
      record(b, part::RecordType::kThreadName, part::ThreadName{tid, 0}, {name});
    return b;
  }

  void rememberName(const std::byte* data, std::size_t size) {
    std::lock_guard lock(processMutex_);
    names_.insert(names_.end(), data, data + size);
  }

  void appendProcess(const std::byte* data, std::size_t size) {
    std::lock_guard lock(processMutex_);
    processPending_.insert(processPending_.end(), data, data + size);
  }

  // One record into the process stream (usable before the collector is published).
  template <class P>
  void append(part::RecordType type, const P& payload,
              std::initializer_list<std::string_view> strings = {}) {
    std::size_t n = part::encodedSize<P>(strings);
    std::lock_guard lock(processMutex_);
    std::size_t at = processPending_.size();
    processPending_.resize(at + n);
    part::encodeRecord(processPending_.data() + at, type, payload, strings);
  }

  // The last act of the process's collector: flush CUDA, drain everything, write the end record,
  // close the part. Runs once, from exit, _exit or the writer thread at a fatal signal; false
  // when another call got there first. Such a call waits until the part is closed (the process
  // must not leave while the writer thread is still writing its end), except on the writer
  // thread, which the other call may be joining.
  bool finish(part::EndReason reason, int status) {
    if (finished_.exchange(true)) {
      for (int ms = 0; !t_isWriter && !closed_.load() && ms < 5000; ++ms) ::usleep(1000);
      return false;
    }
    if (auto* h = cudaHooks(); h && h->flush) h->flush();
    if (writer_ && writer_->get_id() != std::this_thread::get_id()) {
      stop_.store(true);
      wake();
      writer_->join();
      delete writer_;
      writer_ = nullptr;
    }
    std::lock_guard lock(drainMutex_);
    recordThreadNames();
    recordPythonEvents();
    drainLocked();
    part::ProcessEnd end{now(), static_cast<std::uint32_t>(reason), status, {0, 0}};
    constexpr auto kSyncBytes = part::encodedSize<part::ClockSync>();
    std::byte buf[kSyncBytes + part::encodedSize<part::ProcessEnd>()];
    part::encodeRecord(buf, part::RecordType::kClockSync, clockSync());
    part::encodeRecord(buf + kSyncBytes, part::RecordType::kProcessEnd, end);
    file_.writeBlock(0, buf, sizeof buf);
    file_.close();
    closed_.store(true);
    return true;
  }

  void setPythonEventCounter(const volatile std::uint64_t* counter) {
    pythonEventCounter_.store(counter);
  }

  // --- exec (exec_hooks.cpp) ---
  // The part ends before the image is replaced; the new image's collector starts the next part
  // of the same process. False when there was nothing to finish.
  bool finishForExec() { return finish(part::EndReason::kExec, 0); }
  // The exec failed and this image goes on: a new part continues the process.
  void resumeAfterFailedExec() {
    if (auto err = start(config_, 0); !err.empty())
      std::fprintf(stderr, "rlscope: warning: process %d is no longer profiled: %s\n",
                   static_cast<int>(::getpid()), err.c_str());
    // A signal that came during the exec is acted on now.
    if (int sig = deferredSignal_.exchange(0)) onSignal(sig);
  }

  // Async-signal-safe: hands the signal to the writer thread.
  void onSignal(int sig) {
    pendingSignal_.store(sig);
    wake();
  }

  // At exit or _exit. A signal handed to the writer thread that the program's own exit overtook
  // (it ran on to exit before the writer acted) ends the part as the signal's and then kills the
  // process, as the signal would have without us, rather than letting it exit with its status.
  void finishAtExit(int status) {
    auto signalSeen = [this] {
      int sig = pendingSignal_.load();
      return sig ? sig : takenSignal_.load();
    };
    int sig = signalSeen();
    if (sig)
      finish(part::EndReason::kSignal, sig);
    else
      finish(part::EndReason::kExit, status);
    if (!sig) sig = signalSeen();  // one that came while the part was being finished
    if (!sig) return;
    restoreDefaultAction(sig);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
    ::raise(sig);
  }

  // --- fork ---
  void beforeFork() {
    drainMutex_.lock();
    registryMutex_.lock();
    processMutex_.lock();
  }
  void afterForkInParent() {
    processMutex_.unlock();
    registryMutex_.unlock();
    drainMutex_.unlock();
  }
  void afterForkInChild() {
    processMutex_.unlock();
    registryMutex_.unlock();
    drainMutex_.unlock();
    std::uint32_t parent = pid_;
    // Everything inherited belongs to the parent, which drains it into its own part: set it
    // aside, never freed (a buffer may be mid-write by a thread that no longer exists here), but
    // kept reachable so that leak checkers in the child do not report it.
    inheritedBuffers_.insert(inheritedBuffers_.end(), buffers_.begin(), buffers_.end());
    buffers_.clear();
    processPending_.clear();
    file_.abandon();
    if (writer_) inheritedWriters_.push_back(writer_);  // a thread that does not exist here
    writer_ = nullptr;
    t_threadBuffer = nullptr;
    if (auto* h = cudaHooks(); h && h->atForkChild) h->atForkChild();
    setCudaHooks(nullptr);
    if (const volatile std::uint64_t* counter = pythonEventCounter_.load())
      pythonEventsBefore_ = *counter;
    pendingSignal_.store(0);  // the parent's, which its writer thread acts on
    takenSignal_.store(0);
    if (finished_.load()) return;  // forked after the parent's collector ended
    if (auto err = start(config_, parent); !err.empty()) {
      std::fprintf(stderr, "rlscope: warning: fork child %d is not profiled: %s\n",
                   static_cast<int>(::getpid()), err.c_str());
      finished_.store(true);
      return;
    }
    attach();  // the forking thread is the child's main thread
    std::lock_guard lock(processMutex_);
    processPending_.insert(processPending_.end(), names_.begin(), names_.end());
  }

  static void threadExited(void* p) {
    auto* b = static_cast<ThreadBuffer*>(p);
    if (t_threadBuffer == b) t_threadBuffer = nullptr;
    char name[64] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0])
      record(b, part::RecordType::kThreadName, part::ThreadName{b->tid(), 0}, {name});
    record(b, part::RecordType::kThreadEnd, part::Instant{now()});
    b->finish();
  }

  pthread_key_t threadKey_{};

 private:
  void wake() {
    std::uint64_t one = 1;
    if (wakeFd_ >= 0) [[maybe_unused]]
      auto r = ::write(wakeFd_, &one, sizeof one);
  }

  void writerLoop() {
    // The writer thread never takes signals meant for the program.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    pthread_setname_np(pthread_self(), "rlscope-writer");
    t_isWriter = true;
    writerTid_.store(currentTid());
    writerReady_.store(true);
    writerReady_.notify_one();
    for (;;) {
      pollfd p{wakeFd_, POLLIN, 0};
      ::poll(&p, 1, config_.flushMs);
      if (p.revents & POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wakeFd_, &v, sizeof v);
      }
      if (int sig = pendingSignal_.load()) {
        // Taken before pending is cleared: an exit reading pending, then taken (finishAtExit),
        // always sees the signal in one of them.
        takenSignal_.store(sig);
        int expected = sig;  // a later signal stays pending
        pendingSignal_.compare_exchange_strong(expected, 0);
        // The process is already leaving (exit, _exit, exec on another thread, which joins this
        // one): let it finish the part; re-raising here would kill it half-way.
        if (!finish(part::EndReason::kSignal, sig)) {
          deferredSignal_.store(sig);
          return;
        }
        // Die of the signal as the program would have without us.
        restoreDefaultAction(sig);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
        ::kill(::getpid(), sig);
        return;
      }
      if (stop_.load()) return;
      std::lock_guard lock(drainMutex_);
      recordProcessTitle();  // it allocates: only under drainMutex_ (see start())
      drainLocked();
    }
  }

  // The process's command line as /proc shows it: argv, NUL-separated, without trailing NULs.
  static std::string commandLine() {
    std::string cmdline = readFile("/proc/self/cmdline");
    while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
    return cmdline;
  }

  // A process that renames itself while it runs (setproctitle: Ray's workers become
  // "ray::Learner") is recorded again with its new command line, which the merge takes as its
  // name: checked once a flush, on the writer thread, so the program pays nothing for it.
  void recordProcessTitle() {
    std::string now = commandLine();
    if (now == title_) return;
    title_ = std::move(now);
    append(part::RecordType::kProcessInfo, info_, {exe_, title_});
  }

  void drainLocked() {
    if (auto* h = cudaHooks(); h && h->drain) h->drain();
    append(part::RecordType::kClockSync, clockSync());
    std::vector<ThreadBuffer*> snapshot;
    {
      std::lock_guard lock(registryMutex_);
      snapshot = buffers_;
    }
    std::vector<ThreadBuffer*> done;
    for (ThreadBuffer* b : snapshot) {
      bool empty =
          b->drain([&](const std::byte* d, std::size_t n) { file_.writeBlock(b->tid(), d, n); });
      if (empty) done.push_back(b);
    }
    if (!done.empty()) {
      std::lock_guard lock(registryMutex_);
      std::erase_if(buffers_, [&](ThreadBuffer* b) {
        return std::find(done.begin(), done.end(), b) != done.end();
      });
      for (ThreadBuffer* b : done) delete b;
    }
    std::vector<std::byte> pending;
    {
      std::lock_guard lock(processMutex_);
      pending.swap(processPending_);
    }
    file_.writeBlock(0, pending.data(), pending.size());
  }

  // Threads named after their first record (and the main thread, which has no exit callback)
  // get their final name at the end.
  // The Python package's event total of this process (category_abi.h): a fork child's counter
  // starts with its parent's count, which is the parent's to report.
  void recordPythonEvents() {
    const volatile std::uint64_t* counter = pythonEventCounter_.load();
    if (counter)
      append(part::RecordType::kPythonEvents, part::PythonEvents{*counter - pythonEventsBefore_});
  }

  // Names every thread that recorded something and every other thread the process still has
  // (a communication library's worker threads record nothing, yet they are the process's), except
  // the collector's own writer.
  void recordThreadNames() {
    std::vector<std::uint32_t> tids;
    {
      std::lock_guard lock(registryMutex_);
      for (ThreadBuffer* b : buffers_) tids.push_back(b->tid());
    }
    if (DIR* dir = ::opendir("/proc/self/task")) {
      while (dirent* e = ::readdir(dir)) {
        char* end = nullptr;
        unsigned long tid = std::strtoul(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || tid == writerTid_.load()) continue;
        auto t = static_cast<std::uint32_t>(tid);
        if (std::find(tids.begin(), tids.end(), t) == tids.end()) tids.push_back(t);
      }
      ::closedir(dir);
    }
    for (std::uint32_t tid : tids) {
      std::string name = threadNameOf(tid);
      if (!name.empty()) append(part::RecordType::kThreadName, part::ThreadName{tid, 0}, {name});
    }
  }

  Config config_;
  std::uint32_t pid_ = 0;
  // The process's ProcessInfo record, and the command line last recorded: the writer thread's
  // (start() sets them before it runs).
  part::ProcessInfo info_{};
  std::string exe_, title_;
  std::mutex drainMutex_;  // one drain at a time: writer thread, or the final one
  std::mutex registryMutex_;
  std::vector<ThreadBuffer*> buffers_;
  std::mutex processMutex_;
  std::vector<std::byte> processPending_;
  std::vector<std::byte> names_;  // naming records so far, for fork children (rememberName)
  PartFile file_;
  std::thread* writer_ = nullptr;
  std::vector<ThreadBuffer*> inheritedBuffers_;  // a fork child's copies of the parent's state
  std::vector<std::thread*> inheritedWriters_;
  int wakeFd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> writerTid_{0};
  std::atomic<bool> writerReady_{false};  // the writer thread is past its start-up
  std::atomic<bool> finished_{true};
  std::atomic<bool> closed_{false};  // the part of the last finish() is written and closed
  std::atomic<int> pendingSignal_{0};
  std::atomic<int> deferredSignal_{0};  // came while the part was being finished for an exec
  std::atomic<const volatile std::uint64_t*> pythonEventCounter_{nullptr};
  std::uint64_t pythonEventsBefore_ = 0;  // a fork child's inherited count
  std::atomic<int> takenSignal_{0};       // the writer thread is acting on it
};

// Leaked on purpose: exit handlers, late threads and signal handlers may use it after static
// destructors would have run.
Collector* g_collector = nullptr;
std::atomic<const CudaHooks*> g_cudaHooks{nullptr};

void onExit(int status, void*) {
  if (g_collector && g_collector->pid() == static_cast<std::uint32_t>(::getpid()))
    g_collector->finishAtExit(status);
}

__attribute__((constructor)) void startCollector() {
  Config config = configFromEnvironment();
  if (config.partDir.empty()) return;  // loaded outside rlscope-prof: stay inert
  chooseClock();
  auto* c = new Collector;
  if (pthread_key_create(&c->threadKey_, &Collector::threadExited) != 0) return;
  if (auto err = c->start(config, 0); !err.empty()) {
    std::fprintf(stderr, "rlscope: warning: process %d is not profiled: %s\n",
                 static_cast<int>(::getpid()), err.c_str());
    return;
  }
  g_collector = c;
  c->attach();  // the main thread is part of the process even if it never records anything
  rememberInjectionEnvironment();
  ::on_exit(onExit, nullptr);
  pthread_atfork([] { g_collector->beforeFork(); }, [] { g_collector->afterForkInParent(); },
                 [] { g_collector->afterForkInChild(); });
  standInForDefaultSignalActions();
}

}  // namespace

ThreadBuffer* attachCurrentThread() {
  return g_collector ? g_collector->attach() : nullptr;
}

void setPythonEventCounter(const volatile std::uint64_t* counter) {
  if (g_collector) g_collector->setPythonEventCounter(counter);
}

bool active() {
  return g_collector != nullptr;
}

std::uint32_t features() {
  return g_collector ? g_collector->features() : 0;
}

void appendProcessRecords(const std::byte* data, std::size_t size) {
  if (g_collector) g_collector->appendProcess(data, size);
}

bool finishForExec() {
  return g_collector && g_collector->pid() == static_cast<std::uint32_t>(::getpid()) &&
         g_collector->finishForExec();
}

void rememberName(const std::byte* data, std::size_t size) {
  if (g_collector) g_collector->rememberName(data, size);
}

void deliverSignal(int sig) {
  if (g_collector) g_collector->onSignal(sig);
}

void resumeAfterFailedExec() {
  if (g_collector) g_collector->resumeAfterFailedExec();
}

void warn(std::string_view text) {
  std::fprintf(stderr, "rlscope: warning: %.*s\n", static_cast<int>(text.size()), text.data());
  appendProcessRecord(part::RecordType::kWarning, part::Instant{now()}, {text});
}

const CudaHooks* cudaHooks() {
  return g_cudaHooks.load(std::memory_order_acquire);
}

void setCudaHooks(const CudaHooks* hooks) {
  g_cudaHooks.store(hooks, std::memory_order_release);
}

}  // namespace rlscope::collector

// Programs that leave with _exit (Python's os._exit in multiprocessing children, for one) skip
// exit handlers; the preloaded collector sees the call and finishes its part first. Only in the
// process that owns the collector: a vfork child (same memory, other pid) goes straight through.
extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) {
  using rlscope::collector::g_collector;
  if (g_collector && g_collector->pid() == static_cast<std::uint32_t>(::getpid()))
    g_collector->finishAtExit(status);
  ::syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
