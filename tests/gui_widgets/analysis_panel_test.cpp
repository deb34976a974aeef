// The analysis panel (rlscope/gui_widgets/analysis_panel.h), off screen: a trace is analyzed on the
// worker thread and shown (the category table's rows, the chart painted in the categories'
// colours), a scope changes what is shown, a newer request supersedes an older one, the what-if
// appears for a picked GPU, errors are shown, the correction is said, destroying it while it runs
// is safe, a distributed job's ranks are charted and tabled, and the real A100 AlexNet trace of
// ../shared/traces has time (skipped when absent).
#include "rlscope/gui_widgets/analysis_panel.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <filesystem>
#include <map>

#include "gui_analysis/analysis_traces.h"
#include "qt_app.h"
#include "rlscope/gui_widgets/analysis_tables.h"
#include "rlscope/gui_widgets/breakdown_chart.h"
#include "rlscope/gui_widgets/category_palette.h"
#include "rlscope/gui_widgets/rank_chart.h"
#include "rlscope/import/importer.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

constexpr int kWaitMs = 30'000;

QString qpath(const std::filesystem::path& p) {
  return QString::fromStdString(p.string());
}

// Waits for the panel's next result; true when it came and is not an error.
bool waitForResult(QSignalSpy& spy) {
  if (!spy.wait(kWaitMs)) return false;
  return spy.takeLast().at(0).toBool();
}

// The header (0), the status line (1) and the correction line (2).
QString labelText(const AnalysisPanel& panel, int index) {
  const char* names[] = {"analysisHeader", "analysisStatus", "analysisCorrection"};
  auto* label = panel.findChild<QLabel*>(QString::fromLatin1(names[index]));
  return label ? label->text() : QStringLiteral("(no label)");
}

class AnalysisPanelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::qtApp();
    testing::writeAnalysisStep(step, true);
  }
  testing::TempDir dir;
  std::filesystem::path step = dir / "step.sqlite";
};

TEST_F(AnalysisPanelTest, ShowsTheWholeRunInTheTableAndTheChart) {
  AnalysisPanel panel;
  panel.resize(700, 900);
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(step));
  EXPECT_TRUE(panel.isAnalyzing());
  EXPECT_TRUE(labelText(panel, 1).startsWith("Analyzing"));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_FALSE(panel.isAnalyzing());
  ASSERT_NE(panel.result(), nullptr);
  EXPECT_EQ(labelText(panel, 0), "Whole run");
  EXPECT_TRUE(labelText(panel, 2).startsWith("Corrected: no")) << labelText(panel, 2).toStdString();

  // The table: one row per (category, resource), longest first.
  QAbstractItemModel* table = panel.categoryTable()->model();
  ASSERT_EQ(table->rowCount(), static_cast<int>(panel.result()->categories.size()));
  ASSERT_GT(table->rowCount(), 2);
  EXPECT_EQ(table->index(0, CategoryTableModel::kCategory).data().toString(), "Backend");
  EXPECT_EQ(table->index(0, CategoryTableModel::kResource).data().toString(), "CPU");
  EXPECT_EQ(table->index(0, CategoryTableModel::kTime).data(Qt::UserRole).toLongLong(), 55);
  for (int r = 1; r < table->rowCount(); ++r)
    EXPECT_GE(table->index(r - 1, CategoryTableModel::kTime).data(Qt::UserRole).toLongLong(),
              table->index(r, CategoryTableModel::kTime).data(Qt::UserRole).toLongLong());
  // Sorting by name puts them in alphabetical order.
  panel.categoryTable()->sortByColumn(CategoryTableModel::kCategory, Qt::AscendingOrder);
  for (int r = 1; r < table->rowCount(); ++r)
    EXPECT_LE(table->index(r - 1, CategoryTableModel::kCategory).data().toString(),
              table->index(r, CategoryTableModel::kCategory).data().toString());

  // The chart: a bar per operation, painted in the categories' colours.
  BreakdownChart* chart = panel.chart();
  ASSERT_EQ(chart->rows().size(), panel.result()->operations.size());
  chart->resize(600, chart->minimumHeight());
  QImage image = chart->grab().toImage().convertToFormat(QImage::Format_RGB32);
  std::map<QRgb, int> pixels;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) ++pixels[image.pixel(x, y)];
  for (auto c : {trace::Category::kPython, trace::Category::kBackend, trace::Category::kCudaApi})
    EXPECT_GT(pixels[categoryColor(c).rgb()], 20) << trace::categoryName(c);
  QRgb background = chart->palette().color(QPalette::Base).rgb();
  EXPECT_LT(pixels[background], image.width() * image.height());
}

