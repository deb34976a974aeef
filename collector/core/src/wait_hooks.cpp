// Waits of native code as Waiting time. Python tracking sees the waiting calls Python makes
// (time.sleep, a lock, Connection.recv: annotations/python/rlscope/_autostart.py); a wait that
// native code makes on its own (iterating over a pipe, a backend's condition variable, the GIL)
// is invisible to it and counted as the category the thread was in. The collector is preloaded,
// so it interposes libc's blocking I/O, sleep and process-wait calls: on a thread whose
// categories are tracked, a call that took longer than kBlockedTicks (it blocked, the thread was
// off the CPU) becomes a Waiting span named after the call. Other threads, and calls that
// returned at once, pay one thread-local load and, on tracked threads, two clock reads.
// Condition variables and semaphores are left alone: CPython waits for the GIL in one whenever a
// native call that released it returns, and a Waiting span there would cut that call's row in
// pieces (one call, several rows, miscounted transitions); Python's own lock waits are seen as
// the waiting calls Python makes.
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "collector_state.h"
#include "rlscope/collector/category_abi.h"

extern "C" std::uint64_t rlscope_collector_register_name(const char* name, size_t size);

namespace rlscope::collector {

thread_local bool t_tracksCategories __attribute__((tls_model("initial-exec"))) = false;

namespace {

// A call this long blocked: 20 000 ticks is 7-20 µs on the invariant counters of 1-3 GHz, 20 µs
// on CLOCK_MONOTONIC; a pipe read with data waiting, or a poll with a ready descriptor, returns
// in 1-2 µs.
constexpr std::uint64_t kBlockedTicks = 20'000;

// One interposed function: libc's (the next definition after ours) and the name its Waiting
// spans carry, both found on first use (a benign race to store the same values).
struct Hook {
  const char* name;
  std::atomic<void*> next{nullptr};
  std::atomic<std::uint64_t> nameHandle{0};

  template <class Fn>
  Fn real() {
    void* f = next.load(std::memory_order_relaxed);
    if (!f) {
      f = ::dlsym(RTLD_NEXT, name);
      next.store(f, std::memory_order_relaxed);
    }
    return reinterpret_cast<Fn>(f);
  }
};

// Records [start, now) as a Waiting span when it was long enough to be a wait.
void waited(Hook& hook, std::uint64_t start) {
  std::uint64_t end = ticks();
  if (end - start < kBlockedTicks) return;
  int savedErrno = errno;  // the caller sees the blocking call's errno, not ours
  if (ThreadBuffer* b = threadBuffer()) {
    std::uint64_t name = hook.nameHandle.load(std::memory_order_relaxed);
    if (!name) {
      name = rlscope_collector_register_name(hook.name, std::strlen(hook.name));
      hook.nameHandle.store(name, std::memory_order_relaxed);
    }
    record(b, part::RecordType::kCategoryPush,
           part::CategoryPush{static_cast<std::int64_t>(start), RLSCOPE_CATEGORY_WAITING,
                              part::categoryPushFlags(true, 0), name});
    record(b, part::RecordType::kCategoryPop, part::Instant{static_cast<std::int64_t>(end)});
  }
  errno = savedErrno;
}

// Calls libc's `fn` with `args`, timing it on tracked threads.
template <class Fn, class... Args>
auto timed(Hook& hook, Args... args) {
  Fn fn = hook.real<Fn>();
  if (!t_tracksCategories) return fn(args...);
  std::uint64_t start = ticks();
  auto result = fn(args...);
  waited(hook, start);
  return result;
}

Hook g_read{"read"}, g_readv{"readv"}, g_recv{"recv"}, g_recvfrom{"recvfrom"}, g_recvmsg{"recvmsg"},
    g_accept{"accept"}, g_accept4{"accept4"}, g_poll{"poll"}, g_ppoll{"ppoll"}, g_select{"select"},
    g_pselect{"pselect"}, g_epollWait{"epoll_wait"}, g_epollPwait{"epoll_pwait"},
    g_nanosleep{"nanosleep"}, g_clockNanosleep{"clock_nanosleep"}, g_usleep{"usleep"},
    g_sleep{"sleep"}, g_waitpid{"waitpid"}, g_wait4{"wait4"}, g_waitid{"waitid"},
    g_sigwait{"sigwait"}, g_sigtimedwait{"sigtimedwait"}, g_pause{"pause"};

}  // namespace
}  // namespace rlscope::collector

