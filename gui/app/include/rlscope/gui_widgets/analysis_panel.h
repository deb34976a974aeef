// The analysis panel (issue #7 item 5), meant for a QDockWidget: the analyzer's breakdown of the
// whole run, the selected range or the selected operation as RL-Scope's stacked bars
// (breakdown_chart.h) and a sortable category table, whether it is corrected (the calibration
// stored in the trace), and the predictor's what-if on a GPU picked from the database. The
// analysis runs on a worker thread (analysis_runner.h) and is delivered to the GUI thread; a
// newer trace, scope or GPU supersedes what runs, which is then never shown. "Analyzing…" is
// shown meanwhile, over the previous result.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "rlscope/gui_analysis/analysis_model.h"

class QComboBox;
class QLabel;
class QTableView;

namespace rlscope::gui {

class AnalysisRunner;
class BreakdownChart;
class CategoryTableModel;
class RankChart;
class RanksTableModel;
class WhatIfTableModel;

class AnalysisPanel : public QWidget {
  Q_OBJECT

 public:
  explicit AnalysisPanel(QWidget* parent = nullptr);
  // Cancels a running analysis and waits for its worker (until the analyzer's next progress
  // point).
  ~AnalysisPanel() override;

  // The rlscope trace to analyze (an imported trace's path, not the Kineto file); empty shows
  // nothing. The scope goes back to the whole run.
  void setTrace(const QString& path);
  // What to analyze in the trace; the panel re-analyzes unless it is what is shown or coming.
  void setScope(const AnalysisScope& scope);

  QString tracePath() const { return tracePath_; }
  const AnalysisScope& scope() const { return scope_; }
  bool isAnalyzing() const { return analyzing_; }
  // The result shown (nullptr before the first, and after setTrace("")).
  const AnalysisResult* result() const { return result_ ? &*result_ : nullptr; }

  // The parts, for the main window's layout and for tests (the labels are the children named
  // analysisHeader, analysisStatus and analysisCorrection).
  BreakdownChart* chart() const { return chart_; }
  QTableView* categoryTable() const { return categoryView_; }
  QTableView* ranksTable() const { return ranksView_; }
  RankChart* rankChart() const { return rankChart_; }
  QComboBox* whatIfPicker() const { return gpuPicker_; }
  QTableView* whatIfTable() const { return whatIfView_; }

 signals:
  // A result or an error is shown (not for superseded requests).
  void analysisFinished(bool ok);

 private:
  void submit();
  void onProgress(std::uint64_t generation, const QString& line);
  void onDone(std::uint64_t generation, AnalysisResult result);
  void showResult();
  void showHeader();
  // The ranks' chart and table, shown for a job of two ranks or more; hidden when empty.
  void showRanks(const std::vector<RankRow>& ranks, const std::vector<std::string>& notes);
  QString whatIfGpu() const;

  QString tracePath_;
  AnalysisScope scope_;
  std::optional<AnalysisRequest> submitted_;  // the newest request handed to the runner
  std::uint64_t generation_ = 0;
  bool analyzing_ = false;
  std::optional<AnalysisResult> result_;

  QLabel* header_;
  QLabel* status_;
  QLabel* correction_;
  BreakdownChart* chart_;
  CategoryTableModel* categories_;
  QTableView* categoryView_;
  QWidget* ranksBox_;
  RankChart* rankChart_;
  RanksTableModel* ranks_;
  QTableView* ranksView_;
  QComboBox* gpuPicker_;
  QLabel* whatIfSummary_;
  WhatIfTableModel* whatIf_;
  QTableView* whatIfView_;
  std::unique_ptr<AnalysisRunner> runner_;  // last: its worker may post to everything above
};

}  // namespace rlscope::gui
