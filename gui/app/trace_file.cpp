#include "rlscope/gui_widgets/trace_file.h"

#include <string_view>
#include <utility>

#include "rlscope/import/importer.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/reader.h"

namespace rlscope::gui {

std::shared_ptr<const TimelineData> TraceDocument::timelineOf(
    std::shared_ptr<const TraceDocument> doc) {
  if (!doc) return nullptr;
  const TimelineData* timeline = &doc->timeline;
  return {std::move(doc), timeline};  // aliasing: the timeline keeps its document alive
}

std::shared_ptr<const TraceDocument> openTraceFile(const std::filesystem::path& path,
                                                   const OpenProgress& progress) {
  auto report = [&](const std::string& stage, double fraction) {
    if (progress && !progress(stage, fraction)) throw LoadCancelled();
  };
  auto doc = std::make_shared<TraceDocument>();
  doc->source = path;
  doc->tracePath = path;
  const import::Format* format = import::detectFormat(path);  // nullptr: an rlscope trace
  if (format) {
    doc->importDir = std::make_unique<QTemporaryDir>();
    if (!doc->importDir->isValid()) {
      throw trace::TraceError("cannot create a temporary directory for the import");
    }
    doc->tracePath = doc->importDir->filePath("imported.sqlite").toStdString();
    doc->imported = true;
    const std::string stage = "Importing " + std::string(format->name);
    report(stage, -1);
    import::ImportOptions options;
    options.progress = [&](std::string_view line) {
      if (progress) progress(stage + ": " + std::string(line), -1);  // cannot stop an import
    };
    import::importFile(path, doc->tracePath, options);
  }
  report("Reading the trace", 0);
  trace::TraceReader reader(doc->tracePath);
  doc->timeline = loadTimeline(reader, [&](double fraction) {
    return !progress || progress("Reading the trace", fraction);
  });
  report("Linking CUDA calls to their GPU work", -1);
  doc->links = CorrelationIndex(doc->timeline);  // the timeline stays where it is: heap-allocated
  return doc;
}

}  // namespace rlscope::gui
