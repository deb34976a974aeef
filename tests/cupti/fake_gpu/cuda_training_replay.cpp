// samples/cuda_training's CUDA calls, made on the fake GPU (fake_cuda.h) instead of a real one:
// the same NVTX operations, kernels (names, grids, blocks), copies, memsets and synchronisations
// per iteration, so that scripts/gpu-check.sh's checks of a trace of the sample pass on a trace of
// this program too (the fake-GPU test runs them in CI). Keep the two in step: a change to the
// sample's launches belongs here as well.
//
//   rlscope_fake_cuda_training [--iterations N] [--sleep-us MICROS] [--end-by-sigterm]
//                              [--fork-child]
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>

#include "fake_cuda.h"

namespace {

constexpr int kBatch = 256;
constexpr int kObs = 64;
constexpr int kHidden = 128;
constexpr int kActions = 4;
constexpr unsigned kTile = 16;
constexpr unsigned kElementwise = 256;
constexpr unsigned kStream = 13;  // the sample's cudaStreamCreate'd stream
constexpr int kRegisters = 32;

// The sample's kernels as nvcc mangles them.
constexpr const char* kLinearForward = "_Z14linear_forwardPKfS0_S0_Pfiii";
constexpr const char* kReluForward = "_Z12relu_forwardPKfPfi";
constexpr const char* kMseLossGrad = "_Z13mse_loss_gradPKfS0_Pfi";
constexpr const char* kReluBackward = "_Z13relu_backwardPKfS0_Pfi";
constexpr const char* kLinearBackwardWeights = "_Z23linear_backward_weightsPKfS0_PfS1_iii";
constexpr const char* kLinearBackwardInput = "_Z21linear_backward_inputPKfS0_Pfiii";
constexpr const char* kSgdUpdate = "_Z10sgd_updatePfPKffi";

FakeDim3 tiles(int columns, int rows) {
  return {static_cast<unsigned>((columns + kTile - 1) / kTile),
          static_cast<unsigned>((rows + kTile - 1) / kTile), 1};
}
FakeDim3 blocksFor(int n) {
  return {static_cast<unsigned>((n + kElementwise - 1) / kElementwise), 1, 1};
}
constexpr FakeDim3 kTileBlock{kTile, kTile, 1};
constexpr FakeDim3 kElementwiseBlock{kElementwise, 1, 1};

std::size_t floats(int n) {
  return sizeof(float) * static_cast<std::size_t>(n);
}

// The sample steps environments on the CPU here; a little real arithmetic stands in for it.
double simulate(int iteration) {
  double s = 0;
  for (int i = 0; i < kBatch * kObs; ++i) s += std::sin(0.001 * (i + iteration));
  return s;
}

struct Options {
  int iterations = 10;        // as the sample
  int sleepUs = 0;            // after each iteration: longer runs without more records
  bool endBySigterm = false;  // instead of resetting the device and returning
  bool forkChild = false;     // after the loop: a child forked without exec, CPU work only
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: rlscope_fake_cuda_training [--iterations N] [--sleep-us MICROS] "
               "[--end-by-sigterm] [--fork-child]\n");
  std::exit(2);
}

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--end-by-sigterm") == 0 ||
        std::strcmp(argv[i], "--fork-child") == 0) {
      (argv[i][2] == 'e' ? o.endBySigterm : o.forkChild) = true;
      continue;
    }
    int* target = std::strcmp(argv[i], "--iterations") == 0 ? &o.iterations
                  : std::strcmp(argv[i], "--sleep-us") == 0 ? &o.sleepUs
                                                            : nullptr;
    char* end = nullptr;
    long v = target && i + 1 < argc ? std::strtol(argv[++i], &end, 10) : -1;
    if (!end || *end != '\0' || v < 0 || v > 1000000) usage();
    *target = static_cast<int>(v);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parseOptions(argc, argv);
  int iterations = options.iterations;
  cuInit(0);  // the CUDA runtime's first call: the driver loads CUDA_INJECTION64_PATH here

  for (int n : {kHidden * kObs, kHidden, kActions * kHidden, kActions})
    fakeCudaMemcpy(floats(n), kFakeHostToDevice, 0, 0);  // the parameters, copied once

  double checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    nvtxRangePushA("simulate");
    checksum += simulate(it);
    nvtxRangePop();

    nvtxRangePushA("inference");
    fakeCudaGetDevice();  // switched off by the collector: in no trace
    fakeCudaMemcpy(floats(kBatch * kObs), kFakeHostToDevice, 1, kStream);
    fakeCudaLaunchKernel(kLinearForward, tiles(kHidden, kBatch), kTileBlock, kRegisters, kStream);
    fakeCudaLaunchKernel(kReluForward, blocksFor(kBatch * kHidden), kElementwiseBlock, kRegisters,
                         kStream);
    fakeCudaLaunchKernel(kLinearForward, tiles(kActions, kBatch), kTileBlock, kRegisters, kStream);
    fakeCudaMemcpy(floats(kBatch * kActions), kFakeDeviceToHost, 1, kStream);
    fakeCudaStreamSynchronize(kStream);
    nvtxRangePop();

    nvtxRangePushA("backpropagate");
    fakeCudaMemcpy(floats(kBatch * kActions), kFakeHostToDevice, 0, 0);
    for (int n : {kHidden * kObs, kHidden, kActions * kHidden, kActions})
      fakeCudaMemsetAsync(floats(n), kStream);
    fakeCudaLaunchKernel(kMseLossGrad, blocksFor(kBatch * kActions), kElementwiseBlock, kRegisters,
                         kStream);
    fakeCudaLaunchKernel(kLinearBackwardWeights, tiles(kHidden, kActions), kTileBlock, kRegisters,
                         kStream);
    fakeCudaLaunchKernel(kLinearBackwardInput, tiles(kHidden, kBatch), kTileBlock, kRegisters,
                         kStream);
    fakeCudaLaunchKernel(kReluBackward, blocksFor(kBatch * kHidden), kElementwiseBlock, kRegisters,
                         kStream);
    fakeCudaLaunchKernel(kLinearBackwardWeights, tiles(kObs, kHidden), kTileBlock, kRegisters,
                         kStream);
    for (int n : {kHidden * kObs, kHidden, kActions * kHidden, kActions})
      fakeCudaLaunchKernel(kSgdUpdate, blocksFor(n), kElementwiseBlock, kRegisters, kStream);
    fakeCudaDeviceSynchronize();
    nvtxRangePop();
    if (options.sleepUs > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(options.sleepUs));
  }
  std::printf("iterations=%d checksum=%.3f\n", iterations, checksum);
  if (options.forkChild) {
    // CUDA is unusable in a fork child, and the GPU records still in CUPTI's buffers (copied into
    // the child) are the parent's: the child's collector must leave them alone, even at exit.
    std::fflush(stdout);
    pid_t child = ::fork();
    if (child == 0) {
      nvtxRangePushA("child");
      checksum = simulate(-1);
      nvtxRangePop();
      std::exit(checksum > 1e300 ? 1 : 0);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "rlscope_fake_cuda_training: the fork child failed\n");
      return 1;
    }
  }
  if (options.endBySigterm) {
    // Killed with work still in CUPTI's buffers: the collector's handler must flush them.
    std::fflush(stdout);
    std::raise(SIGTERM);
  }
  // The runtime-API callback of cudaDeviceReset and the context's destruction both flush.
  fakeCudaDeviceReset();
  return 0;
}
