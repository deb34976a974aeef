#include <dlfcn.h>

#include <string>

#include "rlscope/launch/launch.h"

namespace rlscope::launch {

// The CUDA driver API by hand (dlopen): rlscope-prof must start on machines without a driver,
// so it cannot link libcuda.
std::string probeGpu() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "no CUDA driver (libcuda.so.1 cannot be loaded)";
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using ErrorName = int (*)(int, const char**);
  auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(::dlsym(lib, "cuDeviceGetCount"));
  auto errorName = reinterpret_cast<ErrorName>(::dlsym(lib, "cuGetErrorName"));
  if (!init || !count) return "the CUDA driver library lacks cuInit/cuDeviceGetCount";
  auto describe = [&](int rc) {
    const char* name = nullptr;
    if (errorName && errorName(rc, &name) == 0 && name) return std::string(name);
    return "error " + std::to_string(rc);
  };
  if (int rc = init(0); rc != 0) return "cuInit failed: " + describe(rc);
  int n = 0;
  if (int rc = count(&n); rc != 0) return "cuDeviceGetCount failed: " + describe(rc);
  if (n == 0) return "no CUDA device";
  // The library stays loaded: unloading a driver that was initialised is not safe.
  return {};
}

}  // namespace rlscope::launch
