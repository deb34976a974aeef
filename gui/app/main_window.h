// The main window: the timeline as its central widget, File ▸ Open, and the trace's name in the
// title. A file that cannot be opened is reported in a message box; the window stays usable.
#pragma once

#include <QMainWindow>
#include <QString>
#include <memory>

namespace rlscope::gui {

class TimelineView;
struct TimelineData;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Opens a trace, telling the user why in a message box when it cannot. Returns success.
  bool openFile(const QString& path);
  // Shows a trace already loaded (as the --screenshot path does, which reports errors itself).
  void showTrace(std::shared_ptr<const TimelineData> timeline, const QString& path);
  TimelineView* timelineView() const { return view_; }

 private:
  void chooseFile();

  TimelineView* view_;
};

}  // namespace rlscope::gui
