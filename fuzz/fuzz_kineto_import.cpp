// Kineto JSON import of arbitrary bytes: an error is fine (the command prints it as one line);
// a crash, hang, leak or sanitizer report is a bug.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>

#include "rlscope/import/input_file.h"
#include "rlscope/import/kineto_importer.h"

namespace {

const std::filesystem::path& output() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("rlscope-fuzz-kineto-" + std::to_string(::getpid()) + ".sqlite");
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  text.resize(size + rlscope::import::kJsonPadding, ' ');  // simdjson reads past the end
  rlscope::import::ImportOptions options;
  options.kinetoChunkBytes = 256;  // small inputs still take the chunked, two-thread path
  try {
    rlscope::trace::TraceWriter writer(output());
    rlscope::import::ImportStats stats;
    rlscope::import::importKineto(std::string_view(text.data(), size), writer, options, stats);
    writer.commit();
  } catch (const std::exception&) {
  }
  std::filesystem::remove(output());
  return 0;
}
