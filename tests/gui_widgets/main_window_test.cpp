// The main window (rlscope/gui_widgets/main_window.h): a trace opens on the worker thread into the
// timeline and joins the recent files; a corrupt file is reported in a message box and leaves the
// window as it was; a file dropped on the window opens.
#include "rlscope/gui_widgets/main_window.h"

#include <gtest/gtest.h>

#include <QDropEvent>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QUrl>
#include <filesystem>
#include <fstream>

#include "qt_app.h"
#include "rlscope/gui_widgets/timeline_view.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

constexpr int kWaitMs = 20'000;

// The recent files go to an INI file in a temporary directory, not the user's settings.
class MainWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::qtApp();
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope,
                       QString::fromStdString(settings_.path().string()));
    QCoreApplication::setOrganizationName(QStringLiteral("rlscope-tests"));
    QSettings().clear();
  }

  std::filesystem::path emptyTrace(const std::string& name) {
    const auto path = dir_ / name;
    trace::TraceWriter w(path);
    w.commit();
    return path;
  }

  testing::TempDir settings_;
  testing::TempDir dir_;
};

QString qpath(const std::filesystem::path& p) {
  return QString::fromStdString(p.string());
}

TEST_F(MainWindowTest, OpensATraceAndRemembersIt) {
  const auto path = emptyTrace("empty.sqlite");
  MainWindow window;
  QSignalSpy opened(&window, &MainWindow::traceOpened);
  window.openFile(qpath(path));
  ASSERT_TRUE(opened.wait(kWaitMs));
  EXPECT_TRUE(window.windowTitle().startsWith("empty.sqlite"));
  ASSERT_NE(window.document(), nullptr);
  EXPECT_EQ(window.document()->tracePath, path);
  ASSERT_FALSE(window.recentFiles().empty());
  EXPECT_EQ(window.recentFiles().front(), qpath(std::filesystem::absolute(path)));

  // A second trace goes first; opening the first again moves it back to the front, once.
  const auto other = emptyTrace("other.sqlite");
  window.openFile(qpath(other));
  ASSERT_TRUE(opened.wait(kWaitMs));
  window.openFile(qpath(path));
  ASSERT_TRUE(opened.wait(kWaitMs));
  EXPECT_EQ(window.recentFiles(), QStringList({qpath(std::filesystem::absolute(path)),
                                               qpath(std::filesystem::absolute(other))}));
}

TEST_F(MainWindowTest, ReportsACorruptFileInAMessageBox) {
  const auto garbage = dir_ / "garbage.sqlite";
  std::ofstream(garbage) << "SQLite format 3 but not really";
  MainWindow window;
  QSignalSpy failed(&window, &MainWindow::openFailed);
  window.openFile(qpath(garbage));
  ASSERT_TRUE(failed.wait(kWaitMs));
  auto* box = window.findChild<QMessageBox*>();
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->text().contains("garbage.sqlite")) << box->text().toStdString();
  box->accept();
  EXPECT_EQ(window.windowTitle(), "rlscope");
  EXPECT_TRUE(window.timelineView()->timelineLayout().rows().empty());
  EXPECT_TRUE(window.recentFiles().empty());
}

TEST_F(MainWindowTest, KeepsTheTraceShownWhenTheNextFails) {
  const auto path = emptyTrace("good.sqlite");
  MainWindow window;
  QSignalSpy opened(&window, &MainWindow::traceOpened);
  QSignalSpy failed(&window, &MainWindow::openFailed);
  window.openFile(qpath(path));
  ASSERT_TRUE(opened.wait(kWaitMs));
  window.openFile(qpath(dir_ / "missing.sqlite"));
  ASSERT_TRUE(failed.wait(kWaitMs));
  EXPECT_TRUE(window.windowTitle().startsWith("good.sqlite"));
  ASSERT_NE(window.document(), nullptr);
  EXPECT_EQ(window.document()->tracePath, path);
}

TEST_F(MainWindowTest, OpensADroppedFile) {
  const auto path = emptyTrace("dropped.sqlite");
  MainWindow window;
  QSignalSpy opened(&window, &MainWindow::traceOpened);
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(qpath(path))});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&window, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&window, &drop);
  ASSERT_TRUE(opened.wait(kWaitMs));
  EXPECT_TRUE(window.windowTitle().startsWith("dropped.sqlite"));

  // Two files at once, or a URL that is not a local file, are not taken.
  QMimeData two;
  two.setUrls({QUrl::fromLocalFile(qpath(path)), QUrl::fromLocalFile(qpath(path))});
  QDragEnterEvent enterTwo(QPoint(10, 10), Qt::CopyAction, &two, Qt::LeftButton, Qt::NoModifier);
  enterTwo.setAccepted(false);
  QCoreApplication::sendEvent(&window, &enterTwo);
  EXPECT_FALSE(enterTwo.isAccepted());
}

}  // namespace
}  // namespace rlscope::gui
