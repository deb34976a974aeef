#include "rlscope/gui_widgets/main_window.h"

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
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QVBoxLayout>
#include <utility>

#include "rlscope/gui_model/duration_text.h"
#include "rlscope/gui_model/event_details.h"
#include "rlscope/gui_model/event_search.h"
#include "rlscope/gui_widgets/analysis_panel.h"
#include "rlscope/gui_widgets/details_panel.h"
#include "rlscope/gui_widgets/search_bar.h"
#include "trace_loader.h"

namespace rlscope::gui {

namespace {
const QString kRecentKey = QStringLiteral("recentFiles");
constexpr int kProgressSteps = 1000;
const QString kNavigationHelp = QStringLiteral(
    "Wheel: zoom at the pointer (over the labels, or with Shift: scroll the rows)\n"
    "Drag: pan\n"
    "W / S: zoom in / out    A / D: pan    F: fit the whole trace\n"
    "Click: select an event (its details; a merged block: its longest event)\n"
    "Double-click: follow a CUDA call to its GPU work, or GPU work to its call\n"
    "Left / Right: the event before / after the selected one on its track\n"
    "Shift+drag: select a time range (its duration; the analysis follows it)\n"
    "Z: zoom to the range    Escape: clear the selection and the range\n"
    "Click a process, thread or GPU header: collapse or expand it\n"
    "Ctrl+F: search; Enter / Shift+Enter: next / previous match");

// Links drawn and listed for one selection: a graph launch or a copy-heavy call can have thousands.
constexpr std::size_t kMaxLinks = 1000;

QString text(const std::string& s) {
  return QString::fromStdString(s);
}

QString counted(std::size_t n, const char* one, const char* many) {
  return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

// "train.sqlite: 1234 events, 1 process, 2 GPUs": what the status bar says of a trace.
QString summaryOf(const QString& name, const TimelineData& timeline) {
  QString summary =
      QStringLiteral("%1: %2, %3, %4")
          .arg(name, counted(static_cast<std::size_t>(timeline.itemCount), "event", "events"),
               counted(timeline.processes.size(), "process", "processes"),
               counted(timeline.devices.size(), "GPU", "GPUs"));
  if (timeline.damagedRows > 0) {
    summary += QStringLiteral(" (%1 damaged rows left out)").arg(timeline.damagedRows);
  }
  return summary;
}
}  // namespace

// What the window computes from the document for the user's questions.
struct MainWindow::Model {
  explicit Model(const TraceDocument& doc) : details(doc.tracePath) {}
  EventDetailsReader details;  // its own read-only connection, opened on the first click
  std::shared_ptr<const EventSearch> search;  // shared with the view's highlight
  std::optional<std::size_t> currentMatch;
};

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      view_(new TimelineView(this)),
      search_(new SearchBar(this)),
      details_(new DetailsPanel(this)),
      analysis_(new AnalysisPanel(this)),
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
  auto* analysisDock = new QDockWidget(tr("Analysis"), this);
  analysisDock->setObjectName(QStringLiteral("analysis"));
  // Scrolled, so that the panel's tables and chart never force the window taller than asked.
  auto* analysisScroll = new QScrollArea(analysisDock);
  analysisScroll->setWidgetResizable(true);
  analysisScroll->setFrameShape(QFrame::NoFrame);
  analysis_->setMinimumHeight(440);  // below that it scrolls rather than squeezing the chart
  analysisScroll->setWidget(analysis_);
  analysisDock->setWidget(analysisScroll);
  addDockWidget(Qt::BottomDockWidgetArea, analysisDock);

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
  // The details need room for a kernel's names and a copy's sizes; the analysis for its bars.
  resizeDocks({detailsDock}, {380}, Qt::Horizontal);
  resizeDocks({analysisDock}, {360}, Qt::Vertical);
  viewMenu->addAction(tr("Zoom to the selected &range"), this, [this] {
    if (const auto range = view_->range()) {
      view_->showWindow(static_cast<double>(range->start), static_cast<double>(range->end));
    }
  });
  viewMenu->addAction(tr("Analyze the &whole run"), this, [this] {
    view_->setRange(std::nullopt);
    view_->select(std::nullopt);
  });
  viewMenu->addSeparator();
  viewMenu->addAction(detailsDock->toggleViewAction());
  viewMenu->addAction(analysisDock->toggleViewAction());
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keys and mouse…"), QKeySequence::HelpContents, this, [this] {
    auto* box = new QMessageBox(QMessageBox::Information, tr("Keys and mouse"), kNavigationHelp,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });

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
  connect(view_, &TimelineView::rangeSelected, this, &MainWindow::analyzeSelection);
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
  model_ = doc_ ? std::make_unique<Model>(*doc_) : nullptr;
  view_->setData(TraceDocument::timelineOf(doc_));
  view_->setFocus();  // the navigation keys work at once
  details_->clear();
  analysis_->setTrace(doc_ ? QString::fromStdString(doc_->tracePath.string()) : QString());
  const TimelineData* timeline = view_->data();
  const QString name =
      doc_ ? QFileInfo(QString::fromStdString(doc_->source.string())).fileName() : QString();
  setWindowTitle(doc_ ? tr("%1 — rlscope").arg(name) : tr("rlscope"));
  status_->setText(timeline ? summaryOf(name, *timeline) : QString());
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
  status_->setText(tr("Range %1 – %2: %3")
                       .arg(QString::fromStdString(durationText(
                           static_cast<double>(range->start - view_->data()->span.start))))
                       .arg(QString::fromStdString(durationText(
                           static_cast<double>(range->end - view_->data()->span.start))))
                       .arg(QString::fromStdString(
                           durationText(static_cast<double>(range->end - range->start)))));
}

