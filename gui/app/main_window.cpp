#include "main_window.h"

#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressDialog>
#include <exception>
#include <utility>

#include "timeline_view.h"
#include "trace_file.h"

namespace rlscope::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), view_(new TimelineView(this)) {
  setCentralWidget(view_);
  setWindowTitle(tr("rlscope"));
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::chooseFile);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
}

bool MainWindow::openFile(const QString& path) {
  // The load runs here, on the GUI thread: its progress callback keeps the window alive and
  // offers Cancel, and the modal dialog keeps the user from starting a second load meanwhile.
  QProgressDialog progress(tr("Opening %1…").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 1000,
                           this);
  progress.setWindowModality(Qt::WindowModal);
  progress.setMinimumDuration(500);
  try {
    showTrace(openTraceFile(path.toStdString(),
                            [&](double fraction) {
                              progress.setValue(static_cast<int>(fraction * 1000));
                              return !progress.wasCanceled();
                            }),
              path);
    return true;
  } catch (const LoadCancelled&) {
    return false;  // the trace shown before stays
  } catch (const std::exception& e) {
    QMessageBox::critical(this, tr("Cannot open trace"),
                          tr("%1:\n%2").arg(path, QString::fromUtf8(e.what())));
    return false;
  }
}

void MainWindow::showTrace(std::shared_ptr<const TimelineData> timeline, const QString& path) {
  view_->setData(std::move(timeline));
  view_->setFocus();  // the navigation keys work at once
  setWindowTitle(tr("%1 — rlscope").arg(QFileInfo(path).fileName()));
}

void MainWindow::chooseFile() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open trace"), QString(),
                                   tr("Traces (*.sqlite *.json *.json.gz *.gz);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

}  // namespace rlscope::gui
