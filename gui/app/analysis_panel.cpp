#include "rlscope/gui_widgets/analysis_panel.h"

#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMetaObject>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "rlscope/gui_analysis/analysis_runner.h"
#include "rlscope/gui_widgets/analysis_tables.h"
#include "rlscope/gui_widgets/breakdown_chart.h"
#include "rlscope/gui_widgets/rank_chart.h"

namespace rlscope::gui {

namespace {

const QString kNoGpu = QStringLiteral("— none —");

QString duration(double ns) {
  return QString::fromStdString(durationText(ns));
}

QTableView* makeTable(QAbstractTableModel* model, int sortColumn, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setModel(model);
  view->setSortingEnabled(true);
  view->sortByColumn(sortColumn, Qt::DescendingOrder);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setAlternatingRowColors(true);
  view->verticalHeader()->hide();
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < model->columnCount(); ++c)
    view->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  return view;
}

bool sameRequest(const AnalysisRequest& a, const AnalysisRequest& b) {
  return a.tracePath == b.tracePath && a.scope == b.scope && a.whatIfGpu == b.whatIfGpu &&
         a.correct == b.correct;
}

QString summaryOf(const AnalysisResult& r) {
  const auto& t = r.totals;
  QString text =
      QStringLiteral("%1 of %2 in %3 rows · GPU-bound %4 % (GPU %5, CPU+GPU %6)")
          .arg(duration(static_cast<double>(t.time)), duration(static_cast<double>(r.scopeNs)))
          .arg(r.operations.size())
          .arg(100.0 * t.gpuBoundShare(), 0, 'f', 1)
          .arg(duration(static_cast<double>(t.gpu)), duration(static_cast<double>(t.cpuGpu)));
  if (t.waiting > 0)
    text += QStringLiteral(" · waiting %1 (blocked, not CPU time)")
                .arg(duration(static_cast<double>(t.waiting)));
  if (r.concurrentNs > 0)
    text += QStringLiteral(" · %1 of its span went to other threads' operations")
                .arg(duration(static_cast<double>(r.concurrentNs)));
  text +=
      QStringLiteral(" · %1 intervals analyzed in %2 s").arg(r.events).arg(r.seconds, 0, 'f', 2);
  return text;
}

QString correctionOf(const AnalysisResult& r) {
  const auto& c = r.correction;
  if (!c.corrected)
    return c.notes.empty()
               ? QStringLiteral("Corrected: no (the trace holds no calibration)")
               : QStringLiteral("Corrected: no (%1)").arg(QString::fromStdString(c.notes.front()));
  QString text =
      QStringLiteral(
          "Corrected: yes (calibration %1): %2 of profiler overhead removed from the bars")
          .arg(QString::fromStdString(c.calibrationOrigin), duration(c.overheadRemovedNs));
  // By name, the analyzer swept the whole run: its totals would not be the scope's.
  bool byName = r.scope.kind == AnalysisScope::Kind::kOperation && r.scope.operationId == 0;
  if (!byName && c.uncorrectedTotalNs > 0) {
    text += QStringLiteral("; %1 as profiled, %2 corrected")
                .arg(duration(c.uncorrectedTotalNs), duration(c.correctedTotalNs));
    if (c.biasPct)
      text += QStringLiteral(" (%1, against the uninstrumented run)")
                  .arg(QString::fromStdString(c.bias));
  }
  return text;
}

}  // namespace

