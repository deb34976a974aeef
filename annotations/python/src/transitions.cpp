#include "transitions.h"

#include <frameobject.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "category_stack.h"
#include "collector_link.h"
#include "monitoring.h"

namespace rlscope::python {

namespace {

constexpr std::uint32_t kWaiting = RLSCOPE_CATEGORY_WAITING;  // time.sleep, a lock: no CPU

// Everything below runs with the GIL held.
struct Tracker {
  bool running = false;
  std::vector<std::string> backend, simulator;
  std::unordered_set<std::string> waiting;
  bool monitoring = false;  // sys.monitoring (monitoring.cpp) rather than the profile function
  std::unordered_map<const void*, Classification> byDefinition;
};

// sys.monitoring on Python 3.12 and newer, unless RLSCOPE_PYTHON_TRACKER=profile forces the
// profile function (to compare the two trackers).
// RLSCOPE_PYTHON_TRACKING=events (calibration's python_events configuration): the tracker runs
// and counts its events but records no transitions.
bool transitionsWanted() {
  const char* tracking = std::getenv("RLSCOPE_PYTHON_TRACKING");
  return !(tracking && std::strcmp(tracking, "events") == 0);
}

bool monitoringWanted() {
#if PY_VERSION_HEX >= 0x030C0000
  const char* forced = std::getenv("RLSCOPE_PYTHON_TRACKER");
  return !(forced && std::strcmp(forced, "profile") == 0);
#else
  return false;
#endif
}

Tracker g_tracker;

std::string utf8(PyObject* s) {
  if (!s || !PyUnicode_Check(s)) return {};
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (!p) {
    PyErr_Clear();
    return {};
  }
  return std::string(p, static_cast<std::size_t>(n));
}

// A type's module and short name: "numpy" and "ndarray" for numpy.ndarray.
void typeNames(PyTypeObject* type, std::string& module, std::string& name) {
  PyObject* m = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__module__");
  module = utf8(m);
  Py_XDECREF(m);
  if (!m) PyErr_Clear();
  name = type->tp_name;
  auto dot = name.rfind('.');
  if (dot != std::string::npos) {
    if (module.empty()) module = name.substr(0, dot);
    name = name.substr(dot + 1);
  }
}

// The defining module ("numpy.core._multiarray_umath") and qualified name
// ("numpy.core._multiarray_umath.dot", "numpy.ndarray.sum") of a native callable.
void namesOf(PyObject* callable, std::string& module, std::string& qualified) {
  const char* function = "";
  if (PyCFunction_Check(callable)) {
    auto* f = reinterpret_cast<PyCFunctionObject*>(callable);
    function = f->m_ml->ml_name;
    if (f->m_module && PyUnicode_Check(f->m_module)) {
      module = utf8(f->m_module);
      qualified = module + "." + function;
      return;
    }
    if (f->m_self && PyModule_Check(f->m_self)) {
      const char* m = PyModule_GetName(f->m_self);
      if (!m) PyErr_Clear();
      module = m ? m : "";
      qualified = module + "." + function;
      return;
    }
    if (f->m_self) {
      std::string type;
      typeNames(Py_TYPE(f->m_self), module, type);
      qualified = module + "." + type + "." + function;
      return;
    }
  } else if (Py_IS_TYPE(callable, &PyMethodDescr_Type)) {
    auto* d = reinterpret_cast<PyMethodDescrObject*>(callable);
    function = d->d_method->ml_name;
    std::string type;
    typeNames(d->d_common.d_type, module, type);
    qualified = module + "." + type + "." + function;
    return;
  } else {
    // Another native callable (a numpy ufunc, an array-function dispatcher): its type's module
    // and its __name__, "numpy.tanh".
    std::string type;
    typeNames(Py_TYPE(callable), module, type);
    PyObject* n = PyObject_GetAttrString(callable, "__name__");
    if (!n) PyErr_Clear();
    std::string name = utf8(n);
    Py_XDECREF(n);
    qualified = module + "." + (name.empty() ? type : name);
    return;
  }
  qualified = module + "." + function;
}

// Whether `module` is `prefix` or inside it ("numpy.linalg" is inside "numpy").
bool within(const std::string& module, const std::string& prefix) {
  return module.size() >= prefix.size() && module.compare(0, prefix.size(), prefix) == 0 &&
         (module.size() == prefix.size() || module[prefix.size()] == '.');
}

Classification classify(PyObject* callable) {
  Classification c;
  std::string module, qualified;
  namesOf(callable, module, qualified);
  if (g_tracker.waiting.count(qualified)) {
    c.category = kWaiting;
  } else {
    for (const auto& m : g_tracker.simulator)
      if (within(module, m)) c.category = RLSCOPE_CATEGORY_SIMULATOR;
    if (c.category == kUntracked)
      for (const auto& m : g_tracker.backend)
        if (within(module, m)) c.category = RLSCOPE_CATEGORY_BACKEND;
  }
  if (c.category != kUntracked) c.name = registerName(qualified);
  return c;
}

}  // namespace

const void* definitionOf(PyObject* callable) {
  if (PyCFunction_Check(callable)) return reinterpret_cast<PyCFunctionObject*>(callable)->m_ml;
  if (Py_IS_TYPE(callable, &PyMethodDescr_Type))
    return reinterpret_cast<PyMethodDescrObject*>(callable)->d_method;
  return callable;
}

const Classification& classificationOf(PyObject* callable, const void* definition) {
  auto it = g_tracker.byDefinition.find(definition);
  if (it == g_tracker.byDefinition.end())
    it = g_tracker.byDefinition.emplace(definition, classify(callable)).first;
  return it->second;
}

bool trackedModule(const std::string& module) {
  for (const auto& m : g_tracker.simulator)
    if (within(module, m)) return true;
  for (const auto& m : g_tracker.backend)
    if (within(module, m)) return true;
  return false;
}

std::string typeModule(PyTypeObject* type) {
  std::string module, name;
  typeNames(type, module, name);
  return module;
}

namespace {

int profile(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  ThreadTracking& t = currentThread();
  countEvent(t);
  switch (what) {
    case PyTrace_CALL:
      // Python code that native code of a tracked module calls back.
      if (!t.stack.empty() && !t.stack.back().python)
        enter(t, {frame, true, RLSCOPE_CATEGORY_PYTHON, 0});
      break;
    case PyTrace_RETURN:  // also when the frame is left by an exception, or a generator yields
      if (!t.stack.empty() && t.stack.back().python && t.stack.back().key == frame) leave(t);
      break;
    case PyTrace_C_CALL: {
      const void* definition = definitionOf(arg);
      const Classification& c = classificationOf(arg, definition);
      if (c.category != kUntracked) enter(t, {definition, false, c.category, c.name});
      break;
    }
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (!t.stack.empty() && !t.stack.back().python && t.stack.back().key == definitionOf(arg))
        leave(t);
      break;
    default:
      break;
  }
  return 0;
}

bool stringList(PyObject* list, std::vector<std::string>& out) {
  PyObject* seq = PySequence_Fast(list, "expected a sequence of module names");
  if (!seq) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(item)) {
      Py_DECREF(seq);
      PyErr_SetString(PyExc_TypeError, "module and function names must be str");
      return false;
    }
    out.push_back(utf8(item));
  }
  Py_DECREF(seq);
  return true;
}

}  // namespace

