// Reading millions of rows fast: `SELECT columns FROM table` in storage order, handed to a callable
// row by row. The analyzer reads its big tables this way rather than through TraceReader's
// for-each API: only the columns it uses are decoded (a kernel row has 27, a CPU interval an args
// text) and no std::function is called per row, which together halve the reading time.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "rlscope/trace/sqlite.h"

namespace rlscope::trace {

// The rows of a table whose rowid is in [from, to): a part of it, for reading one table on two
// connections at once.
struct RowidRange {
  std::int64_t from = std::numeric_limits<std::int64_t>::min();
  std::int64_t to = std::numeric_limits<std::int64_t>::max();
  bool all() const { return *this == RowidRange{}; }
  bool operator==(const RowidRange&) const = default;
};

// Calls fn(statement) for each row of `SELECT columns FROM table` in storage order (rowid), the
// order the for-each API's storageOrder gives. Unset columns read as 0 through columnInt, as in
// the records. `table` and `columns` are the caller's constants (schema.h names), never input.
template <class Fn>
void scan(Database& db, std::string_view table, std::string_view columns, Fn&& fn,
          RowidRange range = {}) {
  auto st =
      db.prepare("SELECT " + std::string(columns) + " FROM " + std::string(table) +
                 (range.all() ? "" : " WHERE rowid >= ?1 AND rowid < ?2") + " ORDER BY rowid");
  if (!range.all()) {
    st.bind(1, range.from);
    st.bind(2, range.to);
  }
  while (st.step()) fn(st);
}

}  // namespace rlscope::trace
