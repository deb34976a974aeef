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
};

// The calling thread's, its base entry recorded on first use.
ThreadTracking& currentThread();

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
