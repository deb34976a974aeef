#include "clock.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rlscope::collector {

part::ClockKind g_clockKind = part::ClockKind::kMonotonicNs;

namespace {

bool counterIsInvariant() {
#if defined(__x86_64__)
  // CPUID 0x80000007 EDX bit 8: invariant TSC (Intel SDM vol. 2, "CPUID"). Hypervisors set it
  // only when the guest's TSC is stable.
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return false;
  __get_cpuid(0x80000007, &a, &b, &c, &d);
  return (d & (1u << 8)) != 0;
#elif defined(__aarch64__)
  return true;  // the generic timer's virtual counter runs at a fixed frequency
#else
  return false;
#endif
}

}  // namespace

void chooseClock() {
  const char* forced = std::getenv("RLSCOPE_CLOCK");
  bool monotonic = forced && std::strcmp(forced, "monotonic") == 0;
  g_clockKind =
      !monotonic && counterIsInvariant() ? part::ClockKind::kTicks : part::ClockKind::kMonotonicNs;
}

part::ClockSync clockSync() {
  if (g_clockKind != part::ClockKind::kTicks) {
    std::int64_t ns = monotonicNs();
    return {static_cast<std::uint64_t>(ns), ns};
  }
  // The pair with the tightest bracket of a few tries.
  part::ClockSync best{0, 0};
  std::uint64_t bestWidth = ~std::uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    std::uint64_t before = readTicks();
    std::int64_t ns = monotonicNs();
    std::uint64_t after = readTicks();
    if (after - before < bestWidth) {
      bestWidth = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

}  // namespace rlscope::collector
