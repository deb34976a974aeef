// The collector's in-process interface, for the libraries that feed it besides NVTX (the CUDA
// injection library, later the Python hooks). The collector itself is librlscope_collector.so,
// preloaded by rlscope-prof into every process of the run; see docs/architecture.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"

// The library is built with hidden visibility; these are its exported interface.
#define RLSCOPE_COLLECTOR_API __attribute__((visibility("default")))

namespace rlscope::collector {

// The clock of every record in the part (part/format.h, FileHeader::clock): the CPU's invariant
// counter or CLOCK_MONOTONIC ns. CUPTI is given the same clock, so CPU and GPU records share it.
RLSCOPE_COLLECTOR_API std::uint64_t timestamp();
// CLOCK_MONOTONIC in nanoseconds, for measuring intervals.
RLSCOPE_COLLECTOR_API std::int64_t nowNs();

// True when this process runs under rlscope-prof (RLSCOPE_PART_DIR set) and its part is open.
RLSCOPE_COLLECTOR_API bool active();
// part::FeatureBits the run was started with (rlscope-prof --no-... options).
RLSCOPE_COLLECTOR_API std::uint32_t features();

// Appends whole records to the process-wide stream of the part (tid 0 blocks). Thread-safe; for
// records that belong to no application thread (CUDA activity, GPU properties, warnings).
RLSCOPE_COLLECTOR_API void appendProcessRecords(const std::byte* data, std::size_t size);

template <class P>
void appendProcessRecord(part::RecordType type, const P& payload,
                         std::initializer_list<std::string_view> strings = {}) {
  std::size_t n = part::encodedSize<P>(strings);
  constexpr std::size_t kStack = 512;
  if (n <= kStack) {
    std::byte buf[kStack];
    part::encodeRecord(buf, type, payload, strings);
    appendProcessRecords(buf, n);
  } else {
    auto* buf = new std::byte[n];
    part::encodeRecord(buf, type, payload, strings);
    appendProcessRecords(buf, n);
    delete[] buf;
  }
}

// Prints "rlscope: warning: TEXT" on stderr once and records it in the part.
RLSCOPE_COLLECTOR_API void warn(std::string_view text);

// What the CUDA injection library plugs in. Every function may be null. They are called from the
// collector's writer thread (drain), at exit and at fatal signals (flush), in a fork child (fork),
// and on the application's thread at NVTX push/pop (so kernels launched inside an operation carry
// its id as external correlation).
struct CudaHooks {
  void (*flush)();        // force CUPTI to complete every buffer, then decode them
  void (*drain)();        // decode buffers CUPTI has completed so far
  void (*atForkChild)();  // CUPTI state is not usable in a fork child: stop using it
  void (*pushOperation)(std::uint64_t operationId);
  void (*popOperation)();
};
RLSCOPE_COLLECTOR_API void setCudaHooks(const CudaHooks* hooks);

// The operation ids the CUDA hooks see: part::operationIdOf (part/format.h).
using part::operationIdOf;

}  // namespace rlscope::collector
