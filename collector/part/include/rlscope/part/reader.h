// Reads a part file back (format.h) for rlscope-prof's merge. Parts come from processes that may
// have died at any instant, so a short or damaged tail is expected: reading stops there and
// cutShort() says what was left unread. Nothing is read out of bounds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"

namespace rlscope::part {

// The header alone (cheap): throws as PartReader does.
FileHeader readPartHeader(const std::filesystem::path& path);

// The file is memory-mapped, not copied: a part holds about 100 bytes per operation, and the
// merge reads it twice while it also holds every operation for nesting. Mapped pages are the
// page cache's, which the kernel can drop under pressure.
class PartReader {
 public:
  // Throws std::runtime_error (one line naming the file) when the file cannot be read or does
  // not start with a part header.
  explicit PartReader(const std::filesystem::path& path);
  ~PartReader();
  PartReader(const PartReader&) = delete;
  PartReader& operator=(const PartReader&) = delete;

  const FileHeader& header() const { return header_; }

  // Calls visit(tid, record) for every record of every whole block, in file order.
  void forEachRecord(const std::function<void(std::uint32_t tid, const RecordView&)>& visit) const;

  // Empty when the file ended on a block boundary; otherwise why reading stopped early.
  const std::string& cutShort() const { return cutShort_; }
  std::uint64_t blocks() const { return blocks_; }

 private:
  FileHeader header_{};
  const std::byte* data_ = nullptr;  // the mapping or owned_; null for an empty file
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::vector<std::byte> owned_;  // where the file system cannot map files
  std::size_t validEnd_ = 0;      // bytes up to the end of the last whole block
  std::uint64_t blocks_ = 0;
  std::string cutShort_;
};

}  // namespace rlscope::part
