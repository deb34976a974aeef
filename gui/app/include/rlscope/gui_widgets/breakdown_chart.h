// The analysis panel's chart, in the style of the RL-Scope paper: one horizontal stacked bar per
// operation, its length the operation's time, split into CPU, CPU+GPU and GPU segments coloured
// by category (category_palette.h), CPU+GPU hatched, idle time pale; a legend above. It only
// draws the rows it is given (analysis_model.h); the longest row spans the width.
#pragma once

#include <QRectF>
#include <QWidget>
#include <optional>
#include <vector>

#include "rlscope/gui_analysis/analysis_model.h"

namespace rlscope::gui {

class BreakdownChart : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRowHeight = 22;
  static constexpr int kMargin = 8;

  explicit BreakdownChart(QWidget* parent = nullptr);

  // `severalProcesses`: label rows with their process too.
  void setRows(std::vector<OperationRow> rows, bool severalProcesses);
  const std::vector<OperationRow>& rows() const { return rows_; }

  // The colour a segment is filled with (its category's; idle time pale grey), and whether it is
  // hatched (CPU+GPU).
  static QColor segmentColor(const BarSegment& s);
  static bool hatched(const BarSegment& s) { return s.resource == Resource::kCpuGpu; }

  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tool tips: the segment under the pointer

 private:
  struct LegendEntry {
    QString text;
    BarSegment sample;
  };
  std::vector<LegendEntry> legendEntries() const;
  // The legend's height at a width, and the full height the rows need below it.
  int legendHeight(int width) const;
  int contentHeight(int width) const;
  QString labelOf(const OperationRow& row) const;
  // Where the bars are drawn: x from labelWidth_, at most barWidth wide.
  double barWidth() const;
  QRectF segmentRect(std::size_t row, std::size_t segment) const;
  void paintLegend(QPainter& p);

  std::vector<OperationRow> rows_;
  bool severalProcesses_ = false;
  trace::TimeNs longest_ = 0;
  int labelWidth_ = 120;
};

}  // namespace rlscope::gui
