// Finishing the part on SIGINT, SIGTERM and SIGHUP without changing the program. The collector's
// handler only stands in for the default action: the program sees SIG_DFL when it asks, replaces
// the handler by installing its own (Python installs its KeyboardInterrupt handler for SIGINT
// only when it finds SIG_DFL, and multiprocessing's forkserver restores what it found), and gets
// the stand-in back when it asks for the default again. sigaction and signal are interposed for
// that (the collector is preloaded). On the signal, the writer thread finishes the part and
// re-raises the signal with the true default action.
#include <dlfcn.h>
#include <signal.h>

#include <atomic>

extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);  // glibc's own

#include "collector_state.h"

namespace rlscope::collector {

namespace {

constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

// The next sigaction (libc's, or a later interposer's), found when the library loads. Calls that
// come earlier (a sanitizer runtime initialising itself, before dlsym may be used) go to libc's
// own entry point.
std::atomic<SigactionFn> g_nextSigaction{nullptr};

SigactionFn realSigaction() {
  SigactionFn fn = g_nextSigaction.load(std::memory_order_relaxed);
  return fn ? fn : &::__sigaction;
}

bool handled(int sig) {
  for (int s : kHandledSignals)
    if (s == sig) return true;
  return false;
}

void onSignal(int sig) {
  deliverSignal(sig);
}

struct sigaction standInAction() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return sa;
}

struct sigaction defaultAction() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  return sa;
}

bool isDefault(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL;
}

bool isStandIn(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == onSignal;
}

__attribute__((constructor)) void resolveNextSigaction() {
  if (auto fn = reinterpret_cast<SigactionFn>(::dlsym(RTLD_NEXT, "sigaction")))
    g_nextSigaction.store(fn, std::memory_order_relaxed);
}

}  // namespace

void standInForDefaultSignalActions() {
  for (int sig : kHandledSignals) {
    struct sigaction old {};
    if (realSigaction()(sig, nullptr, &old) != 0 || !isDefault(old)) continue;
    struct sigaction sa = standInAction();
    realSigaction()(sig, &sa, nullptr);
  }
}

void restoreDefaultAction(int sig) {
  struct sigaction sa = defaultAction();
  realSigaction()(sig, &sa, nullptr);
}

}  // namespace rlscope::collector

using namespace rlscope::collector;

extern "C" __attribute__((visibility("default"))) int sigaction(int sig,
                                                                const struct sigaction* act,
                                                                struct sigaction* old) {
  if (!handled(sig) || !active()) return realSigaction()(sig, act, old);
  struct sigaction standIn = standInAction();
  // A request for the default keeps (or puts back) the stand-in.
  const struct sigaction* install = act && isDefault(*act) ? &standIn : act;
  int result = realSigaction()(sig, install, old);
  if (result == 0 && old && isStandIn(*old)) *old = defaultAction();
  return result;
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler), through the
// interposed sigaction above.
extern "C" __attribute__((visibility("default"))) sighandler_t signal(int sig,
                                                                      sighandler_t handler) {
  struct sigaction act {};
  struct sigaction old {};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
