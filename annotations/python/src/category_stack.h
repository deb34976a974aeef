// The calling thread's stack of CPU categories, as the collector records it, shared by the two
// ways the package learns of native calls: the profile function (transitions.cpp) and the
// hooks on native objects the profile function does not see (native_hooks.cpp). Used with the
// GIL held; the stacks are per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlscope::python {

// One open entry of a thread's stack: a tracked native call (key = what identifies it: its
// PyMethodDef, or the hooked object) or a Python callback inside one (key = its frame).
struct Open {
  const void* key;
  bool python;
  std::uint32_t category;
  std::uint64_t name;
};

struct ThreadTracking {
  bool started = false;  // its base Python entry is recorded
  std::vector<Open> stack;
  std::uint64_t events = 0;  // Python events since its last push or pop (countEvent)
};

// The calling thread's, its base entry recorded on first use.
ThreadTracking& currentThread();

// Every profile-function or sys.monitoring callback, tracked call or not: each costs the program
// time where it happens, which the next push or pop reports for the span it ends, and the
// process's total goes to the collector at its end (docs/calibration.md, "Python events").
void countEvent(ThreadTracking& t);

// Hands the collector the process's event counter; with `transitions` false (calibration's
// python_events configuration, RLSCOPE_PYTHON_TRACKING=events) the stacks are kept but nothing is
// recorded, so that a run pays for the events alone.
void startRecording(bool transitions);

void enter(ThreadTracking& t, Open open);
void leave(ThreadTracking& t);

// A collector name handle for a native function's qualified name.
std::uint64_t registerName(const std::string& qualified);

// Pushes and pops recorded by this process so far.
std::uint64_t transitions();

// In a fork child, whose part starts empty: the calling thread's open entries are recorded
// again (the collector gives the child the names registered before the fork).
void restartAfterFork();

}  // namespace rlscope::python