bool trackingAvailable() {
  const CollectorLink& l = collectorLink();
  return l.complete() && l.tracking() != 0;
}

PyObject* startTracking(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError,
                    "start_tracking(backend_modules, simulator_modules, waiting_functions)");
    return nullptr;
  }
  if (!trackingAvailable()) Py_RETURN_FALSE;
  std::vector<std::string> backend, simulator, waiting;
  if (!stringList(args[0], backend) || !stringList(args[1], simulator) ||
      !stringList(args[2], waiting))
    return nullptr;
  g_tracker.backend = std::move(backend);
  g_tracker.simulator = std::move(simulator);
  g_tracker.waiting = {waiting.begin(), waiting.end()};
  g_tracker.byDefinition.clear();
  g_tracker.running = true;
  g_tracker.monitoring = false;
  startRecording(transitionsWanted());
  if (monitoringWanted()) {
    int started = startMonitoring(module);
    if (started < 0) return nullptr;
    g_tracker.monitoring = started > 0;
  }
  if (!g_tracker.monitoring) PyEval_SetProfile(profile, nullptr);
  // Which tracker runs, for _autostart (only the profile function needs threads bootstrapped).
  if (PyModule_AddStringConstant(module, "_tracker",
                                 g_tracker.monitoring ? "monitoring" : "profile") < 0)
    return nullptr;
  Py_RETURN_TRUE;
}

PyObject* threadBootstrap(PyObject*, PyObject* const*, Py_ssize_t) {
  // Under sys.monitoring every thread is tracked already: the bootstrap only removes itself.
  if (g_tracker.running) PyEval_SetProfile(g_tracker.monitoring ? nullptr : profile, nullptr);
  Py_RETURN_NONE;
}

PyObject* afterForkInChild(PyObject*, PyObject*) {
  if (!g_tracker.running) Py_RETURN_NONE;
  restartAfterFork();
  Py_RETURN_NONE;
}

PyObject* transitionCount(PyObject*, PyObject*) {
  return PyLong_FromUnsignedLongLong(transitions());
}

}  // namespace rlscope::python
