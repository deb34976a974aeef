// The overlap engine (docs/analysis.md): one sweep over all category and operation boundaries of a
// process. The time between two consecutive boundaries goes to the set of categories active then,
// under the operation that owns that time. Pure computation on plain intervals: reading them from
// a trace, and turning category sets into resources (CPU, GPU, CPU+GPU), are the callers' job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rlscope::analysis {

using TimeNs = std::int64_t;

// An interval of one category (any number of categories: the index is the caller's). Intervals
// of one category may overlap (several threads or streams): the category is active while any is.
struct CategoryInterval {
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t category = 0;
};

// An operation's interval; `operation` is the caller's index, from 1 (0 is "(unannotated)").
// Operations may nest, on one thread or across threads, balanced or not: at each instant the
// active operation that started last owns the time (the innermost, for nested ones).
struct OperationSpan {
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t operation = 0;
};

inline constexpr std::uint32_t kUnannotated = 0;

struct OverlapResult {
  // The distinct category sets that received time, each sorted ascending; sets[0] is the empty
  // set (time inside an operation while no category is active).
  std::vector<std::vector<std::uint32_t>> sets;
  // Time per (operation, set), only non-zero cells, sorted by operation then set index. Time with
  // no operation and no category is nobody's and is not reported.
  struct Cell {
    std::uint32_t operation = 0;
    std::uint32_t set = 0;
    TimeNs time = 0;
  };
  std::vector<Cell> cells;
  TimeNs start = 0, end = 0;  // the first and last boundary (0, 0 when there was none)
  std::uint64_t boundaries = 0;
};

// How computeOverlap uses threads. Above `parallelAbove` non-empty intervals it cuts time into
// `parts` slices of about as many starts each and sweeps them at once, each slice starting with
// what was open at its cut; the result is the same as one sweep's, sets numbered alike.
struct OverlapOptions {
  unsigned parts = 0;  // 0: one per hardware thread, at most kMaxParts
  std::size_t parallelAbove = 1'000'000;
  static constexpr unsigned kMaxParts = 8;
};

// Intervals with end < start are rejected (std::invalid_argument); empty ones count for nothing.
// The listing order changes nothing but among operations starting together (above). Arrays listed
// in start order, or in runs in start order (per thread or stream, as a trace stores them), are
// merged as they are, much faster than arrays in random order, which must be sorted.
OverlapResult computeOverlap(std::span<const CategoryInterval> categories,
                             std::span<const OperationSpan> operations,
                             const OverlapOptions& options = {});

}  // namespace rlscope::analysis