AnalysisPanel::AnalysisPanel(QWidget* parent) : QWidget(parent) {
  header_ = new QLabel(tr("No trace"), this);
  QFont bold = header_->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.15);
  header_->setFont(bold);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  correction_ = new QLabel(this);
  correction_->setWordWrap(true);
  header_->setObjectName(QStringLiteral("analysisHeader"));
  status_->setObjectName(QStringLiteral("analysisStatus"));
  correction_->setObjectName(QStringLiteral("analysisCorrection"));

  chart_ = new BreakdownChart(this);
  auto* chartScroll = new QScrollArea(this);
  chartScroll->setWidget(chart_);
  chartScroll->setWidgetResizable(true);
  chartScroll->setFrameShape(QFrame::NoFrame);

  categories_ = new CategoryTableModel(this);
  categoryView_ = makeTable(categories_, CategoryTableModel::kTime, this);

  auto* whatIfBox = new QWidget(this);
  gpuPicker_ = new QComboBox(whatIfBox);
  gpuPicker_->addItem(kNoGpu);
  for (const auto& gpu : whatIfGpus()) gpuPicker_->addItem(QString::fromStdString(gpu));
  whatIfSummary_ = new QLabel(whatIfBox);
  whatIfSummary_->setWordWrap(true);
  whatIfSummary_->setTextFormat(Qt::RichText);
  whatIf_ = new WhatIfTableModel(this);
  whatIfView_ = makeTable(whatIf_, WhatIfTableModel::kTime, whatIfBox);
  auto* pickerRow = new QHBoxLayout;
  pickerRow->addWidget(new QLabel(tr("What-if on"), whatIfBox));
  pickerRow->addWidget(gpuPicker_, 1);
  auto* whatIfLayout = new QVBoxLayout(whatIfBox);
  whatIfLayout->setContentsMargins(0, 0, 0, 0);
  whatIfLayout->addLayout(pickerRow);
  whatIfLayout->addWidget(whatIfSummary_);
  whatIfLayout->addWidget(whatIfView_, 1);
  whatIfSummary_->hide();
  whatIfView_->hide();

  // A distributed job's ranks side by side (whole run only), hidden for other traces.
  ranks_ = new RanksTableModel(this);
  ranksView_ = makeTable(ranks_, RanksTableModel::kRank, this);
  ranksView_->sortByColumn(RanksTableModel::kRank, Qt::AscendingOrder);
  ranksView_->horizontalHeader()->setSectionResizeMode(RanksTableModel::kRank,
                                                       QHeaderView::ResizeToContents);
  ranksView_->horizontalHeader()->setSectionResizeMode(RanksTableModel::kDoing,
                                                       QHeaderView::Stretch);
  ranksView_->setObjectName(QStringLiteral("analysisRanks"));
  rankChart_ = new RankChart(this);
  ranksBox_ = new QWidget(this);
  auto* ranksLayout = new QVBoxLayout(ranksBox_);
  ranksLayout->setContentsMargins(0, 0, 0, 0);
  ranksLayout->addWidget(rankChart_);
  ranksLayout->addWidget(ranksView_, 1);
  ranksBox_->hide();

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(chartScroll);
  splitter->addWidget(ranksBox_);
  splitter->addWidget(categoryView_);
  splitter->addWidget(whatIfBox);
  // The chart first; the tables have a handful of rows, the what-if a line and its operations.
  for (int i : {0, 1, 2, 3}) splitter->setStretchFactor(i, i == 0 ? 3 : 2);
  splitter->setSizes({300, 150, 200, 200});

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);
  layout->addWidget(status_);
  layout->addWidget(correction_);
  layout->addWidget(splitter, 1);

  connect(gpuPicker_, &QComboBox::currentIndexChanged, this, [this] { submit(); });

  // Results come on the worker thread; they are handed to this object's thread, where a newer
  // request's generation makes them stale. Posted calls left when the panel is destroyed are
  // dropped with it (the runner is stopped first, so none comes after).
  runner_ = std::make_unique<AnalysisRunner>(AnalysisRunner::Callbacks{
      .progress =
          [this](std::uint64_t generation, const std::string& line) {
            QMetaObject::invokeMethod(
                this,
                [this, generation, text = QString::fromStdString(line)] {
                  onProgress(generation, text);
                },
                Qt::QueuedConnection);
          },
      .done =
          [this](std::uint64_t generation, AnalysisResult result) {
            auto shared = std::make_shared<AnalysisResult>(std::move(result));
            QMetaObject::invokeMethod(
                this, [this, generation, shared] { onDone(generation, std::move(*shared)); },
                Qt::QueuedConnection);
          }});
}

AnalysisPanel::~AnalysisPanel() {
  runner_.reset();
}

void AnalysisPanel::setTrace(const QString& path) {
  tracePath_ = path;
  scope_ = AnalysisScope::wholeRun();
  result_.reset();
  submitted_.reset();
  chart_->setRows({}, false);
  categories_->setRows({});
  showRanks({}, {});
  whatIf_->setRows({}, false);
  whatIfSummary_->hide();
  whatIfView_->hide();
  correction_->clear();
  if (path.isEmpty()) {
    runner_->cancel();
    analyzing_ = false;
    status_->clear();
    header_->setText(tr("No trace"));
    return;
  }
  submit();
}

