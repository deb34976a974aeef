// rlscope_sample_cpu_training: a small, real reinforcement-learning training run on the CPU.
//
// The simulator is CartPole with the classic equations (Barto, Sutton & Anderson 1983, as in
// OpenAI Gym's CartPole-v0: Euler integration, tau = 0.02 s, failure at |x| > 2.4 m or
// |theta| > 12 degrees, at most --max-steps steps). The policy is a small MLP (4 -> hidden ->
// 2, ReLU, softmax) written with plain loops, trained with REINFORCE: each iteration plays one
// episode, then takes one SGD step on the policy-gradient loss -sum_t G_t log pi(a_t | s_t)
// with normalised discounted returns G_t. Everything is deterministic given --seed (our own
// random-number conversions, no std:: distributions whose output differs between libraries).
//
// Its operations ("training_loop" > "inference", "simulation", "backpropagation") and phases
// ("data_collection", "training") are marked with rlscope's annotations (rlscope/rlscope.h, which
// emit NVTX), so `rlscope-prof -- rlscope_sample_cpu_training` records them; run alone, the
// annotations cost a few nanoseconds each.
//
// With --trace-out it also records its own timeline, finer than the collector sees today, and
// writes it at exit as a PyTorch-profiler / Kineto-style Chrome trace JSON: `user_annotation`
// events for the operations, `cpu_op` events for the neural-network math, `rlscope.simulator`
// events for the CartPole calls and `rlscope.phase` events for the phases. Times come from
// std::chrono::steady_clock in integer nanoseconds, written as microseconds with three decimals.
// `rlscope import` reads the file; the demo, the docs and the tests use it for CPU categories
// until the collector records them itself (Python, backend and simulator time).
#include <rlscope/rlscope.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

// --- Self-recording ----------------------------------------------------------------------------

enum class Cat : std::uint8_t { kUserAnnotation, kCpuOp, kSimulator, kPhase };

constexpr std::string_view catName(Cat c) {
  switch (c) {
    case Cat::kUserAnnotation:
      return "user_annotation";
    case Cat::kCpuOp:
      return "cpu_op";
    case Cat::kSimulator:
      return "rlscope.simulator";
    case Cat::kPhase:
      return "rlscope.phase";
  }
  return "unknown";
}

struct Record {
  const char* name;  // always a string literal: no copies on the hot path
  std::int64_t start;
  std::int64_t end;
  std::int32_t dims[4];  // cpu_op input shapes [[d0, d1], [d2, d3]]; 0 = none
  Cat cat;
};

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records go into a pre-reserved vector; nothing is formatted or written until the run ends.
class Recorder {
 public:
  explicit Recorder(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  void reserve(std::size_t n) {
    if (enabled_) records_.reserve(n);
  }
  // Opens a record and returns its index (the end is filled in by close()).
  std::size_t open(Cat cat, const char* name, std::array<std::int32_t, 4> dims = {}) {
    records_.push_back(Record{name, nowNs(), 0, {dims[0], dims[1], dims[2], dims[3]}, cat});
    return records_.size() - 1;
  }
  void close(std::size_t index) { records_[index].end = nowNs(); }
  const std::vector<Record>& records() const { return records_; }

 private:
  bool enabled_;
  std::vector<Record> records_;
};

// RAII scope: an rlscope operation or phase for the collector, and one X event of the
// self-recorded trace (when on) from construction to destruction. Parents are opened before their
// children, so the records come out in start order.
class Scope {
 public:
  Scope(Recorder& r, Cat cat, const char* name, std::array<std::int32_t, 4> dims = {})
      : recorder_(r.enabled() ? &r : nullptr), cat_(cat) {
    if (cat_ == Cat::kUserAnnotation) rlscope_operation_push(name);
    if (cat_ == Cat::kPhase) phase_ = rlscope_phase_begin(name);
    if (recorder_) index_ = recorder_->open(cat, name, dims);
  }
  ~Scope() {
    if (recorder_) recorder_->close(index_);
    if (cat_ == Cat::kUserAnnotation) rlscope_operation_pop();
    if (cat_ == Cat::kPhase) rlscope_phase_end(phase_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Recorder* recorder_;
  Cat cat_;
  std::size_t index_ = 0;
  rlscope_phase_t phase_ = 0;
};

// Microseconds with exactly three decimals, from integer nanoseconds (no floating point).
void appendMicros(std::string& out, std::int64_t ns) {
  char buf[40];
  const char* sign = ns < 0 ? "-" : "";
  std::int64_t a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", sign, static_cast<long long>(a / 1000),
                static_cast<long long>(a % 1000));
  out += buf;
}

// Writes the Chrome trace next to `path` and renames it into place, so a failed write never
// leaves a truncated file where a good one was.
bool writeTrace(const std::filesystem::path& path, const Recorder& rec, long pid, long tid,
                const nlohmann::json& runInfo) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += ".tmp" + std::to_string(pid);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return false;

