#include "monitoring.h"

#if PY_VERSION_HEX >= 0x030C0000

#include <dlfcn.h>

#include <cstdint>
#include <initializer_list>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "category_stack.h"
#include "collector_link.h"
#include "method_cast.h"
#include "transitions.h"

namespace rlscope::python {

namespace {

// Everything below runs with the GIL held.
struct Monitoring {
  PyObject* api = nullptr;      // sys.monitoring
  PyObject* disable = nullptr;  // sys.monitoring.DISABLE
  int tool = 0;                 // the sys.monitoring tool id rlscope holds (takeToolId)
  long returnEvents = 0;        // PY_RETURN | PY_YIELD | PY_RESUME, set on callback code only
  // Static callable types (numpy.ufunc): whether their module is tracked. Static types live as
  // long as the process, so their addresses are safe keys.
  std::unordered_map<PyTypeObject*, bool> trackedTypes;
  // Tracked callables of those types, referenced here so that their addresses stay theirs.
  std::unordered_map<PyObject*, Classification> byObject;
  // Code objects that native code has called back, with their return events on (referenced).
  std::unordered_set<PyObject*> callbackCode;
};

Monitoring g_monitoring;

// How deep each Python callback this thread entered recurses into its own code, innermost last:
// one per Python entry of the thread's stack (only this tracker pushes those on 3.12).
thread_local std::vector<std::uint32_t> t_depths;

PyObject* newReference(PyObject* o) {
  Py_INCREF(o);
  return o;
}

// Whether `address` lies in this extension: native_hooks replaced the callable's vectorcall
// entry by its trampoline, which records the call itself.
bool inThisLibrary(void* address) {
  Dl_info mine{}, its{};
  return dladdr(reinterpret_cast<void*>(&startMonitoring), &mine) && dladdr(address, &its) &&
         mine.dli_fbase == its.dli_fbase;
}

bool hooked(PyObject* callable) {
  PyTypeObject* type = Py_TYPE(callable);
  if (!PyType_HasFeature(type, Py_TPFLAGS_HAVE_VECTORCALL) || type->tp_vectorcall_offset <= 0)
    return false;
  vectorcallfunc entry = *reinterpret_cast<vectorcallfunc*>(reinterpret_cast<char*>(callable) +
                                                            type->tp_vectorcall_offset);
  return entry && inThisLibrary(reinterpret_cast<void*>(entry));
}

bool trackedType(PyTypeObject* type) {
  auto it = g_monitoring.trackedTypes.find(type);
  if (it == g_monitoring.trackedTypes.end())
    it = g_monitoring.trackedTypes.emplace(type, trackedModule(typeModule(type))).first;
  return it->second;
}

// A native callable other than a builtin function or method (a numpy ufunc, an array-function
// dispatcher), classified by its type's module. Instances of heap types are left alone: their
// __call__ may be Python (a torch.nn.Module), and their addresses are reused.
const Classification* otherCallee(PyObject* callable) {
  auto it = g_monitoring.byObject.find(callable);
  if (it != g_monitoring.byObject.end()) return &it->second;
  PyTypeObject* type = Py_TYPE(callable);
  if ((type->tp_flags & Py_TPFLAGS_HEAPTYPE) || !trackedType(type) || hooked(callable))
    return nullptr;
  Classification c = classificationOf(callable, callable);
  if (c.category == kUntracked) return nullptr;
  Py_INCREF(callable);
  return &g_monitoring.byObject.emplace(callable, c).first->second;
}

// The classification of what a CALL event calls when it is a tracked native callable, else null:
// Python functions, bound Python methods and classes are Python code (PY_START sees what
// matters of them).
const Classification* nativeCallee(PyObject* callable) {
  if (PyFunction_Check(callable) || PyMethod_Check(callable) || PyType_Check(callable))
    return nullptr;
  if (PyCFunction_Check(callable) || Py_IS_TYPE(callable, &PyMethodDescr_Type)) {
    const Classification& c = classificationOf(callable, definitionOf(callable));
    return c.category == kUntracked ? nullptr : &c;
  }
  return otherCallee(callable);
}

// CALL(code, offset, callable, arg0). A site that calls nothing tracked is disabled: it never
// reports again, so a polymorphic site whose first callable is untracked stays untracked.
PyObject* onCall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  ThreadTracking& t = currentThread();
  countEvent(t);
  const Classification* c = nargs >= 3 ? nativeCallee(args[2]) : nullptr;
  if (!c) return newReference(g_monitoring.disable);
  // Inside native code already (a callback not seen as one): the call is part of it.
  if (t.stack.empty() || t.stack.back().python)
    enter(t, {definitionOf(args[2]), false, c->category, c->name});
  Py_RETURN_NONE;
}

// C_RETURN and C_RAISE(code, offset, callable, arg0): these cannot be disabled.
PyObject* onCReturn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  ThreadTracking& t = currentThread();
  countEvent(t);
  if (nargs >= 3 && !t.stack.empty() && !t.stack.back().python &&
      t.stack.back().key == definitionOf(args[2]))
    leave(t);
  Py_RETURN_NONE;
}

