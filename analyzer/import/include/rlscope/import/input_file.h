// Reading an input trace into memory: plain or gzip-compressed, bounded in size, with the padding
// simdjson needs after the last byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace rlscope::import {

inline constexpr std::size_t kJsonPadding = 64;  // >= SIMDJSON_PADDING

// The bytes of an input file, decompressed when gzip. At least kJsonPadding readable bytes follow
// the text. A plain file is memory-mapped (no copy; the pages come from the page cache); a gzip
// file is inflated into anonymous pages (one gzip member, by libdeflate) or a string (zlib).
class InputText {
 public:
  InputText() = default;
  ~InputText();
  InputText(InputText&& other) noexcept;
  InputText& operator=(InputText&&) = delete;
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;

  std::string_view text() const { return map_ ? std::string_view(map_, size_) : owned_; }
  bool wasGzip() const { return wasGzip_; }
  std::uint64_t fileBytes() const { return fileBytes_; }

 private:
  friend InputText readInput(const std::filesystem::path& path, std::uint64_t maxBytes);
  std::string owned_;    // gzip inflated by zlib: the text, capacity >= size + kJsonPadding
  char* map_ = nullptr;  // the file's pages, or the pages libdeflate inflated into
  std::size_t mapLength_ = 0;
  std::size_t size_ = 0;
  bool wasGzip_ = false;
  std::uint64_t fileBytes_ = 0;
};

// Throws TraceError: missing/unreadable file, a corrupt or truncated gzip stream, or more than
// maxBytes after decompression.
InputText readInput(const std::filesystem::path& path, std::uint64_t maxBytes);

// True when the file starts with the gzip magic bytes.
bool isGzipFile(const std::filesystem::path& path);

// Up to the first maxBytes of the file, gunzipped when it is gzip (then *gzip is set). A gzip
// stream that is corrupt or cut short gives what inflates before the fault, perhaps nothing:
// readInput says what is wrong with it. Throws TraceError when the file cannot be read.
std::string readSample(const std::filesystem::path& path, std::size_t maxBytes, bool* gzip);

}  // namespace rlscope::import
