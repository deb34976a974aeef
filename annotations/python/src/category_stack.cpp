#include "category_stack.h"

#include "collector_link.h"

namespace rlscope::python {

namespace {

thread_local ThreadTracking t_thread;
std::uint64_t g_transitions = 0;
// Incremented with the GIL held; the collector reads it once, at the process's end.
volatile std::uint64_t g_events = 0;
bool g_recordTransitions = true;

void push(ThreadTracking& t, std::uint32_t category, std::uint64_t name) {
  if (g_recordTransitions) collectorLink().push(category, name, t.events);
  t.events = 0;
}

}  // namespace

ThreadTracking& currentThread() {
  ThreadTracking& t = t_thread;
  if (!t.started) {
    // The thread's base: Python, from its first event on.
    t.started = true;
    push(t, RLSCOPE_CATEGORY_PYTHON, 0);
  }
  return t;
}

void countEvent(ThreadTracking& t) {
  ++t.events;
  g_events = g_events + 1;
}

void startRecording(bool transitions) {
  g_recordTransitions = transitions;
  if (collectorLink().eventCounter) collectorLink().eventCounter(&g_events);
}

void enter(ThreadTracking& t, Open open) {
  push(t, open.category, open.name);
  t.stack.push_back(open);
  ++g_transitions;
}

void leave(ThreadTracking& t) {
  if (g_recordTransitions) collectorLink().pop(t.events);
  t.events = 0;
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
  t.events = 0;
  push(t, RLSCOPE_CATEGORY_PYTHON, 0);
  for (const Open& o : t.stack) push(t, o.category, o.name);
}

}  // namespace rlscope::python
