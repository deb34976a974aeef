// The main window driven as a user would, with QTest on the offscreen platform, on the small trace
// (small_trace.h): a click shows an event's every field in the details; the link from a CUDA call
// to its kernel is followed both ways (double click, the details' link button); search highlights,
// counts and steps through matches, and reports a bad regular expression; the analysis panel
// follows the selected range and the selected operation.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "qt_app.h"
#include "rlscope/gui_widgets/analysis_panel.h"
#include "rlscope/gui_widgets/details_panel.h"
#include "rlscope/gui_widgets/main_window.h"
#include "rlscope/gui_widgets/search_bar.h"
#include "small_trace.h"

namespace rlscope::gui {
namespace {

using testing::findRow;
constexpr int kWaitMs = 20'000;

class MainWindowInteraction : public ::testing::Test {
 protected:
  void SetUp() override {
    window_.resize(TimelineView::kLabelWidth + 1400, 900);
    window_.show();
    QSignalSpy opened(&window_, &MainWindow::traceOpened);
    window_.openFile(QString::fromStdString(testing::writeSmallTrace(dir_).string()));
    ASSERT_TRUE(opened.wait(kWaitMs));
    view_ = window_.timelineView();
    // One pixel per microsecond over the trace's first millisecond.
    view_->showWindow(0, view_->plotWidth() * 1000.0);
  }

  QPoint at(const std::string& row, int us) const {
    const LayoutRow* r = findRow(view_->timelineLayout(), row);
    EXPECT_NE(r, nullptr) << row;
    if (!r) return {};
    return {TimelineView::kLabelWidth + us, view_->rowTop(*r) + r->height / 2};
  }
  std::string selectedName() const {
    return view_->selection() ? std::string(view_->data()->name(view_->selection()->item())) : "";
  }
  // Waits until the analysis panel has shown a result for its current scope.
  bool analysisSettles() const {
    AnalysisPanel* panel = window_.analysisPanel();
    return QTest::qWaitFor([panel] { return !panel->isAnalyzing() && panel->result(); }, kWaitMs);
  }

  QApplication& app_ = testing::qtApp();
  testing::TempDir dir_;
  MainWindow window_;
  TimelineView* view_ = nullptr;
};

// What --screenshot saves: the whole window grabbed. Each track's colour is in its row, where the
// timeline widget sits in the window; the labels and the details are drawn (not blank).
TEST_F(MainWindowInteraction, ScreenshotHasTheTracksInTheirColours) {
  view_->fit();
  const QImage image = window_.grab().toImage();
  ASSERT_FALSE(image.isNull());
  auto rowPixels = [&](const std::string& label, QColor color) {
    const LayoutRow* row = findRow(view_->timelineLayout(), label);
    EXPECT_NE(row, nullptr) << label;
    if (!row) return 0;
    int n = 0;
    for (int y = view_->rowTop(*row); y < view_->rowTop(*row) + row->height; ++y) {
      for (int x = TimelineView::kLabelWidth; x < view_->width(); ++x) {
        const QPoint p = view_->mapTo(&window_, QPoint(x, y));
        n += image.pixelColor(p) == color;
      }
    }
    return n;
  };
  const QColor python = categoryColor(trace::Category::kPython);
  const QColor kernel = categoryColor(trace::Category::kGpuKernel);
  const QColor api = categoryColor(trace::Category::kCudaApi);
  const int plot = view_->plotWidth();
  EXPECT_GT(rowPixels("CPU categories", python), plot * 10);  // the whole plot, 16 px tall
  EXPECT_EQ(rowPixels("CPU categories", kernel), 0);
  EXPECT_GT(rowPixels("Stream 7", kernel), plot * 4 / 10 * 10);  // 40 % of the plot
  EXPECT_EQ(rowPixels("Stream 7", python), 0);
  EXPECT_GT(rowPixels("CPU categories, level 1", api), plot / 20 * 10);     // the call, 5 %
  EXPECT_GT(rowPixels("Operations", paletteColor(0)), plot * 8 / 10 * 10);  // 85 %
  int dark = 0;  // text: labels, ruler, menus
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) dark += qGray(image.pixel(x, y)) < 80;
  }
  EXPECT_GT(dark, 500);
}

