// The timeline widget painted off screen (rlscope/gui_widgets/timeline_view.h): a small trace
// rendered to an image at a fixed size shows each category's colour in the row of its track; and
// the `rlscope-gui --screenshot` command end to end, on that trace and on a garbage file.
#include "rlscope/gui_widgets/timeline_view.h"

#include <gtest/gtest.h>

#include <QImage>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <string>

#include "qt_app.h"
#include "rlscope/gui_widgets/trace_file.h"
#include "small_trace.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::gui {
namespace {

using testing::findRow;
using testing::writeSmallTrace;
using trace::Category;

// How many pixels of the row's plot area have the colour.
int pixelsOf(const QImage& image, const TimelineView& view, const LayoutRow& row, QColor color) {
  int n = 0;
  for (int y = view.rowTop(row); y < view.rowTop(row) + row.height; ++y) {
    for (int x = TimelineView::kLabelWidth; x < image.width(); ++x) {
      n += image.pixelColor(x, y).rgb() == color.rgb();
    }
  }
  return n;
}

TEST(TimelineView, PaintsEachTrackInItsCategorysColour) {
  testing::qtApp();
  testing::TempDir dir;
  TimelineView view;
  view.setData(TraceDocument::timelineOf(openTraceFile(writeSmallTrace(dir))));
  view.resize(840, 300);
  QImage image(view.size(), QImage::Format_RGB32);
  image.fill(Qt::black);
  view.render(&image);

  const LayoutRow* cpu = findRow(view.timelineLayout(), "CPU categories");
  const LayoutRow* stream = findRow(view.timelineLayout(), "Stream 7");
  ASSERT_TRUE(cpu && stream);
  const QColor python = categoryColor(Category::kPython);
  const QColor kernel = categoryColor(Category::kGpuKernel);
  // Fitted: the Python interval spans the plot, the kernel 40 % of it.
  const int plot = view.plotWidth();
  EXPECT_GT(pixelsOf(image, view, *cpu, python), plot * 10);
  EXPECT_EQ(pixelsOf(image, view, *cpu, kernel), 0);
  EXPECT_GT(pixelsOf(image, view, *stream, kernel), plot * 4 / 10 * 10);
  EXPECT_EQ(pixelsOf(image, view, *stream, python), 0);
  // Not blank: the label column has text in it.
  int dark = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < TimelineView::kLabelWidth; ++x) dark += qGray(image.pixel(x, y)) < 100;
  }
  EXPECT_GT(dark, 50);
}

TEST(TimelineView, KeysAndWheelNavigate) {
  testing::qtApp();
  testing::TempDir dir;
  TimelineView view;
  view.setData(TraceDocument::timelineOf(openTraceFile(writeSmallTrace(dir))));
  view.resize(1240, 300);  // a 1000 px plot over [0, 1 ms)
  const ViewState& v = view.viewState();
  QTest::keyClick(&view, Qt::Key_W);
  EXPECT_DOUBLE_EQ(v.span(), 800'000);
  EXPECT_DOUBLE_EQ(v.start() + v.span() / 2, 500'000);  // zoomed at the centre
  QTest::keyClick(&view, Qt::Key_D);
  EXPECT_DOUBLE_EQ(v.start(), 100'000 + 80'000);
  QTest::keyClick(&view, Qt::Key_A);
  EXPECT_DOUBLE_EQ(v.start(), 100'000);
  QTest::keyClick(&view, Qt::Key_S);
  EXPECT_DOUBLE_EQ(v.span(), 1'000'000);
  // The wheel zooms in at the cursor: 250 µs, a quarter into the plot, stays under it.
  QTest::keyClick(&view, Qt::Key_F);
  const QPointF at(TimelineView::kLabelWidth + 250, 100);
  QWheelEvent wheel(at, view.mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(&view, &wheel);
  EXPECT_DOUBLE_EQ(v.span(), 800'000);
  EXPECT_NEAR(v.timeAt(250, view.plotWidth()), 250'000, 1e-6);
  // Dragging left by 100 px shows later times.
  QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(700, 100));
  QTest::mouseMove(&view, QPoint(600, 100));
  QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(600, 100));
  EXPECT_NEAR(v.timeAt(250, view.plotWidth()), 250'000 + 80'000, 1e-6);
}

TEST(RlscopeGui, ScreenshotOfATrace) {
  testing::TempDir dir;
  const auto png = dir / "shot.png";
  auto r = testing::runCommand({"rlscope-gui", "--screenshot", png.string(), "--size", "800x400",
                                writeSmallTrace(dir).string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  QImage image(QString::fromStdString(png.string()));
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.size(), QSize(800, 400));
}

TEST(RlscopeGui, ScreenshotOfAWindowAndASearch) {
  testing::TempDir dir;
  const auto png = dir / "shot.png";
  const std::string trace = writeSmallTrace(dir).string();
  auto r = testing::runCommand({"rlscope-gui", "--screenshot", png.string(), "--size", "900x500",
                                "--window", "300us:0.95ms", "--search", "gemm", trace});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(QImage(QString::fromStdString(png.string())).isNull());
  // No event of that name: one line, exit 1, no image.
  const auto none = dir / "none.png";
  r = testing::runCommand(
      {"rlscope-gui", "--screenshot", none.string(), "--search", "nope", trace});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(testing::lines(r.err).size(), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(RlscopeGui, ScreenshotOfGarbageFailsWithOneLine) {
  testing::TempDir dir;
  const auto garbage = dir / "garbage.sqlite";
  std::ofstream(garbage) << "this is not a trace\n";
  const auto png = dir / "shot.png";
  auto r = testing::runCommand({"rlscope-gui", "--screenshot", png.string(), garbage.string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(testing::lines(r.err).size(), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST(RlscopeGui, BadArgumentsFailWithOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"rlscope-gui", "--screenshot", "out.png"},
           {"rlscope-gui", "--size", "12", "x.sqlite"},
           {"rlscope-gui", "--bogus"},
           {"rlscope-gui", "--screenshot", "o.png", "--window", "5s:1s", "x.sqlite"},
           {"rlscope-gui", "--screenshot", "o.png", "--window", "1:2", "x.sqlite"},
           {"rlscope-gui", "--search", "gemm", "x.sqlite"}}) {
    auto r = testing::runCommand(args);
    EXPECT_EQ(r.exitCode, 1) << args.back();
    EXPECT_EQ(testing::lines(r.err).size(), 1u) << r.err;
  }
  EXPECT_EQ(testing::runCommand({"rlscope-gui", "--help"}).exitCode, 0);
}

}  // namespace
}  // namespace rlscope::gui
