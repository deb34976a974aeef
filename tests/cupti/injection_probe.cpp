// Loads librlscope_cupti.so the way the CUDA driver does (dlopen, then InitializeInjection) in a
// process that runs the collector, for the CPU-only tests. Usage: injection_probe LIBRARY
#include <dlfcn.h>

#include <cstdio>

#include "rlscope/collector/collector.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 3;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  if (!init) return 4;
  // The driver may call it more than once (several CUDA libraries in one process).
  int first = init();
  int second = init();
  std::printf("active=%d init=%d,%d\n", rlscope::collector::active() ? 1 : 0, first, second);
  return 0;
}
