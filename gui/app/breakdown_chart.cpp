#include "rlscope/gui_widgets/breakdown_chart.h"

#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <set>

#include "rlscope/gui_widgets/category_palette.h"

namespace rlscope::gui {

namespace {

constexpr int kSwatch = 12;
constexpr int kLegendLine = 18;
constexpr int kLegendGap = 14;
const QColor kIdleColor(236, 236, 236);
const QColor kIdleBorder(200, 200, 200);
const QColor kHatch(0, 0, 0, 90);

QString categoryText(trace::Category c) {
  auto name = trace::categoryName(c);
  return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

QString valueText(const OperationRow& row) {
  return QStringLiteral("%1 · %2 % GPU")
      .arg(QString::fromStdString(durationText(static_cast<double>(row.time))))
      .arg(100.0 * row.gpuBoundShare(), 0, 'f', 0);
}

void fillSegment(QPainter& p, const QRectF& r, const BarSegment& s) {
  p.fillRect(r, BreakdownChart::segmentColor(s));
  if (BreakdownChart::hatched(s)) p.fillRect(r, QBrush(kHatch, Qt::BDiagPattern));
  if (s.resource == Resource::kIdle) {
    p.setPen(kIdleBorder);
    p.drawRect(r.adjusted(0, 0, -1, -1));
  }
}

}  // namespace

BreakdownChart::BreakdownChart(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
}

QColor BreakdownChart::segmentColor(const BarSegment& s) {
  return s.category ? categoryColor(s.category) : kIdleColor;
}

void BreakdownChart::setRows(std::vector<OperationRow> rows, bool severalProcesses) {
  rows_ = std::move(rows);
  severalProcesses_ = severalProcesses;
  longest_ = 0;
  int widest = 0;
  for (const auto& r : rows_) {
    longest_ = std::max(longest_, r.time);
    widest = std::max(widest, fontMetrics().horizontalAdvance(labelOf(r)));
  }
  labelWidth_ = widest + 2 * kMargin;
  setMinimumHeight(contentHeight(width()));
  updateGeometry();
  update();
}

QString BreakdownChart::labelOf(const OperationRow& row) const {
  QString label = QString::fromStdString(row.name);
  if (row.nested) label = QStringLiteral("↳ ") + label;
  if (!row.phase.empty()) label += QStringLiteral(" (%1)").arg(QString::fromStdString(row.phase));
  if (severalProcesses_) label += QStringLiteral(" [%1]").arg(row.process);
  return label;
}

std::vector<BreakdownChart::LegendEntry> BreakdownChart::legendEntries() const {
  // The categories the rows have, in the palette's order, then what the resources look like.
  std::set<int> categories;
  bool cpuGpu = false, idle = false;
  for (const auto& r : rows_)
    for (const auto& s : r.segments) {
      if (s.category) categories.insert(static_cast<int>(*s.category));
      cpuGpu |= s.resource == Resource::kCpuGpu;
      idle |= s.resource == Resource::kIdle;
    }
  std::vector<LegendEntry> entries;
  for (int c : categories) {
    auto category = static_cast<trace::Category>(c);
    entries.push_back({categoryText(category), {.resource = Resource::kCpu, .category = category}});
  }
  if (cpuGpu)
    entries.push_back({QStringLiteral("CPU+GPU (hatched)"), {.resource = Resource::kCpuGpu}});
  if (idle) entries.push_back({QStringLiteral("idle"), {.resource = Resource::kIdle}});
  return entries;
}

int BreakdownChart::legendHeight(int width) const {
  int x = kMargin, lines = 1;
  for (const auto& e : legendEntries()) {
    int w = kSwatch + 4 + fontMetrics().horizontalAdvance(e.text) + kLegendGap;
    if (x > kMargin && x + w > width - kMargin) {
      ++lines;
      x = kMargin;
    }
    x += w;
  }
  return lines * kLegendLine;
}

int BreakdownChart::contentHeight(int width) const {
  return kMargin + legendHeight(width) + 6 + static_cast<int>(rows_.size()) * kRowHeight + kMargin;
}

QSize BreakdownChart::sizeHint() const {
  return {480, contentHeight(480)};
}

double BreakdownChart::barWidth() const {
  int value = fontMetrics().horizontalAdvance(QStringLiteral("000 ms · 100 % GPU")) + kMargin;
  return std::max(20, width() - std::min(labelWidth_, width() * 2 / 5) - value - kMargin);
}

QRectF BreakdownChart::segmentRect(std::size_t row, std::size_t segment) const {
  const double left = std::min(labelWidth_, width() * 2 / 5);
  const double scale = longest_ > 0 ? barWidth() / static_cast<double>(longest_) : 0;
  const double y = kMargin + legendHeight(width()) + 6 + static_cast<double>(row) * kRowHeight;
  trace::TimeNs before = 0;
  const auto& segments = rows_[row].segments;
  for (std::size_t i = 0; i < segment; ++i) before += segments[i].time;
  // Edges from cumulative times, so that segments meet without gaps or overlaps.
  double x0 = left + static_cast<double>(before) * scale;
  double x1 = left + static_cast<double>(before + segments[segment].time) * scale;
  return {x0, y + 3, x1 - x0, kRowHeight - 6.0};
}

void BreakdownChart::paintLegend(QPainter& p) {
  int x = kMargin, y = kMargin;
  for (const auto& e : legendEntries()) {
    int textWidth = fontMetrics().horizontalAdvance(e.text);
    int w = kSwatch + 4 + textWidth + kLegendGap;
    if (x > kMargin && x + w > width() - kMargin) {
      x = kMargin;
      y += kLegendLine;
    }
    const BarSegment& sample = e.sample;
    QRectF swatch(x, y + (kLegendLine - kSwatch) / 2.0, kSwatch, kSwatch);
    if (sample.resource == Resource::kCpuGpu) {  // the hatch alone, over any category's colour
      p.fillRect(swatch, palette().color(QPalette::Base));
      p.fillRect(swatch, QBrush(kHatch, Qt::BDiagPattern));
      p.setPen(kIdleBorder);
      p.drawRect(swatch.adjusted(0, 0, -1, -1));
    } else {
      fillSegment(p, swatch, sample);
    }
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(x + kSwatch + 4, y, textWidth + 2, kLegendLine), Qt::AlignVCenter, e.text);
    x += w;
  }
}

void BreakdownChart::paintEvent(QPaintEvent* event) {
  QPainter p(this);
  p.fillRect(event->rect(), palette().color(QPalette::Base));
  if (rows_.empty()) return;
  paintLegend(p);
  const int top = kMargin + legendHeight(width()) + 6;
  const int left = std::min(labelWidth_, width() * 2 / 5);
  const QColor text = palette().color(QPalette::Text);
  // Only the rows in the exposed area: a run can have thousands of operations.
  auto first = static_cast<std::size_t>(std::max(0, (event->rect().top() - top) / kRowHeight));
  for (std::size_t i = first; i < rows_.size(); ++i) {
    const int y = top + static_cast<int>(i) * kRowHeight;
    if (y > event->rect().bottom()) break;
    const auto& row = rows_[i];
    p.setPen(text);
    QRect label(kMargin, y, left - 2 * kMargin, kRowHeight);
    p.drawText(label, Qt::AlignVCenter | Qt::AlignLeft,
               fontMetrics().elidedText(labelOf(row), Qt::ElideMiddle, label.width()));
    double right = left;
    for (std::size_t s = 0; s < row.segments.size(); ++s) {
      QRectF r = segmentRect(i, s);
      if (r.width() > 0) fillSegment(p, r, row.segments[s]);
      right = r.right();
    }
    p.setPen(text);
    p.drawText(QRectF(right + 6, y, width() - right - 6, kRowHeight), Qt::AlignVCenter,
               valueText(row));
  }
}

void BreakdownChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // The legend wraps: a narrower chart needs more height.
  int needed = contentHeight(width());
  if (minimumHeight() != needed) setMinimumHeight(needed);
}

