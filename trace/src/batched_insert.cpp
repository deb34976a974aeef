#include "batched_insert.h"

#include <cstdint>
#include <string>

#include "rlscope/trace/error.h"

namespace rlscope::trace {

BatchedInsert::BatchedInsert(Database& db, WriterThread& thread, std::string_view verb,
                             std::string_view table,
                             std::initializer_list<std::string_view> columns)
    : db_(db), thread_(thread), columns_(static_cast<int>(columns.size())) {
  std::string names, params;
  for (auto c : columns) {
    if (!names.empty()) {
      names += ", ";
      params += ", ";
    }
    names += c;
    params += '?';
  }
  sqlPrefix_ = std::string(verb) + " INTO " + std::string(table) + " (" + names + ") VALUES ";
  rowParams_ = "(" + params + ")";
  staging_.values.resize(static_cast<std::size_t>(kBatchRows * columns_));
  // Prepared here, before the writer thread first runs, so a bad column list fails at once.
  statementFor(kBatchRows);
}

void BatchedInsert::set(int column, std::string_view text) {
  if (text.size() > UINT32_MAX) {
    throw TraceError("a text value of " + std::to_string(text.size()) + " bytes is too large");
  }
  Value& v = slot(column);
  v.kind = Kind::kText;
  v.textOffset = staging_.text.size();
  v.textSize = static_cast<std::uint32_t>(text.size());
  staging_.text.append(text);
}

BatchedInsert::Batch BatchedInsert::takeFreeBatch() {
  std::lock_guard lock(freeMutex_);
  if (free_.empty()) {
    Batch b;
    b.values.resize(static_cast<std::size_t>(kBatchRows * columns_));
    return b;
  }
  Batch b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void BatchedInsert::handOff() {
  int rows = staged_;
  staged_ = 0;
  Batch next = takeFreeBatch();
  std::swap(next, staging_);
  thread_.post([this, batch = std::move(next), rows]() mutable {
    write(batch, rows);
    std::lock_guard lock(freeMutex_);
    free_.push_back(std::move(batch));
  });
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

void BatchedInsert::write(Batch& batch, int rows) {
  Statement& st = statementFor(rows);
  int param = 1;
  for (int i = 0; i < rows * columns_; ++i, ++param) {
    Value& v = batch.values[static_cast<std::size_t>(i)];
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
        // The batch, text included, outlives the step below.
        st.bind(param, std::string_view(batch.text).substr(v.textOffset, v.textSize));
        break;
    }
    v.kind = Kind::kNull;  // the batch is staged again from NULLs
  }
  st.step();
  st.resetKeepingBindings();  // every parameter is bound again before the next step
  batch.text.clear();
}

}  // namespace rlscope::trace
