// A distributed job's ranks as bars, as the HTML report draws them: one horizontal bar per rank,
// its length the rank's time, split into time outside collectives, time in them waiting for the
// last rank, and time transferring; the rank that held the others back most is named beside its
// bar. It draws the rows it is given (analysis_model.h's RankRow); the longest spans the width.
#pragma once

#include <QColor>
#include <QRectF>
#include <QWidget>
#include <array>
#include <optional>
#include <vector>

#include "rlscope/gui_analysis/analysis_model.h"

namespace rlscope::gui {

class RankChart : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRowHeight = 22;
  static constexpr int kMargin = 8;
  enum Part { kOutside, kWaiting, kTransferring, kParts };

  explicit RankChart(QWidget* parent = nullptr);

  // In rank order; empty hides nothing by itself (the panel hides the chart).
  void setRows(std::vector<RankRow> rows);
  const std::vector<RankRow>& rows() const { return rows_; }

  // A rank's time in each part (they add up to its time).
  static std::array<trace::TimeNs, kParts> partTimes(const RankRow& r);
  static QColor partColor(Part part);
  static QString partName(Part part);
  // The straggler: the row whose lateness the others waited for longest; none when nobody
  // waited.
  std::optional<std::size_t> straggler() const;
  // Where a part of a row's bar is drawn.
  QRectF partRect(std::size_t row, Part part) const;
  // What the pointer at `pos` shows (a part of a bar, or its row), empty outside the rows.
  QString toolTipAt(QPoint pos) const;

  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QString labelOf(const RankRow& row) const;
  int barsTop() const;
  int labelsRight() const;
  double barWidth() const;

  std::vector<RankRow> rows_;
  trace::TimeNs longest_ = 0;
  bool severalHosts_ = false;
};

}  // namespace rlscope::gui
