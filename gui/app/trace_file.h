// Opening a file for the timeline: an rlscope trace is read as it is; a Kineto JSON trace or an
// Nsight Systems SQLite export is first imported (rlscope_import) into a temporary trace, which
// is removed once read.
#pragma once

#include <filesystem>
#include <memory>

#include "timeline_data.h"

namespace rlscope::gui {

// Throws trace::TraceError (or another std::exception) with one clear line for a missing,
// unrecognised or corrupt file, and LoadCancelled when `progress` returns false.
std::shared_ptr<const TimelineData> openTraceFile(const std::filesystem::path& path,
                                                  const LoadProgress& progress = {});

}  // namespace rlscope::gui