  std::string s;
  s.reserve(1 << 20);
  const std::string pidTid =
      "\"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid);
  const std::int64_t t0 = rec.records().empty() ? nowNs() : rec.records().front().start;
  s += "{\n  \"schemaVersion\": 1,\n  \"traceName\": \"rlscope_sample_cpu_training\",\n";
  s += "  \"deviceProperties\": [],\n";
  s += "  \"rlscopeSample\": " + runInfo.dump() + ",\n";
  s += "  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n";
  s += "  {\"ph\": \"M\", \"name\": \"process_name\", " + pidTid + ", \"ts\": ";
  appendMicros(s, t0);
  s += ", \"args\": {\"name\": \"rlscope_sample_cpu_training\"}},\n";
  s += "  {\"ph\": \"M\", \"name\": \"thread_name\", " + pidTid + ", \"ts\": ";
  appendMicros(s, t0);
  s += ", \"args\": {\"name\": \"main\"}}";
  for (const Record& r : rec.records()) {
    s += ",\n  {\"ph\": \"X\", \"cat\": \"";
    s += catName(r.cat);
    s += "\", \"name\": \"";
    s += r.name;  // literals of this file: nothing to escape
    s += "\", " + pidTid + ", \"ts\": ";
    appendMicros(s, r.start);
    s += ", \"dur\": ";
    appendMicros(s, r.end - r.start);
    if (r.dims[0] > 0) {
      s += ", \"args\": {\"Input Dims\": [[" + std::to_string(r.dims[0]) + ", " +
           std::to_string(r.dims[1]) + "]";
      if (r.dims[2] > 0) {
        s += ", [" + std::to_string(r.dims[2]) + ", " + std::to_string(r.dims[3]) + "]";
      }
      s += "]}";
    }
    s += '}';
    if (s.size() > (1 << 20) - 512) {
      out.write(s.data(), static_cast<std::streamsize>(s.size()));
      s.clear();
    }
  }
  s += "\n  ]\n}\n";
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
  out.close();
  if (!out) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

// --- Deterministic random numbers -------------------------------------------------------------

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // splitmix64: tiny, fast, and the same sequence on every platform.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

 private:
  std::uint64_t state_;
};

// --- The simulator: CartPole --------------------------------------------------------------------

class CartPole {
 public:
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassCart + kMassPole;
  static constexpr double kHalfLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kHalfLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;  // seconds between state updates
  static constexpr double kThetaLimit = 12.0 * 2.0 * std::numbers::pi / 360.0;
  static constexpr double kXLimit = 2.4;

  std::array<double, 4> reset(Rng& rng) {
    for (double& v : s_) v = rng.uniform(-0.05, 0.05);
    return s_;
  }

  // Applies a push to the left (action 0) or right (1); returns true when the episode ends.
  bool step(int action) {
    auto& [x, xDot, theta, thetaDot] = s_;
    const double force = action == 1 ? kForceMag : -kForceMag;
    const double cosT = std::cos(theta);
    const double sinT = std::sin(theta);
    const double temp = (force + kPoleMassLength * thetaDot * thetaDot * sinT) / kTotalMass;
    const double thetaAcc = (kGravity * sinT - cosT * temp) /
                            (kHalfLength * (4.0 / 3.0 - kMassPole * cosT * cosT / kTotalMass));
    const double xAcc = temp - kPoleMassLength * thetaAcc * cosT / kTotalMass;
    x += kTau * xDot;
    xDot += kTau * xAcc;
    theta += kTau * thetaDot;
    thetaDot += kTau * thetaAcc;
    return x < -kXLimit || x > kXLimit || theta < -kThetaLimit || theta > kThetaLimit;
  }

  const std::array<double, 4>& state() const { return s_; }

 private:
  std::array<double, 4> s_{};
};

// --- The policy: a two-layer MLP, plain loops ---------------------------------------------------

constexpr int kObs = 4;
constexpr int kActions = 2;

// y[n x out] = x[n x in] * w[in x out] + b[out]
void matmulBias(const double* x, const std::vector<double>& w, const std::vector<double>& b,
                double* y, int n, int in, int out) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < out; ++j) y[i * out + j] = b[j];
    for (int k = 0; k < in; ++k) {
      const double xv = x[i * in + k];
      const double* wr = &w[static_cast<std::size_t>(k) * out];
      for (int j = 0; j < out; ++j) y[i * out + j] += xv * wr[j];
    }
  }
}

