// Reads a part file back (format.h) for rlscope-prof's merge, while its process may still be
// appending to it: whole blocks as they are written, a slice at a time. Parts come from processes
// that may have died at any instant, so a short or damaged tail is expected: reading stops there
// and cutShort() says what was left unread. Nothing is read out of bounds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"

namespace rlscope::part {

// Blocks are read into memory a slice at a time and dropped once merged, so memory stays at the
// slice plus the blocks the caller keeps (the merge keeps two writer flushes), not the part's size
// (about 100 bytes per operation).
class PartReader {
 public:
  struct Block {
    std::uint32_t tid;
    std::span<const std::byte> records;  // whole records
  };

  // Throws std::runtime_error (one line naming the file) when the file cannot be opened or does
  // not start with a part header (yet: a process that has just created it may not have written
  // it).
  explicit PartReader(const std::filesystem::path& path);
  ~PartReader();
  PartReader(const PartReader&) = delete;
  PartReader& operator=(const PartReader&) = delete;

  const FileHeader& header() const { return header_; }

  // Reads about `sliceBytes` more of the file (more when one block is bigger) and makes the whole
  // blocks in it available. Returns the bytes read: 0 when the file has nothing new (or reading
  // stopped at a damaged block).
  std::size_t readMore(std::size_t sliceBytes = kDefaultSliceBytes);
  // Reads the whole file as it is now.
  void readAll();

  // The blocks read and not yet dropped, oldest first. Views stay valid until the next
  // readMore() or drop().
  std::size_t blockCount() const { return blocks_.size(); }
  Block block(std::size_t i) const;
  // Calls visit(tid, record) for every record of blocks [from, to).
  void forEachRecord(std::size_t from, std::size_t to,
                     const std::function<void(std::uint32_t tid, const RecordView&)>& visit) const;
  // Calls visit for every record of every block held.
  void forEachRecord(const std::function<void(std::uint32_t tid, const RecordView&)>& visit) const {
    forEachRecord(0, blocks_.size(), visit);
  }
  // Forgets the first n blocks held.
  void drop(std::size_t n);

  // Empty when everything read so far ends on a block boundary; otherwise why reading stopped
  // (a damaged block), or what the bytes after the last whole block are (a writer that was cut
  // short, or one still writing: only final once the process is gone).
  std::string cutShort() const;
  std::uint64_t blocksRead() const { return blocksRead_; }
  std::uint64_t bytesRead() const { return fileOffset_ + buffer_.size(); }

  static constexpr std::size_t kDefaultSliceBytes = 8u << 20;

 private:
  void parseBlocks();

  int fd_ = -1;
  FileHeader header_{};
  std::vector<std::byte> buffer_;  // the file's bytes from fileOffset_ on
  std::uint64_t fileOffset_ = 0;   // of buffer_[0]
  std::size_t parsed_ = 0;         // bytes of buffer_ up to the end of the last whole block
  struct Held {
    std::uint32_t tid;
    std::size_t at, bytes;  // the records, within buffer_
  };
  std::vector<Held> blocks_;
  std::size_t dropped_ = 0;  // bytes of buffer_ before the first held block, reusable
  std::uint64_t blocksRead_ = 0;
  std::string damaged_;  // set once: reading never goes past a damaged block
};

}  // namespace rlscope::part
