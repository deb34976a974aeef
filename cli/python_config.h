// Which modules' native code is Backend or Simulator time: rlscope-prof's --backend-modules,
// --simulator-modules and --python-config FILE (docs/python.md).
#pragma once

#include <string>
#include <vector>

namespace rlscope::cli {

struct PythonModules {
  std::vector<std::string> backend, simulator;
  bool replaceDefaults = false;  // the lists replace the package's defaults instead of adding
};

// Adds the names of a comma-separated list ("torch_geometric,my_sim") to `out`.
void addModuleList(const std::string& list, std::vector<std::string>& out);

// Reads a JSON file {"backend_modules": [...], "simulator_modules": [...],
// "replace_defaults": false} into `modules`. Throws std::runtime_error with one line.
void readPythonConfig(const std::string& path, PythonModules& modules);

}  // namespace rlscope::cli
