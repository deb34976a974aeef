// The timeline widget: a label column (process ▸ thread ▸ track, device ▸ stream), a time ruler,
// and one row per track whose blocks come from the level-of-detail query (lod_query.h) at every
// paint, so a frame costs the same whatever the number of events. It only draws and reports what
// the user points at: the tracks are the model's (timeline_data.h), the navigation arithmetic is
// ViewState's, and what a selection links to or a search matches is told to it by its owner.
//
// Mouse: wheel zooms at the cursor (Shift+wheel, or the wheel over the labels, scrolls the rows);
// left-drag pans; a click selects the event under the pointer (the longest of a merged block) and
// a double click asks to follow its link; Shift+drag selects a time range and shows its duration;
// a click on a process, thread or device header collapses or expands it.
// Keys: W/S zoom in/out, A/D pan, F fits the whole trace, Z zooms to the selected range, Escape
// clears the selection and range, Left/Right select the event before/after on the same track.
#pragma once

#include <QWidget>
#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rlscope/gui_model/item_location.h"
#include "rlscope/gui_model/lod_query.h"
#include "rlscope/gui_model/timeline_data.h"
#include "rlscope/gui_widgets/category_palette.h"
#include "rlscope/gui_widgets/time_ruler.h"
#include "rlscope/gui_widgets/timeline_layout.h"
#include "rlscope/gui_widgets/view_state.h"

class QPainter;

namespace rlscope::gui {

struct TimeRange {
  TimeNs start = 0;
  TimeNs end = 0;
};

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kLabelWidth = 240;
  static constexpr int kRulerHeight = 24;

  explicit TimelineView(QWidget* parent = nullptr);

  // Shows a trace, fitted, nothing selected or collapsed; null shows nothing.
  void setData(std::shared_ptr<const TimelineData> timeline);
  const TimelineData* data() const { return data_.get(); }

  const TimelineLayout& timelineLayout() const { return layout_; }
  const ViewState& viewState() const { return view_; }
  // The top of a layout row in widget coordinates.
  int rowTop(const LayoutRow& row) const { return kRulerHeight + row.y - view_.scrollY(); }
  int plotWidth() const { return std::max(1, width() - kLabelWidth); }
  // The widget x of a time.
  int xOf(TimeNs t) const;

  // The event drawn at a widget point: the item a block there stands for (its longest for a merged
  // block), within a few pixels. Nothing over labels, headers or empty space.
  std::optional<ItemLocation> itemAt(QPoint pos) const;

  std::optional<ItemLocation> selection() const { return selection_; }
  // Selects an event (nothing for nullopt); `reveal` also brings it into view, expanding its
  // headers and scrolling to its row. Emits selectionChanged.
  void select(std::optional<ItemLocation> item, bool reveal = false);
  // The events the selection is linked to (a CUDA call's kernels, a kernel's call): drawn as
  // lines from the selection.
  void setLinks(std::vector<ItemLocation> links);
  const std::vector<ItemLocation>& links() const { return links_; }

  std::optional<TimeRange> range() const { return range_; }
  void setRange(std::optional<TimeRange> range);

  // Search highlighting: whether any of the items [first, first + count) of a track matches.
  using Highlight = std::function<bool(const Track&, std::size_t first, std::size_t count)>;
  void setHighlight(Highlight highlight);

  void setCollapsed(const std::string& headerKey, bool collapsed);
  bool isCollapsed(const std::string& headerKey) const { return collapsed_.contains(headerKey); }

  // Navigation, as the keys do it, and to a given window (a range, a benchmark's frames).
  void zoomAtCenter(double factor);
  void fit();
  void showWindow(double start, double end);

 signals:
  void selectionChanged();
  // A double click on an event: its owner follows the event's link.
  void itemActivated();
  // The range changed (while it is dragged, too).
  void rangeChanged();
  // A Shift+drag ended with a range, or Escape cleared it: what the analysis follows.
  void rangeSelected();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  enum class Drag { kNone, kPending, kPan, kRange };

  void paintGrid(QPainter& p, const TickStep& step);
  void paintRuler(QPainter& p, const TickStep& step);
  void paintTracks(QPainter& p);
  void paintRange(QPainter& p);
  void paintSelection(QPainter& p);
  void paintLabels(QPainter& p);
  void scrollRows(int dy);
  void relayout();
  const LayoutRow* rowAt(int y) const;
  // The rectangle an item is drawn in, at least a few pixels wide; empty when its row is hidden.
  QRect itemRect(const ItemLocation& ref) const;

  std::shared_ptr<const TimelineData> data_;
  TimelineLayout layout_;
  ViewState view_;
  std::set<std::string> collapsed_;
  std::optional<ItemLocation> selection_;
  std::vector<ItemLocation> links_;
  std::optional<TimeRange> range_;
  Highlight highlight_;
  // Reused from frame to frame, so that painting allocates nothing once warm.
  std::vector<LodBlock> blocks_;
  std::array<std::vector<QRect>, kPaletteSize> rects_;
  std::vector<QRect> highlighted_;
  struct Label {
    QRect rect;
    QString text;
  };
  std::vector<Label> blockLabels_;
  Drag drag_ = Drag::kNone;
  QPoint pressPos_;
  QPoint lastDrag_;
  double rangeAnchor_ = 0;
};

}  // namespace rlscope::gui
