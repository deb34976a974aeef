#include "gpu_database_option.h"

namespace rlscope::cli {

void addGpuDatabaseOption(CLI::App& cmd, std::string& file) {
  cmd.add_option("--gpu-database", file,
                 "a GPU database file (format: docs/predictor.md) whose GPUs are added to the "
                 "built-in ones, replacing those of the same name")
      ->check(CLI::ExistingFile);
}

predictor::GpuDatabase loadGpuDatabase(const std::string& file) {
  predictor::GpuDatabase db = predictor::GpuDatabase::builtIn();
  if (!file.empty()) db.merge(predictor::GpuDatabase::load(file));
  return db;
}

}  // namespace rlscope::cli
