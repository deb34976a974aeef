// Following a run across exec. The exec family is interposed (the collector is preloaded) so
// that:
//   - a process's part is finished before its image is replaced; the new image's collector then
//     starts the next part of the same process, and the merge joins them (nothing of the old image
//     is lost, and a bash shim that execs python is one process, not two);
//   - an environment that lost rlscope's variables (subprocess.Popen(env={...}), env -i) gets
//     them back, so every descendant of the run is profiled, as the user asked.
// These run in fork and vfork children too: a vfork child shares the parent's memory while the
// parent's other threads keep running, so nothing here allocates from the heap (alloca only)
// and only the process that owns the collector finishes a part.
#include <dlfcn.h>
#include <spawn.h>
#include <unistd.h>

#include <alloca.h>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "collector_state.h"

extern char** environ;

namespace rlscope::collector {

namespace {

// "NAME=value" of each injection variable as the process started; static for the process's life.
constexpr std::size_t kMaxRemembered = 32;
const char* g_remembered[kMaxRemembered];
std::size_t g_rememberedCount = 0;
const char* g_collectorPath = nullptr;  // this library, as LD_PRELOAD names it

bool isInjectionVariable(const char* entry) {
  return std::strncmp(entry, "RLSCOPE_", 8) == 0 || std::strncmp(entry, "LD_PRELOAD=", 11) == 0 ||
         std::strncmp(entry, "NVTX_INJECTION64_PATH=", 22) == 0 ||
         std::strncmp(entry, "CUDA_INJECTION64_PATH=", 22) == 0 ||
         std::strncmp(entry, "PYTHONPATH=", 11) == 0;
}

std::size_t nameLength(const char* entry) {
  const char* eq = std::strchr(entry, '=');
  return eq ? static_cast<std::size_t>(eq - entry) : std::strlen(entry);
}

// The entry of envp named like `entry` ("NAME=..."), or nullptr.
const char* findSameName(char* const envp[], const char* entry) {
  std::size_t n = nameLength(entry);
  for (char* const* e = envp; e && *e; ++e)
    if (std::strncmp(*e, entry, n) == 0 && (*e)[n] == '=') return *e;
  return nullptr;
}

// Whether the colon-separated list `value` names the collector.
bool listsCollector(const char* value) {
  std::size_t len = std::strlen(g_collectorPath);
  for (const char* p = value; *p;) {
    const char* end = std::strchr(p, ':');
    std::size_t n = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
    if (n == len && std::strncmp(p, g_collectorPath, len) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

// What an environment needs: entry slots, and bytes for a rewritten LD_PRELOAD (0: unchanged).
struct EnvironmentPlan {
  std::size_t slots = 0;
  std::size_t preloadBytes = 0;
  bool changes = false;
};

EnvironmentPlan planEnvironment(char* const envp[]) {
  EnvironmentPlan plan;
  std::size_t count = 0;
  for (char* const* e = envp; e && *e; ++e) ++count;
  plan.slots = count + g_rememberedCount + 1;
  for (std::size_t i = 0; i < g_rememberedCount; ++i) {
    const char* theirs = findSameName(envp, g_remembered[i]);
    if (!theirs) {
      plan.changes = true;
    } else if (g_collectorPath && std::strncmp(theirs, "LD_PRELOAD=", 11) == 0 &&
               !listsCollector(theirs + 11)) {
      plan.changes = true;
      plan.preloadBytes = 11 + std::strlen(g_collectorPath) + 1 + std::strlen(theirs + 11) + 1;
    }
  }
  return plan;
}

// envp with the missing variables added and the collector put first in LD_PRELOAD, written into
// the caller's `slots` and `preload` (sized by planEnvironment).
char* const* buildEnvironment(char* const envp[], const EnvironmentPlan& plan, char** slots,
                              char* preload) {
  if (!plan.changes) return envp;
  std::size_t n = 0;
  for (char* const* e = envp; e && *e; ++e) {
    if (plan.preloadBytes && std::strncmp(*e, "LD_PRELOAD=", 11) == 0) {
      std::strcpy(preload, "LD_PRELOAD=");
      std::strcat(preload, g_collectorPath);
      if ((*e)[11]) {
        std::strcat(preload, ":");
        std::strcat(preload, *e + 11);
      }
      slots[n++] = preload;
    } else {
      slots[n++] = *e;
    }
  }
  for (std::size_t i = 0; i < g_rememberedCount; ++i)
    if (!findSameName(envp, g_remembered[i])) slots[n++] = const_cast<char*>(g_remembered[i]);
  slots[n] = nullptr;
  return slots;
}

// Calls call(environment) with envp completed; the storage lives in this frame.
template <class Call>
int withInjectionEnvironment(char* const envp[], Call&& call) {
  EnvironmentPlan plan = planEnvironment(envp);
  if (!plan.changes) return call(envp);
  auto** slots = static_cast<char**>(alloca(plan.slots * sizeof(char*)));
  auto* preload = static_cast<char*>(alloca(plan.preloadBytes ? plan.preloadBytes : 1));
  return call(buildEnvironment(envp, plan, slots, preload));
}

// Runs an exec: the part is finished first and resumed if the exec returns (it failed).
template <class Exec>
int execWithPartFinished(Exec&& exec) {
  bool finished = finishForExec();
  int result = exec();
  if (finished) {
    int saved = errno;
    resumeAfterFailedExec();
    errno = saved;
  }
  return result;
}

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using SpawnFn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                        const posix_spawnattr_t*, char* const[], char* const[]);

// libc's functions, resolved when the library loads (no lazy static-init guard, which a vfork
// child could find held). A call before that resolves it on the spot: a benign race to store the
// same value.
struct RealFunctions {
  ExecveFn execve = nullptr, execvpe = nullptr;
  FexecveFn fexecve = nullptr;
  SpawnFn posixSpawn = nullptr, posixSpawnp = nullptr;
};
RealFunctions g_real;

template <class Fn>
Fn real(Fn& slot, const char* name) {
  if (!slot) slot = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
  return slot;
}

__attribute__((constructor)) void resolveRealFunctions() {
  real(g_real.execve, "execve");
  real(g_real.execvpe, "execvpe");
  real(g_real.fexecve, "fexecve");
  real(g_real.posixSpawn, "posix_spawn");
  real(g_real.posixSpawnp, "posix_spawnp");
}

int doExecve(const char* path, char* const argv[], char* const envp[]) {
  auto fn = real(g_real.execve, "execve");
  return withInjectionEnvironment(envp, [&](char* const* env) {
    return execWithPartFinished([&] { return fn(path, argv, env); });
  });
}

int doExecvpe(const char* file, char* const argv[], char* const envp[]) {
  auto fn = real(g_real.execvpe, "execvpe");
  return withInjectionEnvironment(envp, [&](char* const* env) {
    return execWithPartFinished([&] { return fn(file, argv, env); });
  });
}

// The argument list of execl/execlp/execle (after `first`) as an argv in the caller's `out`.
std::size_t countListArguments(va_list args) {
  std::size_t n = 1;
  while (va_arg(args, const char*)) ++n;
  return n;
}

void collectListArguments(const char* first, va_list args, char** out) {
  std::size_t n = 0;
  out[n++] = const_cast<char*>(first);
  while (const char* a = va_arg(args, const char*)) out[n++] = const_cast<char*>(a);
  out[n] = nullptr;
}

}  // namespace

void rememberInjectionEnvironment() {
  for (char** e = environ; e && *e && g_rememberedCount < kMaxRemembered; ++e)
    if (isInjectionVariable(*e)) g_remembered[g_rememberedCount++] = ::strdup(*e);
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&rememberInjectionEnvironment), &info) && info.dli_fname)
    g_collectorPath = ::strdup(info.dli_fname);
}

}  // namespace rlscope::collector

