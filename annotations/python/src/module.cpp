// rlscope._rlscope: the native half of the Python package. Operations, phases and progress go
// out as NVTX through annotations/rlscope.h, as from C++: under rlscope-prof the collector's NVTX
// injection records them; otherwise NVTX has no tool attached and each call returns at once.
#include <Python.h>

#include <cstdint>
#include <string>

#include "collector_link.h"
#include "method_cast.h"
#include "native_hooks.h"
#include "rlscope/rlscope.h"
#include "transitions.h"

namespace rlscope::python {

namespace {

// --- Operation: `with rlscope.operation(name):` ---------------------------------------------

struct OperationObject {
  PyObject_HEAD PyObject* name;  // str
  const char* utf8;              // owned by `name`
};

// The package's Python helpers for what is easier written in Python (rlscope/__init__.py binds
// them at import): async with, and decorating functions, generators and coroutines.
struct Helpers {
  PyObject* aenter = nullptr;    // async def (op) -> op
  PyObject* aexit = nullptr;     // async def (op, *exc) -> False
  PyObject* decorate = nullptr;  // (name, fn) -> wrapper
};
Helpers g_helpers;

// rlscope.operation(name): construction through vectorcall, the cheapest path CPython has for
// `with rlscope.operation("x"):` in a loop.
PyObject* operationNew(PyObject* type, PyObject* const* args, std::size_t nargsf,
                       PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t keywords = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* name = nullptr;
  if (n == 1 && keywords == 0) {
    name = args[0];
  } else if (n == 0 && keywords == 1 &&
             PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") == 0) {
    name = args[0];
  } else {
    PyErr_SetString(PyExc_TypeError, "operation(name): one argument, the operation's name");
    return nullptr;
  }
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "operation name must be a str, not %.100s",
                 Py_TYPE(name)->tp_name);
    return nullptr;
  }
  const char* utf8 = PyUnicode_AsUTF8(name);
  if (!utf8) return nullptr;
  auto* tp = reinterpret_cast<PyTypeObject*>(type);
  PyObject* self = tp->tp_alloc(tp, 0);
  if (!self) return nullptr;
  auto* op = reinterpret_cast<OperationObject*>(self);
  Py_INCREF(name);
  op->name = name;
  op->utf8 = utf8;
  return self;
}

PyObject* operationNewFromTuple(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return PyVectorcall_Call(reinterpret_cast<PyObject*>(type), args, kwargs);
}

PyObject* callHelper(PyObject* helper, const char* what, PyObject* const* args, std::size_t n) {
  if (!helper) {
    PyErr_Format(PyExc_RuntimeError, "rlscope: %s needs the rlscope package", what);
    return nullptr;
  }
  return PyObject_Vectorcall(helper, args, n, nullptr);
}

PyObject* operationAenter(PyObject* self, PyObject*) {
  return callHelper(g_helpers.aenter, "async with", &self, 1);
}

PyObject* operationAexit(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* all[4] = {self, Py_None, Py_None, Py_None};
  for (Py_ssize_t i = 0; i < nargs && i < 3; ++i) all[i + 1] = args[i];
  return callHelper(g_helpers.aexit, "async with", all, 4);
}

// op(fn): the operation as a decorator.
PyObject* operationCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* fn = nullptr;
  if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyArg_UnpackTuple(args, "operation", 1, 1, &fn)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "an operation decorates one function");
    return nullptr;
  }
  PyObject* call[2] = {reinterpret_cast<OperationObject*>(self)->name, fn};
  return callHelper(g_helpers.decorate, "decorating", call, 2);
}

void operationDealloc(PyObject* self) {
  auto* op = reinterpret_cast<OperationObject*>(self);
  Py_XDECREF(op->name);
  Py_TYPE(self)->tp_free(self);
}

PyObject* operationEnter(PyObject* self, PyObject*) {
  rlscope_operation_push(reinterpret_cast<OperationObject*>(self)->utf8);
  Py_INCREF(self);
  return self;
}

