#include "trace_file.h"

#include <QTemporaryDir>

#include "importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/reader.h"

namespace rlscope::gui {

namespace {

std::shared_ptr<const TimelineData> load(const std::filesystem::path& trace,
                                         const LoadProgress& progress) {
  trace::TraceReader reader(trace);
  return std::make_shared<const TimelineData>(loadTimeline(reader, progress));
}

}  // namespace

std::shared_ptr<const TimelineData> openTraceFile(const std::filesystem::path& path,
                                                  const LoadProgress& progress) {
  if (import::detectFormat(path) == import::InputFormat::kRlscopeTrace) {
    return load(path, progress);
  }
  QTemporaryDir dir;  // removed, with the imported trace, when it goes out of scope
  if (!dir.isValid()) throw trace::TraceError("cannot create a temporary directory for the import");
  const std::filesystem::path imported = dir.filePath("imported.sqlite").toStdString();
  import::importFile(path, imported);
  return load(imported, progress);
}

}  // namespace rlscope::gui
