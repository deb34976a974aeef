#include "rlscope/trace/operation_nesting.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

namespace rlscope::trace {

namespace {

// What orders an operation: its thread, its start, the longer range first, then the order it
// was added in (the sort is stable).
struct SortKey {
  std::int64_t globalTid;
  TimeNs start;
  TimeNs end;
  std::size_t index;  // into the added operations

  bool operator<(const SortKey& o) const {
    if (globalTid != o.globalTid) return globalTid < o.globalTid;
    if (start != o.start) return start < o.start;
    if (end != o.end) return end > o.end;
    return index < o.index;
  }
};

// Sorts the keys; false when they were in order already. Producers add operations in orders
// made of a few sorted runs (a merge adds each range as it closes: the children in start order,
// then the range around them), which are merged, O(n log runs); other inputs get a merge sort.
// Not std::sort: its median-of-three quicksort meets one of those orders (one range around all
// the others, added last) and falls back to heapsort, 2.5 times slower.
bool sortKeys(std::vector<SortKey>& keys) {
  std::vector<std::size_t> runs{0};  // where each sorted run starts
  for (std::size_t i = 1; i < keys.size(); ++i)
    if (keys[i] < keys[i - 1]) runs.push_back(i);
  if (runs.size() == 1) return false;
  if (runs.size() > keys.size() / 16) {
    std::stable_sort(keys.begin(), keys.end());
    return true;
  }
  runs.push_back(keys.size());
  // Merges neighbouring runs pairwise until one is left.
  while (runs.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
      std::size_t first = runs[r], middle = runs[r + 1];
      std::size_t last = r + 2 < runs.size() ? runs[r + 2] : middle;
      if (middle < last)
        std::inplace_merge(keys.begin() + static_cast<std::ptrdiff_t>(first),
                           keys.begin() + static_cast<std::ptrdiff_t>(middle),
                           keys.begin() + static_cast<std::ptrdiff_t>(last));
      merged.push_back(last);
    }
    if (merged.back() != keys.size()) merged.push_back(keys.size());
    runs = std::move(merged);
  }
  return true;
}

// Moves each record to its sorted place in place, following the permutation's cycles: no second
// array, and fast when records move a short way (one thread's ranges, added as they close).
void permuteInPlace(std::vector<OperationRecord>& ops, std::vector<SortKey>& keys) {
  constexpr std::size_t kPlaced = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (keys[i].index == kPlaced || keys[i].index == i) continue;
    // Position j takes the record at keys[j].index, whose own position is then free.
    OperationRecord first = std::move(ops[i]);
    std::size_t j = i;
    while (keys[j].index != i) {
      std::size_t from = keys[j].index;
      ops[j] = std::move(ops[from]);
      keys[j].index = kPlaced;
      j = from;
    }
    ops[j] = std::move(first);
    keys[j].index = kPlaced;
  }
}

// Moves the records into a new array in sorted order: reads independent of each other, which the
// memory system overlaps where a cycle's chain of far moves would wait for each in turn (threads
// whose ranges arrive interleaved).
void gatherInOrder(std::vector<OperationRecord>& ops, const std::vector<SortKey>& keys) {
  std::vector<OperationRecord> sorted;
  sorted.reserve(ops.size());
  for (const SortKey& k : keys) sorted.push_back(std::move(ops[k.index]));
  ops = std::move(sorted);
}

// Sorts small keys, then moves each record once: a stable sort of the records themselves moved
// each of them about log2(n) times, strings and all (a tenth of rlscope-prof's time on an
// annotation-heavy run). Input already in order (a Kineto trace, an nsys export) stays as it is.
void sortByThreadAndStart(std::vector<OperationRecord>& ops) {
  std::vector<SortKey> keys(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i)
    keys[i] = {ops[i].globalTid, ops[i].start, ops[i].end, i};
  if (!sortKeys(keys)) return;
  // How far records move on average, against about what the caches hold.
  constexpr std::size_t kNearRecords = 4096;
  std::size_t distance = 0;
  for (std::size_t i = 0; i < keys.size(); ++i)
    distance += keys[i].index > i ? keys[i].index - i : i - keys[i].index;
  if (distance / keys.size() < kNearRecords)
    permuteInPlace(ops, keys);
  else
    gatherInOrder(ops, keys);
}

// Sets parentId and depth of ops sorted by thread and start, from their ids; with `renumber`
// the ids first become 1..N in that order.
void assignParents(std::vector<OperationRecord>& ops, bool renumber) {
  std::vector<std::size_t> stack;  // indexes into ops of the open ranges on this thread
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto& op = ops[i];
    if (renumber) op.id = static_cast<std::int64_t>(i) + 1;
    if (i > 0 && ops[i - 1].globalTid != op.globalTid) stack.clear();
    while (!stack.empty()) {
      const auto& top = ops[stack.back()];
      bool contains = top.start <= op.start && op.end <= top.end;
      // A range that ends where this one begins is its predecessor, not its parent.
      bool endsHere = top.end == op.start && top.start < top.end;
      if (contains && !endsHere) break;
      stack.pop_back();
    }
    op.parentId = stack.empty() ? 0 : ops[stack.back()].id;
    op.depth = static_cast<int>(stack.size());
    stack.push_back(i);
  }
}

}  // namespace

std::vector<OperationRecord> OperationNesting::build(std::vector<std::int64_t>* inputIds) {
  std::vector<trace::OperationRecord> ops = std::move(ops_);
  ops_.clear();
  sortByThreadAndStart(ops);
  if (inputIds) {
    inputIds->clear();
    inputIds->reserve(ops.size());
    for (const auto& op : ops) inputIds->push_back(op.id);
  }
  assignParents(ops, true);
  return ops;
}

void OperationNesting::nestKeepingIds(std::vector<OperationRecord>& ops) {
  sortByThreadAndStart(ops);
  assignParents(ops, false);
}

}  // namespace rlscope::trace