TEST_F(MainWindowInteraction, ClickShowsEveryFieldOfTheEvent) {
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("Stream 7", 700));
  DetailsPanel* details = window_.detailsPanel();
  EXPECT_EQ(details->title().toStdString(), "gemm");
  EXPECT_EQ(details->field("Duration").toStdString(), "400 µs");
  EXPECT_TRUE(details->field("Grid").contains("108")) << details->field("Grid").toStdString();
  EXPECT_TRUE(details->field("Block").contains("256")) << details->field("Block").toStdString();
  EXPECT_EQ(details->field("Correlation id").toStdString(), "1");
  EXPECT_EQ(details->linkCount(), 1);
  // Empty space clears it.
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("Stream 7", 100));
  EXPECT_EQ(details->linkCount(), 0);
  EXPECT_TRUE(details->field("Name").isEmpty());
}

TEST_F(MainWindowInteraction, FollowsACorrelationBothWays) {
  // The call: its link is the kernel, drawn from it.
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("CPU categories, level 1", 425));
  ASSERT_EQ(selectedName(), "cudaLaunchKernel");
  ASSERT_EQ(view_->links().size(), 1u);
  EXPECT_EQ(view_->data()->name(view_->links()[0].item()), "gemm");
  // A double click follows it to the kernel...
  QTest::mouseDClick(view_, Qt::LeftButton, {}, at("CPU categories, level 1", 425));
  ASSERT_EQ(selectedName(), "gemm");
  EXPECT_EQ(view_->selection()->item().source, ItemSource::kKernel);
  ASSERT_EQ(view_->links().size(), 1u);
  EXPECT_EQ(view_->data()->name(view_->links()[0].item()), "cudaLaunchKernel");
  // ...and the kernel's link button in the details goes back to the call.
  auto buttons = window_.detailsPanel()->findChildren<QPushButton*>();
  ASSERT_EQ(buttons.size(), 1);
  EXPECT_TRUE(buttons[0]->text().contains("cudaLaunchKernel")) << buttons[0]->text().toStdString();
  QTest::mouseClick(buttons[0], Qt::LeftButton);
  EXPECT_EQ(selectedName(), "cudaLaunchKernel");
}

TEST_F(MainWindowInteraction, SearchCountsStepsAndWraps) {
  SearchBar* bar = window_.searchBar();
  QSignalSpy changed(bar, &SearchBar::changed);
  // Any case: train.py:step (at 0), train_step (100 µs), cudaLaunchKernel (400 µs); not gemm.
  QTest::keyClicks(bar->patternEdit(), "A");
  ASSERT_TRUE(changed.wait(kWaitMs));
  EXPECT_EQ(bar->resultText().toStdString(), "3 matches");
  // Enter goes to the first match after the window's middle (700 µs): there is none, so it wraps
  // to the first of all; then on in time order, wrapping at the end.
  QTest::keyClick(bar->patternEdit(), Qt::Key_Return);
  const std::string first = selectedName();
  EXPECT_EQ(first, "train.py:step");
  EXPECT_TRUE(bar->resultText().endsWith(" of 3")) << bar->resultText().toStdString();
  std::vector<std::string> seen{first};
  for (int i = 0; i < 3; ++i) {
    QTest::keyClick(bar->patternEdit(), Qt::Key_Return);
    seen.push_back(selectedName());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"train.py:step", "train_step", "cudaLaunchKernel",
                                            "train.py:step"}));
  // Shift+Enter goes back.
  QTest::keyClick(bar->patternEdit(), Qt::Key_Return, Qt::ShiftModifier);
  EXPECT_EQ(selectedName(), seen[2]);
}

