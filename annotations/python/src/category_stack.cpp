#include "category_stack.h"

#include "collector_link.h"

namespace rlscope::python {

namespace {

thread_local ThreadTracking t_thread;
std::uint64_t g_transitions = 0;

}  // namespace

ThreadTracking& currentThread() {
  ThreadTracking& t = t_thread;
  if (!t.started) {
    // The thread's base: Python, from its first event on.
    t.started = true;
    collectorLink().push(RLSCOPE_CATEGORY_PYTHON, 0);
  }
  return t;
}

void enter(ThreadTracking& t, Open open) {
  collectorLink().push(open.category, open.name);
  t.stack.push_back(open);
  ++g_transitions;
}

void leave(ThreadTracking& t) {
  collectorLink().pop();
  t.stack.pop_back();
  ++g_transitions;
}

std::uint64_t registerName(const std::string& qualified) {
  return collectorLink().registerName(qualified.data(), qualified.size());
}

std::uint64_t transitions() {
  return g_transitions;
}

void restartAfterFork() {
  ThreadTracking& t = t_thread;
  if (!t.started) return;
  collectorLink().push(RLSCOPE_CATEGORY_PYTHON, 0);
  for (const Open& o : t.stack) collectorLink().push(o.category, o.name);
}

}  // namespace rlscope::python
