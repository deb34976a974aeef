#include "rlscope/trace/operation_nesting.h"

#include <algorithm>

namespace rlscope::trace {

std::vector<OperationRecord> OperationNesting::build(std::vector<std::int64_t>* inputIds) {
  std::vector<trace::OperationRecord> ops = std::move(ops_);
  ops_.clear();
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    if (a.globalTid != b.globalTid) return a.globalTid < b.globalTid;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  if (inputIds) {
    inputIds->clear();
    for (const auto& op : ops) inputIds->push_back(op.id);
  }
  std::vector<std::size_t> stack;  // indexes into ops of the open ranges on this thread
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto& op = ops[i];
    op.id = static_cast<std::int64_t>(i) + 1;
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
  return ops;
}

}  // namespace rlscope::trace
