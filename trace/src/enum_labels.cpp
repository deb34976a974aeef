#include "rlscope/trace/enum_labels.h"

namespace rlscope::trace {

std::map<std::int64_t, std::string> readEnumLabels(Database& db, std::string_view table,
                                                   std::size_t limit) {
  std::map<std::int64_t, std::string> labels;
  if (!db.hasTable(table)) return labels;
  std::string text = db.hasColumn(table, "label") ? "COALESCE(label, name)" : "name";
  auto st = db.prepare("SELECT id, " + text + " FROM " + quotedIdentifier(table) + " LIMIT " +
                       std::to_string(limit));
  while (st.step()) labels[st.columnInt(0)] = std::string(st.columnText(1));
  return labels;
}

}  // namespace rlscope::trace
