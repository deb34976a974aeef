// Python <-> native transition tracking: sys.monitoring callbacks on Python 3.12 and newer
// (monitoring.cpp), a C-level profile function on every Python thread before, that tell the
// collector, through its category ABI, when the thread enters and leaves native code of
// the backend (torch, numpy, ...) or simulator (mujoco, ...) modules, and when such native code
// calls back into Python. docs/python.md explains the categories.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>

namespace rlscope::python {

// Whether the collector of this process records Python categories (under rlscope-prof, without
// --no-python): looked up once, at import.
bool trackingAvailable();

// start_tracking(backend_modules, simulator_modules, waiting_functions): registers the
// sys.monitoring callbacks (process-wide), or installs the profile function on the calling thread,
// other threads getting it from threading.setprofile(thread_bootstrap), which the package sets up
// when the module's `_tracker` is "profile". Returns True when tracking runs.
PyObject* startTracking(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

// threading.setprofile's hook: replaces itself by the C profile function in the new thread.
PyObject* threadBootstrap(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

// os.register_at_fork(after_in_child=...): the child's part starts empty, so the forking
// thread's open categories are pushed again there.
PyObject* afterForkInChild(PyObject* module, PyObject* unused);

// transitions() -> int: pushes and pops this process recorded (for tests and benchmarks).
PyObject* transitionCount(PyObject* module, PyObject* unused);

// --- The classification of native callables, shared by both trackers ---------------------------

constexpr std::uint32_t kUntracked = 0xff;  // a native call that stays in the caller's category

// What a native callable is, decided once per function definition.
struct Classification {
  std::uint32_t category = kUntracked;
  std::uint64_t name = 0;  // collector name handle: "numpy.ndarray.dot"
};

// What identifies a callable across calls: the PyMethodDef of a builtin function or method
// (bound builtin methods are new objects at every call), else the object itself.
const void* definitionOf(PyObject* callable);

// The classification of `callable`, cached by `definition` (which must outlive the process's use
// of it: a PyMethodDef, or an object the caller keeps alive).
const Classification& classificationOf(PyObject* callable, const void* definition);

// Whether native code of `module` is Backend or Simulator time (it is, or is inside, a listed
// module).
bool trackedModule(const std::string& module);

// The module a type belongs to: "numpy" for numpy.ufunc.
std::string typeModule(PyTypeObject* type);

}  // namespace rlscope::python
