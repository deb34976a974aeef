// What the collector's sources share inside the library: the hot-path access to the calling
// thread's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clock.h"
#include "rlscope/collector/collector.h"
#include "thread_buffer.h"

namespace rlscope::collector {

// The calling thread's buffer, attached on first use. Initial-exec TLS: the library is preloaded,
// so the access is one load relative to the thread pointer, with no TLS call.
extern thread_local ThreadBuffer* t_threadBuffer __attribute__((tls_model("initial-exec")));

// Slow path of threadBuffer(): creates and registers the buffer. nullptr when inactive.
ThreadBuffer* attachCurrentThread();

inline ThreadBuffer* threadBuffer() {
  ThreadBuffer* b = t_threadBuffer;
  return b ? b : attachCurrentThread();
}

// Encodes one record into the calling thread's buffer.
template <class P>
inline void record(ThreadBuffer* b, part::RecordType type, const P& payload,
                   std::initializer_list<std::string_view> strings = {}) {
  std::size_t n = part::encodedSize<P>(strings);
  part::encodeRecord(b->reserve(n), type, payload, strings);
  b->publish(n);
}

// Whether the calling thread's CPU categories are tracked (it pushed one): its blocking libc calls
// are then recorded as Waiting spans (wait_hooks.cpp).
extern thread_local bool t_tracksCategories __attribute__((tls_model("initial-exec")));

// Exec (exec_hooks.cpp): finishes this process's part before its image is replaced (false when
// the collector does not run in this process, a vfork child's case, or has finished already);
// after a failed exec, a new part continues the process.
bool finishForExec();
void resumeAfterFailedExec();
// Remembers the run's injection variables (LD_PRELOAD, RLSCOPE_*, ...) as the process started,
// so that an exec with an environment that lost them gets them back.
void rememberInjectionEnvironment();

// Signals (signal_hooks.cpp): the collector's handler stands in for the default action of
// SIGINT, SIGTERM and SIGHUP; deliverSignal (async-signal-safe) has the writer thread finish the
// part, which then restores the true default and re-raises.
void standInForDefaultSignalActions();
void deliverSignal(int sig);
void restoreDefaultAction(int sig);

// Keeps a naming record (NVTX domain, registered string, category name, Python function name)
// for the parts of fork children: they refer to what they inherited by the parent's handles.
void rememberName(const std::byte* data, std::size_t size);

// A naming record: into the calling thread's buffer, and remembered for fork children.
template <class P>
inline void recordName(part::RecordType type, const P& payload,
                       std::initializer_list<std::string_view> strings) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return;
  record(b, type, payload, strings);
  std::vector<std::byte> bytes(part::encodedSize<P>(strings));
  part::encodeRecord(bytes.data(), type, payload, strings);
  rememberName(bytes.data(), bytes.size());
}

// The Python package's event counter (category_abi.h), read when the part ends; null until the
// package registers it.
void setPythonEventCounter(const volatile std::uint64_t* counter);

// The CUDA hooks, or nullptr.
const CudaHooks* cudaHooks();

}  // namespace rlscope::collector
