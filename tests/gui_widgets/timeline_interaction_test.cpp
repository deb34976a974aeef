// Pointing at the timeline (rlscope/gui_widgets/timeline_view.h), driven by QTest on the offscreen
// platform: a click selects the event under it and nothing on empty space, a double click asks to
// follow it, Shift+drag selects a range, a header click collapses and expands, Escape clears, and
// selecting with reveal brings a hidden event into view; the arrows step along a track.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTest>

#include "qt_app.h"
#include "rlscope/gui_widgets/timeline_view.h"
#include "rlscope/gui_widgets/trace_file.h"
#include "small_trace.h"

namespace rlscope::gui {
namespace {

using testing::findRow;

// 1000 px of plot over [0, 1 ms): one pixel is one microsecond.
class TimelineInteraction : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.setData(TraceDocument::timelineOf(openTraceFile(testing::writeSmallTrace(dir_))));
    view_.resize(TimelineView::kLabelWidth + 1000, 400);
  }

  // The point at time t (µs) in the middle of a row.
  QPoint at(const std::string& row, int us) const {
    const LayoutRow* r = findRow(view_.timelineLayout(), row);
    EXPECT_NE(r, nullptr) << row;
    if (!r) return {};
    return {TimelineView::kLabelWidth + us, view_.rowTop(*r) + r->height / 2};
  }

  QApplication& app_ = testing::qtApp();  // first: the view needs it, even in a test run alone
  testing::TempDir dir_;
  TimelineView view_;
};

TEST_F(TimelineInteraction, ClickSelectsTheEventUnderThePointer) {
  QSignalSpy changed(&view_, &TimelineView::selectionChanged);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, at("Stream 7", 700));
  ASSERT_TRUE(view_.selection());
  const TrackItem& kernel = view_.selection()->item();
  EXPECT_EQ(kernel.source, ItemSource::kKernel);
  EXPECT_EQ(view_.data()->name(kernel), "gemm");
  EXPECT_EQ(changed.count(), 1);
  // Two pixels beside the kernel still hit it; far from it is nothing.
  QTest::mouseClick(&view_, Qt::LeftButton, {}, at("Stream 7", 902));
  ASSERT_TRUE(view_.selection());
  EXPECT_EQ(view_.selection()->item().source, ItemSource::kKernel);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, at("Stream 7", 100));
  EXPECT_FALSE(view_.selection());
  // The call on the CPU categories' second level.
  QTest::mouseClick(&view_, Qt::LeftButton, {}, at("CPU categories, level 1", 425));
  ASSERT_TRUE(view_.selection());
  EXPECT_EQ(view_.data()->name(view_.selection()->item()), "cudaLaunchKernel");
  EXPECT_EQ(view_.selection()->item().correlationId, 1u);
}