void relu(double* v, int count) {
  for (int i = 0; i < count; ++i) v[i] = v[i] > 0 ? v[i] : 0;
}

void softmax(const double* logits, double* p, int n) {
  for (int i = 0; i < n; ++i) {
    const double* l = logits + i * kActions;
    const double m = std::max(l[0], l[1]);
    double sum = 0;
    for (int a = 0; a < kActions; ++a) sum += (p[i * kActions + a] = std::exp(l[a] - m));
    for (int a = 0; a < kActions; ++a) p[i * kActions + a] /= sum;
  }
}

struct Policy {
  int hidden;
  std::vector<double> w1, b1, w2, b2;  // w1: kObs x hidden, w2: hidden x kActions

  Policy(int h, Rng& rng) : hidden(h), w1(kObs * h), b1(h), w2(h * kActions), b2(kActions) {
    // PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
    const double a1 = 1.0 / std::sqrt(double(kObs));
    const double a2 = 1.0 / std::sqrt(double(h));
    for (double& v : w1) v = rng.uniform(-a1, a1);
    for (double& v : b1) v = rng.uniform(-a1, a1);
    for (double& v : w2) v = rng.uniform(-a2, a2);
    for (double& v : b2) v = rng.uniform(-a2, a2);
  }
};

// Activations of a forward pass over n states, kept for the backward pass.
struct Activations {
  std::vector<double> h, logits, probs;
  void resize(int n, int hidden) {
    h.resize(static_cast<std::size_t>(n) * hidden);
    logits.resize(static_cast<std::size_t>(n) * kActions);
    probs.resize(static_cast<std::size_t>(n) * kActions);
  }
};

void forward(Recorder& rec, const Policy& p, const double* states, int n, Activations& act) {
  const int h = p.hidden;
  act.resize(n, h);
  {
    Scope s(rec, Cat::kCpuOp, "matmul", {n, kObs, kObs, h});
    matmulBias(states, p.w1, p.b1, act.h.data(), n, kObs, h);
  }
  {
    Scope s(rec, Cat::kCpuOp, "relu", {n, h, 0, 0});
    relu(act.h.data(), n * h);
  }
  {
    Scope s(rec, Cat::kCpuOp, "matmul", {n, h, h, kActions});
    matmulBias(act.h.data(), p.w2, p.b2, act.logits.data(), n, h, kActions);
  }
  {
    Scope s(rec, Cat::kCpuOp, "softmax", {n, kActions, 0, 0});
    softmax(act.logits.data(), act.probs.data(), n);
  }
}

// One REINFORCE update from an episode: forward again over the batch of states, gradient of
// L = -(1/T) sum_t G_t log pi(a_t | s_t), backward through both layers, SGD step.
void reinforceUpdate(Recorder& rec, Policy& p, const std::vector<double>& states,
                     const std::vector<int>& actions, const std::vector<double>& rewards,
                     double gamma, double lr, Activations& act) {
  const int n = static_cast<int>(actions.size());
  const int h = p.hidden;
  std::vector<double> g(n);
  {
    Scope s(rec, Cat::kCpuOp, "discounted_returns", {n, 1, 0, 0});
    double run = 0;
    for (int t = n - 1; t >= 0; --t) g[t] = run = rewards[t] + gamma * run;
    double mean = 0, var = 0;
    for (double v : g) mean += v;
    mean /= n;
    for (double v : g) var += (v - mean) * (v - mean);
    const double sd = std::sqrt(var / n) + 1e-8;
    for (double& v : g) v = (v - mean) / sd;
  }
  forward(rec, p, states.data(), n, act);

  std::vector<double> dLogits(static_cast<std::size_t>(n) * kActions);
  {
    // d(-G log softmax(l)_a)/dl = G (p - onehot(a)), averaged over the episode.
    Scope s(rec, Cat::kCpuOp, "policy_gradient_loss_backward", {n, kActions, 0, 0});
    for (int i = 0; i < n; ++i) {
      for (int a = 0; a < kActions; ++a) {
        const double onehot = actions[i] == a ? 1.0 : 0.0;
        dLogits[i * kActions + a] = g[i] * (act.probs[i * kActions + a] - onehot) / n;
      }
    }
  }
  std::vector<double> gw2(p.w2.size(), 0.0), gb2(kActions, 0.0), dH(act.h.size(), 0.0);
  {
    Scope s(rec, Cat::kCpuOp, "matmul_backward", {n, h, h, kActions});
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < h; ++k) {
        const double hv = act.h[i * h + k];
        for (int a = 0; a < kActions; ++a) {
          const double d = dLogits[i * kActions + a];
          gw2[k * kActions + a] += hv * d;
          dH[i * h + k] += d * p.w2[k * kActions + a];
        }
      }
      for (int a = 0; a < kActions; ++a) gb2[a] += dLogits[i * kActions + a];
    }
  }
  {
    Scope s(rec, Cat::kCpuOp, "relu_backward", {n, h, 0, 0});
    for (std::size_t i = 0; i < dH.size(); ++i) {
      if (act.h[i] <= 0) dH[i] = 0;
    }
  }
  std::vector<double> gw1(p.w1.size(), 0.0), gb1(h, 0.0);
  {
    Scope s(rec, Cat::kCpuOp, "matmul_backward", {n, kObs, kObs, h});
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < kObs; ++k) {
        const double sv = states[i * kObs + k];
        for (int j = 0; j < h; ++j) gw1[k * h + j] += sv * dH[i * h + j];
      }
      for (int j = 0; j < h; ++j) gb1[j] += dH[i * h + j];
    }
  }
  {
    Scope s(rec, Cat::kCpuOp, "sgd_step",
            {static_cast<int>(p.w1.size() + p.b1.size() + p.w2.size() + p.b2.size()), 1, 0, 0});
    for (std::size_t i = 0; i < p.w1.size(); ++i) p.w1[i] -= lr * gw1[i];
    for (std::size_t i = 0; i < p.b1.size(); ++i) p.b1[i] -= lr * gb1[i];
    for (std::size_t i = 0; i < p.w2.size(); ++i) p.w2[i] -= lr * gw2[i];
    for (std::size_t i = 0; i < p.b2.size(); ++i) p.b2[i] -= lr * gb2[i];
  }
}

