// `rlscope export --format chrome`: writes a trace as Chrome Trace Event JSON in Kineto's
// conventions (GPU = process, stream = thread, ac2g flows), which Perfetto UI and chrome://tracing
// load and which `rlscope import` reads back without losing an event.
#pragma once

#include <cstdint>
#include <filesystem>

#include "rlscope/trace/reader.h"

namespace rlscope::exporter {

struct ExportStats {
  std::uint64_t events = 0;  // trace events written (excluding metadata and flows)
  std::uint64_t flows = 0;   // flow start/end pairs written
};

// Writes atomically: on error nothing is left at `output`.
ExportStats exportChrome(trace::TraceReader& reader, const std::filesystem::path& output);

}  // namespace rlscope::exporter