TEST_F(TimelineInteraction, DragPansWithoutSelecting) {
  QTest::mousePress(&view_, Qt::LeftButton, {}, at("Stream 7", 700));
  QTest::mouseMove(&view_, at("Stream 7", 600));
  QTest::mouseRelease(&view_, Qt::LeftButton, {}, at("Stream 7", 600));
  EXPECT_FALSE(view_.selection());
  EXPECT_NEAR(view_.viewState().start(), 100'000, 1e-6);
}

TEST_F(TimelineInteraction, DoubleClickAsksToFollowTheEvent) {
  QSignalSpy activated(&view_, &TimelineView::itemActivated);
  QTest::mouseDClick(&view_, Qt::LeftButton, {}, at("Stream 7", 700));
  EXPECT_EQ(activated.count(), 1);
  ASSERT_TRUE(view_.selection());
  EXPECT_EQ(view_.selection()->item().source, ItemSource::kKernel);
  QTest::mouseDClick(&view_, Qt::LeftButton, {}, at("Stream 7", 100));
  EXPECT_EQ(activated.count(), 1);
}

TEST_F(TimelineInteraction, ShiftDragSelectsARange) {
  QSignalSpy changed(&view_, &TimelineView::rangeChanged);
  QTest::mousePress(&view_, Qt::LeftButton, Qt::ShiftModifier, at("Stream 7", 450));
  QTest::mouseMove(&view_, at("Stream 7", 300));
  QTest::mouseRelease(&view_, Qt::LeftButton, Qt::ShiftModifier, at("Stream 7", 200));
  ASSERT_TRUE(view_.range());
  EXPECT_EQ(view_.range()->start, 300'000);  // where the pointer last moved to
  EXPECT_EQ(view_.range()->end, 450'000);
  EXPECT_GE(changed.count(), 1);
  EXPECT_FALSE(view_.selection());
  EXPECT_DOUBLE_EQ(view_.viewState().start(), 0);  // no pan
  QTest::keyClick(&view_, Qt::Key_Escape);
  EXPECT_FALSE(view_.range());
}

TEST_F(TimelineInteraction, EscapeClearsTheSelection) {
  QTest::mouseClick(&view_, Qt::LeftButton, {}, at("Stream 7", 700));
  ASSERT_TRUE(view_.selection());
  QTest::keyClick(&view_, Qt::Key_Escape);
  EXPECT_FALSE(view_.selection());
}

TEST_F(TimelineInteraction, HeaderClickCollapsesAndExpands) {
  const std::size_t all = view_.timelineLayout().rows().size();
  const LayoutRow* process = &view_.timelineLayout().rows().front();
  ASSERT_EQ(process->track, nullptr);
  const QPoint header(20, view_.rowTop(*process) + process->height / 2);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, header);
  // Only the process header is left of its rows; the GPU's follow it.
  EXPECT_TRUE(view_.timelineLayout().rows().front().collapsed);
  EXPECT_EQ(findRow(view_.timelineLayout(), "CPU categories"), nullptr);
  EXPECT_NE(findRow(view_.timelineLayout(), "Stream 7"), nullptr);
  EXPECT_LT(view_.timelineLayout().rows().size(), all);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, header);
  EXPECT_EQ(view_.timelineLayout().rows().size(), all);
  EXPECT_NE(findRow(view_.timelineLayout(), "CPU categories"), nullptr);
}

TEST_F(TimelineInteraction, RevealExpandsAndCentresTheEvent) {
  const LayoutRow* call = findRow(view_.timelineLayout(), "CPU categories, level 1");
  ASSERT_NE(call, nullptr);
  const Track* track = call->track;
  const std::string processKey = view_.timelineLayout().rows().front().key;
  view_.setCollapsed(processKey, true);
  for (int i = 0; i < 20; ++i) QTest::keyClick(&view_, Qt::Key_W);  // about 12 µs wide
  QTest::keyClick(&view_, Qt::Key_D);
  view_.select(ItemLocation{track, 0}, /*reveal=*/true);
  EXPECT_FALSE(view_.isCollapsed(processKey));
  const ViewState& v = view_.viewState();
  // 50 µs does not fit in a 12 µs window: it is shown whole, in the middle.
  EXPECT_LE(v.start(), 400'000);
  EXPECT_GE(v.end(), 450'000);
  EXPECT_NEAR((v.start() + v.end()) / 2, 425'000, 1);
}

// Three kernels on one stream: the arrows step from one to the next and stop at the ends.
TEST(TimelineKeys, ArrowsStepAlongTheTrack) {
  testing::qtApp();
  auto data = std::make_shared<TimelineData>();
  Track stream;
  stream.kind = TrackKind::kGpuStream;
  stream.label = "Stream 7";
  std::vector<TrackItem> kernels;
  for (TimeNs start : {100'000, 300'000, 600'000}) {
    kernels.push_back({.start = start, .end = start + 100'000, .source = ItemSource::kKernel});
  }
  stream.row = LodRow(std::move(kernels));
  DeviceTracks device;
  device.label = "GPU 0";
  device.streams.push_back(std::move(stream));
  data->devices.push_back(std::move(device));
  data->span.start = 0;
  data->span.end = 1'000'000;
  data->itemCount = 3;
  TimelineView view;
  view.setData(data);
  view.resize(TimelineView::kLabelWidth + 1000, 200);
  const Track* track = &data->devices[0].streams[0];
  view.select(ItemLocation{track, 0});
  QTest::keyClick(&view, Qt::Key_Left);  // the first: it stays
  EXPECT_EQ(view.selection()->index, 0u);
  QTest::keyClick(&view, Qt::Key_Right);
  EXPECT_EQ(view.selection()->index, 1u);
  QTest::keyClick(&view, Qt::Key_Right);
  EXPECT_EQ(view.selection()->index, 2u);
  QTest::keyClick(&view, Qt::Key_Right);  // the last: it stays
  EXPECT_EQ(view.selection()->index, 2u);
  QTest::keyClick(&view, Qt::Key_Left);
  EXPECT_EQ(view.selection()->index, 1u);
  // Each one is brought into view.
  EXPECT_LE(view.viewState().start(), 300'000);
  EXPECT_GE(view.viewState().end(), 400'000);
}

}  // namespace
}  // namespace rlscope::gui
