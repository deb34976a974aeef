#include <iostream>
#include <string>

#include "commands.h"
#include "gpu_database_option.h"
#include "rlscope/predictor/occupancy.h"

namespace rlscope::cli {

Run addOccupancyCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "occupancy",
      "How many blocks of a kernel one SM of a GPU holds at once (the rules of NVIDIA's\n"
      "cuda_occupancy.h, compute capability 6.0 to 12.x), which limit binds, and the warps that\n"
      "gives. The last line is the active blocks per SM alone, for scripts.");
  struct Options {
    std::string gpu, database;
    predictor::KernelResources kernel;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("--gpu", opts->gpu, "a GPU of `rlscope devices` (name or alias)")->required();
  cmd->add_option("--block", opts->kernel.blockSize, "threads per block")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--regs", opts->kernel.registersPerThread, "registers per thread")
      ->required()
      ->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--smem-static", opts->kernel.staticSharedMemory,
                  "static shared memory per block, bytes")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--smem-dynamic", opts->kernel.dynamicSharedMemory,
                  "dynamic shared memory per block, bytes")
      ->check(CLI::Range(0, 1 << 30));
  addGpuDatabaseOption(*cmd, opts->database);
  return [opts]() {
    predictor::GpuDatabase db = loadGpuDatabase(opts->database);
    const predictor::GpuSpec& gpu = db.get(opts->gpu);
    predictor::Occupancy o = predictor::computeOccupancy(gpu, opts->kernel);
    std::cout << gpu.name << " (compute " << gpu.computeCapabilityText() << ", " << gpu.smCount
              << " SMs)\n";
    if (o.activeBlocksPerSm == 0) {
      std::cout << "the kernel cannot run: " << o.invalidReason << '\n';
    } else {
      // A resource the kernel does not use sets no limit (the header's INT_MAX).
      auto limit = [](int blocks) {
        return blocks >= (1 << 30) ? std::string("none") : std::to_string(blocks);
      };
      std::cout << "limits (blocks per SM): warps " << limit(o.limitByWarps) << ", registers "
                << limit(o.limitByRegisters) << ", shared memory " << limit(o.limitBySharedMemory)
                << ", blocks " << limit(o.limitByBlocks) << "; bound by "
                << predictor::occupancyLimitName(o.limit) << '\n'
                << "active warps per SM: " << o.activeWarpsPerSm(opts->kernel.blockSize) << " of "
                << gpu.maxThreadsPerSm / gpu.warpSize << '\n';
    }
    std::cout << o.activeBlocksPerSm << '\n';
    return 0;
  };
}

}  // namespace rlscope::cli
