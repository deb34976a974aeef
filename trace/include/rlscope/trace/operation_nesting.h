// Operations arrive as flat ranges (NVTX ranges from the collector's parts, Kineto
// user_annotation events, nsys NVTX rows); the trace stores them with ids, parent and depth. Every
// producer nests them here, so that the same ranges nest the same way whatever their source.
#pragma once

#include <vector>

#include "rlscope/trace/records.h"

namespace rlscope::trace {

class OperationNesting {
 public:
  void add(const OperationRecord& op) { ops_.push_back(op); }
  bool empty() const { return ops_.empty(); }

  // The operations ordered by thread and start, with id (1..N), parentId and depth set. A range
  // is the child of the innermost earlier range on its thread that contains it; ranges that
  // overlap without nesting (possible with NVTX start/end ranges) become siblings. Ties in start
  // put the longer range outside. When inputIds is given it receives, for each returned
  // operation, the id it had when add()ed, so callers can map their own keys to the new ids.
  std::vector<OperationRecord> build(std::vector<std::int64_t>* inputIds = nullptr);

  // The same rule for operations that already have their ids (unique, as the caller gave them):
  // ops sorted by thread and start, parentId and depth set.
  static void nestKeepingIds(std::vector<OperationRecord>& ops);

 private:
  std::vector<OperationRecord> ops_;
};

}  // namespace rlscope::trace
