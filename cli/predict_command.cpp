#include <charconv>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "commands.h"
#include "gpu_database_option.h"
#include "rlscope/trace/reader.h"
#include "what_if_output.h"

namespace rlscope::cli {
namespace {

struct KernelOptions {
  std::string grid;  // "G" or "X,Y,Z"
  std::string name;
  predictor::KernelResources resources;
  double timeUs = 0, dramBytes = 0, flops = 0;
  int targetRegs = 0;
};

struct Options {
  std::string trace, target, origin, format = "table", output, database;
  std::size_t topKernels = 20;
  bool kernel = false;
  KernelOptions k;
};

// "864" or "864,1,1" (or "864x1x1"): the number of blocks.
std::int64_t parseGrid(const std::string& text) {
  std::int64_t blocks = 1;
  std::size_t dims = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    std::int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v <= 0 || v > (std::int64_t{1} << 31) || ++dims > 3)
      throw std::runtime_error("--grid '" + text + "' is not G or X,Y,Z of positive numbers");
    blocks *= v;
    p = next;
    if (p < end && (*p == ',' || *p == 'x'))
      ++p;
    else if (p < end)
      throw std::runtime_error("--grid '" + text + "' is not G or X,Y,Z of positive numbers");
  }
  if (dims == 0) throw std::runtime_error("--grid is empty");
  return blocks;
}

int predictKernel(const Options& o) {
  if (o.origin.empty() || o.target.empty() || o.k.grid.empty() || o.k.resources.blockSize == 0 ||
      o.k.timeUs <= 0)
    throw std::runtime_error(
        "--kernel needs --origin, --target, --grid, --block, --regs and --time-us");
  predictor::GpuDatabase db = loadGpuDatabase(o.database);
  const predictor::GpuSpec& origin = db.get(o.origin);
  const predictor::GpuSpec& target = db.get(o.target);
  predictor::KernelLaunch launch{parseGrid(o.k.grid), o.k.resources, o.k.timeUs * 1e3,
                                 o.k.dramBytes,       o.k.flops,     o.k.targetRegs};
  predictor::KernelTraits traits = predictor::classifyKernel(o.k.name);
  predictor::KernelPrediction p =
      predictor::KernelPredictor(origin, target).predict(launch, traits);
  std::cout << origin.name << " -> " << target.name << ": " << predictor::methodName(p.method);
  if (p.method == predictor::Method::kCannotPredict) std::cout << " (" << p.reason << ")";
  std::cout << ", " << predictor::kernelKindName(traits.kind) << " "
            << predictor::precisionName(traits.precision) << " kernel, gamma " << p.gamma;
  if (p.occupancyTarget)
    std::cout << ", occupancy " << p.occupancyOrigin << " -> " << p.occupancyTarget
              << " blocks/SM, waves " << p.wavesOrigin << " -> " << p.wavesTarget;
  std::cout << "\n" << p.timeNs / 1e3 << '\n';
  return p.method == predictor::Method::kCannotPredict ? 1 : 0;
}

int predictTrace(const Options& o) {
  if (o.trace.empty()) throw std::runtime_error("give a TRACE, or --kernel to predict one kernel");
  if (o.target.empty()) throw std::runtime_error("--target NAME is required");
  predictor::GpuDatabase db = loadGpuDatabase(o.database);
  const predictor::GpuSpec& target = db.get(o.target);
  predictor::PredictOptions options;
  if (!o.origin.empty()) options.origin = &db.get(o.origin);
  options.progress = [](const std::string& line) { progress(line); };
  trace::TraceReader reader(o.trace);
  predictor::RunPrediction p = predictor::predictRun(reader, db, target, options);
  writeOutput(o.output, [&](std::ostream& out) {
    if (o.format == "json")
      out << predictor::toJson(p).dump(2) << '\n';
    else
      predictor::writeTable(p, o.topKernels, out);
  });
  return 0;
}

}  // namespace

Run addPredictCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "predict",
      "Predict a run on another GPU: every kernel (wave scaling with occupancy and the\n"
      "roofline; GEMMs and convolutions by the peak of their precision), every operation and\n"
      "the whole run, where CPU-only time stays and only the GPU's part scales. Says when a\n"
      "run is CPU-bound and no GPU can help. The origin GPU comes from the trace.\n"
      "  rlscope predict TRACE --target H100\n"
      "  rlscope predict --kernel --origin A100 --target H100 --grid 864 --block 256 \\\n"
      "                  --regs 32 --time-us 70      (last line: predicted microseconds)\n"
      "docs/predictor.md explains the model and its expected error.");
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)");
  cmd->add_option("--target", opts->target, "the GPU to predict for (`rlscope devices`)");
  cmd->add_option("--origin", opts->origin,
                  "the GPU the trace ran on, when its recorded properties do not say");
  cmd->add_option("-f,--format", opts->format, "table for people, json for scripts")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("-o,--output", opts->output, "write here instead of standard output");
  cmd->add_option("--top-kernels", opts->topKernels, "kernels shown in the table")
      ->capture_default_str();
  addGpuDatabaseOption(*cmd, opts->database);
  auto& k = opts->k;
  cmd->add_flag("--kernel", opts->kernel, "predict one kernel from the options below");
  cmd->add_option("--grid", k.grid, "--kernel: blocks, G or X,Y,Z");
  cmd->add_option("--block", k.resources.blockSize, "--kernel: threads per block")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--regs", k.resources.registersPerThread, "--kernel: registers per thread")
      ->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--smem-static", k.resources.staticSharedMemory,
                  "--kernel: static shared memory per block, bytes")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--smem-dynamic", k.resources.dynamicSharedMemory,
                  "--kernel: dynamic shared memory per block, bytes")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--time-us", k.timeUs, "--kernel: its time on the origin GPU, µs")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dram-bytes", k.dramBytes, "--kernel: DRAM bytes read + written, if known")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--flops", k.flops, "--kernel: floating-point operations, if known")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--target-regs", k.targetRegs,
                  "--kernel: registers per thread of the target's build, if known")
      ->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--name", k.name,
                  "--kernel: the kernel's name; GEMM/convolution names (cuBLAS, cuDNN, CUTLASS) "
                  "are predicted by peak throughput, NCCL kept");
  return [opts]() { return opts->kernel ? predictKernel(*opts) : predictTrace(*opts); };
}

}  // namespace rlscope::cli
