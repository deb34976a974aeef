#include "rlscope/trace/records.h"

#include <array>

namespace rlscope::trace {

namespace {
constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "Python",     "Backend",    "Simulator",  "CUDA API", "Native",
    "GPU kernel", "GPU memcpy", "GPU memset", "Waiting",
};
}  // namespace

std::string_view categoryName(Category c) {
  auto i = static_cast<int>(c);
  if (i < 1 || i > kCategoryCount) return "unknown";
  return kCategoryNames[i - 1];
}

std::optional<Category> categoryFromName(std::string_view name) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (kCategoryNames[i] == name) return static_cast<Category>(i + 1);
  }
  return std::nullopt;
}

}  // namespace rlscope::trace