bool BreakdownChart::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const int top = kMargin + legendHeight(width()) + 6;
  const int y = help->pos().y() - top;
  if (y < 0 || rows_.empty() || y / kRowHeight >= static_cast<int>(rows_.size())) {
    QToolTip::hideText();
    event->ignore();
    return true;
  }
  const auto i = static_cast<std::size_t>(y / kRowHeight);
  const auto& row = rows_[i];
  QString tip =
      QStringLiteral("%1\n%2, %3 instances; GPU work launched: %4")
          .arg(labelOf(row), QString::fromStdString(durationText(static_cast<double>(row.time))))
          .arg(row.instances)
          .arg(QString::fromStdString(durationText(static_cast<double>(row.launchedGpu))));
  for (std::size_t s = 0; s < row.segments.size(); ++s) {
    if (!segmentRect(i, s).contains(QPointF(help->pos().x(), segmentRect(i, s).center().y())))
      continue;
    const auto& seg = row.segments[s];
    tip = QStringLiteral("%1\n%2%3: %4 (%5 % of it)")
              .arg(labelOf(row), QString::fromUtf8(resourceName(seg.resource)),
                   seg.category ? QStringLiteral(", ") + categoryText(*seg.category) : QString(),
                   QString::fromStdString(durationText(static_cast<double>(seg.time))))
              .arg(row.time > 0
                       ? 100.0 * static_cast<double>(seg.time) / static_cast<double>(row.time)
                       : 0.0,
                   0, 'f', 1);
    break;
  }
  QToolTip::showText(help->globalPos(), tip, this);
  return true;
}

}  // namespace rlscope::gui
