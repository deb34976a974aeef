#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "rlscope/launch/launch.h"

namespace rlscope::launch {

namespace {

bool isRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

ResolvedCommand resolveCommand(const std::string& command) {
  ResolvedCommand r;
  if (command.empty()) {
    r.exitCode = 127;
    r.error = "no command given";
    return r;
  }
  auto check = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) {
      r.exitCode = 126;
      r.error = path + ": is a directory";
      return false;
    }
    if (::access(path.c_str(), X_OK) != 0) {
      r.exitCode = 126;
      r.error = path + ": permission denied (not executable)";
      return false;
    }
    r.path = path;
    r.exitCode = 0;
    r.error.clear();
    return true;
  };
  if (command.find('/') != std::string::npos) {
    if (check(command)) return r;
    if (r.exitCode == 0) {
      r.exitCode = 127;
      r.error = command + ": no such file";
    }
    return r;
  }
  const char* pathEnv = std::getenv("PATH");
  std::string path = pathEnv ? pathEnv : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + command;
    if (isRegularFile(candidate) && check(candidate)) return r;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (r.exitCode == 0) {
    r.exitCode = 127;
    r.error = command + ": command not found";
  }
  return r;
}

}  // namespace rlscope::launch
