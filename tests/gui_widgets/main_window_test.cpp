// The main window (gui/app/main_window.h): a trace opens into the timeline; a corrupt file is
// reported in a message box and leaves the window as it was.
#include "main_window.h"

#include <gtest/gtest.h>

#include <QMessageBox>
#include <QTimer>
#include <filesystem>
#include <fstream>

#include "qt_app.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"
#include "timeline_view.h"

namespace rlscope::gui {
namespace {

TEST(MainWindow, OpensATrace) {
  testing::qtApp();
  testing::TempDir dir;
  const auto path = dir / "empty.sqlite";
  {
    trace::TraceWriter w(path);
    w.commit();
  }
  MainWindow window;
  EXPECT_TRUE(window.openFile(QString::fromStdString(path.string())));
  EXPECT_TRUE(window.windowTitle().startsWith("empty.sqlite"));
}

TEST(MainWindow, ReportsACorruptFileInAMessageBox) {
  testing::qtApp();
  testing::TempDir dir;
  const auto garbage = dir / "garbage.sqlite";
  std::ofstream(garbage) << "SQLite format 3 but not really";
  MainWindow window;
  QString shown;
  // The message box is modal: read and close it from the event loop it runs.
  QTimer::singleShot(0, [&] {
    if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
      shown = box->text();
      box->accept();
    }
  });
  EXPECT_FALSE(window.openFile(QString::fromStdString(garbage.string())));
  EXPECT_TRUE(shown.contains("garbage.sqlite")) << shown.toStdString();
  EXPECT_EQ(window.windowTitle(), "rlscope");
  EXPECT_TRUE(window.timelineView()->timelineLayout().rows().empty());
}

}  // namespace
}  // namespace rlscope::gui
