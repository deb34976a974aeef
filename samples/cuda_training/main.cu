// A small reinforcement-learning-shaped CUDA program for rlscope's GPU checks and demos: each
// iteration simulates a batch of environments on the CPU, runs a two-layer MLP policy on the GPU,
// and trains it by gradient descent, inside the NVTX operations "simulate", "inference" and
// "backpropagate". The kernels have known names and launch configurations, so a trace of this
// program can be checked against them (scripts/gpu-check.sh).
//
//   rlscope_sample_cuda_training [--iterations N]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Kernels at global scope, so their names are plain (no "(anonymous namespace)::").
// y[b][o] = bias[o] + sum_i x[b][i] * w[o][i]
__global__ void linear_forward(const float* x, const float* w, const float* bias, float* y,
                               int batch, int in, int out) {
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  int b = blockIdx.y * blockDim.y + threadIdx.y;
  if (b >= batch || o >= out) return;
  float acc = bias[o];
  for (int i = 0; i < in; ++i) acc += x[b * in + i] * w[o * in + i];
  y[b * out + o] = acc;
}

__global__ void relu_forward(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

// Gradient of the mean squared error between the policy's values and the targets.
__global__ void mse_loss_grad(const float* y, const float* target, float* dy, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dy[i] = 2.f * (y[i] - target[i]) / static_cast<float>(n);
}

__global__ void relu_backward(const float* x, const float* dy, float* dx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dx[i] = x[i] > 0.f ? dy[i] : 0.f;
}

// dw[o][i] += sum_b dy[b][o] * x[b][i]; db[o] += sum_b dy[b][o]   (dw, db zeroed by cudaMemset)
__global__ void linear_backward_weights(const float* x, const float* dy, float* dw, float* db,
                                        int batch, int in, int out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int o = blockIdx.y * blockDim.y + threadIdx.y;
  if (o >= out || i >= in) return;
  float acc = 0.f, accBias = 0.f;
  for (int b = 0; b < batch; ++b) {
    acc += dy[b * out + o] * x[b * in + i];
    accBias += dy[b * out + o];
  }
  dw[o * in + i] += acc;
  if (i == 0) db[o] += accBias;
}

// dx[b][i] = sum_o dy[b][o] * w[o][i]
__global__ void linear_backward_input(const float* dy, const float* w, float* dx, int batch, int in,
                                      int out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int b = blockIdx.y * blockDim.y + threadIdx.y;
  if (b >= batch || i >= in) return;
  float acc = 0.f;
  for (int o = 0; o < out; ++o) acc += dy[b * out + o] * w[o * in + i];
  dx[b * in + i] = acc;
}

__global__ void sgd_update(float* w, const float* dw, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * dw[i];
}

namespace {

constexpr int kBatch = 256;  // environments stepped together
constexpr int kObs = 64;     // observation size
constexpr int kHidden = 128;
constexpr int kActions = 4;
constexpr float kLearningRate = 1e-3f;

// Launch configurations the GPU check asserts.
constexpr int kTile = 16;          // linear_* kernels: 16×16 blocks
constexpr int kElementwise = 256;  // relu_*, mse_loss_grad, sgd_update: 256 threads

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "rlscope_sample_cuda_training: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

dim3 tiles(int columns, int rows) {
  return dim3((columns + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
}
int blocksFor(int n) {
  return (n + kElementwise - 1) / kElementwise;
}

// A device buffer of floats.
struct DeviceArray {
  float* p = nullptr;
  int n = 0;
  explicit DeviceArray(int count) : n(count) {
    check(cudaMalloc(&p, sizeof(float) * n), "cudaMalloc");
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  size_t bytes() const { return sizeof(float) * n; }
};

// Environments: each a point that drifts, pushed by the chosen action; the reward favours
// staying near the origin. Simple, deterministic CPU work standing in for a simulator.
struct Environments {
  std::vector<float> state = std::vector<float>(kBatch * kObs);
  std::mt19937 rng{42};

  void step(const std::vector<float>& values) {
    std::normal_distribution<float> noise(0.f, 0.05f);
    for (int b = 0; b < kBatch; ++b) {
      const float* v = &values[b * kActions];
      int action = 0;
      for (int a = 1; a < kActions; ++a)
        if (v[a] > v[action]) action = a;
      float push = (action - 1.5f) * 0.1f;
      for (int i = 0; i < kObs; ++i) {
        float& s = state[b * kObs + i];
        s = 0.98f * s + push * std::sin(0.1f * static_cast<float>(i)) + noise(rng);
      }
    }
  }

  // The value targets the policy learns: the negative distance of each next state per action.
  void targets(std::vector<float>& out) const {
    for (int b = 0; b < kBatch; ++b) {
      float norm = 0.f;
      for (int i = 0; i < kObs; ++i) norm += state[b * kObs + i] * state[b * kObs + i];
      for (int a = 0; a < kActions; ++a)
        out[b * kActions + a] = -std::sqrt(norm) * (1.f + 0.1f * static_cast<float>(a));
    }
  }
};

int parseIterations(int argc, char** argv) {
  int iterations = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 1000000) {
        std::fprintf(stderr, "rlscope_sample_cuda_training: bad --iterations '%s'\n", argv[i]);
        std::exit(2);
      }
      iterations = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "usage: rlscope_sample_cuda_training [--iterations N]\n");
      std::exit(2);
    }
  }
  return iterations;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = parseIterations(argc, argv);

  // Parameters, initialised on the host and copied once.
  std::mt19937 rng(7);
  std::normal_distribution<float> init(0.f, 0.1f);
  std::vector<float> hw1(kHidden * kObs), hb1(kHidden, 0.f), hw2(kActions * kHidden),
      hb2(kActions, 0.f);
  for (float& v : hw1) v = init(rng);
  for (float& v : hw2) v = init(rng);
  DeviceArray w1(kHidden * kObs), b1(kHidden), w2(kActions * kHidden), b2(kActions);
  DeviceArray dw1(w1.n), db1(b1.n), dw2(w2.n), db2(b2.n);
  DeviceArray obs(kBatch * kObs), pre(kBatch * kHidden), hid(kBatch * kHidden),
      out(kBatch * kActions), target(kBatch * kActions), dout(kBatch * kActions),
      dhid(kBatch * kHidden), dpre(kBatch * kHidden);
  check(cudaMemcpy(w1.p, hw1.data(), w1.bytes(), cudaMemcpyHostToDevice), "copy w1");
  check(cudaMemcpy(b1.p, hb1.data(), b1.bytes(), cudaMemcpyHostToDevice), "copy b1");
  check(cudaMemcpy(w2.p, hw2.data(), w2.bytes(), cudaMemcpyHostToDevice), "copy w2");
  check(cudaMemcpy(b2.p, hb2.data(), b2.bytes(), cudaMemcpyHostToDevice), "copy b2");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");

  Environments envs;
  std::vector<float> values(kBatch * kActions, 0.f), targets(kBatch * kActions);
  float loss = 0.f;
  for (int it = 0; it < iterations; ++it) {
    nvtxRangePushA("simulate");
    envs.step(values);
    envs.targets(targets);
    nvtxRangePop();

    nvtxRangePushA("inference");
    check(cudaMemcpyAsync(obs.p, envs.state.data(), obs.bytes(), cudaMemcpyHostToDevice, stream),
          "copy observations");
    linear_forward<<<tiles(kHidden, kBatch), dim3(kTile, kTile), 0, stream>>>(
        obs.p, w1.p, b1.p, pre.p, kBatch, kObs, kHidden);
    relu_forward<<<blocksFor(pre.n), kElementwise, 0, stream>>>(pre.p, hid.p, pre.n);
    linear_forward<<<tiles(kActions, kBatch), dim3(kTile, kTile), 0, stream>>>(
        hid.p, w2.p, b2.p, out.p, kBatch, kHidden, kActions);
    check(cudaGetLastError(), "forward kernels");
    check(cudaMemcpyAsync(values.data(), out.p, out.bytes(), cudaMemcpyDeviceToHost, stream),
          "copy action values");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    nvtxRangePop();

    nvtxRangePushA("backpropagate");
    check(cudaMemcpy(target.p, targets.data(), target.bytes(), cudaMemcpyHostToDevice),
          "copy targets");
    // Gradients accumulate in the kernels: clear them first.
    for (DeviceArray* g : {&dw1, &db1, &dw2, &db2})
      check(cudaMemsetAsync(g->p, 0, g->bytes(), stream), "cudaMemsetAsync");
    mse_loss_grad<<<blocksFor(out.n), kElementwise, 0, stream>>>(out.p, target.p, dout.p, out.n);
    linear_backward_weights<<<tiles(kHidden, kActions), dim3(kTile, kTile), 0, stream>>>(
        hid.p, dout.p, dw2.p, db2.p, kBatch, kHidden, kActions);
    linear_backward_input<<<tiles(kHidden, kBatch), dim3(kTile, kTile), 0, stream>>>(
        dout.p, w2.p, dhid.p, kBatch, kHidden, kActions);
    relu_backward<<<blocksFor(pre.n), kElementwise, 0, stream>>>(pre.p, dhid.p, dpre.p, pre.n);
    linear_backward_weights<<<tiles(kObs, kHidden), dim3(kTile, kTile), 0, stream>>>(
        obs.p, dpre.p, dw1.p, db1.p, kBatch, kObs, kHidden);
    for (auto [w, dw] : {std::pair{&w1, &dw1}, {&b1, &db1}, {&w2, &dw2}, {&b2, &db2}})
      sgd_update<<<blocksFor(w->n), kElementwise, 0, stream>>>(w->p, dw->p, kLearningRate, w->n);
    check(cudaGetLastError(), "backward kernels");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    nvtxRangePop();

    loss = 0.f;
    for (int i = 0; i < kBatch * kActions; ++i)
      loss += (values[i] - targets[i]) * (values[i] - targets[i]);
    loss /= static_cast<float>(kBatch * kActions);
  }
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("iterations=%d loss=%.6f\n", iterations, loss);
  return 0;
}
