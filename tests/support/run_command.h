// Runs one of the project's executables and captures what it printed, for end-to-end CLI tests.
#pragma once

#include <string>
#include <vector>

namespace rlscope::testing {

struct CommandResult {
  int exitCode = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// argv[0] is a program name in build/bin (e.g. "rlscope") or an absolute path.
CommandResult runCommand(const std::vector<std::string>& argv);

// Non-empty lines of text.
std::vector<std::string> lines(const std::string& text);

}  // namespace rlscope::testing
