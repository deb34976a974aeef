// The main window: the search bar over the timeline, the selected event's details in a dock on
// the right, the analysis panel (of the selected range, else the selected operation, else the
// whole run) in a dock below; File ▸ Open, Open Recent and drag and drop.
// Traces load on a worker thread (trace_loader.h) with progress and Cancel; the window keeps the
// trace it shows until the new one is read. A file that cannot be opened is reported in a message
// box. The window ties the parts together: what the timeline selects, the details, links and
// search results that the model computes (event_details.h, correlation_index.h, event_search.h).
#pragma once

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "rlscope/gui_widgets/timeline_view.h"
#include "rlscope/gui_widgets/trace_file.h"

class QLabel;
class QMenu;
class QProgressDialog;

namespace rlscope::gui {

class AnalysisPanel;
class DetailsPanel;
class SearchBar;
class TraceLoader;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 10;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts opening a trace; traceOpened or openFailed tells how it went (a failure is also shown
  // in a message box).
  void openFile(const QString& path);
  // Shows a trace already loaded (as the --screenshot path does, which reports errors itself).
  void showDocument(std::shared_ptr<const TraceDocument> doc);
  const TraceDocument* document() const { return doc_.get(); }

  TimelineView* timelineView() const { return view_; }
  DetailsPanel* detailsPanel() const { return details_; }
  SearchBar* searchBar() const { return search_; }
  AnalysisPanel* analysisPanel() const { return analysis_; }
  // Searches event names for `text` (substring, any case), as the search bar does, and selects the
  // first match in time. Returns the number of matches.
  std::size_t findAndSelect(const QString& text);
  // Most recent first; kept in QSettings.
  QStringList recentFiles() const;

 signals:
  void traceOpened(const QString& path);
  void openFailed(const QString& path, const QString& message);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void chooseFile();
  void onLoaded(std::shared_ptr<const TraceDocument> doc, const QString& path);
  void onFailed(const QString& path, const QString& message);
  void onProgress(const QString& stage, double fraction);
  void endProgress();
  void rememberRecent(const QString& path, bool add);
  void fillRecentMenu();
  void onSelectionChanged();
  void followLink(int index);
  void onSearchChanged();
  void goToMatch(bool forward);
  void onRangeChanged();
  // The analysis follows the selection: a selected range, else a selected operation, else the
  // whole run.
  void analyzeSelection();

  std::shared_ptr<const TraceDocument> doc_;
  TimelineView* view_;
  SearchBar* search_;
  DetailsPanel* details_;
  AnalysisPanel* analysis_;
  TraceLoader* loader_;
  QProgressDialog* progress_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* status_;
  struct Model;  // what is computed from the document: links and search
  std::unique_ptr<Model> model_;
};

}  // namespace rlscope::gui
