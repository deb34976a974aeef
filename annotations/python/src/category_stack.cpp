#include "category_stack.h"

#include "collector_link.h"

namespace rlscope::python {

namespace {

thread_local ThreadTracking t_thread;
std::uint64_t g_transitions = 0;
std::unordered_map<std::uint64_t, std::string> g_names;  // handle -> qualified name
std::unordered_map<std::uint64_t, std::uint64_t> g_renamed;

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

std::uint64_t registerName(std::string qualified) {
  std::uint64_t h = collectorLink().registerName(qualified.data(), qualified.size());
  g_names.emplace(h, std::move(qualified));
  return h;
}

std::uint64_t transitions() {
  return g_transitions;
}

const std::unordered_map<std::uint64_t, std::uint64_t>& restartAfterFork() {
  g_renamed.clear();
  g_renamed[0] = 0;
  std::unordered_map<std::uint64_t, std::string> names;
  for (auto& [handle, name] : g_names) {
    std::uint64_t h = collectorLink().registerName(name.data(), name.size());
    g_renamed[handle] = h;
    names.emplace(h, std::move(name));
  }
  g_names = std::move(names);
  ThreadTracking& t = t_thread;
  if (t.started) {
    collectorLink().push(RLSCOPE_CATEGORY_PYTHON, 0);
    for (Open& o : t.stack) {
      o.name = g_renamed[o.name];
      collectorLink().push(o.category, o.name);
    }
  }
  return g_renamed;
}

}  // namespace rlscope::python
