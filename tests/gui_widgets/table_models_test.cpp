// The analysis panel's table models (rlscope/gui_widgets/analysis_tables.h) under Qt's
// QAbstractItemModelTester, which checks every call a view makes (row and column counts, indexes,
// parents, data of every role, header data, the signals around a reset and a sort) against the
// model contract, aborting on the first violation: with rows, sorted by every column both
// ways, replaced by other rows, and empty.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "qt_app.h"
#include "rlscope/gui_widgets/analysis_tables.h"

namespace rlscope::gui {
namespace {

// Sorts by every column both ways and replaces the rows, all under the tester.
template <class Model, class SetRows>
void exercise(Model& model, SetRows setRows) {
  // Fatal: a violation aborts the test program, which ctest reports as this test's failure.
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  setRows(model, true);
  ASSERT_GT(model.rowCount(), 1);
  for (int column = 0; column < model.columnCount(); ++column) {
    for (auto order : {Qt::AscendingOrder, Qt::DescendingOrder}) model.sort(column, order);
  }
  setRows(model, false);
  EXPECT_EQ(model.rowCount(), 0);
  setRows(model, true);
  EXPECT_EQ(model.rowCount(), 3);
}

TEST(TableModels, CategoryModelKeepsTheModelContract) {
  testing::qtApp();
  CategoryTableModel model;
  exercise(model, [](CategoryTableModel& m, bool some) {
    std::vector<CategoryRow> rows;
    if (some) {
      rows = {{trace::Category::kPython, "Python", Resource::kCpu, 500, 50.0},
              {trace::Category::kBackend, "Backend", Resource::kCpu, 300, 30.0},
              {std::nullopt, "idle", Resource::kCpu, 200, 20.0}};
    }
    m.setRows(std::move(rows));
  });
}

TEST(TableModels, WhatIfModelKeepsTheModelContract) {
  testing::qtApp();
  WhatIfTableModel model;
  exercise(model, [](WhatIfTableModel& m, bool some) {
    std::vector<WhatIfOperation> rows;
    if (some) {
      rows = {{1, "step", "", 1000, 400, 0.4},
              {1, "inference", "training", 300, 300, 1.0},
              {2, "(unannotated)", "", 50, 20, 0.5}};
    }
    m.setRows(std::move(rows), true);
  });
}

TEST(TableModels, RanksModelKeepsTheModelContract) {
  testing::qtApp();
  RanksTableModel model;
  exercise(model, [](RanksTableModel& m, bool some) {
    std::vector<RankRow> rows;
    if (some) {
      rows = {{0, "node0", 1000, 4, 300, 100, 0, 0, ""},
              {1, "node1", 1200, 4, 0, 100, 3, 900, "simulate / Python"},
              {2, "", 900, 4, 200, 100, 1, 150, "step / Backend"}};
    }
    m.setRows(std::move(rows));
  });
}

}  // namespace
}  // namespace rlscope::gui
