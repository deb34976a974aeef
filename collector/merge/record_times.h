// Record times arrive in a part's clock ticks (part/format.h); the merge converts every payload
// with times to CLOCK_MONOTONIC nanoseconds as it reads it (TickConverter).
#pragma once

#include "rlscope/part/format.h"
#include "tick_converter.h"

namespace rlscope::merge {

// A payload type with times and no overload here does not compile.
template <class P>
inline void toNs(const TickConverter&, P&) {
  static_assert(
      !requires(P p) { p.time; } && !requires(P p) { p.start; } && !requires(P p) { p.end; },
      "a record payload with times needs its own toNs overload");
}
inline void toNs(const TickConverter& c, part::CategoryPopEvents& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::ProcessEnd& x) {
  x.end = c.ns(x.end);
}
inline void toNs(const TickConverter& c, part::ThreadStart& x) {
  x.start = c.ns(x.start);
}
inline void toNs(const TickConverter& c, part::CategoryPush& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::Instant& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::NvtxEvent& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::NvtxPop& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::NvtxRangeEnd& x) {
  x.time = c.ns(x.time);
}
inline void toNs(const TickConverter& c, part::GpuActivityStatus& x) {
  x.time = c.ns(x.time);
}
template <class T>
void startEndToNs(const TickConverter& c, T& x) {
  x.start = c.ns(x.start);
  x.end = c.ns(x.end);
}
inline void toNs(const TickConverter& c, part::Kernel& x) {
  startEndToNs(c, x);
}
inline void toNs(const TickConverter& c, part::Memcpy& x) {
  startEndToNs(c, x);
}
inline void toNs(const TickConverter& c, part::Memset& x) {
  startEndToNs(c, x);
}
inline void toNs(const TickConverter& c, part::ApiCall& x) {
  startEndToNs(c, x);
}
inline void toNs(const TickConverter& c, part::Synchronization& x) {
  startEndToNs(c, x);
}
inline void toNs(const TickConverter& c, part::Overhead& x) {
  startEndToNs(c, x);
}

}  // namespace rlscope::merge
