/* rlscope_fake_simulator: a stand-in for a native simulator (MuJoCo, PyBullet) in the Python
 * tests. Its functions busy-loop in C for a given time, so a test knows exactly how long the
 * process spent in "simulator" native code; under rlscope-prof --simulator-modules
 * rlscope_fake_simulator that time is Simulator time.
 *
 *   step(seconds)                      busy-loops in C (the GIL released, as simulators do)
 *   step_with_callback(seconds, fn)    busy-loops seconds/2, calls fn(), busy-loops seconds/2;
 *                                      returns what fn returned
 *   fail()                             raises RuntimeError("fake simulator failure") from C
 *   World().step(seconds)              the same busy loop as a method of a native type
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Written by every busy loop, so that the loop is not optimised away. */
volatile unsigned long rlscope_fake_simulator_sink;

/* Spins for `seconds` of wall time. */
static void busy_loop(double seconds) {
  double end = now_seconds() + seconds;
  unsigned long x = 0;
  while (now_seconds() < end) {
    for (int i = 0; i < 64; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  }
  rlscope_fake_simulator_sink = x;
}

static int seconds_argument(PyObject* arg, double* seconds) {
  *seconds = PyFloat_AsDouble(arg);
  if (*seconds == -1.0 && PyErr_Occurred()) return 0;
  if (*seconds < 0 || *seconds > 60) {
    PyErr_SetString(PyExc_ValueError, "seconds must be in [0, 60]");
    return 0;
  }
  return 1;
}

static PyObject* step(PyObject* self, PyObject* arg) {
  (void)self;
  double seconds;
  if (!seconds_argument(arg, &seconds)) return NULL;
  Py_BEGIN_ALLOW_THREADS busy_loop(seconds);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject* step_with_callback(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* seconds_obj;
  PyObject* fn;
  double seconds;
  if (!PyArg_ParseTuple(args, "OO:step_with_callback", &seconds_obj, &fn)) return NULL;
  if (!seconds_argument(seconds_obj, &seconds)) return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "step_with_callback: fn must be callable");
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS busy_loop(seconds / 2);
  Py_END_ALLOW_THREADS PyObject* result = PyObject_CallNoArgs(fn);
  if (!result) return NULL;
  Py_BEGIN_ALLOW_THREADS busy_loop(seconds / 2);
  Py_END_ALLOW_THREADS return result;
}

static PyObject* fail(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  PyErr_SetString(PyExc_RuntimeError, "fake simulator failure");
  return NULL;
}

/* World: a native type whose method is a method descriptor of rlscope_fake_simulator.World. */
typedef struct {
  PyObject_HEAD
} WorldObject;

static PyObject* world_step(PyObject* self, PyObject* arg) {
  return step(self, arg);
}

static PyMethodDef world_methods[] = {
    {"step", world_step, METH_O, "step(seconds): busy-loops in C."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject world_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rlscope_fake_simulator.World",
    .tp_basicsize = sizeof(WorldObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("A fake simulated world."),
    .tp_methods = world_methods,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"step", step, METH_O, "step(seconds): busy-loops in C for that long (GIL released)."},
    {"step_with_callback", step_with_callback, METH_VARARGS,
     "step_with_callback(seconds, fn): busy-loops, calls fn() half way, busy-loops again."},
    {"fail", fail, METH_NOARGS, "fail(): raises RuntimeError from C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "rlscope_fake_simulator",
    "A fake native simulator for rlscope's Python tests.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit_rlscope_fake_simulator(void) {
  if (PyType_Ready(&world_type) < 0) return NULL;
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return NULL;
  Py_INCREF(&world_type);
  if (PyModule_AddObject(m, "World", (PyObject*)&world_type) < 0) {
    Py_DECREF(&world_type);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
