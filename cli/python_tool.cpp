#include "python_tool.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "rlscope/launch/launch.h"

namespace rlscope::cli {

int runPythonTool(const std::string& module, const std::vector<std::string>& args) {
  auto package = launch::pythonPackageDirectory(launch::libraryDirectory());
  if (package.empty())
    throw std::runtime_error(
        "the rlscope Python package was not built beside this rlscope "
        "(RLSCOPE_WITH_PYTHON); `python -m rlscope." +
        module + "` needs it");
  const char* configured = std::getenv("RLSCOPE_PYTHON");
  std::string python = configured && *configured ? configured : "python3";
  auto resolved = launch::resolveCommand(python);
  if (resolved.exitCode != 0)
    throw std::runtime_error(resolved.error + " (set RLSCOPE_PYTHON to the Python to use)");
  std::vector<std::string> argv = {python, "-m", "rlscope." + module};
  argv.insert(argv.end(), args.begin(), args.end());
  return launch::runAndWait(resolved.path, argv, launch::plainEnvironment(package)).code;
}

std::string selfExecutable() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("rlscope") : exe.string();
}

}  // namespace rlscope::cli
