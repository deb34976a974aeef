// The merge of an arbitrary part file: parts are the collector's own format, but a process that
// crashed, was killed mid-write or whose disk filled leaves whatever bytes it left, and
// rlscope-prof must still merge what is readable, or say why not, without crashing.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "rlscope/merge/part_merger.h"
#include "rlscope/part/format.h"

namespace {

struct Scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlscope-fuzz-part-" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  const std::filesystem::path part = scratch.dir / "1234-0.part";
  const std::filesystem::path trace = scratch.dir / "trace.sqlite";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  rlscope::merge::MergeOptions options;
  options.features = rlscope::part::kFeatureNvtx | rlscope::part::kFeaturePython |
                     rlscope::part::kFeatureCudaApi | rlscope::part::kFeatureGpuActivity;
  try {
    rlscope::merge::mergeParts(scratch.dir, trace, options);
  } catch (const std::exception&) {
  }
  std::filesystem::remove(trace);
  return 0;
}
