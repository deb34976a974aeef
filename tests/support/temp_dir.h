// A fresh directory per test, removed afterwards.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace rlscope::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  // Writes bytes to a file in the directory and returns its path.
  std::filesystem::path write(std::string_view name, std::string_view bytes) const;

 private:
  std::filesystem::path path_;
};

std::string readFile(const std::filesystem::path& path);
// The contents of a file, gunzipped when it is gzip.
std::string readMaybeGzip(const std::filesystem::path& path);
// gzip-compresses `bytes` (for .json.gz fixtures).
std::string gzip(std::string_view bytes);

// The folder of real Kineto traces, or empty when it is absent (tests then GTEST_SKIP).
std::filesystem::path sharedTracesDir();

}  // namespace rlscope::testing
