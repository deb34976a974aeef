// Where the subcommands' output goes: progress lines, and results written to stdout or to a file
// that appears only complete.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "rlscope/trace/atomic_output.h"

namespace rlscope::cli {

void progress(std::string_view line) {
  static const bool enabled = [] {
    const char* env = std::getenv("RLSCOPE_PROGRESS");
    if (env) return std::string_view(env) == "1";
    return ::isatty(STDERR_FILENO) == 1;
  }();
  if (enabled) std::cerr << "rlscope: " << line << '\n';
}

std::string elapsedText(double seconds) {
  char text[32];
  if (seconds < 1)
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty()) {
    write(std::cout);
    return;
  }
  trace::AtomicOutput file(path);
  std::ofstream out(file.tempPath());
  write(out);
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
  file.commit();
}

}  // namespace rlscope::cli
