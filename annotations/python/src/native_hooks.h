// Native calls the profile function does not see. CPython reports calls of builtin functions and
// method descriptors to a profiler, but not calls of other native callables (numpy's ufuncs and
// __array_function__ dispatchers: np.matmul, np.tanh, np.dot) nor operators of native types
// (ndarray's a @ b, a + b). When a backend or simulator module is imported, rlscope replaces the
// vectorcall entry point of such objects in its namespace, and the number slots of its static
// types, by trampolines that record the category around the original.
#pragma once

#include <Python.h>

namespace rlscope::python {

// _instrument(module, category) -> int: hooks the module's native callables and its static
// types' operators; returns how many entry points were hooked.
PyObject* instrumentModule(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

}  // namespace rlscope::python
