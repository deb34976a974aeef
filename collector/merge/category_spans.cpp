#include "rlscope/merge/category_spans.h"

namespace rlscope::merge {

void CategorySpans::push(std::uint32_t tid, const part::CategoryPush& c) {
  auto& stack = stacks_[tid];
  bool nativeWait = c.flags & part::kCategoryPushNativeWait;
  std::uint64_t name = c.name;
  // libc's read inside Python's posix.read: the wait keeps the name of the call Python made.
  if (nativeWait && !stack.empty() && stack.back().category == c.category) name = stack.back().name;
  if (!stack.empty()) close(tid, stack.back(), c.time, part::categoryPushEvents(c.flags));
  stack.push_back({c.category, name, c.time, !nativeWait});
  if (!nativeWait) ++transitions_;
}

void CategorySpans::pop(std::uint32_t tid, std::int64_t time, std::uint64_t events) {
  auto& stack = stacks_[tid];
  if (stack.empty()) {
    ++unmatchedPops_;
    return;
  }
  close(tid, stack.back(), time, events);
  if (stack.back().transition) ++transitions_;
  std::uint64_t unwritten = stack.back().events;
  stack.pop_back();
  if (!stack.empty()) {
    stack.back().since = time;
    stack.back().events += unwritten;
  }
}

void CategorySpans::threadEnded(std::uint32_t tid, std::int64_t time) {
  auto it = stacks_.find(tid);
  if (it == stacks_.end() || it->second.empty()) return;
  closeStack(tid, it->second, time);
}

void CategorySpans::finish(std::int64_t end) {
  for (auto& [tid, stack] : stacks_)
    if (!stack.empty()) closeStack(tid, stack, end);
}

// What runs on top runs until `end`; Python events the frames below kept for a span they will
// not have now go with it, so that no event is lost.
void CategorySpans::closeStack(std::uint32_t tid, std::vector<Frame>& stack, std::int64_t end) {
  for (std::size_t i = 0; i + 1 < stack.size(); ++i) stack.back().events += stack[i].events;
  close(tid, stack.back(), end);
  stack.clear();
}

// Writes what `f` ran from f.since to `end` (nothing when empty), with the Python events that
// happened in it; an empty span's events stay with `f` for its next one.
void CategorySpans::close(std::uint32_t tid, Frame& f, std::int64_t end, std::uint64_t events) {
  std::int64_t since = f.since;
  f.since = end;
  f.events += events;
  if (end <= since) return;
  write_({tid, f.category, f.name, since, end, f.events});
  f.events = 0;
}

trace::Category categoryOf(std::uint32_t collectorCategory) {
  if (collectorCategory == 0) return trace::Category::kWaiting;
  if (collectorCategory <= static_cast<std::uint32_t>(trace::Category::kSimulator))
    return static_cast<trace::Category>(collectorCategory);
  return trace::Category::kNative;
}

}  // namespace rlscope::merge
