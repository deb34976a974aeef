// The sys.monitoring tracker (PEP 669, Python 3.12 and newer): the same transitions as the
// profile function of transitions.cpp, at a fraction of its cost. A CALL event classifies the
// callable; a call site whose callable is Python code or an untracked native function returns
// sys.monitoring.DISABLE and costs nothing from then on. docs/python.md has the limits.
#pragma once

#include <Python.h>

namespace rlscope::python {

// Takes sys.monitoring.PROFILER_ID and registers the callbacks (process-wide: every thread).
// 1 when they run; 0 when the tool id is taken (one warning line on stderr: the caller falls back
// to the profile function) or this Python has no sys.monitoring; -1 with a Python error set.
int startMonitoring(PyObject* module);

}  // namespace rlscope::python
