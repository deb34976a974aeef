// The check every reader of an input file makes first, so each says the same one line.
#pragma once

#include <cstdint>
#include <filesystem>

namespace rlscope::trace {

// The size of the regular file at `path`. Throws TraceError "PATH: no such file",
// "PATH: is a directory, not a trace file" or "PATH: not a regular file".
std::uint64_t requireInputFile(const std::filesystem::path& path);

}  // namespace rlscope::trace
