// The labels of a trace's ENUM_* tables (docs/trace-format.md): what exporters, reports and the
// GUI show for a stored enum value (a copy kind, a memory kind, an event class).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "rlscope/trace/sqlite.h"

namespace rlscope::trace {

// id → label of `table`: its `label` column, or `name` where a row has no label (nsys exports
// some tables with names only). At most `limit` rows: a stranger's trace may hold anything.
// Empty when the trace has no such table.
std::map<std::int64_t, std::string> readEnumLabels(Database& db, std::string_view table,
                                                   std::size_t limit = 4096);

}  // namespace rlscope::trace
