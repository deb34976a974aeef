// PyMethodDef wants a PyCFunction; METH_FASTCALL and METH_KEYWORDS functions have other
// signatures. One cast, through a generic function pointer (no -Wcast-function-type warning).
#pragma once

#include <Python.h>

namespace rlscope::python {

template <class F>
PyCFunction asMethod(F f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

}  // namespace rlscope::python
