#include "support/run_command.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "support/temp_dir.h"

extern char** environ;

namespace rlscope::testing {

CommandResult runCommand(const std::vector<std::string>& argv) {
  TempDir dir;
  auto outPath = dir / "stdout";
  auto errPath = dir / "stderr";
  std::string program = argv.at(0);
  if (program.find('/') == std::string::npos) {
    program = (std::filesystem::path(RLSCOPE_BIN_DIR) / program).string();
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args[0] = program.data();
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + program);
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = readFile(outPath);
  result.err = readFile(errPath);
  return result;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::filesystem::path importSharedTrace(const TempDir& dir, std::string_view name,
                                        std::string& why) {
  const std::filesystem::path shared = sharedTracesDir();
  if (shared.empty()) {
    why = "../shared/traces/kineto is absent";
    return {};
  }
  const std::filesystem::path source = shared / (std::string(name) + ".json.gz");
  if (!std::filesystem::exists(source)) {
    why = source.string() + " is not there";
    return {};
  }
  std::filesystem::path trace = dir / (std::string(name) + ".sqlite");
  const CommandResult r =
      runCommand({"rlscope", "import", "-q", source.string(), "-o", trace.string()});
  if (r.exitCode != 0) {
    ADD_FAILURE() << "rlscope import " << source << " exited " << r.exitCode << ": " << r.err;
    why = "the import failed";
    return {};
  }
  return trace;
}

}  // namespace rlscope::testing
