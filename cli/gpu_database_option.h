// `--gpu-database FILE` on the predictor's commands: the built-in GPU database, extended (or
// overridden, GPU by GPU) by a user's file of the same format (docs/predictor.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "rlscope/predictor/gpu_database.h"

namespace rlscope::cli {

void addGpuDatabaseOption(CLI::App& cmd, std::string& file);
predictor::GpuDatabase loadGpuDatabase(const std::string& file);

}  // namespace rlscope::cli
