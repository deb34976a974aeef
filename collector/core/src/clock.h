// The collector's clock: the CPU's invariant counter where the CPU has one (rdtsc costs a few
// nanoseconds; clock_gettime through the vDSO costs 20-30 on the project's VMs, and a push/pop
// pair reads the clock twice), else CLOCK_MONOTONIC. Ticks are turned into nanoseconds by the
// merge, from kClockSync records (part/format.h).
#pragma once

#include <time.h>

#include <cstdint>

#include "rlscope/part/format.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rlscope::collector {

inline std::int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Chosen once at start (chooseClock); read on every record.
extern part::ClockKind g_clockKind;

inline std::uint64_t readTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return static_cast<std::uint64_t>(monotonicNs());
#endif
}

inline std::uint64_t ticks() {
  if (g_clockKind == part::ClockKind::kTicks) [[likely]]
    return readTicks();
  return static_cast<std::uint64_t>(monotonicNs());
}

// ticks() as the signed 64-bit time the part records hold.
inline std::int64_t now() {
  return static_cast<std::int64_t>(ticks());
}

// Picks the counter when it is invariant (constant rate, never stops, synchronised across
// cores); RLSCOPE_CLOCK=monotonic forces CLOCK_MONOTONIC.
void chooseClock();

// A tick count and CLOCK_MONOTONIC at (nearly) the same instant: the tick read is the midpoint
// of two reads around clock_gettime.
part::ClockSync clockSync();

}  // namespace rlscope::collector
