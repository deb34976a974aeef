#include "rlscope/part/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// Up to n bytes at `offset`; fewer at the end of the file.
std::size_t readAt(int fd, std::byte* to, std::size_t n, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, to + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

}  // namespace

PartReader::PartReader(const std::filesystem::path& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw partError(path, "cannot open");
  std::byte buf[sizeof(FileHeader)];
  std::size_t got = readAt(fd_, buf, sizeof buf, 0);
  try {
    header_ = checkedHeader(path, buf, got);
  } catch (...) {
    ::close(fd_);
    throw;
  }
  fileOffset_ = sizeof(FileHeader);
}

PartReader::~PartReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t PartReader::readMore(std::size_t sliceBytes) {
  if (!damaged_.empty()) return 0;
  // Bytes of blocks already merged are given back before the buffer grows.
  if (dropped_ > 0 && dropped_ * 2 >= buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(dropped_));
    for (auto& b : blocks_) b.at -= dropped_;
    parsed_ -= dropped_;
    fileOffset_ += dropped_;
    dropped_ = 0;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return 0;
  std::uint64_t end = bytesRead();
  std::uint64_t left = static_cast<std::uint64_t>(st.st_size) > end
                           ? static_cast<std::uint64_t>(st.st_size) - end
                           : 0;
  std::size_t want = sliceBytes;
  if (buffer_.size() - parsed_ >= sizeof(BlockHeader)) {
    // A block bigger than the slice is read whole.
    BlockHeader b;
    std::memcpy(&b, buffer_.data() + parsed_, sizeof b);
    std::size_t need = sizeof b + b.payloadBytes - (buffer_.size() - parsed_);
    want = std::max(want, need);
  }
  want = static_cast<std::size_t>(std::min<std::uint64_t>(want, left));
  if (want == 0) return 0;
  std::size_t at = buffer_.size();
  buffer_.resize(at + want);
  std::size_t got = readAt(fd_, buffer_.data() + at, want, end);
  buffer_.resize(at + got);
  parseBlocks();
  return got;
}

void PartReader::readAll() {
  while (readMore() > 0) {
  }
}

void PartReader::parseBlocks() {
  const std::size_t size = buffer_.size();
  while (size - parsed_ >= sizeof(BlockHeader)) {
    BlockHeader b;
    std::memcpy(&b, buffer_.data() + parsed_, sizeof b);
    if (b.magic != kBlockMagic) {
      damaged_ = "damaged block at byte " + std::to_string(fileOffset_ + parsed_);
      return;
    }
    if (b.payloadBytes > size - parsed_ - sizeof b) return;  // not all written (yet)
    if (!recordsAreWhole(buffer_.data() + parsed_ + sizeof b, b.payloadBytes)) {
      damaged_ = "damaged record in block at byte " + std::to_string(fileOffset_ + parsed_);
      return;
    }
    blocks_.push_back({b.tid, parsed_ + sizeof b, b.payloadBytes});
    parsed_ += sizeof b + b.payloadBytes;
    ++blocksRead_;
  }
}

PartReader::Block PartReader::block(std::size_t i) const {
  const Held& h = blocks_[i];
  return {h.tid, std::span<const std::byte>(buffer_.data() + h.at, h.bytes)};
}

void PartReader::forEachRecord(
    std::size_t from, std::size_t to,
    const std::function<void(std::uint32_t, const RecordView&)>& visit) const {
  for (std::size_t i = from; i < to && i < blocks_.size(); ++i) {
    Block b = block(i);
    std::size_t off = 0;
    while (off < b.records.size()) {
      RecordHeader h;
      std::memcpy(&h, b.records.data() + off, sizeof h);
      visit(b.tid, RecordView{static_cast<RecordType>(h.type),
                              b.records.subspan(off + sizeof h, h.bytes - sizeof h)});
      off += h.bytes;
    }
  }
}

void PartReader::drop(std::size_t n) {
  n = std::min(n, blocks_.size());
  if (n == 0) return;
  dropped_ = blocks_[n - 1].at + blocks_[n - 1].bytes;
  blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(n));
}

std::string PartReader::cutShort() const {
  if (!damaged_.empty()) return damaged_;
  std::size_t left = buffer_.size() - parsed_;
  if (left == 0) return {};
  if (left < sizeof(BlockHeader)) return "ends inside a block header";
  return "last block cut short at byte " + std::to_string(bytesRead());
}

}  // namespace rlscope::part
