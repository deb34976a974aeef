// The analysis panel's tables as Qt item models over the model's rows (analysis_model.h): the
// category table (category, resource, time, % of the scope), the what-if's operations
// (operation, time, predicted, ratio) and the ranks of a distributed job. Both sort on any column
// by value, not by the text shown (a QTableView with sorting enabled calls sort()).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "analysis_model.h"

namespace rlscope::gui {

class CategoryTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kCategory, kResource, kTime, kPercent, kColumnCount };

  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::vector<CategoryRow> rows);
  const std::vector<CategoryRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 private:
  std::vector<CategoryRow> rows_;
  int sortColumn_ = -1;
  Qt::SortOrder sortOrder_ = Qt::DescendingOrder;
};

class WhatIfTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kOperation, kTime, kPredicted, kRatio, kColumnCount };

  using QAbstractTableModel::QAbstractTableModel;

  // `severalProcesses`: operations are named with their process too.
  void setRows(std::vector<WhatIfOperation> rows, bool severalProcesses);
  const std::vector<WhatIfOperation>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 private:
  QString nameOf(const WhatIfOperation& o) const;

  std::vector<WhatIfOperation> rows_;
  bool severalProcesses_ = false;
  int sortColumn_ = -1;
  Qt::SortOrder sortOrder_ = Qt::DescendingOrder;
};

// The ranks of a distributed job (analysis_model.h RankRow): rank, host, time, collectives,
// waiting in them for the last rank, transfer, how many it entered last, the others' waiting
// for it, and what it ran meanwhile.
class RanksTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kHost,
    kTime,
    kCollectives,
    kWaiting,
    kTransfer,
    kLast,
    kOthersWaited,
    kDoing,
    kColumnCount
  };

  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::vector<RankRow> rows);
  const std::vector<RankRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 private:
  std::vector<RankRow> rows_;
  int sortColumn_ = -1;
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
};

}  // namespace rlscope::gui
