// The timeline's colours, in one place: one per category of docs/trace-format.md (Python, Backend,
// Simulator, CUDA API, Native, GPU kernel, memcpy, memset) and one for operations, which have no
// category. Light enough for black text on top.
#pragma once

#include <QColor>
#include <optional>

#include "rlscope/trace/records.h"

namespace rlscope::gui {

// Index of a colour: the category's value (1 to kCategoryCount), 0 for operations.
inline constexpr int kPaletteSize = trace::kCategoryCount + 1;

int paletteIndex(std::optional<trace::Category> category);
QColor paletteColor(int index);
inline QColor categoryColor(std::optional<trace::Category> category) {
  return paletteColor(paletteIndex(category));
}

}  // namespace rlscope::gui
