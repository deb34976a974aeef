// Rows written per table, counted where millions of rows are written (the Kineto importer, the
// merge of parts): found by the address of the table's name (a schema.h constant), since a
// std::string and a map lookup per row were about 5 % of such a load. Reported by name at the end.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlscope::trace {

class RowCounts {
 public:
  // `table` must outlive the counts: a schema.h constant or another string literal.
  void add(std::string_view table) {
    for (auto& [name, n] : counts_) {
      if (name.data() == table.data()) {
        ++n;
        return;
      }
    }
    counts_.emplace_back(table, 1);
  }

  // Adds the counts to `rowsPerTable` by name and starts again from zero.
  void moveTo(std::map<std::string, std::uint64_t>& rowsPerTable) {
    for (const auto& [name, n] : counts_) rowsPerTable[std::string(name)] += n;
    counts_.clear();
  }

 private:
  std::vector<std::pair<std::string_view, std::uint64_t>> counts_;
};

}  // namespace rlscope::trace
