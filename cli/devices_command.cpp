#include <iostream>

#include "commands.h"
#include "gpu_database_option.h"
#include "rlscope/predictor/what_if_output.h"

namespace rlscope::cli {

Run addDevicesCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "devices",
      "List the GPU database the predictor and `rlscope occupancy` use: per GPU its compute\n"
      "capability, SMs, clocks, spec and achievable memory bandwidth, peak FP32/TF32/FP16/BF16\n"
      "throughput, register, shared memory and thread limits and L2 size. The JSON form gives\n"
      "the source of every value. --gpu, --origin and --target of the other commands take a\n"
      "name or alias from it, case-insensitively.");
  struct Options {
    std::string format = "table";
    std::string database;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("-f,--format", opts->format, "table for people, json for scripts")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  addGpuDatabaseOption(*cmd, opts->database);
  return [opts]() {
    predictor::GpuDatabase db = loadGpuDatabase(opts->database);
    if (opts->format == "json")
      std::cout << predictor::devicesToJson(db).dump(2) << '\n';
    else
      predictor::writeDevicesTable(db, std::cout);
    return 0;
  };
}

}  // namespace rlscope::cli