TEST_F(MainWindowInteraction, SearchHighlightsMatchesAndReportsABadRegex) {
  SearchBar* bar = window_.searchBar();
  QSignalSpy changed(bar, &SearchBar::changed);
  QTest::keyClicks(bar->patternEdit(), "^gem+$");
  bar->findChild<QCheckBox*>()->setChecked(true);  // Regex
  ASSERT_TRUE(QTest::qWaitFor([&] { return bar->resultText() == "1 match"; }, kWaitMs))
      << bar->resultText().toStdString();
  // The kernel's block is framed in the highlight colour.
  QImage image(view_->size(), QImage::Format_RGB32);
  view_->render(&image);
  const LayoutRow* stream = findRow(view_->timelineLayout(), "Stream 7");
  int framed = 0;
  for (int y = view_->rowTop(*stream); y < view_->rowTop(*stream) + stream->height; ++y) {
    for (int x = TimelineView::kLabelWidth; x < image.width(); ++x) {
      framed += image.pixelColor(x, y) == QColor(0xf0, 0xc0, 0x00);
    }
  }
  EXPECT_GT(framed, 2 * 300);  // above and below the kernel's 400 µs
  const LayoutRow* calls = findRow(view_->timelineLayout(), "CPU categories, level 1");
  int callFramed = 0;
  for (int y = view_->rowTop(*calls); y < view_->rowTop(*calls) + calls->height; ++y) {
    for (int x = TimelineView::kLabelWidth; x < image.width(); ++x) {
      callFramed += image.pixelColor(x, y) == QColor(0xf0, 0xc0, 0x00);
    }
  }
  EXPECT_EQ(callFramed, 0);  // cudaLaunchKernel does not match
  bar->patternEdit()->setText("gemm(");
  ASSERT_TRUE(changed.wait(kWaitMs));
  EXPECT_TRUE(bar->resultText().startsWith("invalid regular expression"))
      << bar->resultText().toStdString();
  QTest::keyClick(bar->patternEdit(), Qt::Key_Return);  // nothing to go to: no crash, no selection
  EXPECT_FALSE(view_->selection());
}

TEST_F(MainWindowInteraction, AnalysisFollowsTheRangeAndTheOperation) {
  AnalysisPanel* panel = window_.analysisPanel();
  ASSERT_TRUE(analysisSettles());
  EXPECT_EQ(panel->scope().kind, AnalysisScope::Kind::kWholeRun);
  // Shift+drag over [200, 600) µs.
  QTest::mousePress(view_, Qt::LeftButton, Qt::ShiftModifier, at("Stream 7", 200));
  QTest::mouseMove(view_, at("Stream 7", 600));
  QTest::mouseRelease(view_, Qt::LeftButton, Qt::ShiftModifier, at("Stream 7", 600));
  EXPECT_EQ(panel->scope(), AnalysisScope::range(200'000, 600'000));
  ASSERT_TRUE(analysisSettles());
  EXPECT_TRUE(panel->result()->ok()) << panel->result()->error;
  EXPECT_EQ(panel->result()->scopeNs, 400'000);
  // Escape clears the range: the whole run again; then the operation.
  QTest::keyClick(view_, Qt::Key_Escape);
  EXPECT_EQ(panel->scope().kind, AnalysisScope::Kind::kWholeRun);
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("Operations", 300));
  ASSERT_EQ(selectedName(), "train_step");
  EXPECT_EQ(panel->scope(), AnalysisScope::operation(testing::kSmallOperationId));
  ASSERT_TRUE(analysisSettles());
  EXPECT_TRUE(panel->result()->ok()) << panel->result()->error;
  EXPECT_EQ(panel->result()->operationName, "train_step");
  // Selecting a kernel keeps the operation's analysis; clicking empty space returns to the run.
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("Stream 7", 700));
  EXPECT_EQ(panel->scope().kind, AnalysisScope::Kind::kOperation);
  QTest::mouseClick(view_, Qt::LeftButton, {}, at("Stream 7", 980));
  EXPECT_EQ(panel->scope().kind, AnalysisScope::Kind::kWholeRun);
}

}  // namespace
}  // namespace rlscope::gui
