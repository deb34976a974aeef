#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "rlscope/launch/launch.h"

namespace rlscope::launch {

namespace {

std::atomic<pid_t> g_child{0};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Signals sent with kill(1) go on to the program. The terminal's own (Ctrl-C, Ctrl-\) already
// reach the program, which shares our process group; we only stay alive to merge its trace.
void forward(int sig, siginfo_t* info, void*) {
  pid_t child = g_child.load();
  if (child > 0 && info && info->si_code == SI_USER) ::kill(child, sig);
}

std::vector<char*> cStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

ExitStatus runAndWait(const std::string& path, const std::vector<std::string>& argv,
                      const std::vector<std::string>& env) {
  struct sigaction sa {};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction old[std::size(kForwarded)];
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &sa, &old[i]);

  // Descendants the program leaves running are re-parented to us, for waitForDescendants.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  auto args = cStrings(argv);
  auto envp = cStrings(env);
  // The program starts with default dispositions for the signals we handle.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : kForwarded) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), nullptr, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i)
      sigaction(kForwarded[i], &old[i], nullptr);
    throw std::runtime_error("cannot start " + path + ": " + std::strerror(rc));
  }
  g_child.store(pid);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child.store(0);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i)
    sigaction(kForwarded[i], &old[i], nullptr);

  ExitStatus r;
  if (WIFEXITED(status)) {
    r.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.code = 128 + r.signal;
  }
  return r;
}

bool waitForDescendants(std::chrono::milliseconds grace, const std::function<void()>& onWaiting) {
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + grace;
  bool told = false;
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) continue;
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) return true;  // ECHILD: none left
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (!told && now - start > std::chrono::milliseconds(250)) {
      told = true;
      if (onWaiting) onWaiting();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace rlscope::launch
