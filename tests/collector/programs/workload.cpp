// rlscope_test_workload MODE: small programs that the collector's end-to-end tests run under
// rlscope-prof, one behaviour per mode. They use plain NVTX (nvtx3) and rlscope annotations,
// exactly as user programs do.
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <rlscope/rlscope.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace {

void spin(int micros) {
  usleep(static_cast<useconds_t>(micros));
}

// Every kind of NVTX call the collector handles.
int nvtxCalls() {
  nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), "main thread");
  nvtxNameCategoryA(7, "my category");
  nvtxRangePushA("outer");
  nvtxRangePushA("inner");
  spin(200);
  nvtxRangePop();
  nvtxMarkA("a mark");
  nvtxRangePop();

  nvtxDomainHandle_t d = nvtxDomainCreateA("my.domain");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(d, "registered range");
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xff00ff00;
  a.category = 7;
  nvtxDomainRangePushEx(d, &a);
  spin(100);
  nvtxDomainRangePop(d);

  // A start/end range that ends on another thread.
  nvtxRangeId_t id = nvtxRangeStartA("across threads");
  std::thread([id] {
    spin(100);
    nvtxRangeEnd(id);
  }).join();

  // Names of any length and bytes.
  std::string longName(100000, 'x');
  nvtxRangePushA(longName.c_str());
  nvtxRangePop();
  nvtxRangePushA("bytes \xff\xfe\x01 \xe2\x82\xac");
  nvtxRangePop();
  nvtxRangePushW(L"wide \u00e9");
  nvtxRangePop();

  // rlscope annotations: operations, a phase, progress.
  rlscope_phase_t phase = rlscope_phase_begin("training");
  {
    rlscope::Operation op("annotated");
    rlscope::progress("iteration", 42);
  }
  std::uint64_t handedOn = rlscope_operation_start("handed on");
  std::thread([handedOn] { rlscope_operation_end(handedOn); }).join();
  rlscope_phase_end(phase);

  nvtxRangePop();  // a pop without a push
  nvtxRangePushA("open at exit");
  return 0;
}

// Many short-lived threads, each with a range.
int manyThreads(int n) {
  for (int i = 0; i < n; i += 50) {
    std::vector<std::thread> ts;
    for (int j = i; j < i + 50 && j < n; ++j)
      ts.emplace_back([j] {
        std::string name = "thread " + std::to_string(j);
        nvtxRangePushA(name.c_str());
        nvtxRangePop();
      });
    for (auto& t : ts) t.join();
  }
  return 0;
}

// Ranges, then a fork without exec: the child records ranges of its own and leaves with exit()
// or _exit(); the parent waits for it.
int forkNoExec(bool underscoreExit) {
  nvtxRangePushA("parent before fork");
  nvtxRangePop();
  pid_t pid = fork();
  if (pid == 0) {
    nvtxRangePushA("child work");
    spin(1000);
    nvtxRangePop();
    if (underscoreExit) _exit(5);
    std::exit(5);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  nvtxRangePushA("parent after fork");
  nvtxRangePop();
  return WIFEXITED(status) && WEXITSTATUS(status) == 5 ? 0 : 1;
}

// A parent that starts two children (posix_spawn of itself and a shell that runs it again).
int multiProcess(const char* self) {
  nvtxRangePushA("parent");
  std::vector<char*> args = {const_cast<char*>(self), const_cast<char*>("child"), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self, nullptr, nullptr, args.data(), environ) != 0) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  std::string cmd = std::string("'") + self + "' child";
  int rc = std::system(cmd.c_str());
  nvtxRangePop();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && rc == 0 ? 0 : 1;
}

int child() {
  nvtxRangePushA("child");
  spin(500);
  nvtxRangePop();
  return 0;
}

// Two ranks as a launcher starts them: each child gets RANK, WORLD_SIZE, LOCAL_RANK and
// TORCHELASTIC_RUN_ID (torchrun's), and a variable the trace must not carry.
int ranks(const char* self) {
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> vars = {"RANK=" + std::to_string(rank), "WORLD_SIZE=2",
                                     "LOCAL_RANK=" + std::to_string(rank),
                                     "TORCHELASTIC_RUN_ID=test-run", "API_TOKEN=secret"};
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) env.push_back(*e);
    for (auto& v : vars) env.push_back(v.data());
    env.push_back(nullptr);
    std::vector<char*> args = {const_cast<char*>(self), const_cast<char*>("rank-child"), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, self, nullptr, nullptr, args.data(), env.data()) != 0) return 1;
    pids.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failures;
}

// One rank: a range, and a helper thread (like a collective backend's) that never records an
// event and is still alive when the process exits.
int rankChild() {
  std::thread helper([] {
    for (;;) pause();
  });
  // Named by its creator, so that the name is set before the process ends however late the
  // helper first runs.
  pthread_setname_np(helper.native_handle(), "idle-helper");
  helper.detach();
  nvtxRangePushA("step");
  spin(1000);
  nvtxRangePop();
  return 0;
}

