#include "timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <cmath>
#include <utility>

namespace rlscope::gui {

namespace {

constexpr double kZoomStep = 0.8;      // one wheel notch or key press
constexpr double kPanStep = 0.1;       // of the window, per key press
constexpr int kMinTickSpacing = 90;    // pixels between ruler ticks
constexpr int kMinLabelledWidth = 24;  // a block narrower than this has no name drawn
const QColor kHeaderBackground(0xee, 0xee, 0xf2);
const QColor kGridLine(0xe4, 0xe4, 0xe4);

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

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(kLabelWidth + 100, kRulerHeight + 60);
}

void TimelineView::setData(std::shared_ptr<const TimelineData> timeline) {
  data_ = std::move(timeline);
  layout_ = data_ ? TimelineLayout(*data_) : TimelineLayout();
  view_ = ViewState();
  if (data_) view_.setBounds(data_->span.start, data_->span.end);
  update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (!data_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a trace with File ▸ Open"));
    return;
  }
  const TickStep step = chooseTickStep(view_.span(), plotWidth(), kMinTickSpacing);
  paintGrid(p, step);
  paintTracks(p);
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
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineView::paintTracks(QPainter& p) {
  const int w = plotWidth();
  const LodWindow window{view_.windowStart(), view_.windowEnd(), w};
  for (auto& r : rects_) r.clear();
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
      if (r.width() < kMinLabelledWidth) continue;
      blockLabels_.push_back({r.adjusted(2, 0, -2, 0), b.merged()
                                                           ? tr("%1 events").arg(b.count)
                                                           : QString::fromUtf8(data_->name(item))});
    }
  }
  // One fill per colour for the whole frame, then the names on top.
  p.setPen(Qt::NoPen);
  for (int i = 0; i < kPaletteSize; ++i) {
    if (rects_[i].empty()) continue;
    p.setBrush(paletteColor(i));
    p.drawRects(rects_[i].data(), static_cast<int>(rects_[i].size()));
  }
  p.setPen(Qt::black);
  const QFontMetrics metrics = fontMetrics();
  for (const Label& l : blockLabels_) {
    p.drawText(l.rect, Qt::AlignVCenter | Qt::AlignLeft,
               metrics.elidedText(l.text, Qt::ElideRight, l.rect.width()));
  }
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
    const QString text =
        (row.indent > 0 ? QStringLiteral("▸ ") : QString()) + QString::fromStdString(row.label);
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
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  dragging_ = true;
  lastDrag_ = event->position().toPoint();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) return QWidget::mouseMoveEvent(event);
  const QPoint pos = event->position().toPoint();
  const QPoint delta = pos - lastDrag_;
  lastDrag_ = pos;
  // Dragging moves the content with the pointer: right shows earlier times, down earlier rows.
  view_.panPixels(-delta.x(), plotWidth());
  scrollRows(-delta.y());
  update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) dragging_ = false;
  QWidget::mouseReleaseEvent(event);
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
      view_.fit();
      break;
    default:
      return QWidget::keyPressEvent(event);
  }
  update();
}

void TimelineView::zoomAtCenter(double factor) {
  view_.zoomAt(plotWidth() / 2.0, plotWidth(), factor);
}

void TimelineView::scrollRows(int dy) {
  view_.scrollBy(dy, layout_.height(), height() - kRulerHeight);
  update();
}

}  // namespace rlscope::gui