// Turns on the return events of `code`, the first time native code calls it back: only such code
// pays for them.
bool watchReturns(PyObject* code) {
  if (g_monitoring.callbackCode.count(code)) return true;
  PyObject* r = PyObject_CallMethod(g_monitoring.api, "set_local_events", "iOl", g_monitoring.tool,
                                    code, g_monitoring.returnEvents);
  if (!r) {
    PyErr_Clear();  // never break the program: the callback is counted as native time
    return false;
  }
  Py_DECREF(r);
  g_monitoring.callbackCode.insert(newReference(code));
  return true;
}

// PY_START and PY_RESUME(code, offset): native code calling Python back makes it Python again.
// Not disabled for code that Python calls: the same code may be a native callback later.
PyObject* onPyStart(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  ThreadTracking& t = currentThread();
  countEvent(t);
  if (nargs < 1 || t.stack.empty()) Py_RETURN_NONE;
  const Open& top = t.stack.back();
  if (!top.python) {
    if (watchReturns(args[0])) {
      enter(t, {args[0], true, RLSCOPE_CATEGORY_PYTHON, 0});
      t_depths.push_back(0);
    }
  } else if (top.key == args[0] && !t_depths.empty()) {
    ++t_depths.back();  // the callback calls its own code
  }
  Py_RETURN_NONE;
}

// PY_RETURN, PY_YIELD(code, offset, value) and PY_UNWIND(code, offset, exception).
PyObject* onPyReturn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  ThreadTracking& t = currentThread();
  countEvent(t);
  if (nargs < 1 || t.stack.empty() || !t.stack.back().python || t.stack.back().key != args[0])
    Py_RETURN_NONE;
  if (!t_depths.empty() && t_depths.back() > 0) {
    --t_depths.back();
  } else {
    leave(t);
    if (!t_depths.empty()) t_depths.pop_back();
  }
  Py_RETURN_NONE;
}

PyMethodDef kOnCall = {"_on_call", asMethod(onCall), METH_FASTCALL, nullptr};
PyMethodDef kOnCReturn = {"_on_c_return", asMethod(onCReturn), METH_FASTCALL, nullptr};
PyMethodDef kOnPyStart = {"_on_py_start", asMethod(onPyStart), METH_FASTCALL, nullptr};
PyMethodDef kOnPyReturn = {"_on_py_return", asMethod(onPyReturn), METH_FASTCALL, nullptr};

// sys.monitoring.events.<name>, or -1 with the error set.
long eventBit(const char* name) {
  PyObject* events = PyObject_GetAttrString(g_monitoring.api, "events");
  if (!events) return -1;
  PyObject* bit = PyObject_GetAttrString(events, name);
  Py_DECREF(events);
  if (!bit) return -1;
  long value = PyLong_AsLong(bit);
  Py_DECREF(bit);
  return value;
}

// sys.monitoring's tool ids without a fixed user (0 debugger, 1 coverage, 2 profiler and
// 5 optimizer are reserved by convention): rlscope must not displace cProfile, which takes the
// profiler id.
constexpr int kToolIds[] = {4, 3};