using namespace rlscope::collector;

#define RLSCOPE_WAIT_HOOK(ret, fn, hook, params, args)       \
  extern "C" RLSCOPE_COLLECTOR_API ret fn params {           \
    return timed<ret(*) params>(hook, RLSCOPE_UNPAREN args); \
  }
#define RLSCOPE_UNPAREN(...) __VA_ARGS__

RLSCOPE_WAIT_HOOK(ssize_t, read, g_read, (int fd, void* buf, size_t n), (fd, buf, n))
RLSCOPE_WAIT_HOOK(ssize_t, readv, g_readv, (int fd, const struct iovec* iov, int n), (fd, iov, n))
RLSCOPE_WAIT_HOOK(ssize_t, recv, g_recv, (int fd, void* buf, size_t n, int flags),
                  (fd, buf, n, flags))
RLSCOPE_WAIT_HOOK(ssize_t, recvfrom, g_recvfrom,
                  (int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* len),
                  (fd, buf, n, flags, from, len))
RLSCOPE_WAIT_HOOK(ssize_t, recvmsg, g_recvmsg, (int fd, struct msghdr* msg, int flags),
                  (fd, msg, flags))
RLSCOPE_WAIT_HOOK(int, accept, g_accept, (int fd, struct sockaddr* addr, socklen_t* len),
                  (fd, addr, len))
RLSCOPE_WAIT_HOOK(int, accept4, g_accept4,
                  (int fd, struct sockaddr* addr, socklen_t* len, int flags),
                  (fd, addr, len, flags))
RLSCOPE_WAIT_HOOK(int, poll, g_poll, (struct pollfd * fds, nfds_t n, int timeout),
                  (fds, n, timeout))
RLSCOPE_WAIT_HOOK(int, ppoll, g_ppoll,
                  (struct pollfd * fds, nfds_t n, const struct timespec* t, const sigset_t* mask),
                  (fds, n, t, mask))
RLSCOPE_WAIT_HOOK(int, select, g_select,
                  (int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* t), (n, r, w, e, t))
RLSCOPE_WAIT_HOOK(int, pselect, g_pselect,
                  (int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* t,
                   const sigset_t* mask),
                  (n, r, w, e, t, mask))
RLSCOPE_WAIT_HOOK(int, epoll_wait, g_epollWait,
                  (int fd, struct epoll_event* events, int n, int timeout),
                  (fd, events, n, timeout))
RLSCOPE_WAIT_HOOK(int, epoll_pwait, g_epollPwait,
                  (int fd, struct epoll_event* events, int n, int timeout, const sigset_t* mask),
                  (fd, events, n, timeout, mask))
RLSCOPE_WAIT_HOOK(int, nanosleep, g_nanosleep, (const struct timespec* t, struct timespec* rem),
                  (t, rem))
RLSCOPE_WAIT_HOOK(int, clock_nanosleep, g_clockNanosleep,
                  (clockid_t clock, int flags, const struct timespec* t, struct timespec* rem),
                  (clock, flags, t, rem))
RLSCOPE_WAIT_HOOK(int, usleep, g_usleep, (useconds_t us), (us))
RLSCOPE_WAIT_HOOK(unsigned int, sleep, g_sleep, (unsigned int s), (s))
RLSCOPE_WAIT_HOOK(pid_t, waitpid, g_waitpid, (pid_t pid, int* status, int options),
                  (pid, status, options))
RLSCOPE_WAIT_HOOK(pid_t, wait4, g_wait4,
                  (pid_t pid, int* status, int options, struct rusage* usage),
                  (pid, status, options, usage))
RLSCOPE_WAIT_HOOK(int, waitid, g_waitid, (idtype_t type, id_t id, siginfo_t* info, int options),
                  (type, id, info, options))
RLSCOPE_WAIT_HOOK(int, sigwait, g_sigwait, (const sigset_t* set, int* sig), (set, sig))
RLSCOPE_WAIT_HOOK(int, sigtimedwait, g_sigtimedwait,
                  (const sigset_t* set, siginfo_t* info, const struct timespec* t), (set, info, t))
extern "C" RLSCOPE_COLLECTOR_API int pause(void) {
  return timed<int (*)()>(g_pause);
}
