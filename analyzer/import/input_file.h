// Reading an input trace into memory: plain or gzip-compressed, bounded in size, with the padding
// simdjson needs after the last byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace rlscope::import {

// Bytes of a file, decompressed when gzip. `text.capacity() >= text.size() + kJsonPadding`.
struct InputText {
  std::string text;
  bool wasGzip = false;
  std::uint64_t fileBytes = 0;
};

inline constexpr std::size_t kJsonPadding = 64;  // >= SIMDJSON_PADDING

// Throws TraceError: missing/unreadable file, a corrupt or truncated gzip stream, or more than
// maxBytes after decompression.
InputText readInput(const std::filesystem::path& path, std::uint64_t maxBytes);

// True when the file starts with the gzip magic bytes.
bool isGzipFile(const std::filesystem::path& path);

}  // namespace rlscope::import
