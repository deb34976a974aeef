// What the collector's sources share inside the library: the hot-path access to the calling
// thread's buffer.
#pragma once

#include <cstdint>

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

// The CUDA hooks, or nullptr.
const CudaHooks* cudaHooks();

}  // namespace rlscope::collector
