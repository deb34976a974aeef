#include "analysis_tables.h"

#include <QColor>
#include <algorithm>

#include "breakdown_chart.h"

namespace rlscope::gui {

namespace {

QString duration(double ns) {
  return QString::fromStdString(durationText(ns));
}

// Sorts by a key, ascending or descending; ties keep their order.
template <class Row, class Key>
void sortRows(std::vector<Row>& rows, Qt::SortOrder order, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return order == Qt::AscendingOrder ? key(a) < key(b) : key(b) < key(a);
  });
}

}  // namespace

// --- CategoryTableModel --------------------------------------------------------------------------

void CategoryTableModel::setRows(std::vector<CategoryRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
  if (sortColumn_ >= 0) sort(sortColumn_, sortOrder_);
}

int CategoryTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CategoryTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant CategoryTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const auto& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::DecorationRole && index.column() == kCategory)
    return BreakdownChart::segmentColor({.resource = r.resource, .category = r.category});
  if (role == Qt::TextAlignmentRole && index.column() >= kTime)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::UserRole) {  // the value, for tests and scripts
    switch (index.column()) {
      case kTime:
        return QVariant::fromValue<qlonglong>(r.time);
      case kPercent:
        return r.percent;
      default:
        break;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kCategory:
      return QString::fromStdString(r.name);
    case kResource:
      return QString::fromUtf8(resourceName(r.resource));
    case kTime:
      return duration(static_cast<double>(r.time));
    case kPercent:
      return QStringLiteral("%1 %").arg(r.percent, 0, 'f', 1);
    default:
      return {};
  }
}

QVariant CategoryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kCategory:
      return tr("Category");
    case kResource:
      return tr("Resource");
    case kTime:
      return tr("Time");
    case kPercent:
      return tr("%");
    default:
      return {};
  }
}

void CategoryTableModel::sort(int column, Qt::SortOrder order) {
  sortColumn_ = column;
  sortOrder_ = order;
  emit layoutAboutToBeChanged();
  switch (column) {
    case kCategory:
      sortRows(rows_, order, [](const CategoryRow& r) { return r.name; });
      break;
    case kResource:
      sortRows(rows_, order, [](const CategoryRow& r) { return static_cast<int>(r.resource); });
      break;
    default:  // time and percent order alike
      sortRows(rows_, order, [](const CategoryRow& r) { return r.time; });
      break;
  }
  emit layoutChanged();
}

// --- WhatIfTableModel ----------------------------------------------------------------------------

void WhatIfTableModel::setRows(std::vector<WhatIfOperation> rows, bool severalProcesses) {
  beginResetModel();
  rows_ = std::move(rows);
  severalProcesses_ = severalProcesses;
  endResetModel();
  if (sortColumn_ >= 0) sort(sortColumn_, sortOrder_);
}

QString WhatIfTableModel::nameOf(const WhatIfOperation& o) const {
  QString name = QString::fromStdString(o.name);
  if (!o.phase.empty()) name += QStringLiteral(" (%1)").arg(QString::fromStdString(o.phase));
  if (severalProcesses_) name += QStringLiteral(" [%1]").arg(o.process);
  return name;
}

int WhatIfTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int WhatIfTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant WhatIfTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const auto& o = rows_[static_cast<std::size_t>(index.row())];
  const double ratio = o.originNs > 0 ? o.predictedNs / o.originNs : 1;
  if (role == Qt::TextAlignmentRole && index.column() != kOperation)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kTime:
        return o.originNs;
      case kPredicted:
        return o.predictedNs;
      case kRatio:
        return ratio;
      default:
        break;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kOperation:
      return nameOf(o);
    case kTime:
      return duration(o.originNs);
    case kPredicted:
      return duration(o.predictedNs);
    case kRatio:
      return QStringLiteral("%1×").arg(ratio, 0, 'f', 2);
    default:
      return {};
  }
}

QVariant WhatIfTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kOperation:
      return tr("Operation");
    case kTime:
      return tr("Time");
    case kPredicted:
      return tr("Predicted");
    case kRatio:
      return tr("Predicted / time");
    default:
      return {};
  }
}

void WhatIfTableModel::sort(int column, Qt::SortOrder order) {
  sortColumn_ = column;
  sortOrder_ = order;
  emit layoutAboutToBeChanged();
  switch (column) {
    case kOperation:
      sortRows(rows_, order, [&](const WhatIfOperation& o) { return nameOf(o); });
      break;
    case kPredicted:
      sortRows(rows_, order, [](const WhatIfOperation& o) { return o.predictedNs; });
      break;
    case kRatio:
      sortRows(rows_, order, [](const WhatIfOperation& o) {
        return o.originNs > 0 ? o.predictedNs / o.originNs : 1.0;
      });
      break;
    default:
      sortRows(rows_, order, [](const WhatIfOperation& o) { return o.originNs; });
      break;
  }
  emit layoutChanged();
}

}  // namespace rlscope::gui