TEST_F(AnalysisPanelTest, ADistributedJobsRanksAreShownSideBySide) {
  AnalysisPanel panel;
  panel.resize(700, 900);
  panel.show();
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(step));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_FALSE(panel.ranksTable()->isVisible()) << "a one-process trace has no ranks";

  auto job = dir / "job.sqlite";
  testing::writeAnalysisJob(job);
  panel.setTrace(qpath(job));
  ASSERT_TRUE(waitForResult(finished));
  ASSERT_TRUE(panel.ranksTable()->isVisible());
  QAbstractItemModel* ranks = panel.ranksTable()->model();
  ASSERT_EQ(ranks->rowCount(), 2);
  EXPECT_EQ(ranks->index(0, RanksTableModel::kRank).data().toString(), "0");
  EXPECT_EQ(ranks->index(1, RanksTableModel::kLast).data().toString(), "3");
  EXPECT_EQ(ranks->index(1, RanksTableModel::kOthersWaited).data(Qt::UserRole).toLongLong(), 600);
  EXPECT_EQ(ranks->index(1, RanksTableModel::kDoing).data().toString(), "simulate / Python");
  EXPECT_EQ(ranks->headerData(RanksTableModel::kWaiting, Qt::Horizontal).toString(),
            "Waiting for the last rank");
  // Sorting by the others' waiting, longest first, puts the straggler first.
  panel.ranksTable()->sortByColumn(RanksTableModel::kOthersWaited, Qt::DescendingOrder);
  EXPECT_EQ(ranks->index(0, RanksTableModel::kRank).data().toString(), "1");

  // The chart above the table: a bar per rank in rank order, the straggler named.
  RankChart* chart = panel.rankChart();
  ASSERT_TRUE(chart->isVisible());
  ASSERT_EQ(chart->rows().size(), 2u);
  EXPECT_EQ(chart->rows()[0].rank, 0);
  EXPECT_EQ(chart->straggler(), std::optional<std::size_t>(1));
  QImage image = chart->grab().toImage();
  std::map<QRgb, int> pixels;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) ++pixels[image.pixel(x, y)];
  for (auto part : {RankChart::kOutside, RankChart::kWaiting})
    EXPECT_GT(pixels[RankChart::partColor(part).rgb()], 50)
        << RankChart::partName(part).toStdString();
  // Rank 0 waited for rank 1: its bar has a waiting part, and the pointer there says so.
  QRectF waiting = chart->partRect(0, RankChart::kWaiting);
  ASSERT_GT(waiting.width(), 0);
  EXPECT_TRUE(chart->toolTipAt(waiting.center().toPoint()).contains("waiting for the last rank"))
      << chart->toolTipAt(waiting.center().toPoint()).toStdString();
  QString label = chart->toolTipAt(
      QPoint(2, static_cast<int>(chart->partRect(1, RankChart::kOutside).center().y())));
  EXPECT_TRUE(label.contains("entered 3 of them last")) << label.toStdString();

  panel.setTrace(qpath(step));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_FALSE(chart->isVisible()) << "the chart goes with the ranks";
}

// The chart's geometry on its own: parts add up to the rank's time, the longest rank spans the
// bars' width, and a rank whose parts exceed its time (rounding in the analysis) is clamped.
TEST(RankChart, PartsAddUpAndTheLongestRankSpansTheBars) {
  testing::qtApp();
  RankChart chart;
  chart.resize(600, 200);
  chart.setRows(
      {{.rank = 1, .time = 1000, .waitingForOthers = 100, .transferring = 50, .othersWaited = 0},
       {.rank = 0,
        .time = 2000,
        .waitingForOthers = 1500,
        .transferring = 900,
        .othersWaited = 7}});
  ASSERT_EQ(chart.rows()[0].rank, 0);  // in rank order
  auto parts = RankChart::partTimes(chart.rows()[0]);
  EXPECT_EQ(
      parts[RankChart::kOutside] + parts[RankChart::kWaiting] + parts[RankChart::kTransferring],
      2000);
  EXPECT_EQ(parts[RankChart::kTransferring], 500);  // clamped to what is left of its time
  QRectF longest = chart.partRect(0, RankChart::kTransferring);
  QRectF shorter = chart.partRect(1, RankChart::kTransferring);
  EXPECT_NEAR(shorter.right() - chart.partRect(1, RankChart::kOutside).left(),
              (longest.right() - chart.partRect(0, RankChart::kOutside).left()) / 2, 1.0);
  EXPECT_EQ(chart.straggler(), std::optional<std::size_t>(0));
  chart.setRows({{.rank = 0, .time = 10}, {.rank = 1, .time = 10}});
  EXPECT_FALSE(chart.straggler()) << "nobody waited: no straggler";
}

