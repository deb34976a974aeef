// Multi-row INSERT for bulk loading: rows are staged in reusable slots and written `kBatchRows`
// at a time with one `INSERT ... VALUES (...), (...), ...` statement. Per-statement work in SQLite
// (step, reset, cursor open/close) is then paid once per batch instead of once per row, which
// doubles the insert rate. Full batches are handed to the writer thread, which binds and steps
// them while the caller stages the next ones. Internal to the writer.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rlscope/trace/sqlite.h"
#include "writer_thread.h"

namespace rlscope::trace {

class BatchedInsert {
 public:
  static constexpr int kBatchRows = 64;

  BatchedInsert(Database& db, WriterThread& thread, std::string_view verb, std::string_view table,
                std::initializer_list<std::string_view> columns);

  // Stage one row: set its columns (unset ones are NULL), then endRow(), which hands the batch to
  // the writer thread once it is full.
  void set(int column, std::int64_t value) {
    Value& v = slot(column);
    v.kind = Kind::kInt;
    v.i = value;
  }
  void set(int column, double value) {
    Value& v = slot(column);
    v.kind = Kind::kDouble;
    v.d = value;
  }
  void set(int column, std::string_view text);  // copied into the batch's text buffer
  void setNull(int column) { slot(column).kind = Kind::kNull; }
  void endRow() {
    if (++staged_ == kBatchRows) handOff();
  }

  // Hands over the rows of an unfinished batch.
  void flush() {
    if (staged_ > 0) handOff();
  }

 private:
  enum class Kind : std::uint8_t { kNull, kInt, kDouble, kText };
  // 16 bytes, no string of its own: a kernel batch is 64 x 27 values, and the writer thread
  // walks all of them for every batch.
  struct Value {
    Kind kind = Kind::kNull;
    std::uint32_t textSize = 0;
    union {
      std::int64_t i = 0;
      double d;
      std::uint64_t textOffset;  // into Batch::text
    };
  };
  struct Batch {
    std::vector<Value> values;
    std::string text;  // the batch's TEXT values, one after another; reused
  };

  Value& slot(int column) { return staging_.values[staged_ * columns_ + column]; }
  void handOff();
  Batch takeFreeBatch();
  // Writer thread only.
  Statement& statementFor(int rows);
  void write(Batch& batch, int rows);

  Database& db_;
  WriterThread& thread_;
  std::string sqlPrefix_;  // "INSERT INTO t (a, b) VALUES "
  std::string rowParams_;  // "(?, ?)"
  int columns_;
  int staged_ = 0;
  Batch staging_;
  std::mutex freeMutex_;
  std::vector<Batch> free_;  // written batches, reused so their text buffers keep their capacity
  std::map<int, Statement> statements_;  // rows per statement -> prepared statement
};

}  // namespace rlscope::trace
