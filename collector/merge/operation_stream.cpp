#include "rlscope/merge/operation_stream.h"

#include <algorithm>
#include <tuple>

#include "rlscope/trace/operation_nesting.h"

namespace rlscope::merge {

std::int64_t OperationStream::open(ThreadKey key, Kind kind) {
  Thread& t = threads_[key];
  // Start/end ranges end in any order; another kind's ranges close independently of ours.
  if (!kind.pushPop || (!t.open.empty() && !(t.open.front().kind == kind))) t.mixed = true;
  t.open.push_back({++nextId_, kind});
  return nextId_;
}

void OperationStream::close(ThreadKey key, trace::OperationRecord op) {
  Thread& t = threads_[key];
  const std::int64_t id = op.id;
  std::size_t n = t.open.size();
  // One domain's push/pop ranges pop innermost first, so this one is the last open.
  if (!t.mixed && n > 0 && t.open.back().id == op.id) {
    op.parentId = n > 1 ? t.open[n - 2].id : 0;
    op.depth = static_cast<int>(n - 1);
    emit(op);
  } else {
    t.mixed = true;
    t.held.push_back(std::move(op));
    ++held_;
  }
  closed(t, id);
}

std::int64_t OperationStream::innermostOpen(ThreadKey key) const {
  auto it = threads_.find(key);
  return it == threads_.end() || it->second.open.empty() ? 0 : it->second.open.back().id;
}

void OperationStream::cancel(ThreadKey key, std::int64_t id) {
  auto it = threads_.find(key);
  if (it != threads_.end()) closed(it->second, id);
}

void OperationStream::closed(Thread& t, std::int64_t id) {
  for (auto it = t.open.rbegin(); it != t.open.rend(); ++it) {
    if (it->id == id) {
      t.open.erase(std::next(it).base());
      break;
    }
  }
  if (!t.open.empty()) return;
  // Nothing of the thread is open: every range that could contain a held one is held too.
  if (!t.held.empty()) {
    trace::OperationNesting::nestKeepingIds(t.held);
    for (const auto& op : t.held) emit(op);
    held_ -= t.held.size();
    t.held.clear();
    t.held.shrink_to_fit();
  }
  t.mixed = false;
}

void OperationStream::emit(const trace::OperationRecord& op) {
  if (keep_) {
    kept_.push_back({op.globalTid, op.start, op.end, op.id, op.parentId});
    keptSorted_ = false;
  }
  write_(op);
}

std::int64_t OperationStream::innermostAt(std::int64_t globalTid, std::int64_t t) {
  if (!keptSorted_) {
    // By thread and start, the enclosing range first where two start together.
    std::sort(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) {
      return std::tie(a.globalTid, a.start, b.end) < std::tie(b.globalTid, b.start, a.end);
    });
    keptIndex_.clear();
    keptIndex_.reserve(kept_.size());
    for (std::size_t i = 0; i < kept_.size(); ++i) keptIndex_.emplace(kept_[i].id, i);
    keptSorted_ = true;
  }
  auto it =
      std::upper_bound(kept_.begin(), kept_.end(), std::pair{globalTid, t},
                       [](const std::pair<std::int64_t, std::int64_t>& v, const Kept& k) {
                         return v.first != k.globalTid ? v.first < k.globalTid : v.second < k.start;
                       });
  if (it == kept_.begin()) return 0;
  const Kept* op = &*(it - 1);
  if (op->globalTid != globalTid) return 0;
  // The last one started; if it ended already, one of its ancestors may still be open.
  while (op && !(op->start <= t && t < op->end)) {
    auto parent = op->parentId ? keptIndex_.find(op->parentId) : keptIndex_.end();
    op = parent == keptIndex_.end() ? nullptr : &kept_[parent->second];
  }
  return op ? op->id : 0;
}

}  // namespace rlscope::merge
