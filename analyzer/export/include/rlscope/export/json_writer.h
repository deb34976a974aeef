// A buffered, streaming JSON text writer for large exports: the caller emits the structure
// (punctuation, keys) itself; the writer formats values exactly and escapes strings. Nothing is
// held in memory beyond one buffer, and nothing is allocated per value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "rlscope/trace/micros_text.h"

namespace rlscope::exporter {

// Exact microsecond text of nanosecond times (rlscope/trace/micros_text.h).
using trace::formatMicros;
using trace::kMaxMicrosChars;
using trace::microsText;

// Appends `text` as a quoted JSON string: quotes, backslashes and control characters escaped,
// UTF-8 kept as is, each byte of an invalid UTF-8 sequence replaced by U+FFFD.
void appendJsonString(std::string& out, std::string_view text);

class JsonWriter {
 public:
  // Creates (truncates) `path`. Throws trace::TraceError when it cannot be opened.
  explicit JsonWriter(const std::filesystem::path& path);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void raw(std::string_view text) {
    if (kBufferSize - size_ >= text.size()) {
      std::memcpy(buffer_.get() + size_, text.data(), text.size());
      size_ += text.size();
    } else {
      rawSlow(text);
    }
  }
  void raw(char c) {
    if (size_ == kBufferSize) flush();
    buffer_[size_++] = c;
  }
  void string(std::string_view text);  // quoted and escaped as appendJsonString
  void integer(std::int64_t v);
  void micros(std::int64_t ns);  // formatMicros
  void number(double v);         // shortest text that reads back as `v`; null when not finite
  void boolean(bool v) { raw(v ? std::string_view("true") : std::string_view("false")); }

  // Writes what is buffered and closes the file; throws trace::TraceError on any write error.
  void close();
  std::uint64_t bytesWritten() const { return written_ + size_; }

 private:
  static constexpr std::size_t kBufferSize = std::size_t{1} << 20;
  // Makes room for `n` more bytes (n <= kBufferSize).
  void reserve(std::size_t n) {
    if (kBufferSize - size_ < n) flush();
  }
  void flush();
  void rawSlow(std::string_view text);

  std::filesystem::path path_;
  int fd_ = -1;
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace rlscope::exporter