void AnalysisPanel::setScope(const AnalysisScope& scope) {
  scope_ = scope;
  submit();
}

QString AnalysisPanel::whatIfGpu() const {
  return gpuPicker_->currentIndex() > 0 ? gpuPicker_->currentText() : QString();
}

void AnalysisPanel::submit() {
  if (tracePath_.isEmpty()) return;
  AnalysisRequest request{.tracePath = QFile::encodeName(tracePath_).toStdString(),
                          .scope = scope_,
                          .whatIfGpu = whatIfGpu().toStdString()};
  if (submitted_ && sameRequest(*submitted_, request)) return;  // shown, or coming
  submitted_ = request;
  generation_ = runner_->submit(std::move(request));
  analyzing_ = true;
  status_->setText(tr("Analyzing…"));
  showHeader();
}

void AnalysisPanel::showRanks(const std::vector<RankRow>& ranks,
                              const std::vector<std::string>& notes) {
  rankChart_->setRows(ranks);
  ranks_->setRows(ranks);
  QStringList lines;
  for (const auto& n : notes) lines << QString::fromStdString(n);
  ranksView_->setToolTip(lines.join('\n'));
  ranksBox_->setVisible(!ranks.empty());
}

void AnalysisPanel::showHeader() {
  trace::TimeNs origin = 0;
  std::string operationName;
  if (result_ && result_->ok()) {
    origin = result_->traceStart;
    if (result_->scope == scope_) operationName = result_->operationName;
  }
  header_->setText(QString::fromStdString(scopeLabel(scope_, origin, operationName)));
}

void AnalysisPanel::onProgress(std::uint64_t generation, const QString& line) {
  if (generation != generation_ || !analyzing_) return;
  status_->setText(tr("Analyzing… %1").arg(line));
}

void AnalysisPanel::onDone(std::uint64_t generation, AnalysisResult result) {
  if (generation != generation_) return;  // a newer request is on its way
  analyzing_ = false;
  result_ = std::move(result);
  showResult();
  emit analysisFinished(result_->ok());
}

void AnalysisPanel::showResult() {
  const AnalysisResult& r = *result_;
  showHeader();
  if (!r.ok()) {
    status_->setText(tr("Cannot analyze: %1").arg(QString::fromStdString(r.error)));
    correction_->clear();
    chart_->setRows({}, false);
    categories_->setRows({});
    showRanks({}, {});
    whatIf_->setRows({}, false);
    whatIfSummary_->hide();
    whatIfView_->hide();
    return;
  }
  status_->setText(summaryOf(r));
  correction_->setText(correctionOf(r));
  QStringList notes;
  for (const auto& n : r.correction.notes) notes << QString::fromStdString(n);
  correction_->setToolTip(notes.join('\n'));
  chart_->setRows(r.operations, r.severalProcesses);
  categories_->setRows(r.categories);
  showRanks(r.ranks, r.rankNotes);

  if (r.whatIf) {
    const WhatIf& w = *r.whatIf;
    QString text = QStringLiteral("<b>%1</b> (the trace ran on %2): the run %3 → %4 (%5×)%6<br>%7")
                       .arg(QString::fromStdString(w.target).toHtmlEscaped(),
                            QString::fromStdString(w.origin).toHtmlEscaped(), duration(w.originNs),
                            duration(w.predictedNs), QString::number(w.speedup, 'f', 2),
                            r.scope.kind == AnalysisScope::Kind::kWholeRun
                                ? QString()
                                : tr("; the what-if is the whole run's"),
                            QString::fromStdString(w.verdict).toHtmlEscaped());
    whatIfSummary_->setText(text);
    whatIfSummary_->show();
    whatIf_->setRows(w.operations, r.severalProcesses);
    whatIfView_->show();
  } else if (!r.whatIfError.empty()) {
    whatIfSummary_->setText(
        tr("No what-if: %1").arg(QString::fromStdString(r.whatIfError).toHtmlEscaped()));
    whatIfSummary_->show();
    whatIf_->setRows({}, false);
    whatIfView_->hide();
  } else {
    whatIfSummary_->hide();
    whatIf_->setRows({}, false);
    whatIfView_->hide();
  }
}

}  // namespace rlscope::gui
