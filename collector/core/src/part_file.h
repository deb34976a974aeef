// The process's part file: created once (never overwriting another process's part), written
// only by the collector's writer thread, one block per drained slice of records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rlscope/part/format.h"

namespace rlscope::collector {

class PartFile {
 public:
  PartFile() = default;
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  // Creates DIR/<pid>-<n>.part with its header. Returns an error text, empty on success.
  std::string open(const std::string& dir, const part::FileHeader& header);
  bool isOpen() const { return fd_ >= 0; }
  // Appends one block. On a write error (disk full) the part stops growing and the error is
  // remembered; the program being profiled is never disturbed.
  void writeBlock(std::uint32_t tid, const std::byte* data, std::size_t size);
  void close();
  // Forgets the descriptor without closing it: a fork child must not touch its parent's file
  // position (the descriptor is shared), and opens a part of its own.
  void abandon() { fd_ = -1; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string error_;
};

}  // namespace rlscope::collector