// The exec family and posix_spawn, as glibc declares them. glibc's own functions call the
// system call directly, so each public entry point is interposed.
using namespace rlscope::collector;

#define RLSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

RLSCOPE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return doExecve(path, argv, envp);
}

RLSCOPE_EXPORT int execv(const char* path, char* const argv[]) {
  return doExecve(path, argv, environ);
}

RLSCOPE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return doExecvpe(file, argv, envp);
}

RLSCOPE_EXPORT int execvp(const char* file, char* const argv[]) {
  return doExecvpe(file, argv, environ);
}

RLSCOPE_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  auto fn = real(g_real.fexecve, "fexecve");
  return withInjectionEnvironment(envp, [&](char* const* env) {
    return execWithPartFinished([&] { return fn(fd, argv, env); });
  });
}

// execl, execlp, execle: the variadic list becomes an argv on the stack.
#define RLSCOPE_LIST_ARGV(first, argv)                                                           \
  va_list args;                                                                                  \
  va_start(args, first);                                                                         \
  va_list counting;                                                                              \
  va_copy(counting, args);                                                                       \
  auto** argv = static_cast<char**>(alloca((countListArguments(counting) + 1) * sizeof(char*))); \
  va_end(counting);                                                                              \
  collectListArguments(first, args, argv)

RLSCOPE_EXPORT int execl(const char* path, const char* arg, ...) {
  RLSCOPE_LIST_ARGV(arg, argv);
  va_end(args);
  return doExecve(path, argv, environ);
}

RLSCOPE_EXPORT int execlp(const char* file, const char* arg, ...) {
  RLSCOPE_LIST_ARGV(arg, argv);
  va_end(args);
  return doExecvpe(file, argv, environ);
}

RLSCOPE_EXPORT int execle(const char* path, const char* arg, ...) {
  RLSCOPE_LIST_ARGV(arg, argv);
  char* const* envp = va_arg(args, char* const*);  // after the list's NULL
  va_end(args);
  return doExecve(path, argv, envp);
}

// posix_spawn runs no exec this library sees (glibc calls the system call); only the
// environment is completed. The spawning process's part goes on.
RLSCOPE_EXPORT int posix_spawn(pid_t* pid, const char* path,
                               const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attr, char* const argv[],
                               char* const envp[]) {
  auto fn = real(g_real.posixSpawn, "posix_spawn");
  return withInjectionEnvironment(
      envp, [&](char* const* env) { return fn(pid, path, actions, attr, argv, env); });
}

RLSCOPE_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                                const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attr, char* const argv[],
                                char* const envp[]) {
  auto fn = real(g_real.posixSpawnp, "posix_spawnp");
  return withInjectionEnvironment(
      envp, [&](char* const* env) { return fn(pid, file, actions, attr, argv, env); });
}