// --- Command line -------------------------------------------------------------------------------

struct Options {
  int iterations = 20;
  std::uint64_t seed = 1;
  int hidden = 32;
  int maxSteps = 200;
  double lr = 0.1;
  double gamma = 0.99;
  std::string traceOut;
  bool trace = false;
  bool verbose = false;
};

constexpr const char* kUsage =
    "usage: rlscope_sample_cpu_training [options]\n"
    "Trains a small MLP policy on CartPole with REINFORCE. Its operations and phases are\n"
    "rlscope annotations: profile it with `rlscope-prof -- rlscope_sample_cpu_training`.\n"
    "  --iterations N   episodes, one policy update each (default 20)\n"
    "  --seed S         random seed; the run is deterministic given it (default 1)\n"
    "  --hidden H       hidden layer width (default 32)\n"
    "  --max-steps N    episode length limit (default 200)\n"
    "  --lr X           SGD learning rate (default 0.1)\n"
    "  --trace-out P    also record its own finer timeline and write it to P as a\n"
    "                   Kineto-style Chrome trace (for `rlscope import`)\n"
    "  --no-trace       do not write that trace (the default)\n"
    "  --verbose        print the return of every episode\n"
    "  --help           this text\n";

[[noreturn]] void usageError(const std::string& msg) {
  std::cerr << "rlscope_sample_cpu_training: error: " << msg << " (see --help)\n";
  std::exit(2);
}

