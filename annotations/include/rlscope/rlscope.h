/* rlscope annotations: mark the operations and phases of an algorithm in C or C++.
 *
 *   rlscope_operation_push("inference"); ... rlscope_operation_pop();      (C)
 *   { rlscope::Operation op("inference"); ... }                             (C++)
 *   rlscope_phase_t p = rlscope_phase_begin("training"); ... rlscope_phase_end(p);
 *   rlscope_progress("iteration", it);
 *
 * Operations are nested scopes of one thread: the innermost one owns the time and the GPU work
 * launched inside it. Phases are coarse periods of the whole process (data collection,
 * training) and may begin and end on different threads. Progress marks count steps.
 *
 * Everything is emitted as NVTX (NVIDIA's header-only annotation API, nvtx3/ of the CUDA
 * toolkit): operations as push/pop ranges in the domain "rlscope", phases as start/end ranges in
 * "rlscope.phase", progress as marks with a uint64 payload. So Nsight Systems shows them too, and
 * when no tool is attached each call costs a few nanoseconds (NVTX checks one function pointer).
 * Under rlscope-prof, the collector records them; see docs/user-guide.md.
 *
 * Link: the header only needs the nvtx3 include directory and libdl (CMake: rlscope::annotations).
 */
#ifndef RLSCOPE_RLSCOPE_H_
#define RLSCOPE_RLSCOPE_H_

#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The NVTX domain of a kind of annotation, created once per library that uses this header. The
 * handle is NULL when no tool is attached, so a separate flag says it was asked for. Two threads
 * racing here both create the domain; either handle is valid. */
typedef struct rlscope_domain_cache_ {
  nvtxDomainHandle_t handle;
  int ready;
} rlscope_domain_cache_;

static inline nvtxDomainHandle_t rlscope_domain_(rlscope_domain_cache_* cache, const char* name) {
  if (!__atomic_load_n(&cache->ready, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(&cache->handle, nvtxDomainCreateA(name), __ATOMIC_RELAXED);
    __atomic_store_n(&cache->ready, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(&cache->handle, __ATOMIC_RELAXED);
}

static inline nvtxDomainHandle_t rlscope_operation_domain_(void) {
  static rlscope_domain_cache_ cache;
  return rlscope_domain_(&cache, "rlscope");
}

static inline nvtxDomainHandle_t rlscope_phase_domain_(void) {
  static rlscope_domain_cache_ cache;
  return rlscope_domain_(&cache, "rlscope.phase");
}

static inline nvtxEventAttributes_t rlscope_attributes_(const char* name) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

/* Opens an operation on the calling thread; `name` is copied. */
static inline void rlscope_operation_push(const char* name) {
  nvtxEventAttributes_t a = rlscope_attributes_(name);
  nvtxDomainRangePushEx(rlscope_operation_domain_(), &a);
}

/* Closes the calling thread's innermost operation. */
static inline void rlscope_operation_pop(void) {
  nvtxDomainRangePop(rlscope_operation_domain_());
}

/* An operation that need not nest with the thread's others (a generator's or a coroutine's,
 * which other code runs in between): start it, and end it with what this returns, on any
 * thread. */
static inline uint64_t rlscope_operation_start(const char* name) {
  nvtxEventAttributes_t a = rlscope_attributes_(name);
  return nvtxDomainRangeStartEx(rlscope_operation_domain_(), &a);
}

static inline void rlscope_operation_end(uint64_t operation) {
  nvtxDomainRangeEnd(rlscope_operation_domain_(), operation);
}

typedef uint64_t rlscope_phase_t;

/* Begins a phase of the process; pass the result to rlscope_phase_end. */
static inline rlscope_phase_t rlscope_phase_begin(const char* name) {
  nvtxEventAttributes_t a = rlscope_attributes_(name);
  return nvtxDomainRangeStartEx(rlscope_phase_domain_(), &a);
}

static inline void rlscope_phase_end(rlscope_phase_t phase) {
  nvtxDomainRangeEnd(rlscope_phase_domain_(), phase);
}

/* Marks progress: `what` (e.g. "iteration") has reached `count`. */
static inline void rlscope_progress(const char* what, uint64_t count) {
  nvtxEventAttributes_t a = rlscope_attributes_(what);
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = count;
  nvtxDomainMarkEx(rlscope_operation_domain_(), &a);
}

#ifdef __cplusplus
} /* extern "C" */

namespace rlscope {

/* An operation for the lifetime of the object. */
class Operation {
 public:
  explicit Operation(const char* name) { rlscope_operation_push(name); }
  ~Operation() { rlscope_operation_pop(); }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
};

/* A phase for the lifetime of the object. */
class Phase {
 public:
  explicit Phase(const char* name) : id_(rlscope_phase_begin(name)) {}
  ~Phase() { rlscope_phase_end(id_); }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  rlscope_phase_t id_;
};

inline void progress(const char* what, uint64_t count) {
  rlscope_progress(what, count);
}

}  // namespace rlscope
#endif /* __cplusplus */

#endif /* RLSCOPE_RLSCOPE_H_ */
