// One key for a part's 32-bit id (a thread, a CUDA correlation id): the merge's maps of threads
// and launches are keyed by part and id, and Part::serial counts the run's parts from 1.
#pragma once

#include <cstdint>

namespace rlscope::merge {

constexpr std::uint64_t partKey(std::uint64_t part, std::uint32_t id) {
  return (part << 32) | id;
}

}  // namespace rlscope::merge
