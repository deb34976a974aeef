// Learned kernel-time models (docs/predictor.md, "Learned models"): per operator family a small
// MLP gives a kernel's time on a GPU as a multiple of its roofline time there, from features
// relative to that GPU. Trained by predictor/train/train_kernel_models.py on public paired
// timings; the file (predictor/data/kernel_models.json) is compiled in, and prediction needs no
// Python. predictor/train/kernel_features.py computes the same features for training.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_shape.h"

namespace rlscope::predictor {

inline constexpr std::size_t kKernelFamilies = 4;

// What a model needs of one kernel: its family, FP32 work, and the GEMM's or convolution's shape.
struct ModelledKernel {
  KernelFamily family = KernelFamily::kElementwise;
  Work work;
  std::optional<GemmShape> gemm;  // with kGemm
  std::optional<ConvShape> conv;  // with kConv
};

class KernelModels {
 public:
  // The models built into rlscope (predictor/data/kernel_models.json), parsed once.
  static const KernelModels& builtIn();
  // Throws std::runtime_error with one line naming `origin` and what is wrong.
  static KernelModels parse(std::string_view json, const std::string& origin);
  static KernelModels load(const std::filesystem::path& path);

  bool covers(KernelFamily f) const { return families_[static_cast<std::size_t>(f)].has_value(); }
  bool coversPairs(KernelFamily f) const { return pairs_[static_cast<std::size_t>(f)].has_value(); }
  // The kernel's modelled time on `gpu`, µs, without what its operator spends outside kernels.
  // Requires covers(k.family), positive work, and the shape its family needs.
  double kernelUs(const ModelledKernel& k, const GpuSpec& gpu) const;
  // The pair model (GEMM, convolution): log(time on target / time on origin) of a kernel that
  // took `originUs` on `origin` with `originBlocks` blocks. Requires coversPairs(k.family).
  double pairLogRatio(const ModelledKernel& k, const GpuSpec& origin, const GpuSpec& target,
                      double originUs, std::int64_t originBlocks) const;

  // The GPUs the models were trained on (short names) and the one held out, if any.
  const std::vector<std::string>& trainedOn() const { return trainedOn_; }
  const std::string& heldOut() const { return heldOut_; }

  struct Layer {
    std::vector<double> weights;  // outputs x inputs, row-major
    std::vector<double> bias;
  };
  struct Mlp {
    std::vector<double> mean, scale;  // input standardisation
    std::vector<Layer> layers;        // tanh between layers, linear output
  };
  // Boosted regression trees: baseline + the value of the leaf each tree reaches.
  struct Tree {
    std::vector<int> feature;  // per node; -1: a leaf
    std::vector<double> threshold, value;
    std::vector<int> left, right;  // children of inner nodes: x[feature] <= threshold goes left
  };
  struct Trees {
    double baseline = 0;
    std::vector<Tree> trees;
  };

 private:
  std::array<std::optional<Mlp>, kKernelFamilies> families_;
  std::array<std::optional<Trees>, kKernelFamilies> pairs_;
  std::vector<std::string> trainedOn_;
  std::string heldOut_;
};

// The roofline time in µs and the model's features, as kernel_features.py computes them.
double modelFeatures(const ModelledKernel& k, const GpuSpec& gpu, std::vector<double>& features);
// The pair model's features (kernel_features.pair_features).
void pairFeatures(const ModelledKernel& k, const GpuSpec& origin, const GpuSpec& target,
                  double originUs, std::int64_t originBlocks, std::vector<double>& features);

}  // namespace rlscope::predictor
