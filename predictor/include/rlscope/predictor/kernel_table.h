// Many kernels at once (`rlscope predict --kernels FILE.csv`): a CSV table with one kernel per
// row, its columns named as `predict --kernel`'s options, predicted from one GPU to another; the
// output is the same table with a `predicted_us` column added.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "rlscope/predictor/kernel_shape.h"
#include "rlscope/predictor/wave_scaling.h"

namespace rlscope::predictor {

// One kernel as `predict --kernel` describes it (options) or a table row does (columns):
// grid, block, regs, smem_static, smem_dynamic, time_us, dram_bytes, flops, target_regs, name,
// gemm, conv.
struct KernelDescription {
  std::string grid, name, gemm, conv;
  KernelResources resources;
  double timeUs = 0, dramBytes = 0, flops = 0;
  int targetRegs = 0;
};

struct DescribedKernel {
  KernelLaunch launch;
  KernelTraits traits;
};

// The launch and traits the predictor takes. A GEMM or convolution shape makes the kernel a
// library kernel and gives its FLOPs and bytes, unless dram_bytes / flops say otherwise.
// Throws std::runtime_error (one line) for a missing grid, block or time, or a malformed value.
DescribedKernel describe(const KernelDescription& k);

struct KernelTableStats {
  std::uint64_t kernels = 0;
  std::uint64_t cannotPredict = 0;  // rows kept at their origin time
};

// Reads the CSV (a header row, RFC 4180 quoting: a grid "4,2,1" is quoted or written 4x2x1),
// writes it back with `predicted_us` appended. Unknown columns are carried along. Throws
// std::runtime_error naming the line and column of the first bad value; `source` names the
// input in that message.
KernelTableStats predictKernelTable(std::istream& in, std::ostream& out,
                                    const KernelPredictor& predictor, const std::string& source);

}  // namespace rlscope::predictor