template <typename T>
T parseNumber(std::string_view flag, const char* text, T lo, T hi) {
  char* end = nullptr;
  errno = 0;
  T v{};
  if constexpr (std::is_floating_point_v<T>) {
    v = static_cast<T>(std::strtod(text, &end));
  } else {
    long long x = std::strtoll(text, &end, 10);
    if (x < static_cast<long long>(lo) || x > static_cast<long long>(hi)) end = nullptr;
    v = static_cast<T>(x);
  }
  if (end == nullptr || end == text || *end != '\0' || errno != 0 || !(v >= lo && v <= hi)) {
    std::ostringstream msg;
    msg << flag << ": expected a number in [" << lo << ", " << hi << "], got '" << text << "'";
    usageError(msg.str());
  }
  return v;
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usageError(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--iterations") {
      o.iterations = parseNumber<int>(a, value(), 1, 1'000'000);
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(parseNumber<long long>(a, value(), 0, 1LL << 62));
    } else if (a == "--hidden") {
      o.hidden = parseNumber<int>(a, value(), 1, 4096);
    } else if (a == "--max-steps") {
      o.maxSteps = parseNumber<int>(a, value(), 1, 100'000);
    } else if (a == "--lr") {
      o.lr = parseNumber<double>(a, value(), 0.0, 10.0);
    } else if (a == "--trace-out") {
      o.traceOut = value();
      if (o.traceOut.empty()) usageError("--trace-out: empty path");
      o.trace = true;
    } else if (a == "--no-trace") {
      o.trace = false;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      usageError("unknown argument '" + std::string(a) + "'");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parseArgs(argc, argv);
  const long pid = static_cast<long>(::getpid());
  const long tid = static_cast<long>(::syscall(SYS_gettid));

  Recorder rec(opt.trace);
  // Per step: 2 operations, 4 forward cpu_ops, 1 simulator call; per iteration ~20 more.
  // Reserve that up front (capped), so the vector does not grow during the run.
  const std::size_t expected =
      static_cast<std::size_t>(opt.iterations) * (static_cast<std::size_t>(opt.maxSteps) * 7 + 32);
  rec.reserve(std::min<std::size_t>(expected, std::size_t{1} << 22));

  Rng rng(opt.seed);
  Policy policy(opt.hidden, rng);
  CartPole env;
  Activations stepAct, batchAct;
  std::vector<double> states;
  std::vector<int> actions;
  std::vector<double> rewards;
  std::vector<double> returns;
  std::int64_t envSteps = 0;

  const std::int64_t t0 = nowNs();
  {
    Scope loop(rec, Cat::kUserAnnotation, "training_loop");
    for (int it = 0; it < opt.iterations; ++it) {
      states.clear();
      actions.clear();
      rewards.clear();
      {
        Scope phase(rec, Cat::kPhase, "data_collection");
        std::array<double, 4> obs;
        {
          Scope op(rec, Cat::kUserAnnotation, "simulation");
          Scope sim(rec, Cat::kSimulator, "CartPole.reset");
          obs = env.reset(rng);
        }
        bool done = false;
        while (!done && static_cast<int>(actions.size()) < opt.maxSteps) {
          int action = 0;
          {
            Scope op(rec, Cat::kUserAnnotation, "inference");
            forward(rec, policy, obs.data(), 1, stepAct);
            Scope s(rec, Cat::kCpuOp, "multinomial", {1, kActions, 0, 0});
            action = rng.uniform() < stepAct.probs[0] ? 0 : 1;
          }
          states.insert(states.end(), obs.begin(), obs.end());
          actions.push_back(action);
          {
            Scope op(rec, Cat::kUserAnnotation, "simulation");
            Scope sim(rec, Cat::kSimulator, "CartPole.step");
            done = env.step(action);
            obs = env.state();
          }
          rewards.push_back(1.0);
          ++envSteps;
        }
      }
      {
        Scope phase(rec, Cat::kPhase, "training");
        Scope op(rec, Cat::kUserAnnotation, "backpropagation");
        reinforceUpdate(rec, policy, states, actions, rewards, opt.gamma, opt.lr, batchAct);
      }
      returns.push_back(static_cast<double>(rewards.size()));
      rlscope::progress("iteration", static_cast<std::uint64_t>(it + 1));
      if (opt.verbose) {
        std::cout << "iteration " << it + 1 << "/" << opt.iterations << ": return "
                  << rewards.size() << '\n';
      }
    }
  }
  const double seconds = double(nowNs() - t0) * 1e-9;

  double all = 0;
  for (double r : returns) all += r;
  all /= double(returns.size());
  const std::size_t lastN = std::min<std::size_t>(10, returns.size());
  double last = 0;
  for (std::size_t i = returns.size() - lastN; i < returns.size(); ++i) last += returns[i];
  last /= double(lastN);

  char line[256];
  std::snprintf(line, sizeof line,
                "cpu_training: %d iterations, seed %llu: average return %.2f (last %zu: %.2f), "
                "%lld environment steps in %.3f s",
                opt.iterations, static_cast<unsigned long long>(opt.seed), all, lastN, last,
                static_cast<long long>(envSteps), seconds);
  std::cout << line << '\n';

  if (opt.trace) {
    nlohmann::json info = {{"generator", "rlscope_sample_cpu_training"},
                           {"clock", "steady_clock"},
                           {"iterations", opt.iterations},
                           {"seed", opt.seed},
                           {"hidden", opt.hidden},
                           {"environment_steps", envSteps},
                           {"average_return", all}};
    if (!writeTrace(opt.traceOut, rec, pid, tid, info)) {
      std::cerr << "rlscope_sample_cpu_training: error: cannot write trace " << opt.traceOut
                << '\n';
      return 1;
    }
    std::cout << "cpu_training: trace with " << rec.records().size() + 2 << " events written to "
              << opt.traceOut << '\n';
  }
  return 0;
}