PyObject* operationExit(PyObject*, PyObject* const*, Py_ssize_t) {
  rlscope_operation_pop();
  Py_RETURN_FALSE;  // exceptions go on
}

// The start/end form, for code that other code interleaves with on the thread (async with,
// generators, coroutines): _start() returns the range's id, which _end(id) closes. The object
// keeps no state, so one object may be in several such blocks at once.
PyObject* operationStart(PyObject* self, PyObject*) {
  return PyLong_FromUnsignedLongLong(
      rlscope_operation_start(reinterpret_cast<OperationObject*>(self)->utf8));
}

PyObject* operationEnd(PyObject*, PyObject* id) {
  unsigned long long range = PyLong_AsUnsignedLongLong(id);
  if (range == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  rlscope_operation_end(range);
  Py_RETURN_NONE;
}

PyObject* operationName(PyObject* self, void*) {
  PyObject* name = reinterpret_cast<OperationObject*>(self)->name;
  if (!name) Py_RETURN_NONE;
  Py_INCREF(name);
  return name;
}

PyObject* operationRepr(PyObject* self) {
  return PyUnicode_FromFormat("rlscope.operation(%R)",
                              reinterpret_cast<OperationObject*>(self)->name);
}

PyMethodDef kOperationMethods[] = {
    {"__enter__", operationEnter, METH_NOARGS, "Opens the operation on this thread."},
    {"__exit__", asMethod(operationExit), METH_FASTCALL,
     "Closes the thread's innermost operation."},
    {"__aenter__", operationAenter, METH_NOARGS, "async with: opens a start/end range."},
    {"__aexit__", asMethod(operationAexit), METH_FASTCALL,
     "async with: ends the range __aenter__ opened for this task."},
    {"_start", operationStart, METH_NOARGS, "Opens the operation as a start/end range: its id."},
    {"_end", operationEnd, METH_O, "Ends the range of the id _start returned."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kOperationGetSet[] = {
    {"name", operationName, nullptr, "The operation's name.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject g_operationType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "rlscope.operation";
  t.tp_basicsize = sizeof(OperationObject);
  t.tp_dealloc = operationDealloc;
  t.tp_repr = operationRepr;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = PyDoc_STR(
      "operation(name): an operation of the program, as a context manager or a decorator.\n\n"
      "`with rlscope.operation(\"simulation\"):` opens the operation on the current thread and\n"
      "closes it at the end of the block, exceptions included; operations nest. `async with`\n"
      "and decorated coroutines, generators and async generators work too: their operation\n"
      "spans the whole run of the coroutine or generator, whatever runs in between.");
  t.tp_methods = kOperationMethods;
  t.tp_getset = kOperationGetSet;
  t.tp_call = operationCall;
  t.tp_new = operationNewFromTuple;
  t.tp_vectorcall = operationNew;
  return t;
}();

// _bind(aenter, aexit, decorate): the package's helpers (see Helpers).
PyObject* bindHelpers(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "_bind(aenter, aexit, decorate)");
    return nullptr;
  }
  PyObject** slots[3] = {&g_helpers.aenter, &g_helpers.aexit, &g_helpers.decorate};
  for (int i = 0; i < 3; ++i) {
    Py_INCREF(args[i]);
    Py_XSETREF(*slots[i], args[i]);
  }
  Py_RETURN_NONE;
}

// --- phases and progress -------------------------------------------------------------------

struct ModuleState {
  bool inPhase = false;
  rlscope_phase_t phase = 0;
  std::string phaseName;
};
ModuleState g_state;  // guarded by the GIL

void beginPhase(const std::string& name) {
  g_state.phase = rlscope_phase_begin(name.c_str());
  g_state.phaseName = name;
  g_state.inPhase = true;
}

PyObject* setPhase(PyObject*, PyObject* name) {
  if (name != Py_None && !PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "set_phase(name): name must be a str or None");
    return nullptr;
  }
  if (g_state.inPhase) rlscope_phase_end(g_state.phase);
  g_state.inPhase = false;
  if (name != Py_None) {
    const char* utf8 = PyUnicode_AsUTF8(name);
    if (!utf8) return nullptr;
    beginPhase(utf8);
  }
  Py_RETURN_NONE;
}

// A non-negative integer argument; false with the Python error set otherwise.
bool countArgument(PyObject* value, unsigned long long& out) {
  out = PyLong_AsUnsignedLongLong(value);
  return !(out == static_cast<unsigned long long>(-1) && PyErr_Occurred());
}

PyObject* reportProgress(PyObject*, PyObject* args, PyObject* kwargs) {
  PyObject* stepArg = nullptr;
  PyObject* totalArg = Py_None;
  static const char* keywords[] = {"step", "total", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:report_progress",
                                   const_cast<char**>(keywords), &stepArg, &totalArg))
    return nullptr;
  unsigned long long step = 0, total = 0;
  if (!countArgument(stepArg, step)) return nullptr;
  if (totalArg != Py_None) {
    if (!countArgument(totalArg, total)) return nullptr;
    std::string what = "progress/" + std::to_string(total);
    rlscope_progress(what.c_str(), step);
  } else {
    rlscope_progress("progress", step);
  }
  Py_RETURN_NONE;
}

