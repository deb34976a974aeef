#include "rlscope/gui_widgets/category_palette.h"

#include <array>

namespace rlscope::gui {

namespace {

constexpr std::array<QRgb, kPaletteSize> kColors{
    0xffb8b8c8,  // operations
    0xff7fb3e0,  // Python
    0xfff2a65a,  // Backend
    0xff8fd18f,  // Simulator
    0xffe88f8f,  // CUDA API
    0xffc4a8e3,  // Native
    0xff5fc4b4,  // GPU kernel
    0xfff0d264,  // memcpy
    0xffd6a98c,  // memset
    0xffdcdcea,  // waiting: paler than any work, darker than idle
};

}  // namespace

int paletteIndex(std::optional<trace::Category> category) {
  const int value = category ? static_cast<int>(*category) : 0;
  return value >= 1 && value < kPaletteSize ? value : 0;
}

QColor paletteColor(int index) {
  return QColor::fromRgb(kColors[index >= 0 && index < kPaletteSize ? index : 0]);
}

}  // namespace rlscope::gui
