// A synthetic trace shaped like an RL training run under rlscope-prof, for the timeline's
// benchmarks: a main thread running steps (inference, simulation, backprop) of Python, Backend
// and Simulator intervals, with a CUDA call nested in each Backend call and its kernel, copy or
// memset queued on one of two streams; a prefetching worker thread; idle gaps between steps,
// log-uniform from 1 µs to 50 ms, so that at every zoom level some gaps are a pixel wide or more.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace rlscope::bench {

// Writes the trace of about `events` rows at `path`; returns the number of rows.
std::int64_t writeSyntheticRlTrace(const std::filesystem::path& path, std::int64_t events);

// The trace written on first use into a temporary directory, removed with the object.
class SyntheticRlTrace {
 public:
  SyntheticRlTrace(std::string name, std::int64_t events);
  ~SyntheticRlTrace();
  SyntheticRlTrace(const SyntheticRlTrace&) = delete;
  SyntheticRlTrace& operator=(const SyntheticRlTrace&) = delete;

  const std::filesystem::path& path();
  std::int64_t rows();

 private:
  std::string name_;
  std::int64_t events_;
  std::filesystem::path dir_, path_;
  std::int64_t rows_ = 0;
};

}  // namespace rlscope::bench
