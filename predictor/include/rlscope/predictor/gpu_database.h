// The GPU database (predictor/data/gpus.json, docs/predictor.md): what the predictor and
// `rlscope occupancy` know about each GPU, every value with its source. Users extend or override
// it with their own file of the same format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlscope::predictor {

struct GpuSpec {
  std::string name;                  // "A100 SXM4 40GB"; names are matched case-insensitively
  std::vector<std::string> aliases;  // other names users or drivers call it
  std::string architecture;          // "Ampere"
  int ccMajor = 0, ccMinor = 0;      // compute capability
  int smCount = 0;
  double baseClockMhz = 0, boostClockMhz = 0;
  double memoryGB = 0;                // 1e9 bytes
  double memoryBandwidthGBs = 0;      // spec sheet DRAM bandwidth, 1e9 bytes/s
  double achievableBandwidthGBs = 0;  // measured streaming (copy/triad) bandwidth, 1e9 bytes/s
  // Peak dense throughput at the boost clock, TFLOP/s, an FMA counted as 2 operations. fp32 is
  // the CUDA cores; tf32, fp16 and bf16 the tensor cores (0: the GPU has none for that type).
  double fp32Tflops = 0, tf32Tflops = 0, fp16Tflops = 0, bf16Tflops = 0;
  int registersPerSm = 0, registersPerBlock = 0;
  int sharedMemPerSm =
      0;  // bytes, the largest carveout (cudaDevAttrMaxSharedMemoryPerMultiprocessor)
  int sharedMemPerBlock = 0;       // bytes, without opt-in (48 KiB)
  int sharedMemPerBlockOptin = 0;  // bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin (0: no opt-in)
  int maxThreadsPerSm = 0, maxThreadsPerBlock = 0, maxBlocksPerSm = 0;
  int warpSize = 32;
  std::int64_t l2CacheBytes = 0;
  // Where each value comes from: field name (as in the file) -> source id; "default" covers the
  // fields not named. Source ids are keys of GpuDatabase::sources().
  std::map<std::string, std::string> sources;
  std::string notes;  // how values were derived, caveats (optional)

  int computeCapability() const { return ccMajor * 10 + ccMinor; }
  std::string computeCapabilityText() const;
  // The source id of one field (its own, else "default"); empty when there is none.
  std::string sourceOf(std::string_view field) const;
};

class GpuDatabase {
 public:
  // The database built into rlscope (predictor/data/gpus.json), parsed once.
  static const GpuDatabase& builtIn();
  // Parses a database file's text; throws std::runtime_error with one line naming `origin` and
  // what is wrong (missing field, bad value, unknown source id, duplicate name).
  static GpuDatabase parse(std::string_view json, const std::string& origin);
  static GpuDatabase load(const std::filesystem::path& path);

  // Adds `other`'s GPUs and sources; a GPU with a name (or alias) already present replaces it.
  void merge(const GpuDatabase& other);

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, std::string>& sources() const { return sources_; }

  // By name or alias, case-insensitively, ignoring an "NVIDIA " prefix; nullptr when unknown.
  const GpuSpec* find(std::string_view name) const;
  // Like find, but throws std::runtime_error "unknown GPU 'X' (see `rlscope devices`)".
  const GpuSpec& get(std::string_view name) const;

 private:
  std::vector<GpuSpec> gpus_;
  std::map<std::string, std::string> sources_;  // id -> citation (URL and what it is)
};

}  // namespace rlscope::predictor
