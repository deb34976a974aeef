#include "rlscope/trace/input_path.h"

#include "rlscope/trace/error.h"

namespace rlscope::trace {

std::uint64_t requireInputFile(const std::filesystem::path& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw TraceError(path.string() + ": no such file");
  if (std::filesystem::is_directory(status)) {
    throw TraceError(path.string() + ": is a directory, not a trace file");
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw TraceError(path.string() + ": not a regular file");
  }
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw TraceError(path.string() + ": cannot read the file size: " + ec.message());
  return size;
}

}  // namespace rlscope::trace