TEST_F(AnalysisPanelTest, ScopesChangeWhatIsShownAndTheNewestWins) {
  AnalysisPanel panel;
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(step));
  ASSERT_TRUE(waitForResult(finished));

  panel.setScope(AnalysisScope::range(0, 60));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_EQ(labelText(panel, 0), "Range 0 ns – 60.0 ns (60.0 ns)");
  EXPECT_EQ(panel.result()->totals.time, 60);

  panel.setScope(AnalysisScope::operation(3));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_EQ(labelText(panel, 0), "Operation: backprop");
  ASSERT_EQ(panel.chart()->rows().size(), 1u);
  EXPECT_EQ(panel.chart()->rows()[0].name, "backprop");

  // Two requests at once: only the newer is shown.
  finished.clear();
  panel.setScope(AnalysisScope::range(0, 30));
  panel.setScope(AnalysisScope::operation(1));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_EQ(panel.result()->scope, AnalysisScope::operation(1));
  QTest::qWait(200);
  EXPECT_EQ(finished.count(), 0) << "the superseded request was shown too";
  EXPECT_EQ(labelText(panel, 0), "Operation: step");
}

TEST_F(AnalysisPanelTest, WhatIfForAPickedGpu) {
  AnalysisPanel panel;
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(step));
  ASSERT_TRUE(waitForResult(finished));
  QComboBox* picker = panel.whatIfPicker();
  EXPECT_EQ(picker->itemText(0), "— none —");
  int h100 = picker->findText("H100 SXM");
  ASSERT_GT(h100, 0);
  picker->setCurrentIndex(h100);
  ASSERT_TRUE(waitForResult(finished));
  ASSERT_TRUE(panel.result()->whatIf.has_value()) << panel.result()->whatIfError;
  EXPECT_GT(panel.result()->whatIf->predictedNs, 0);
  EXPECT_GT(panel.whatIfTable()->model()->rowCount(), 0);
  EXPECT_FALSE(panel.whatIfTable()->isHidden());
  picker->setCurrentIndex(0);
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_FALSE(panel.result()->whatIf.has_value());
  EXPECT_TRUE(panel.whatIfTable()->isHidden());
}

TEST_F(AnalysisPanelTest, ErrorsAndTheCorrectionAreSaid) {
  AnalysisPanel panel;
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(dir.write("garbage.sqlite", "not a trace")));
  ASSERT_TRUE(finished.wait(kWaitMs));
  EXPECT_FALSE(finished.takeLast().at(0).toBool());
  EXPECT_TRUE(labelText(panel, 1).startsWith("Cannot analyze: "))
      << labelText(panel, 1).toStdString();
  EXPECT_EQ(panel.categoryTable()->model()->rowCount(), 0);

  auto calibrated = dir / "calibrated.sqlite";
  testing::writeAnalysisCalibrated(calibrated);
  panel.setTrace(qpath(calibrated));
  ASSERT_TRUE(waitForResult(finished));
  EXPECT_TRUE(labelText(panel, 2).startsWith("Corrected: yes (calibration stored in the trace)"))
      << labelText(panel, 2).toStdString();

  panel.setTrace(QString());
  EXPECT_EQ(panel.result(), nullptr);
  EXPECT_EQ(labelText(panel, 0), "No trace");
}

TEST_F(AnalysisPanelTest, DestroyedWhileAnalyzing) {
  auto big = dir / "loop.sqlite";
  testing::writeAnalysisLoop(big, 20'000);
  for (int i = 0; i < 3; ++i) {
    auto panel = std::make_unique<AnalysisPanel>();
    panel->setTrace(qpath(big));
    panel->setScope(AnalysisScope::range(0, 1'000'000));
    QTest::qWait(i * 20);
    panel.reset();
  }
  QTest::qWait(50);  // nothing posted to a destroyed panel may run
  SUCCEED();
}

TEST_F(AnalysisPanelTest, RealA100TraceHasTime) {
  auto shared = testing::sharedTracesDir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces/kineto is absent";
  auto source = shared / "a100_alexnet.json.gz";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not there";
  auto path = dir / "alexnet.sqlite";
  import::importFile(source, path);
  AnalysisPanel panel;
  QSignalSpy finished(&panel, &AnalysisPanel::analysisFinished);
  panel.setTrace(qpath(path));
  ASSERT_TRUE(waitForResult(finished)) << labelText(panel, 1).toStdString();
  const AnalysisResult* r = panel.result();
  EXPECT_GT(r->totals.time, 0);
  EXPECT_GT(r->totals.gpu + r->totals.cpuGpu, 0);
  EXPECT_GT(panel.categoryTable()->model()->rowCount(), 0);
  EXPECT_FALSE(panel.chart()->rows().empty());
}

}  // namespace
}  // namespace rlscope::gui