// Takes a tool id into g_monitoring.tool: 1, 0 when every candidate is held by another tool,
// -1 on error.
int takeToolId() {
  for (int id : kToolIds) {
    PyObject* holder = PyObject_CallMethod(g_monitoring.api, "get_tool", "i", id);
    if (!holder) return -1;
    bool free = holder == Py_None;
    bool ours = !free && PyUnicode_Check(holder) &&
                PyUnicode_CompareWithASCIIString(holder, "rlscope") == 0;
    Py_DECREF(holder);
    g_monitoring.tool = id;
    if (ours) {
      // start_tracking again: sites disabled under the previous module lists report again.
      PyObject* r = PyObject_CallMethod(g_monitoring.api, "restart_events", nullptr);
      Py_XDECREF(r);
      return r ? 1 : -1;
    }
    if (free) {
      PyObject* r = PyObject_CallMethod(g_monitoring.api, "use_tool_id", "is", id, "rlscope");
      Py_XDECREF(r);
      return r ? 1 : -1;
    }
  }
  PySys_WriteStderr(
      "rlscope: warning: sys.monitoring tool ids 3 and 4 are taken by other tools: Python "
      "categories are tracked with a profile function (slower)\n");
  return 0;
}

void forgetClassifications() {
  for (auto& [callable, c] : g_monitoring.byObject) Py_DECREF(callable);
  g_monitoring.byObject.clear();
  g_monitoring.trackedTypes.clear();
}

// Registers `def` as the callback of each event in `names`; false with the error set.
bool registerCallback(PyObject* module, PyMethodDef* def,
                      std::initializer_list<const char*> names) {
  PyObject* callback = PyCFunction_NewEx(def, module, nullptr);
  if (!callback) return false;
  bool ok = true;
  for (const char* name : names) {
    long bit = eventBit(name);
    if (bit < 0) {
      ok = false;
      break;
    }
    PyObject* r = PyObject_CallMethod(g_monitoring.api, "register_callback", "ilO",
                                      g_monitoring.tool, bit, callback);
    Py_XDECREF(r);
    ok = r != nullptr;
  }
  Py_DECREF(callback);
  return ok;
}

}  // namespace

int startMonitoring(PyObject* module) {
  if (!g_monitoring.api) {
    PyObject* sys = PyImport_ImportModule("sys");
    if (!sys) return -1;
    g_monitoring.api = PyObject_GetAttrString(sys, "monitoring");
    Py_DECREF(sys);
    if (!g_monitoring.api) return -1;
    g_monitoring.disable = PyObject_GetAttrString(g_monitoring.api, "DISABLE");
    if (!g_monitoring.disable) return -1;
  }
  int taken = takeToolId();
  if (taken <= 0) return taken;
  forgetClassifications();
  long call = eventBit("CALL"), start = eventBit("PY_START"), unwind = eventBit("PY_UNWIND");
  long ret = eventBit("PY_RETURN"), yield = eventBit("PY_YIELD"), resume = eventBit("PY_RESUME");
  if (PyErr_Occurred()) return -1;
  g_monitoring.returnEvents = ret | yield | resume;
  if (!registerCallback(module, &kOnCall, {"CALL"}) ||
      !registerCallback(module, &kOnCReturn, {"C_RETURN", "C_RAISE"}) ||
      !registerCallback(module, &kOnPyStart, {"PY_START", "PY_RESUME"}) ||
      !registerCallback(module, &kOnPyReturn, {"PY_RETURN", "PY_YIELD", "PY_UNWIND"}))
    return -1;
  // C_RETURN and C_RAISE come with CALL; PY_RETURN, PY_YIELD and PY_RESUME are set per code
  // object (watchReturns). PY_UNWIND cannot be set per code object.
  PyObject* r = PyObject_CallMethod(g_monitoring.api, "set_events", "il", g_monitoring.tool,
                                    call | start | unwind);
  Py_XDECREF(r);
  return r ? 1 : -1;
}

}  // namespace rlscope::python

#else  // Python 3.9 to 3.11: no sys.monitoring

namespace rlscope::python {

int startMonitoring(PyObject*) {
  return 0;
}

}  // namespace rlscope::python

#endif
