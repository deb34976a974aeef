#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "commands.h"
#include "gpu_database_option.h"
#include "rlscope/predictor/kernel_table.h"
#include "rlscope/predictor/what_if_output.h"
#include "rlscope/trace/reader.h"

namespace rlscope::cli {
namespace {

struct Options {
  std::string trace, target, origin, format = "table", output, database, kernels, kernelModels;
  std::size_t topKernels = 20;
  bool kernel = false, analytic = false;
  predictor::KernelDescription k;
};

// The learned models: the built-in ones, or a file from predictor/train/train_kernel_models.py.
// nullptr with --analytic.
const predictor::KernelModels* kernelModels(const Options& o) {
  static std::optional<predictor::KernelModels> fromFile;
  if (o.analytic) return nullptr;
  if (o.kernelModels.empty()) return &predictor::KernelModels::builtIn();
  if (!fromFile) fromFile = predictor::KernelModels::load(o.kernelModels);
  return &*fromFile;
}

int predictKernel(const Options& o) {
  if (o.origin.empty() || o.target.empty() || o.k.grid.empty() || o.k.resources.blockSize == 0 ||
      o.k.timeUs <= 0)
    throw std::runtime_error(
        "--kernel needs --origin, --target, --grid, --block, --regs and --time-us");
  predictor::GpuDatabase db = loadGpuDatabase(o.database);
  const predictor::GpuSpec& origin = db.get(o.origin);
  const predictor::GpuSpec& target = db.get(o.target);
  predictor::DescribedKernel d = predictor::describe(o.k);
  predictor::KernelPrediction p =
      predictor::KernelPredictor(origin, target, kernelModels(o)).predict(d.launch, d.traits);
  std::cout << origin.name << " -> " << target.name << ": " << predictor::methodName(p.method);
  if (p.family) std::cout << " (" << predictor::kernelFamilyName(*p.family) << ")";
  if (p.method == predictor::Method::kCannotPredict) std::cout << " (" << p.reason << ")";
  std::cout << ", " << predictor::kernelKindName(d.traits.kind) << " "
            << predictor::precisionName(d.traits.precision) << " kernel, gamma " << p.gamma;
  if (p.occupancyTarget)
    std::cout << ", occupancy " << p.occupancyOrigin << " -> " << p.occupancyTarget
              << " blocks/SM, waves " << p.wavesOrigin << " -> " << p.wavesTarget;
  std::cout << "\n" << p.timeNs / 1e3 << '\n';
  return p.method == predictor::Method::kCannotPredict ? 1 : 0;
}

int predictKernels(const Options& o) {
  if (o.origin.empty() || o.target.empty())
    throw std::runtime_error("--kernels needs --origin and --target");
  predictor::GpuDatabase db = loadGpuDatabase(o.database);
  predictor::KernelPredictor predictor(db.get(o.origin), db.get(o.target), kernelModels(o));
  std::ifstream in(o.kernels);
  if (!in) throw std::runtime_error("cannot read " + o.kernels);
  predictor::KernelTableStats stats;
  writeOutput(o.output, [&](std::ostream& out) {
    stats = predictor::predictKernelTable(in, out, predictor, o.kernels);
  });
  progress(std::to_string(stats.kernels) + " kernels predicted, " +
           std::to_string(stats.cannotPredict) + " kept at their origin time");
  return 0;
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
      "Predict a run on another GPU: every kernel (learned models for FP32 GEMMs, convolutions,\n"
      "elementwise and normalisation kernels of known shape; else wave scaling with occupancy and\n"
      "the roofline, GEMMs and convolutions by the peak of their precision), every operation and\n"
      "the whole run, where CPU-only time stays and only the GPU's part scales. Says when a\n"
      "run is CPU-bound and no GPU can help. The origin GPU comes from the trace.\n"
      "  rlscope predict TRACE --target H100\n"
      "  rlscope predict --kernel --origin A100 --target H100 --grid 864 --block 256 \\\n"
      "                  --regs 32 --time-us 70      (last line: predicted microseconds)\n"
      "  rlscope predict --kernel --origin V100 --target T4 --grid 8,4 --block 256 \\\n"
      "                  --time-us 412 --gemm 1,1024,1024,1024 --name volta_sgemm_128x64_nn\n"
      "  rlscope predict --kernels kernels.csv --origin A100 --target L4 -o predicted.csv\n"
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
                  "--kernel: the kernel's name: its precision, whether a library's (cuBLAS, cuDNN, "
                  "CUTLASS), elementwise or normalisation (PyTorch's), NCCL (kept)");
  cmd->add_option("--gemm", k.gemm,
                  "--kernel: the GEMM it computes, B,M,N,K (C[M,N] = A[M,K]·B[K,N], B batches): "
                  "its FLOPs and bytes, and the learned GEMM model")
      ->type_name("B,M,N,K");
  cmd->add_option("--conv", k.conv,
                  "--kernel: the convolution it computes, N,C,K,H,W,R,S,STRIDE,PAD (NCHW input, K "
                  "filters of RxS)")
      ->type_name("N,C,K,H,W,R,S,STRIDE,PAD");
  cmd->add_option("--kernel-models", opts->kernelModels,
                  "--kernel/--kernels: learned models from this file instead of the built-in ones "
                  "(predictor/train/train_kernel_models.py writes it)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--analytic", opts->analytic,
                "--kernel/--kernels: the analytic rules alone, without the learned models");
  cmd->add_option("--kernels", opts->kernels,
                  "predict every kernel of a CSV table, one per row, its columns named as the "
                  "--kernel options (grid, block, regs, smem_static, smem_dynamic, time_us, "
                  "dram_bytes, flops, target_regs, name, gemm, conv); writes the rows back with "
                  "predicted_us added")
      ->check(CLI::ExistingFile);
  return [opts]() {
    if (!opts->kernels.empty()) return predictKernels(*opts);
    return opts->kernel ? predictKernel(*opts) : predictTrace(*opts);
  };
}

}  // namespace rlscope::cli
