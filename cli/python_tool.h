// Subcommands whose work is done by the rlscope Python package with packages from PyPI (Ray,
// pyarrow): `rlscope analyze --ray`, `rlscope export --format parquet`.
#pragma once

#include <string>
#include <vector>

namespace rlscope::cli {

// Runs `python3 -m rlscope.MODULE ARGS...` ($RLSCOPE_PYTHON instead of python3 when set) with the
// package built beside this executable first on PYTHONPATH, and returns its exit status. The
// module says in one line when a package it needs is missing. Throws std::runtime_error when
// the package was not built or no Python can be started.
int runPythonTool(const std::string& module, const std::vector<std::string>& args);

// This executable's path, for the Python tools to run it back (on other nodes too).
std::string selfExecutable();

}  // namespace rlscope::cli
