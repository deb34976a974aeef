#include "rlscope/trace/kernel_names.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace rlscope::trace {

std::string demangleKernelName(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : mangled;
}

std::string shortKernelName(std::string_view demangled) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  // Up to the parameter list: the first '(' outside template arguments that does not open an
  // anonymous namespace. Meanwhile, where the last scope (::) and return type (space) end.
  std::size_t nameStart = 0, nameEnd = demangled.size();
  int depth = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      depth = depth > 0 ? depth - 1 : 0;
    } else if (depth == 0 && c == '(') {
      if (demangled.substr(i, kAnonymous.size()) == kAnonymous) {
        i += kAnonymous.size() - 1;
        continue;
      }
      nameEnd = i;
      break;
    } else if (depth == 0 && c == ':' && i + 1 < demangled.size() && demangled[i + 1] == ':') {
      nameStart = i + 2;
      ++i;
    } else if (depth == 0 && c == ' ') {
      nameStart = i + 1;
    }
  }
  std::string_view name = demangled.substr(0, nameEnd).substr(std::min(nameStart, nameEnd));
  // Without the function's own template arguments.
  if (auto open = name.find('<'); open != std::string_view::npos && open > 0)
    name = name.substr(0, open);
  return std::string(name.empty() ? demangled : name);
}

}  // namespace rlscope::trace
