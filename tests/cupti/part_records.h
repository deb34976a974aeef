// Splits encoded part records (a run of RecordHeader + payload) back into RecordViews.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "rlscope/part/record_codec.h"

namespace rlscope::testing {

inline std::vector<part::RecordView> splitRecords(const std::vector<std::byte>& bytes) {
  std::vector<part::RecordView> out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    part::RecordHeader h;
    if (bytes.size() - at < sizeof h) throw std::runtime_error("truncated record header");
    std::memcpy(&h, bytes.data() + at, sizeof h);
    if (h.bytes < sizeof h || h.bytes > bytes.size() - at)
      throw std::runtime_error("bad record size");
    out.push_back({static_cast<part::RecordType>(h.type),
                   std::span<const std::byte>(bytes.data() + at + sizeof h, h.bytes - sizeof h)});
    at += h.bytes;
  }
  return out;
}

}  // namespace rlscope::testing