// A range, then the process becomes another program by exec: `exec` runs this program again in
// mode "exit 3" (one process, two images), after an exec that fails (the process goes on).
int execSelf(const char* self) {
  nvtxRangePushA("before exec");
  nvtxRangePop();
  char* missing[] = {const_cast<char*>("/nonexistent/program"), nullptr};
  execv(missing[0], missing);
  nvtxRangePushA("after failed exec");
  nvtxRangePop();
  nvtxRangePushA("open at exec");
  char* args[] = {const_cast<char*>(self), const_cast<char*>("exit"), const_cast<char*>("3"),
                  nullptr};
  execv(self, args);
  return 1;
}

// A fork child that execs this program with an environment that has nothing of rlscope's.
int cleanEnvironmentChild(const char* self) {
  pid_t pid = fork();
  if (pid == 0) {
    char* args[] = {const_cast<char*>(self), const_cast<char*>("child"), nullptr};
    // Only PATH (and a sanitizer build's runtime options, which the test needs to pass on).
    std::vector<std::string> kept = {"PATH=/usr/bin:/bin"};
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"})
      if (const char* v = std::getenv(name)) kept.push_back(std::string(name) + "=" + v);
    std::vector<char*> env;
    for (auto& e : kept) env.push_back(e.data());
    env.push_back(nullptr);
    execve(self, args, env.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// What the program sees of SIGTERM's action: the default, as without rlscope; its own handler
// once it installs one; the default again after it asks for it (and SIGTERM still ends the
// process, its part finished, as the sigterm mode checks).
int signalActions() {
  struct sigaction old {};
  sigaction(SIGTERM, nullptr, &old);
  if (old.sa_handler != SIG_DFL) return 10;
  if (std::signal(SIGINT, SIG_IGN) != SIG_DFL) return 11;
  struct sigaction mine {};
  mine.sa_handler = [](int) {};
  sigaction(SIGTERM, &mine, nullptr);
  sigaction(SIGTERM, nullptr, &old);
  if (old.sa_handler != mine.sa_handler) return 12;
  std::signal(SIGTERM, SIG_DFL);
  sigaction(SIGTERM, nullptr, &old);
  if (old.sa_handler != SIG_DFL) return 13;
  nvtxRangePushA("terminated");
  raise(SIGTERM);
  spin(2000000);
  return 14;
}

// The parent leaves at once; its child (re-parented) records a range a moment later.
int orphan() {
  if (fork() == 0) {
    usleep(300000);
    nvtxRangePushA("orphan work");
    nvtxRangePop();
    std::exit(0);
  }
  return 0;
}

// Records a range, lets the collector's writer flush it (RLSCOPE_FLUSH_MS is 100 by default),
// then dies without any exit handler.
int dieBy(int sig, bool exitAtOnce = false) {
  nvtxRangePushA("before the end");
  spin(1000);
  nvtxRangePop();
  nvtxRangePushA("open when killed");
  spin(400000);
  if (sig == SIGSEGV) {
    // A real invalid store, to an address no sanitizer check flags before the fault (UBSan
    // checks null), with the default action so that a sanitizer runtime's SEGV handler does not
    // turn the crash into an exit status.
    std::signal(SIGSEGV, SIG_DFL);
    volatile std::uintptr_t address = 16;
    *reinterpret_cast<volatile int*>(address) = 1;
  }
  raise(sig);
  if (!exitAtOnce) spin(2000000);  // SIGTERM: the collector finishes the part and re-raises it
  return 0;  // reached only when exitAtOnce: the signal must still be what ends the process
}

}  // namespace

// Renames itself as setproctitle does (Ray's workers become "ray::Learner"): the new title over
// the argv area, the rest of it cleared, so /proc/self/cmdline says only the title. Then lives a
// few of the collector's flush intervals, so the writer sees it.
int renameItself(int argc, char** argv) {
  char* end = argv[argc - 1] + std::strlen(argv[argc - 1]);
  std::memset(argv[0], 0, static_cast<std::size_t>(end - argv[0]));
  std::strcpy(argv[0], "renamed-worker");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  return 0;
}

int main(int argc, char** argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "rename") return renameItself(argc, argv);
  if (mode == "nvtx") return nvtxCalls();
  if (mode == "threads") return manyThreads(argc > 2 ? std::atoi(argv[2]) : 1000);
  if (mode == "fork") return forkNoExec(false);
  if (mode == "fork-underscore-exit") return forkNoExec(true);
  if (mode == "multiprocess") return multiProcess(argv[0]);
  if (mode == "child") return child();
  if (mode == "ranks") return ranks(argv[0]);
  if (mode == "rank-child") return rankChild();
  if (mode == "exec") return execSelf(argv[0]);
  if (mode == "clean-environment-child") return cleanEnvironmentChild(argv[0]);
  if (mode == "signal-actions") return signalActions();
  if (mode == "orphan") return orphan();
  if (mode == "segv") return dieBy(SIGSEGV);
  if (mode == "sigkill") return dieBy(SIGKILL);
  if (mode == "sigterm") return dieBy(SIGTERM);
  if (mode == "sigterm-then-return") return dieBy(SIGTERM, true);
  if (mode == "exit") return argc > 2 ? std::atoi(argv[2]) : 0;
  std::fprintf(stderr,
               "usage: rlscope_test_workload nvtx|threads [N]|fork|fork-underscore-exit|"
               "multiprocess|child|ranks|rank-child|exec|clean-environment-child|signal-actions|"
               "orphan|segv|sigkill|"
               "sigterm|sigterm-then-return|exit [STATUS]\n");
  return 2;
}
