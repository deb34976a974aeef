// A collector part written record by record, for tests of the merge: each thread's records go
// into one block of its own, in the order added.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <vector>

#include "part_file.h"
#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"

namespace rlscope {

class PartBuilder {
 public:
  template <class P>
  PartBuilder& add(std::uint32_t tid, part::RecordType type, const P& payload,
                   std::initializer_list<std::string_view> strings = {}) {
    auto& bytes = blocks_[tid];
    std::size_t at = bytes.size();
    bytes.resize(at + part::encodedSize<P>(strings));
    part::encodeRecord(bytes.data() + at, type, payload, strings);
    return *this;
  }
  void write(const std::filesystem::path& dir, std::uint32_t pid) {
    part::FileHeader h{};
    std::memcpy(h.magic, part::kFileMagic, sizeof h.magic);
    h.version = part::kFormatVersion;
    h.pid = pid;
    h.startMonotonicNs = 1000;
    collector::PartFile f;
    ASSERT_EQ(f.open(dir.string(), h), "");
    for (auto& [tid, bytes] : blocks_) f.writeBlock(tid, bytes.data(), bytes.size());
  }

 private:
  std::map<std::uint32_t, std::vector<std::byte>> blocks_;
};

}  // namespace rlscope
