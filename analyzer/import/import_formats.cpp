// The formats `rlscope import` reads: one line each (a format's own file defines it).
#include "rlscope/import/importer.h"
#include "rlscope/import/kineto_importer.h"
#include "rlscope/import/nsys_importer.h"

namespace rlscope::import {

std::span<const Format* const> formats() {
  static const Format* const kFormats[] = {&nsysFormat(), &kinetoFormat()};
  return kFormats;
}

}  // namespace rlscope::import
