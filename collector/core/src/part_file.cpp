#include "part_file.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rlscope::collector {

namespace {

bool writeAll(int fd, iovec* iov, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

}  // namespace

PartFile::~PartFile() {
  close();
}

std::string PartFile::open(const std::string& dir, const part::FileHeader& header) {
  // pids can be reused within one run: a counter keeps every part's name unique.
  for (int n = 0; n < 1000; ++n) {
    std::string path = dir + "/" + std::to_string(header.pid) + "-" + std::to_string(n) + ".part";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return "cannot create " + path + ": " + std::strerror(errno);
    fd_ = fd;
    path_ = path;
    iovec iov{const_cast<part::FileHeader*>(&header), sizeof header};
    if (!writeAll(fd_, &iov, 1)) {
      error_ = "cannot write " + path + ": " + std::strerror(errno);
      close();
      return error_;
    }
    return {};
  }
  return "cannot create a part file in " + dir + ": 1000 names taken";
}

void PartFile::writeBlock(std::uint32_t tid, const std::byte* data, std::size_t size) {
  if (fd_ < 0 || size == 0) return;
  // A slice is one chunk of a thread buffer or one drain of the process stream: far below 4 GiB.
  part::BlockHeader h{part::kBlockMagic, tid, static_cast<std::uint32_t>(size), 0};
  iovec iov[2] = {{&h, sizeof h}, {const_cast<std::byte*>(data), size}};
  if (!writeAll(fd_, iov, 2)) {
    error_ = "writing " + path_ + ": " + std::strerror(errno);
    close();
  }
}

void PartFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace rlscope::collector
