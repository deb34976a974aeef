#include "rlscope/merge/nvtx_ranges.h"

namespace rlscope::merge {

std::uint32_t NvtxRanges::push(std::uint32_t tid, OpenRange o) {
  std::uint32_t index = ++pushes_[tid];
  o.pushIndex = index;
  stacks_[{tid, o.domain}].push_back(std::move(o));
  return index;
}

void NvtxRanges::pop(std::uint32_t tid, std::uint64_t domain, std::int64_t time) {
  auto& stack = stacks_[{tid, domain}];
  if (stack.empty()) {
    ++popsWithoutPush_[tid];
    return;
  }
  OpenRange o = std::move(stack.back());
  stack.pop_back();
  close_(o, time, tid, trace::NvtxEventType::kPushPopRange, false);
}

void NvtxRanges::start(std::uint64_t rangeId, OpenRange o) {
  started_[rangeId] = std::move(o);
}

void NvtxRanges::end(std::uint64_t rangeId, std::uint32_t tid, std::int64_t time) {
  ended_[rangeId] = {tid, time};
}

NvtxRanges::Leftovers NvtxRanges::finish(std::int64_t end) {
  Leftovers left;
  for (auto& [id, o] : started_) {
    auto it = ended_.find(id);
    if (it != ended_.end()) {
      close_(o, it->second.second, it->second.first, trace::NvtxEventType::kStartEndRange, false);
      ended_.erase(it);
    } else {
      close_(o, end, o.tid, trace::NvtxEventType::kStartEndRange, true);
    }
  }
  started_.clear();
  left.endsNeverStarted = ended_.size();
  ended_.clear();
  for (auto& [key, stack] : stacks_) {
    // Innermost first, as pops would have closed them.
    for (auto o = stack.rbegin(); o != stack.rend(); ++o)
      close_(*o, end, o->tid, trace::NvtxEventType::kPushPopRange, true);
    left.stillOpen += stack.size();
  }
  stacks_.clear();
  left.popsWithoutPush = std::move(popsWithoutPush_);
  return left;
}

}  // namespace rlscope::merge
