#include "batched_insert.h"

namespace rlscope::trace {

BatchedInsert::BatchedInsert(Database& db, std::string_view verb, std::string_view table,
                             std::initializer_list<std::string_view> columns)
    : db_(db), columns_(static_cast<int>(columns.size())) {
  sqlPrefix_ = std::string(verb) + " INTO " + std::string(table) + " (";
  rowParams_ = "(";
  bool first = true;
  for (auto c : columns) {
    if (!first) {
      sqlPrefix_ += ", ";
      rowParams_ += ", ";
    }
    first = false;
    sqlPrefix_ += c;
    rowParams_ += '?';
  }
  sqlPrefix_ += ") VALUES ";
  rowParams_ += ')';
  slots_.resize(static_cast<std::size_t>(kBatchRows * columns_));
  statementFor(kBatchRows);  // fail early on a bad column list
}

void BatchedInsert::set(int column, std::string_view text) {
  Value& v = slot(column);
  v.kind = Kind::kText;
  v.text.assign(text);
}

void BatchedInsert::endRow() {
  if (++staged_ == kBatchRows) write(kBatchRows);
}

void BatchedInsert::flush() {
  if (staged_ > 0) write(staged_);
}

Statement& BatchedInsert::statementFor(int rows) {
  auto it = statements_.find(rows);
  if (it != statements_.end()) return it->second;
  std::string sql = sqlPrefix_;
  for (int r = 0; r < rows; ++r) {
    if (r) sql += ", ";
    sql += rowParams_;
  }
  return statements_.emplace(rows, db_.prepare(sql)).first->second;
}

void BatchedInsert::write(int rows) {
  Statement& st = statementFor(rows);
  int param = 1;
  for (int i = 0; i < rows * columns_; ++i, ++param) {
    Value& v = slots_[static_cast<std::size_t>(i)];
    switch (v.kind) {
      case Kind::kNull:
        st.bindNull(param);
        break;
      case Kind::kInt:
        st.bind(param, v.i);
        break;
      case Kind::kDouble:
        st.bind(param, v.d);
        break;
      case Kind::kText:
        st.bind(param, std::string_view(v.text));  // the slot outlives the step below
        break;
    }
    v.kind = Kind::kNull;  // the next row starts with NULLs
  }
  st.step();
  st.reset();
  staged_ = 0;
}

}  // namespace rlscope::trace
