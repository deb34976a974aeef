#include "rlscope/part/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace rlscope::part {

namespace {

std::runtime_error partError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error("part file " + path.string() + ": " + what);
}

// Checks that a block's payload is a sequence of whole records; returns false at the first one
// that is not.
bool recordsAreWhole(const std::byte* p, std::size_t n) {
  std::size_t at = 0;
  while (at < n) {
    if (n - at < sizeof(RecordHeader)) return false;
    RecordHeader h;
    std::memcpy(&h, p + at, sizeof h);
    if (h.bytes < sizeof(RecordHeader) || h.bytes > n - at || h.bytes > kMaxRecordBytes)
      return false;
    at += h.bytes;
  }
  return true;
}

}  // namespace

namespace {

FileHeader checkedHeader(const std::filesystem::path& path, const std::byte* data,
                         std::size_t size) {
  if (size < sizeof(FileHeader)) throw partError(path, "shorter than its header");
  FileHeader h;
  std::memcpy(&h, data, sizeof h);
  if (std::memcmp(h.magic, kFileMagic, sizeof kFileMagic) != 0)
    throw partError(path, "not an rlscope part file");
  if (h.version != kFormatVersion)
    throw partError(path, "part format version " + std::to_string(h.version) +
                              ", this rlscope reads version " + std::to_string(kFormatVersion));
  return h;
}

}  // namespace

FileHeader readPartHeader(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw partError(path, "cannot open");
  std::byte buf[sizeof(FileHeader)];
  in.read(reinterpret_cast<char*>(buf), sizeof buf);
  return checkedHeader(path, buf, static_cast<std::size_t>(in.gcount()));
}

PartReader::PartReader(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw partError(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw partError(path, "cannot read its size");
  }
  // A process still running (left behind past --wait-descendants) may append to its part: the
  // mapping covers the size seen now. Parts are never truncated, so no mapped page vanishes.
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      ::madvise(m, size_, MADV_SEQUENTIAL);
      data_ = static_cast<const std::byte*>(m);
      mapped_ = true;
    } else {
      // A file system that cannot map files (some FUSE mounts): read the part into memory.
      owned_.resize(size_);
      std::size_t got = 0;
      while (got < size_) {
        ssize_t n = ::pread(fd, owned_.data() + got, size_ - got, static_cast<off_t>(got));
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      size_ = got;
      data_ = owned_.data();
    }
  }
  ::close(fd);
  const std::size_t size = size_;
  try {
    header_ = checkedHeader(path, data_, size);
  } catch (...) {
    if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
    throw;
  }

  std::size_t at = sizeof(FileHeader);
  while (at < size) {
    if (size - at < sizeof(BlockHeader)) {
      cutShort_ = "ends inside a block header";
      break;
    }
    BlockHeader b;
    std::memcpy(&b, data_ + at, sizeof b);
    if (b.magic != kBlockMagic) {
      cutShort_ = "damaged block at byte " + std::to_string(at);
      break;
    }
    if (b.payloadBytes > size - at - sizeof b) {
      cutShort_ = "last block cut short at byte " + std::to_string(size);
      break;
    }
    if (!recordsAreWhole(data_ + at + sizeof b, b.payloadBytes)) {
      cutShort_ = "damaged record in block at byte " + std::to_string(at);
      break;
    }
    at += sizeof b + b.payloadBytes;
    ++blocks_;
  }
  validEnd_ = at < size ? at : size;
  if (!cutShort_.empty()) validEnd_ = at;
}

PartReader::~PartReader() {
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
}

void PartReader::forEachRecord(
    const std::function<void(std::uint32_t, const RecordView&)>& visit) const {
  std::size_t at = sizeof(FileHeader);
  while (at < validEnd_) {
    BlockHeader b;
    std::memcpy(&b, data_ + at, sizeof b);
    const std::byte* p = data_ + at + sizeof b;
    std::size_t off = 0;
    while (off < b.payloadBytes) {
      RecordHeader h;
      std::memcpy(&h, p + off, sizeof h);
      RecordView v{static_cast<RecordType>(h.type),
                   std::span<const std::byte>(p + off + sizeof h, h.bytes - sizeof h)};
      visit(b.tid, v);
      off += h.bytes;
    }
    at += sizeof b + b.payloadBytes;
  }
}

}  // namespace rlscope::part
