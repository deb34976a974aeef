// Runs one of the project's executables and captures what it printed, for end-to-end CLI tests.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rlscope::testing {

class TempDir;

struct CommandResult {
  int exitCode = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// argv[0] is a program name in build/bin (e.g. "rlscope") or an absolute path.
CommandResult runCommand(const std::vector<std::string>& argv);

// Non-empty lines of text.
std::vector<std::string> lines(const std::string& text);

// A real Kineto trace of the shared folder ("a100_alexnet" for a100_alexnet.json.gz) imported with
// `rlscope import` into `dir`: the rlscope trace's path. Empty, with `why` saying so, when the
// folder or the file is absent (the test then skips); an import that fails is a test failure.
std::filesystem::path importSharedTrace(const TempDir& dir, std::string_view name,
                                        std::string& why);

}  // namespace rlscope::testing
