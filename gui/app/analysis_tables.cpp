#include "rlscope/gui_widgets/analysis_tables.h"

#include <QColor>
#include <algorithm>

#include "rlscope/gui_widgets/breakdown_chart.h"

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

QVariant CategoryTableModel::data(const QModelIndex& index, int role) const {
  const CategoryRow* row = rowAt(index);
  if (!row) return {};
  const auto& r = *row;
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

void CategoryTableModel::sortBy(int column, Qt::SortOrder order) {
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
}

// --- WhatIfTableModel ----------------------------------------------------------------------------

QString WhatIfTableModel::nameOf(const WhatIfOperation& o) const {
  QString name = QString::fromStdString(o.name);
  if (!o.phase.empty()) name += QStringLiteral(" (%1)").arg(QString::fromStdString(o.phase));
  if (severalProcesses_) name += QStringLiteral(" [%1]").arg(o.process);
  return name;
}

QVariant WhatIfTableModel::data(const QModelIndex& index, int role) const {
  const WhatIfOperation* row = rowAt(index);
  if (!row) return {};
  const auto& o = *row;
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

void WhatIfTableModel::sortBy(int column, Qt::SortOrder order) {
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
}

// --- RanksTableModel -----------------------------------------------------------------------------

namespace {

// A rank's value in `column`: what the column sorts by (text columns sort by their text).
QVariant rankValue(const RankRow& r, int column) {
  switch (column) {
    case RanksTableModel::kRank:
      return static_cast<qlonglong>(r.rank);
    case RanksTableModel::kHost:
      return QString::fromStdString(r.host);
    case RanksTableModel::kTime:
      return static_cast<qlonglong>(r.time);
    case RanksTableModel::kCollectives:
      return static_cast<qulonglong>(r.collectives);
    case RanksTableModel::kWaiting:
      return static_cast<qlonglong>(r.waitingForOthers);
    case RanksTableModel::kTransfer:
      return static_cast<qlonglong>(r.transferring);
    case RanksTableModel::kLast:
      return static_cast<qulonglong>(r.collectivesLast);
    case RanksTableModel::kOthersWaited:
      return static_cast<qlonglong>(r.othersWaited);
    case RanksTableModel::kDoing:
      return QString::fromStdString(r.doing);
    default:
      return {};
  }
}

bool isDuration(int column) {
  return column == RanksTableModel::kTime || column == RanksTableModel::kWaiting ||
         column == RanksTableModel::kTransfer || column == RanksTableModel::kOthersWaited;
}

}  // namespace

QVariant RanksTableModel::data(const QModelIndex& index, int role) const {
  const RankRow* row = rowAt(index);
  if (!row) return {};
  const auto& r = *row;
  const int column = index.column();
  if (role == Qt::TextAlignmentRole && column != kHost && column != kDoing)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::UserRole) return rankValue(r, column);
  if (role != Qt::DisplayRole) return {};
  if (isDuration(column)) return duration(static_cast<double>(rankValue(r, column).toLongLong()));
  return rankValue(r, column).toString();
}

QVariant RanksTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRank:
      return tr("Rank");
    case kHost:
      return tr("Host");
    case kTime:
      return tr("Time");
    case kCollectives:
      return tr("Collectives");
    case kWaiting:
      return tr("Waiting for the last rank");
    case kTransfer:
      return tr("Transfer");
    case kLast:
      return tr("Entered last");
    case kOthersWaited:
      return tr("Others waited for it");
    case kDoing:
      return tr("Meanwhile it ran");
    default:
      return {};
  }
}

void RanksTableModel::sortBy(int column, Qt::SortOrder order) {
  if (column == kHost || column == kDoing) {
    sortRows(rows_, order, [&](const RankRow& r) { return rankValue(r, column).toString(); });
  } else {
    sortRows(rows_, order, [&](const RankRow& r) { return rankValue(r, column).toDouble(); });
  }
}

}  // namespace rlscope::gui
