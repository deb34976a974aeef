#include "main_window.h"

#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>
#include <QVBoxLayout>
#include <utility>

#include "details_panel.h"
#include "search_bar.h"
#include "trace_loader.h"

namespace rlscope::gui {

namespace {
const QString kRecentKey = QStringLiteral("recentFiles");
constexpr int kProgressSteps = 1000;
}  // namespace

struct MainWindow::Model {};

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      view_(new TimelineView(this)),
      search_(new SearchBar(this)),
      details_(new DetailsPanel(this)),
      loader_(new TraceLoader(this)),
      status_(new QLabel(this)) {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(search_);
  layout->addWidget(view_, 1);
  setCentralWidget(central);
  setWindowTitle(tr("rlscope"));
  setAcceptDrops(true);
  statusBar()->addWidget(status_, 1);

  auto* detailsDock = new QDockWidget(tr("Details"), this);
  detailsDock->setObjectName(QStringLiteral("details"));
  detailsDock->setWidget(details_);
  addDockWidget(Qt::RightDockWidgetArea, detailsDock);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::chooseFile);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu->addAction(tr("&Find…"), QKeySequence::Find, search_, &SearchBar::focusPattern);
  viewMenu->addAction(tr("&Fit the whole trace"), view_, &TimelineView::fit);
  viewMenu->addSeparator();
  viewMenu->addAction(detailsDock->toggleViewAction());

  connect(loader_, &TraceLoader::progress, this, &MainWindow::onProgress);
  connect(loader_, &TraceLoader::loaded, this, &MainWindow::onLoaded);
  connect(loader_, &TraceLoader::failed, this, &MainWindow::onFailed);
  connect(loader_, &TraceLoader::cancelled, this, [this](const QString& path) {
    endProgress();
    status_->setText(tr("Opening %1 was cancelled").arg(path));
  });
  connect(view_, &TimelineView::selectionChanged, this, &MainWindow::onSelectionChanged);
  connect(view_, &TimelineView::itemActivated, this, [this] { followLink(0); });
  connect(view_, &TimelineView::rangeChanged, this, &MainWindow::onRangeChanged);
  connect(details_, &DetailsPanel::linkActivated, this, &MainWindow::followLink);
  connect(search_, &SearchBar::changed, this, &MainWindow::onSearchChanged);
  connect(search_, &SearchBar::next, this, [this] { goToMatch(true); });
  connect(search_, &SearchBar::previous, this, [this] { goToMatch(false); });
}

MainWindow::~MainWindow() = default;

void MainWindow::openFile(const QString& path) {
  status_->setText(tr("Opening %1…").arg(path));
  loader_->load(path);
}

void MainWindow::onProgress(const QString& stage, double fraction) {
  if (!progress_) {
    progress_ = new QProgressDialog(this);
    progress_->setWindowTitle(tr("Opening a trace"));
    progress_->setRange(0, kProgressSteps);
    progress_->setMinimumDuration(400);
    progress_->setWindowModality(Qt::WindowModal);
    connect(progress_, &QProgressDialog::canceled, loader_, &TraceLoader::cancel);
  }
  progress_->setLabelText(stage);
  // A busy indicator while the stage cannot tell how far it is.
  progress_->setMaximum(fraction < 0 ? 0 : kProgressSteps);
  if (fraction >= 0) progress_->setValue(static_cast<int>(fraction * kProgressSteps));
}

void MainWindow::endProgress() {
  if (!progress_) return;
  progress_->disconnect(loader_);
  progress_->deleteLater();
  progress_ = nullptr;
}

void MainWindow::onLoaded(std::shared_ptr<const TraceDocument> doc, const QString& path) {
  endProgress();
  showDocument(std::move(doc));
  rememberRecent(path, true);
  emit traceOpened(path);
}

void MainWindow::onFailed(const QString& path, const QString& message) {
  endProgress();
  status_->setText(tr("Cannot open %1").arg(path));
  if (!QFileInfo::exists(path)) rememberRecent(path, false);
  // Not exec(): the window (and a test driving it) keeps running while the box is up.
  auto* box = new QMessageBox(QMessageBox::Critical, tr("Cannot open trace"),
                              tr("%1:\n%2").arg(path, message), QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit openFailed(path, message);
}

void MainWindow::showDocument(std::shared_ptr<const TraceDocument> doc) {
  doc_ = std::move(doc);
  model_ = std::make_unique<Model>();
  view_->setData(TraceDocument::timelineOf(doc_));
  view_->setFocus();  // the navigation keys work at once
  details_->clear();
  const TimelineData* timeline = view_->data();
  const QString name = doc_ ? QFileInfo(QString::fromStdString(doc_->source.string())).fileName()
                            : QString();
  setWindowTitle(doc_ ? tr("%1 — rlscope").arg(name) : tr("rlscope"));
  status_->setText(timeline ? tr("%1: %2 events, %3 processes, %4 GPUs%5")
                              .arg(name)
                              .arg(timeline->itemCount)
                              .arg(timeline->processes.size())
                              .arg(timeline->devices.size())
                              .arg(timeline->damagedRows > 0
                                       ? tr(" (%1 damaged rows left out)").arg(timeline->damagedRows)
                                       : QString())
                        : QString());
  onSearchChanged();
}

void MainWindow::chooseFile() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open trace"), QString(),
                                   tr("Traces (*.sqlite *.json *.json.gz *.gz);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::rememberRecent(const QString& path, bool add) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList files = recentFiles();
  files.removeAll(absolute);
  if (add) files.prepend(absolute);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  QSettings().setValue(kRecentKey, files);
}

void MainWindow::fillRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recentFiles();
  for (const QString& path : files) {
    recentMenu_->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") + path, this,
                           [this, path] { openFile(path); });
  }
  if (files.isEmpty()) recentMenu_->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() != 1 || !urls.front().isLocalFile()) return;
  event->acceptProposedAction();
  openFile(urls.front().toLocalFile());
}

void MainWindow::onRangeChanged() {
  const auto range = view_->range();
  if (!range) return;
  status_->setText(
      tr("Range %1 – %2: %3")
          .arg(QString::fromStdString(formatDuration(
              static_cast<double>(range->start - view_->data()->span.start))))
          .arg(QString::fromStdString(
              formatDuration(static_cast<double>(range->end - view_->data()->span.start))))
          .arg(QString::fromStdString(formatDuration(static_cast<double>(range->end - range->start)))));
}

void MainWindow::onSelectionChanged() {}
void MainWindow::followLink(int) {}
void MainWindow::onSearchChanged() {}
void MainWindow::goToMatch(bool) {}

}  // namespace rlscope::gui
