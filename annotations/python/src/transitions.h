// Python <-> native transition tracking: a C-level profile function on every Python thread that
// tells the collector, through its category ABI, when the thread enters and leaves native code of
// the backend (torch, numpy, ...) or simulator (mujoco, ...) modules, and when such native code
// calls back into Python. docs/python.md explains the categories.
#pragma once

#include <Python.h>

namespace rlscope::python {

// Whether the collector of this process records Python categories (under rlscope-prof, without
// --no-python): looked up once, at import.
bool trackingAvailable();

// start_tracking(backend_modules, simulator_modules, waiting_functions): installs the profile
// function on the calling thread; other threads get it from threading.setprofile(
// thread_bootstrap), which the package sets up. Returns True when tracking runs.
PyObject* startTracking(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

// threading.setprofile's hook: replaces itself by the C profile function in the new thread.
PyObject* threadBootstrap(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

// os.register_at_fork(after_in_child=...): the child's part starts empty, so the forking
// thread's open categories are pushed again there.
PyObject* afterForkInChild(PyObject* module, PyObject* unused);

// transitions() -> int: pushes and pops this process recorded (for tests and benchmarks).
PyObject* transitionCount(PyObject* module, PyObject* unused);

}  // namespace rlscope::python
