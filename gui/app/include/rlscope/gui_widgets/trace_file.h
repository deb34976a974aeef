// Opening a file for the viewer: an rlscope trace is read as it is; a Kineto JSON trace or an
// Nsight Systems SQLite export is first imported (rlscope_import) into a temporary trace. The
// result is a TraceDocument: the timeline, the links between its CUDA calls and their GPU work,
// and that temporary trace, kept for as long as the document is shown: the details view and the
// analysis panel read it again after the timeline is loaded.
#pragma once

#include <QTemporaryDir>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "rlscope/gui_model/correlation_index.h"
#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

struct TraceDocument {
  std::filesystem::path source;     // the file the user opened
  std::filesystem::path tracePath;  // the rlscope trace read: `source`, or its import
  bool imported = false;
  TimelineData timeline;
  CorrelationIndex links;                    // of `timeline`, built with it, off the GUI thread
  std::unique_ptr<QTemporaryDir> importDir;  // holds an imported trace; removed with the document

  // The timeline, sharing the document's lifetime (what TimelineView::setData takes).
  static std::shared_ptr<const TimelineData> timelineOf(std::shared_ptr<const TraceDocument> doc);
};

// What opening reports: a stage ("Importing a Kineto JSON trace", "Reading the trace") and the
// fraction done (negative while it cannot tell). Returning false cancels: the import of a foreign
// file is not interrupted, but nothing is read after it.
using OpenProgress = std::function<bool(const std::string& stage, double fraction)>;

// Throws trace::TraceError (or another std::exception) with one clear line for a missing,
// unrecognised or corrupt file, and LoadCancelled when `progress` returns false.
std::shared_ptr<const TraceDocument> openTraceFile(const std::filesystem::path& path,
                                                   const OpenProgress& progress = {});

}  // namespace rlscope::gui
