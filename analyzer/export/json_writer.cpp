#include "rlscope/export/json_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "rlscope/trace/error.h"

namespace rlscope::exporter {

namespace {

// Length of the well-formed UTF-8 sequence (Unicode Table 3-7) that starts at text[i] with a
// lead byte >= 0x80, or 0 when it is not well formed.
std::size_t utf8SequenceLength(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - i < len) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// Escapes `text` as the inside of a JSON string, handing runs of output to `append`.
template <class Append>
void escapeJson(std::string_view text, Append&& append) {
  std::size_t run = 0;  // start of the current run of bytes that need no escaping
  std::size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (std::size_t len = utf8SequenceLength(text, i)) {
        i += len;
        continue;
      }
    }
    if (i > run) append(text.substr(run, i - run));
    switch (c) {
      case '"':
        append("\\\"");
        break;
      case '\\':
        append("\\\\");
        break;
      case '\b':
        append("\\b");
        break;
      case '\f':
        append("\\f");
        break;
      case '\n':
        append("\\n");
        break;
      case '\r':
        append("\\r");
        break;
      case '\t':
        append("\\t");
        break;
      default:
        if (c < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          append(std::string_view(escaped, 6));
        } else {
          append(kReplacementCharacter);
        }
    }
    run = ++i;
  }
  if (i > run) append(text.substr(run, i - run));
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  escapeJson(text, [&](std::string_view piece) { out += piece; });
  out += '"';
}

JsonWriter::JsonWriter(const std::filesystem::path& path)
    : path_(path), buffer_(std::make_unique<char[]>(kBufferSize)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw trace::TraceError(path.string() + ": cannot create: " + std::strerror(errno));
  }
}

JsonWriter::~JsonWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonWriter::rawSlow(std::string_view text) {
  while (!text.empty()) {
    if (size_ == kBufferSize) flush();
    std::size_t n = std::min(text.size(), kBufferSize - size_);
    std::memcpy(buffer_.get() + size_, text.data(), n);
    size_ += n;
    text.remove_prefix(n);
  }
}

void JsonWriter::string(std::string_view text) {
  raw('"');
  escapeJson(text, [this](std::string_view piece) { raw(piece); });
  raw('"');
}

void JsonWriter::integer(std::int64_t v) {
  reserve(20);
  size_ = static_cast<std::size_t>(
      std::to_chars(buffer_.get() + size_, buffer_.get() + kBufferSize, v).ptr - buffer_.get());
}

void JsonWriter::micros(std::int64_t ns) {
  reserve(kMaxMicrosChars);
  size_ += formatMicros(ns, buffer_.get() + size_);
}

void JsonWriter::number(double v) {
  if (!std::isfinite(v)) {
    raw("null");
    return;
  }
  reserve(32);
  size_ = static_cast<std::size_t>(
      std::to_chars(buffer_.get() + size_, buffer_.get() + kBufferSize, v).ptr - buffer_.get());
}

void JsonWriter::flush() {
  std::size_t done = 0;
  while (done < size_) {
    ssize_t n = ::write(fd_, buffer_.get() + done, size_ - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw trace::TraceError(path_.string() + ": cannot write: " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  written_ += size_;
  size_ = 0;
}

void JsonWriter::close() {
  flush();
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    throw trace::TraceError(path_.string() + ": cannot write: " + std::strerror(errno));
  }
}

}  // namespace rlscope::exporter
