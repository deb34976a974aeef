#include "rlscope/gui_widgets/rank_chart.h"

#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <set>

#include "rlscope/gui_model/duration_text.h"

namespace rlscope::gui {

namespace {

constexpr int kSwatch = 12;
constexpr int kLegendLine = 18;

QString duration(trace::TimeNs ns) {
  return QString::fromStdString(durationText(static_cast<double>(ns)));
}

}  // namespace

RankChart::RankChart(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
  setObjectName(QStringLiteral("analysisRankChart"));
}

std::array<trace::TimeNs, RankChart::kParts> RankChart::partTimes(const RankRow& r) {
  trace::TimeNs waiting = std::clamp<trace::TimeNs>(r.waitingForOthers, 0, r.time);
  trace::TimeNs transferring = std::clamp<trace::TimeNs>(r.transferring, 0, r.time - waiting);
  return {r.time - waiting - transferring, waiting, transferring};
}

// The HTML report's colours for the same bars (analyzer/report/html_report.cpp).
QColor RankChart::partColor(Part part) {
  switch (part) {
    case kOutside:
      return QColor(0x4e, 0x79, 0xa7);
    case kWaiting:
      return QColor(0xe1, 0x57, 0x59);
    case kTransferring:
      return QColor(0x59, 0xa1, 0x4f);
    default:
      return {};
  }
}

QString RankChart::partName(Part part) {
  switch (part) {
    case kOutside:
      return tr("outside collectives");
    case kWaiting:
      return tr("waiting for the last rank");
    case kTransferring:
      return tr("transferring");
    default:
      return {};
  }
}

void RankChart::setRows(std::vector<RankRow> rows) {
  rows_ = std::move(rows);
  std::sort(rows_.begin(), rows_.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  std::set<std::string> hosts;
  longest_ = 0;
  for (const auto& r : rows_) {
    longest_ = std::max(longest_, r.time);
    hosts.insert(r.host);
  }
  severalHosts_ = hosts.size() > 1;
  setMinimumHeight(sizeHint().height());
  updateGeometry();
  update();
}

QString RankChart::labelOf(const RankRow& row) const {
  QString label = tr("rank %1").arg(row.rank);
  if (severalHosts_ && !row.host.empty())
    label += QStringLiteral(" · %1").arg(QString::fromStdString(row.host));
  return label;
}

std::optional<std::size_t> RankChart::straggler() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].othersWaited > 0 && (!best || rows_[i].othersWaited > rows_[*best].othersWaited))
      best = i;
  }
  return best;
}

int RankChart::barsTop() const {
  return kMargin + kLegendLine + 6;
}

// Measured when needed, in bold (the straggler's label): the font is only final once the widget
// is polished, after the rows may have been set.
int RankChart::labelsRight() const {
  QFont bold = font();
  bold.setBold(true);
  QFontMetrics metrics(bold);
  int widest = 0;
  for (const auto& r : rows_) widest = std::max(widest, metrics.horizontalAdvance(labelOf(r)));
  return std::min(widest + 2 * kMargin + 2, width() * 2 / 5);
}

QSize RankChart::sizeHint() const {
  return {480, barsTop() + static_cast<int>(rows_.size()) * kRowHeight + kMargin};
}

double RankChart::barWidth() const {
  int value =
      fontMetrics().horizontalAdvance(tr("000 ms · straggler: 000 last, 000 ms waited")) + kMargin;
  return std::max(20, width() - labelsRight() - value - kMargin);
}

QRectF RankChart::partRect(std::size_t row, Part part) const {
  const double left = labelsRight();
  const double scale = longest_ > 0 ? barWidth() / static_cast<double>(longest_) : 0;
  const double y = barsTop() + static_cast<double>(row) * kRowHeight;
  auto times = partTimes(rows_[row]);
  trace::TimeNs before = 0;
  for (int i = 0; i < part; ++i) before += times[static_cast<std::size_t>(i)];
  // Edges from cumulative times, so that the parts meet without gaps or overlaps.
  double x0 = left + static_cast<double>(before) * scale;
  double x1 = left + static_cast<double>(before + times[part]) * scale;
  return {x0, y + 3, x1 - x0, kRowHeight - 6.0};
}

void RankChart::paintEvent(QPaintEvent* event) {
  QPainter p(this);
  p.fillRect(event->rect(), palette().color(QPalette::Base));
  if (rows_.empty()) return;
  const QColor text = palette().color(QPalette::Text);
  int x = kMargin;
  for (int part = 0; part < kParts; ++part) {
    auto name = partName(static_cast<Part>(part));
    p.fillRect(QRectF(x, kMargin + (kLegendLine - kSwatch) / 2.0, kSwatch, kSwatch),
               partColor(static_cast<Part>(part)));
    p.setPen(text);
    int w = fontMetrics().horizontalAdvance(name);
    p.drawText(QRect(x + kSwatch + 4, kMargin, w + 2, kLegendLine), Qt::AlignVCenter, name);
    x += kSwatch + 4 + w + 14;
  }
  const int left = labelsRight();
  const auto slowest = straggler();
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const int y = barsTop() + static_cast<int>(i) * kRowHeight;
    const auto& row = rows_[i];
    QFont font = this->font();
    font.setBold(slowest == i);
    p.setFont(font);
    p.setPen(text);
    QRect label(kMargin, y, left - 2 * kMargin, kRowHeight);
    p.drawText(label, Qt::AlignVCenter | Qt::AlignLeft,
               fontMetrics().elidedText(labelOf(row), Qt::ElideMiddle, label.width()));
    double right = left;
    for (int part = 0; part < kParts; ++part) {
      QRectF r = partRect(i, static_cast<Part>(part));
      if (r.width() > 0) p.fillRect(r, partColor(static_cast<Part>(part)));
      right = std::max(right, r.right());
    }
    QString value = duration(row.time);
    if (slowest == i)
      value += tr(" · straggler: %1 last, %2 waited")
                   .arg(row.collectivesLast)
                   .arg(duration(row.othersWaited));
    p.drawText(QRectF(right + 6, y, width() - right - 6, kRowHeight), Qt::AlignVCenter, value);
  }
}

QString RankChart::toolTipAt(QPoint pos) const {
  const int y = pos.y() - barsTop();
  if (y < 0 || y / kRowHeight >= static_cast<int>(rows_.size())) return {};
  const auto i = static_cast<std::size_t>(y / kRowHeight);
  const auto& row = rows_[i];
  for (int part = 0; part < kParts; ++part) {
    QRectF r = partRect(i, static_cast<Part>(part));
    if (r.width() <= 0 || pos.x() < r.left() || pos.x() >= r.right()) continue;
    trace::TimeNs t = partTimes(row)[static_cast<std::size_t>(part)];
    return tr("%1: %2, %3 (%4 % of its time)")
        .arg(labelOf(row), partName(static_cast<Part>(part)), duration(t))
        .arg(row.time > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(row.time) : 0.0, 0,
             'f', 1);
  }
  return tr("%1: %2; %3 collectives, entered %4 of them last; the others waited %5 for it%6")
      .arg(labelOf(row), duration(row.time))
      .arg(row.collectives)
      .arg(row.collectivesLast)
      .arg(duration(row.othersWaited),
           row.doing.empty() ? QString()
                             : tr(", meanwhile doing %1").arg(QString::fromStdString(row.doing)));
}

bool RankChart::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  QString tip = toolTipAt(help->pos());
  if (tip.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(help->globalPos(), tip, this);
  }
  return true;
}

}  // namespace rlscope::gui