void MainWindow::analyzeSelection() {
  if (const auto range = view_->range()) {
    analysis_->setScope(AnalysisScope::range(range->start, range->end));
  } else if (const auto selected = view_->selection();
             selected && selected->item().source == ItemSource::kOperation &&
             selected->item().rowId != 0) {
    analysis_->setScope(AnalysisScope::operation(selected->item().rowId));
  } else {
    analysis_->setScope(AnalysisScope::wholeRun());
  }
}

void MainWindow::onSelectionChanged() {
  const auto selected = view_->selection();
  // The analysis follows an operation, or the whole run once nothing is selected; other events
  // keep what it shows. A range takes precedence.
  if (!view_->range() && (!selected || selected->item().source == ItemSource::kOperation)) {
    analyzeSelection();
  }
  if (!selected || !doc_) {
    details_->clear();
    return;
  }
  if (model_->search) model_->currentMatch = model_->search->indexOf(*selected);
  if (model_->search && model_->currentMatch) {
    search_->showResult(static_cast<int>(*model_->currentMatch) + 1,
                        static_cast<int>(model_->search->count()));
  }
  std::vector<ItemLocation> links =
      doc_->links.linked(*selected->track, selected->index, kMaxLinks);
  const std::size_t linkCount = doc_->links.linkedCount(*selected->track, selected->index);
  const EventDetails d = model_->details.read(doc_->timeline, *selected->track, selected->item());
  std::vector<DetailsPanel::Field> fields;
  fields.reserve(d.fields.size() + 2);
  for (const DetailField& f : d.fields) fields.emplace_back(text(f.label), text(f.value));
  if (!d.problem.empty()) fields.emplace_back(tr("Problem"), text(d.problem));
  if (linkCount > links.size()) {
    fields.emplace_back(tr("Links"),
                        tr("%1 (the first %2 shown)").arg(linkCount).arg(links.size()));
  }
  std::vector<QString> linkTexts;
  linkTexts.reserve(links.size());
  for (const ItemLocation& link : links) {
    linkTexts.push_back(
        tr("%1  (%2, %3)")
            .arg(QString::fromUtf8(doc_->timeline.name(link.item())), text(link.track->label),
                 text(durationText(static_cast<double>(link.item().end - link.item().start)))));
  }
  details_->showEvent(text(d.title), fields, linkTexts);
  view_->setLinks(std::move(links));
}

void MainWindow::followLink(int index) {
  const std::vector<ItemLocation>& links = view_->links();
  if (index < 0 || static_cast<std::size_t>(index) >= links.size()) return;
  view_->select(links[static_cast<std::size_t>(index)], /*reveal=*/true);
}

void MainWindow::onSearchChanged() {
  if (!model_) return;
  model_->search.reset();
  model_->currentMatch.reset();
  view_->setHighlight(nullptr);
  const SearchRequest request = search_->request();
  if (request.pattern.isEmpty()) {
    search_->showResult(0, 0);
    return;
  }
  SearchQuery query;
  query.text = request.pattern.toStdString();
  query.mode = request.regex ? SearchQuery::Mode::kRegex : SearchQuery::Mode::kSubstring;
  query.caseSensitive = request.caseSensitive;
  try {
    auto search = std::make_shared<const EventSearch>(doc_->timeline, query);
    model_->search = search;
    if (const auto selected = view_->selection()) model_->currentMatch = search->indexOf(*selected);
    view_->setHighlight([search](const Track& track, std::size_t first, std::size_t count) {
      return search->matchesAny(track, first, count);
    });
    search_->showResult(model_->currentMatch ? static_cast<int>(*model_->currentMatch) + 1 : 0,
                        static_cast<int>(search->count()));
  } catch (const InvalidSearch& e) {
    search_->showError(QString::fromUtf8(e.what()));
  }
}

std::size_t MainWindow::findAndSelect(const QString& text) {
  search_->setRequest({text, false, false});
  onSearchChanged();
  if (!model_ || !model_->search || model_->search->empty()) return 0;
  model_->currentMatch.reset();
  view_->select(model_->search->match(0), /*reveal=*/true);
  return model_->search->count();
}

void MainWindow::goToMatch(bool forward) {
  if (!model_ || !model_->search || model_->search->empty()) return;
  const EventSearch& search = *model_->search;
  std::optional<std::size_t> i;
  if (model_->currentMatch) {
    i = forward ? search.nextAfter(*model_->currentMatch)
                : search.previousBefore(*model_->currentMatch);
  } else {
    // From the middle of the window: the match the user is looking towards.
    const auto t = static_cast<TimeNs>(view_->viewState().start() + view_->viewState().span() / 2);
    i = forward ? search.next(t) : search.previous(t);
  }
  if (!i) return;
  model_->currentMatch = i;
  view_->select(search.match(*i), /*reveal=*/true);
}

}  // namespace rlscope::gui
