// The analysis panel's tables as Qt item models over the model's rows (analysis_model.h): the
// category table (category, resource, time, % of the scope), the what-if's operations
// (operation, time, predicted, ratio) and the ranks of a distributed job. Both sort on any column
// by value, not by the text shown (a QTableView with sorting enabled calls sort()).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "rlscope/gui_analysis/analysis_model.h"

namespace rlscope::gui {

// What the tables share: their rows, a row count, and sorting that a new set of rows keeps (a
// QTableView with sorting enabled calls sort(); the subclass orders the rows by a column).
template <class Row>
class SortableRowsModel : public QAbstractTableModel {
 public:
  using QAbstractTableModel::QAbstractTableModel;

  const std::vector<Row>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
  }

  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override {
    sortColumn_ = column;
    sortOrder_ = order;
    emit this->layoutAboutToBeChanged();
    sortBy(column, order);
    emit this->layoutChanged();
  }

 protected:
  void replaceRows(std::vector<Row> rows) {
    this->beginResetModel();
    rows_ = std::move(rows);
    this->endResetModel();
    if (sortColumn_ >= 0) sort(sortColumn_, sortOrder_);
  }
  // The row of a valid index, else null.
  const Row* rowAt(const QModelIndex& index) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return nullptr;
    return &rows_[static_cast<std::size_t>(index.row())];
  }
  virtual void sortBy(int column, Qt::SortOrder order) = 0;

  std::vector<Row> rows_;

 private:
  int sortColumn_ = -1;
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
};

class CategoryTableModel : public SortableRowsModel<CategoryRow> {
  Q_OBJECT

 public:
  enum Column { kCategory, kResource, kTime, kPercent, kColumnCount };

  using SortableRowsModel::SortableRowsModel;

  void setRows(std::vector<CategoryRow> rows) { replaceRows(std::move(rows)); }

  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : kColumnCount;
  }
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void sortBy(int column, Qt::SortOrder order) override;
};

class WhatIfTableModel : public SortableRowsModel<WhatIfOperation> {
  Q_OBJECT

 public:
  enum Column { kOperation, kTime, kPredicted, kRatio, kColumnCount };

  using SortableRowsModel::SortableRowsModel;

  // `severalProcesses`: operations are named with their process too.
  void setRows(std::vector<WhatIfOperation> rows, bool severalProcesses) {
    severalProcesses_ = severalProcesses;
    replaceRows(std::move(rows));
  }

  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : kColumnCount;
  }
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void sortBy(int column, Qt::SortOrder order) override;
  QString nameOf(const WhatIfOperation& o) const;

  bool severalProcesses_ = false;
};

// The ranks of a distributed job (analysis_model.h RankRow): rank, host, time, collectives,
// waiting in them for the last rank, transfer, how many it entered last, the others' waiting
// for it, and what it ran meanwhile.
class RanksTableModel : public SortableRowsModel<RankRow> {
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

  using SortableRowsModel::SortableRowsModel;

  void setRows(std::vector<RankRow> rows) { replaceRows(std::move(rows)); }

  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : kColumnCount;
  }
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void sortBy(int column, Qt::SortOrder order) override;
};

}  // namespace rlscope::gui