// A fork child continues its parent's phase in a part of its own.
PyObject* afterForkChild(PyObject* module, PyObject* unused) {
  if (g_state.inPhase) beginPhase(g_state.phaseName);
  return afterForkInChild(module, unused);
}

PyObject* trackingAvailablePy(PyObject*, PyObject*) {
  return PyBool_FromLong(trackingAvailable());
}

PyObject* recordingPy(PyObject*, PyObject*) {
  const CollectorLink& l = collectorLink();
  return PyBool_FromLong(l.complete() && l.recording() != 0);
}

PyMethodDef kModuleMethods[] = {
    {"set_phase", setPhase, METH_O,
     "set_phase(name): the process enters phase `name` (None: no phase)."},
    {"report_progress", asMethod(reportProgress), METH_VARARGS | METH_KEYWORDS,
     "report_progress(step, total=None): marks how far the run is."},
    {"recording", recordingPy, METH_NOARGS,
     "Whether this process records into an rlscope trace (it runs under rlscope-prof)."},
    {"tracking_available", trackingAvailablePy, METH_NOARGS,
     "Whether rlscope-prof asked this process to record Python categories."},
    {"start_tracking", asMethod(startTracking), METH_FASTCALL,
     "start_tracking(backend_modules, simulator_modules, waiting_functions) -> bool."},
    {"_thread_bootstrap", asMethod(threadBootstrap), METH_FASTCALL,
     "threading.setprofile hook that starts tracking in a new thread."},
    {"_after_fork_child", afterForkChild, METH_NOARGS, "os.register_at_fork after_in_child hook."},
    {"_bind", asMethod(bindHelpers), METH_FASTCALL,
     "_bind(aenter, aexit, decorate): the package's Python helpers."},
    {"_instrument", asMethod(instrumentModule), METH_FASTCALL,
     "_instrument(module, category) -> int: hooks native callables and operators."},
    {"transitions", transitionCount, METH_NOARGS,
     "Python <-> native transitions recorded by this process so far."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef g_module = {
    PyModuleDef_HEAD_INIT,
    "_rlscope",
    "Native half of the rlscope package (use the rlscope module, not this one).",
    -1,
    kModuleMethods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

}  // namespace rlscope::python

PyMODINIT_FUNC PyInit__rlscope() {
  using namespace rlscope::python;
  if (PyType_Ready(&g_operationType) < 0) return nullptr;
  PyObject* m = PyModule_Create(&g_module);
  if (!m) return nullptr;
  Py_INCREF(&g_operationType);
  if (PyModule_AddObject(m, "operation", reinterpret_cast<PyObject*>(&g_operationType)) < 0) {
    Py_DECREF(&g_operationType);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
