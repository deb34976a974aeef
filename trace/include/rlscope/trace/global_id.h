// Nsight Systems' serialized global ids: globalTid = (pid << 24) | tid, globalPid = pid << 24.
// Bits 48 and above would hold a VM id; rlscope traces always use 0 there.
#pragma once

#include <cstdint>

namespace rlscope::trace {

inline constexpr std::int64_t kGlobalIdFieldLimit = std::int64_t{1} << 24;  // pid and tid < 2^24

constexpr bool fitsGlobalIdField(std::int64_t v) {
  return v >= 0 && v < kGlobalIdFieldLimit;
}
constexpr std::int64_t globalPidOf(std::int64_t pid) {
  return pid << 24;
}
constexpr std::int64_t globalTidOf(std::int64_t pid, std::int64_t tid) {
  return (pid << 24) | tid;
}
constexpr std::int64_t pidOfGlobalId(std::int64_t globalId) {
  return (globalId >> 24) & (kGlobalIdFieldLimit - 1);
}
constexpr std::int64_t tidOfGlobalId(std::int64_t globalId) {
  return globalId & (kGlobalIdFieldLimit - 1);
}
constexpr std::int64_t globalPidOfTid(std::int64_t globalTid) {
  return globalTid & ~(kGlobalIdFieldLimit - 1);
}

}  // namespace rlscope::trace
