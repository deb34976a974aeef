// The timeline widget: a label column (process ▸ thread ▸ track, device ▸ stream), a time ruler,
// and one row per track whose blocks come from the level-of-detail query (lod_query.h) at every
// paint, so a frame costs the same whatever the number of events. It only draws: the tracks are
// the model's (timeline_data.h), the navigation arithmetic is ViewState's.
//
// Navigation: wheel zooms at the cursor (Shift+wheel, or the wheel over the labels, scrolls the
// rows), left-drag pans, W/S zoom in/out, A/D pan, F fits the whole trace.
#pragma once

#include <QWidget>
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "category_palette.h"
#include "lod_query.h"
#include "time_ruler.h"
#include "timeline_data.h"
#include "timeline_layout.h"
#include "view_state.h"

class QPainter;

namespace rlscope::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kLabelWidth = 240;
  static constexpr int kRulerHeight = 24;

  explicit TimelineView(QWidget* parent = nullptr);

  // Shows a trace, fitted; null shows nothing.
  void setData(std::shared_ptr<const TimelineData> timeline);

  const TimelineLayout& timelineLayout() const { return layout_; }
  const ViewState& viewState() const { return view_; }
  // The top of a layout row in widget coordinates.
  int rowTop(const LayoutRow& row) const { return kRulerHeight + row.y - view_.scrollY(); }
  int plotWidth() const { return std::max(1, width() - kLabelWidth); }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void paintGrid(QPainter& p, const TickStep& step);
  void paintRuler(QPainter& p, const TickStep& step);
  void paintTracks(QPainter& p);
  void paintLabels(QPainter& p);
  void zoomAtCenter(double factor);
  void scrollRows(int dy);

  std::shared_ptr<const TimelineData> data_;
  TimelineLayout layout_;
  ViewState view_;
  // Reused from frame to frame, so that painting allocates nothing once warm.
  std::vector<LodBlock> blocks_;
  std::array<std::vector<QRect>, kPaletteSize> rects_;
  struct Label {
    QRect rect;
    QString text;
  };
  std::vector<Label> blockLabels_;
  bool dragging_ = false;
  QPoint lastDrag_;
};

}  // namespace rlscope::gui
