#include "rlscope/gui_widgets/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>
#include <cmath>
#include <limits>
#include <utility>

#include "rlscope/gui_model/duration_text.h"

namespace rlscope::gui {

namespace {

constexpr double kZoomStep = 0.8;      // one wheel notch or key press
constexpr double kPanStep = 0.1;       // of the window, per key press
constexpr int kMinTickSpacing = 90;    // pixels between ruler ticks
constexpr int kMinLabelledWidth = 24;  // a block narrower than this has no name drawn
constexpr int kClickSlop = 4;          // pixels a press may move and still be a click
constexpr int kHitTolerance = 3;       // pixels beside a block that still hit it
constexpr int kMinItemWidth = 3;       // a selected event is outlined at least this wide
const QColor kHeaderBackground(0xee, 0xee, 0xf2);
const QColor kGridLine(0xe4, 0xe4, 0xe4);
const QColor kSelection(0xd9, 0x48, 0x0f);
const QColor kLink(0x1c, 0x7e, 0xd6);
const QColor kRangeFill(0x3c, 0x78, 0xd8, 40);
const QColor kRangeEdge(0x3c, 0x78, 0xd8);
const QColor kHighlight(0xf0, 0xc0, 0x00);

// Calls fn(x, t) for each tick in view: times since the trace's start, whole multiples of the step.
template <typename Fn>
void forEachTick(const ViewState& view, TimeNs origin, const TickStep& step, int width, Fn fn) {
  const double o = static_cast<double>(origin);
  // Counting steps rather than adding them: no drift over thousands of ticks.
  for (double k = std::ceil((view.start() - o) / step.ns); o + k * step.ns < view.end(); ++k) {
    const double t = k * step.ns;
    fn(TimelineView::kLabelWidth + static_cast<int>(std::lround(view.xOf(o + t, width))), t);
  }
}

// The block owning pixel column c, or the nearest within the tolerance.
const LodBlock* blockNear(const std::vector<LodBlock>& blocks, int c) {
  const LodBlock* best = nullptr;
  int bestDistance = kHitTolerance + 1;
  for (const LodBlock& b : blocks) {
    const int d = c < b.firstColumn ? b.firstColumn - c : c > b.lastColumn ? c - b.lastColumn : 0;
    if (d < bestDistance) {
      best = &b;
      bestDistance = d;
    }
    if (b.firstColumn > c + kHitTolerance) break;  // blocks are in column order
  }
  return best;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(kLabelWidth + 100, kRulerHeight + 60);
  setMouseTracking(false);
}

void TimelineView::setData(std::shared_ptr<const TimelineData> timeline) {
  data_ = std::move(timeline);
  collapsed_.clear();
  selection_.reset();
  links_.clear();
  range_.reset();
  highlight_ = nullptr;
  relayout();
  view_ = ViewState();
  if (data_) view_.setBounds(data_->span.start, data_->span.end);
  update();
}

void TimelineView::relayout() {
  layout_ = data_ ? TimelineLayout(*data_, collapsed_) : TimelineLayout();
  view_.scrollBy(0, layout_.height(), height() - kRulerHeight);  // clamps after a collapse
}

int TimelineView::xOf(TimeNs t) const {
  const double x = view_.xOf(static_cast<double>(t), plotWidth());
  // Far-off times are drawn just outside the plot: Qt's coordinates are ints.
  return kLabelWidth + static_cast<int>(std::lround(std::clamp(x, -1e6, 1e6)));
}

const LayoutRow* TimelineView::rowAt(int y) const {
  if (y < kRulerHeight) return nullptr;
  for (const LayoutRow& row : layout_.rows()) {
    const int top = rowTop(row);
    if (y >= top && y < top + row.height) return &row;
  }
  return nullptr;
}

std::optional<ItemLocation> TimelineView::itemAt(QPoint pos) const {
  if (!data_ || pos.x() < kLabelWidth) return std::nullopt;
  const LayoutRow* row = rowAt(pos.y());
  if (!row || !row->track) return std::nullopt;
  std::vector<LodBlock> blocks;
  queryLod(row->track->row, {view_.windowStart(), view_.windowEnd(), plotWidth()}, blocks);
  const LodBlock* block = blockNear(blocks, pos.x() - kLabelWidth);
  if (!block) return std::nullopt;
  return ItemLocation{row->track, block->representative};
}

void TimelineView::select(std::optional<ItemLocation> item, bool reveal) {
  if (item && !item->valid()) item.reset();
  if (item && reveal) {
    bool expanded = false;
    for (const std::string& key : TimelineLayout::headersOf(*data_, item->track)) {
      expanded |= collapsed_.erase(key) > 0;
    }
    if (expanded) relayout();
    view_.reveal(static_cast<double>(item->item().start), static_cast<double>(item->item().end));
    if (const LayoutRow* row = layout_.rowOf(item->track)) {
      view_.scrollToShow(row->y, row->height, layout_.height(), height() - kRulerHeight);
    }
  }
  if (item != selection_) links_.clear();
  selection_ = item;
  update();
  emit selectionChanged();
}

void TimelineView::setLinks(std::vector<ItemLocation> links) {
  links_ = std::move(links);
  update();
}

void TimelineView::setRange(std::optional<TimeRange> range) {
  range_ = range;
  update();
  emit rangeChanged();
}

void TimelineView::setHighlight(Highlight highlight) {
  highlight_ = std::move(highlight);
  update();
}

void TimelineView::setCollapsed(const std::string& headerKey, bool collapsed) {
  if (collapsed ? !collapsed_.insert(headerKey).second : collapsed_.erase(headerKey) == 0) return;
  relayout();
  update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (!data_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a trace with File ▸ Open, or drop it here"));
    return;
  }
  const TickStep step = chooseTickStep(view_.span(), plotWidth(), kMinTickSpacing);
  paintGrid(p, step);
  paintTracks(p);
  paintRange(p);
  paintSelection(p);
  paintRuler(p, step);
  paintLabels(p);
}

void TimelineView::paintGrid(QPainter& p, const TickStep& step) {
  p.setPen(kGridLine);
  forEachTick(view_, data_->span.start, step, plotWidth(),
              [&](int x, double) { p.drawLine(x, kRulerHeight, x, height()); });
}

void TimelineView::paintRuler(QPainter& p, const TickStep& step) {
  p.fillRect(QRect(0, 0, width(), kRulerHeight), kHeaderBackground);
  p.setPen(Qt::black);
  forEachTick(view_, data_->span.start, step, plotWidth(), [&](int x, double t) {
    p.drawLine(x, kRulerHeight - 6, x, kRulerHeight - 1);
    p.drawText(x + 3, kRulerHeight - 8, QString::fromStdString(formatTick(t, step)));
  });
  if (range_) {
    // The range's extent and duration on the ruler, above the ticks.
    const int x0 = std::max(xOf(range_->start), kLabelWidth);
    const int x1 = std::min(xOf(range_->end), width());
    p.fillRect(QRect(x0, 0, std::max(x1 - x0, 1), kRulerHeight), kRangeFill);
    const QString text =
        QString::fromStdString(durationText(static_cast<double>(range_->end - range_->start)));
    p.setPen(kRangeEdge);
    p.drawText(QRect(x0, 0, std::max(x1 - x0, 1), kRulerHeight), Qt::AlignCenter | Qt::TextDontClip,
               text);
  }
  p.setPen(Qt::black);
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineView::paintTracks(QPainter& p) {
  const int w = plotWidth();
  const LodWindow window{view_.windowStart(), view_.windowEnd(), w};
  for (auto& r : rects_) r.clear();
  highlighted_.clear();
  blockLabels_.clear();
  for (const LayoutRow& row : layout_.rows()) {
    const int top = rowTop(row);
    if (top + row.height <= kRulerHeight || top >= height()) continue;
    if (!row.track) {
      p.fillRect(QRect(kLabelWidth, top, w, row.height), kHeaderBackground);
      continue;
    }
    const LodRow& items = row.track->row;
    queryLod(items, window, blocks_);
    for (const LodBlock& b : blocks_) {
      const QRect r(kLabelWidth + b.firstColumn, top + 2, b.lastColumn - b.firstColumn + 1,
                    row.height - 4);
      const TrackItem& item = items[b.representative];
      rects_[paletteIndex(item.category())].push_back(r);
      if (highlight_ && highlight_(*row.track, b.firstItem, b.count)) highlighted_.push_back(r);
      if (r.width() < kMinLabelledWidth) continue;
      blockLabels_.push_back({r.adjusted(2, 0, -2, 0), b.merged()
                                                           ? tr("%1 events").arg(b.count)
                                                           : QString::fromUtf8(data_->name(item))});
    }
  }
  // One fill per colour for the whole frame, then the search matches' frames, then the names.
  p.setPen(Qt::NoPen);
  for (int i = 0; i < kPaletteSize; ++i) {
    if (rects_[i].empty()) continue;
    p.setBrush(paletteColor(i));
    p.drawRects(rects_[i].data(), static_cast<int>(rects_[i].size()));
  }
  if (!highlighted_.empty()) {
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(kHighlight, 2));
    for (QRect& r : highlighted_) r.adjust(-1, -1, 0, 0);
    p.drawRects(highlighted_.data(), static_cast<int>(highlighted_.size()));
  }
  p.setPen(Qt::black);
  const QFontMetrics metrics = fontMetrics();
  for (const Label& l : blockLabels_) {
    p.drawText(l.rect, Qt::AlignVCenter | Qt::AlignLeft,
               metrics.elidedText(l.text, Qt::ElideRight, l.rect.width()));
  }
}

void TimelineView::paintRange(QPainter& p) {
  if (!range_) return;
  const int x0 = xOf(range_->start);
  const int x1 = xOf(range_->end);
  const QRect plot(kLabelWidth, kRulerHeight, plotWidth(), height() - kRulerHeight);
  p.fillRect(QRect(QPoint(x0, kRulerHeight), QPoint(x1, height())).intersected(plot), kRangeFill);
  p.setPen(kRangeEdge);
  for (int x : {x0, x1}) {
    if (plot.left() <= x && x <= plot.right()) p.drawLine(x, kRulerHeight, x, height());
  }
}

QRect TimelineView::itemRect(const ItemLocation& ref) const {
  const LayoutRow* row = layout_.rowOf(ref.track);
  if (!row) return {};
  int x0 = xOf(ref.item().start);
  int x1 = xOf(ref.item().end);
  if (x1 - x0 < kMinItemWidth) {
    const int mid = (x0 + x1) / 2;
    x0 = mid - kMinItemWidth / 2;
    x1 = x0 + kMinItemWidth;
  }
  // Clipped a little outside the plot so that the outline of a long event shows no false edge.
  x0 = std::max(x0, kLabelWidth - 2);
  x1 = std::min(x1, width() + 2);
  return QRect(QPoint(x0, rowTop(*row) + 1), QPoint(x1, rowTop(*row) + row->height - 2));
}

void TimelineView::paintSelection(QPainter& p) {
  if (!selection_) return;
  p.save();
  p.setClipRect(QRect(kLabelWidth, kRulerHeight, plotWidth(), height() - kRulerHeight));
  p.setRenderHint(QPainter::Antialiasing);
  p.setBrush(Qt::NoBrush);
  const QRect from = itemRect(*selection_);
  for (const ItemLocation& link : links_) {
    const QRect to = itemRect(link);
    if (to.isNull()) continue;
    p.setPen(QPen(kLink, 1.5, Qt::DashLine));
    p.drawRect(to);
    if (from.isNull()) continue;
    // From the selection's edge facing the link to the link's start, with an arrowhead there.
    const QPointF a(from.center().x(), to.top() > from.top() ? from.bottom() : from.top());
    const QPointF b(to.left(), to.top() > from.top() ? to.top() : to.bottom());
    p.setPen(QPen(kLink, 1.5));
    p.drawLine(a, b);
    const double angle = std::atan2(b.y() - a.y(), b.x() - a.x());
    QPainterPath head;
    head.moveTo(b);
    head.lineTo(b - QPointF(std::cos(angle - 0.4), std::sin(angle - 0.4)) * 8);
    head.lineTo(b - QPointF(std::cos(angle + 0.4), std::sin(angle + 0.4)) * 8);
    head.closeSubpath();
    p.fillPath(head, kLink);
  }
  if (!from.isNull()) {
    p.setPen(QPen(kSelection, 2));
    p.drawRect(from);
  }
  p.restore();
}

void TimelineView::paintLabels(QPainter& p) {
  p.fillRect(QRect(0, kRulerHeight, kLabelWidth, height()), Qt::white);
  p.setPen(Qt::black);
  const QFontMetrics metrics = fontMetrics();
  for (const LayoutRow& row : layout_.rows()) {
    const int top = rowTop(row);
    if (top + row.height <= kRulerHeight || top >= height()) continue;
    const QRect r(4 + 12 * row.indent, top, kLabelWidth - 8 - 12 * row.indent, row.height);
    if (!row.track) p.fillRect(QRect(0, top, kLabelWidth, row.height), kHeaderBackground);
    // Headers show whether they are open; tracks are plain.
    const QString mark = row.track       ? QString()
                         : row.collapsed ? QStringLiteral("▸ ")
                                         : QStringLiteral("▾ ");
    const QString text = mark + QString::fromStdString(row.label);
    p.drawText(r, Qt::AlignVCenter | Qt::AlignLeft,
               metrics.elidedText(text, Qt::ElideRight, r.width()));
  }
  p.drawLine(kLabelWidth - 1, kRulerHeight, kLabelWidth - 1, height());
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  const QPointF pos = event->position();
  if (event->modifiers() & Qt::ShiftModifier || pos.x() < kLabelWidth) {
    scrollRows(static_cast<int>(-notches * 3 * TimelineLayout::kTrackHeight));
  } else {
    view_.zoomAt(pos.x() - kLabelWidth, plotWidth(), std::pow(kZoomStep, notches));
    update();
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !data_) return QWidget::mousePressEvent(event);
  const QPoint pos = event->position().toPoint();
  if (pos.x() < kLabelWidth) {
    const LayoutRow* row = rowAt(pos.y());
    if (row && !row->track) setCollapsed(row->key, !row->collapsed);
    return;
  }
  pressPos_ = lastDrag_ = pos;
  if (event->modifiers() & Qt::ShiftModifier) {
    drag_ = Drag::kRange;
    rangeAnchor_ = view_.timeAt(pos.x() - kLabelWidth, plotWidth());
  } else {
    drag_ = Drag::kPending;
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  switch (drag_) {
    case Drag::kNone:
      return QWidget::mouseMoveEvent(event);
    case Drag::kRange: {
      const double t = view_.timeAt(pos.x() - kLabelWidth, plotWidth());
      const double lo = std::min(t, rangeAnchor_);
      const double hi = std::max(t, rangeAnchor_);
      setRange(TimeRange{static_cast<TimeNs>(std::floor(lo)), static_cast<TimeNs>(std::ceil(hi))});
      return;
    }
    case Drag::kPending:
      if ((pos - pressPos_).manhattanLength() < kClickSlop) return;
      drag_ = Drag::kPan;
      [[fallthrough]];
    case Drag::kPan: {
      const QPoint delta = pos - lastDrag_;
      lastDrag_ = pos;
      // Dragging moves the content with the pointer: right shows earlier times, down earlier rows.
      view_.panPixels(-delta.x(), plotWidth());
      scrollRows(-delta.y());
      update();
      return;
    }
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
  // A press that did not move is a click: select what is under it (nothing on empty space).
  if (drag_ == Drag::kPending) select(itemAt(event->position().toPoint()));
  if (drag_ == Drag::kRange && range_) emit rangeSelected();
  drag_ = Drag::kNone;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !data_) return QWidget::mouseDoubleClickEvent(event);
  const auto item = itemAt(event->position().toPoint());
  if (!item) return;
  if (item != selection_) select(item);
  emit itemActivated();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_W:
      zoomAtCenter(kZoomStep);
      break;
    case Qt::Key_S:
      zoomAtCenter(1 / kZoomStep);
      break;
    case Qt::Key_A:
      view_.panFraction(-kPanStep);
      break;
    case Qt::Key_D:
      view_.panFraction(kPanStep);
      break;
    case Qt::Key_F:
      fit();
      break;
    case Qt::Key_Left:
    case Qt::Key_Right:
      // The event before or after the selection on its track, brought into view.
      if (selection_) {
        const std::size_t i = selection_->index;
        const bool next = event->key() == Qt::Key_Right;
        if (next ? i + 1 < selection_->track->row.size() : i > 0) {
          select(ItemLocation{selection_->track, next ? i + 1 : i - 1}, /*reveal=*/true);
        }
      }
      break;
    case Qt::Key_Z:
      if (range_) {
        view_.setWindow(static_cast<double>(range_->start), static_cast<double>(range_->end));
      }
      break;
    case Qt::Key_Escape:
      if (range_) {
        setRange(std::nullopt);
        emit rangeSelected();
      }
      if (selection_) select(std::nullopt);
      break;
    default:
      return QWidget::keyPressEvent(event);
  }
  update();
}

void TimelineView::zoomAtCenter(double factor) {
  view_.zoomAt(plotWidth() / 2.0, plotWidth(), factor);
  update();
}

void TimelineView::fit() {
  view_.fit();
  update();
}

void TimelineView::showWindow(double start, double end) {
  view_.setWindow(start, end);
  update();
}

void TimelineView::scrollRows(int dy) {
  view_.scrollBy(dy, layout_.height(), height() - kRulerHeight);
  update();
}

}  // namespace rlscope::gui
