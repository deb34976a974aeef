#include "native_hooks.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "category_stack.h"

namespace rlscope::python {

namespace {

struct Hook {
  void* original;  // the replaced function: vectorcallfunc, binaryfunc, ternaryfunc or unaryfunc
  std::uint32_t category;
  std::uint64_t name;
};

// Hooked callables by object, hooked slots by (type, slot offset in PyNumberMethods). Objects
// and types stay alive: they are referenced here for the life of the process.
std::unordered_map<PyObject*, Hook> g_callables;
std::map<std::pair<PyTypeObject*, std::size_t>, Hook> g_slots;

// Runs `call` as the hook's category unless the thread already runs native code (then the call
// is part of it).
template <class Call>
PyObject* recorded(const Hook& h, const void* key, Call&& call) {
  ThreadTracking& t = currentThread();
  if (!t.stack.empty() && !t.stack.back().python) return call();
  enter(t, {key, false, h.category, h.name});
  PyObject* result = call();
  leave(t);
  return result;
}

PyObject* callTrampoline(PyObject* callable, PyObject* const* args, std::size_t nargsf,
                         PyObject* kwnames) {
  const Hook& h = g_callables.at(callable);
  auto original = reinterpret_cast<vectorcallfunc>(h.original);
  return recorded(h, callable, [&] { return original(callable, args, nargsf, kwnames); });
}

// The hook of `slot` for `type` or its nearest hooked base.
const Hook* slotHook(PyTypeObject* type, std::size_t slot) {
  for (PyTypeObject* t = type; t; t = t->tp_base) {
    auto it = g_slots.find({t, slot});
    if (it != g_slots.end()) return &it->second;
  }
  return nullptr;
}

template <class Fn>
Fn slotOf(PyTypeObject* type, std::size_t offset) {
  if (!type->tp_as_number) return nullptr;
  return *reinterpret_cast<Fn*>(reinterpret_cast<char*>(type->tp_as_number) + offset);
}

// Binary operators run as the left operand's slot when its type has this trampoline, else as the
// right operand's (CPython calls each distinct slot once).
template <std::size_t Offset>
PyObject* binaryTrampoline(PyObject* a, PyObject* b) {
  PyObject* self = slotOf<binaryfunc>(Py_TYPE(a), Offset) == &binaryTrampoline<Offset> ? a : b;
  const Hook* h = slotHook(Py_TYPE(self), Offset);
  if (!h) Py_RETURN_NOTIMPLEMENTED;
  auto original = reinterpret_cast<binaryfunc>(h->original);
  return recorded(*h, h, [&] { return original(a, b); });
}

template <std::size_t Offset>
PyObject* ternaryTrampoline(PyObject* a, PyObject* b, PyObject* c) {
  PyObject* self = slotOf<ternaryfunc>(Py_TYPE(a), Offset) == &ternaryTrampoline<Offset> ? a : b;
  const Hook* h = slotHook(Py_TYPE(self), Offset);
  if (!h) Py_RETURN_NOTIMPLEMENTED;
  auto original = reinterpret_cast<ternaryfunc>(h->original);
  return recorded(*h, h, [&] { return original(a, b, c); });
}

template <std::size_t Offset>
PyObject* unaryTrampoline(PyObject* a) {
  const Hook* h = slotHook(Py_TYPE(a), Offset);
  if (!h) {
    PyErr_SetString(PyExc_SystemError, "rlscope: operator hook without its original");
    return nullptr;
  }
  auto original = reinterpret_cast<unaryfunc>(h->original);
  return recorded(*h, h, [&] { return original(a); });
}

struct SlotSpec {
  std::size_t offset;
  const char* dunder;
  void* trampoline;
};

#define RLSCOPE_BINARY(field, dunder)                                                \
  {                                                                                  \
    offsetof(PyNumberMethods, field), dunder,                                        \
        reinterpret_cast<void*>(&binaryTrampoline<offsetof(PyNumberMethods, field)>) \
  }
#define RLSCOPE_UNARY(field, dunder)                                                \
  {                                                                                 \
    offsetof(PyNumberMethods, field), dunder,                                       \
        reinterpret_cast<void*>(&unaryTrampoline<offsetof(PyNumberMethods, field)>) \
  }

// The arithmetic of array types; comparisons, indexing and conversions are left alone (cheap and
// frequent, their hooks would cost more than they tell).
const SlotSpec kSlots[] = {
    RLSCOPE_BINARY(nb_add, "__add__"),
    RLSCOPE_BINARY(nb_subtract, "__sub__"),
    RLSCOPE_BINARY(nb_multiply, "__mul__"),
    RLSCOPE_BINARY(nb_true_divide, "__truediv__"),
    RLSCOPE_BINARY(nb_floor_divide, "__floordiv__"),
    RLSCOPE_BINARY(nb_remainder, "__mod__"),
    RLSCOPE_BINARY(nb_matrix_multiply, "__matmul__"),
    RLSCOPE_BINARY(nb_inplace_add, "__iadd__"),
    RLSCOPE_BINARY(nb_inplace_subtract, "__isub__"),
    RLSCOPE_BINARY(nb_inplace_multiply, "__imul__"),
    RLSCOPE_BINARY(nb_inplace_true_divide, "__itruediv__"),
    RLSCOPE_BINARY(nb_inplace_matrix_multiply, "__imatmul__"),
    {offsetof(PyNumberMethods, nb_power), "__pow__",
     reinterpret_cast<void*>(&ternaryTrampoline<offsetof(PyNumberMethods, nb_power)>)},
    RLSCOPE_UNARY(nb_negative, "__neg__"),
    RLSCOPE_UNARY(nb_absolute, "__abs__"),
};

#undef RLSCOPE_BINARY
#undef RLSCOPE_UNARY

std::string utf8Of(PyObject* s) {
  const char* p = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : nullptr;
  if (!p) PyErr_Clear();
  return p ? p : "";
}

// Native callables that CPython does not report to profilers: objects with a vectorcall entry
// point of their own that are not functions, methods or types.
vectorcallfunc* vectorcallSlot(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  if (PyCFunction_Check(obj) || PyFunction_Check(obj) || PyMethod_Check(obj) || PyType_Check(obj) ||
      Py_IS_TYPE(obj, &PyMethodDescr_Type) || Py_IS_TYPE(obj, &PyClassMethodDescr_Type) ||
      (type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
      !PyType_HasFeature(type, Py_TPFLAGS_HAVE_VECTORCALL) || type->tp_vectorcall_offset <= 0)
    return nullptr;
  auto* slot =
      reinterpret_cast<vectorcallfunc*>(reinterpret_cast<char*>(obj) + type->tp_vectorcall_offset);
  return *slot && *slot != &callTrampoline ? slot : nullptr;
}

int hookCallable(PyObject* obj, const std::string& module, const std::string& attribute,
                 std::uint32_t category) {
  vectorcallfunc* slot = vectorcallSlot(obj);
  if (!slot || g_callables.count(obj)) return 0;
  Py_INCREF(obj);
  g_callables.emplace(
      obj, Hook{reinterpret_cast<void*>(*slot), category, registerName(module + "." + attribute)});
  *slot = &callTrampoline;
  return 1;
}

// Array types whose operators are hooked. Only these: extension code may compare its types'
// slots with its own functions (numpy's scalar types do, to decide which operand converts),
// so a type is added only once its operators are known to work through the hooks.
constexpr const char* kArrayTypes[] = {"numpy.ndarray"};

// The operators of a static array type of kArrayTypes.
int hookType(PyTypeObject* type, std::uint32_t category) {
  std::string name = type->tp_name;
  bool listed = false;
  for (const char* t : kArrayTypes) listed = listed || name == t;
  if (!listed || (type->tp_flags & Py_TPFLAGS_HEAPTYPE) || !type->tp_as_number) return 0;
  // A static type without operators of its own shares its base's table (numpy.str_ and str):
  // that table is not the package's to change.
  for (PyTypeObject* base = type->tp_base; base; base = base->tp_base)
    if (base->tp_as_number == type->tp_as_number) return 0;
  int hooked = 0;
  for (const SlotSpec& s : kSlots) {
    void** slot = reinterpret_cast<void**>(reinterpret_cast<char*>(type->tp_as_number) + s.offset);
    if (!*slot || *slot == s.trampoline || g_slots.count({type, s.offset})) continue;
    Py_INCREF(type);
    g_slots.emplace(std::pair{type, s.offset},
                    Hook{*slot, category, registerName(name + "." + s.dunder)});
    *slot = s.trampoline;
    ++hooked;
  }
  return hooked;
}

}  // namespace

PyObject* instrumentModule(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyModule_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_instrument(module, category)");
    return nullptr;
  }
  unsigned long category = PyLong_AsUnsignedLong(args[1]);
  if (PyErr_Occurred()) return nullptr;
  const char* moduleName = PyModule_GetName(args[0]);
  if (!moduleName) return nullptr;
  std::string module = moduleName;
  PyObject* dict = PyModule_GetDict(args[0]);  // borrowed
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  long hooked = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (PyType_Check(value))
      hooked +=
          hookType(reinterpret_cast<PyTypeObject*>(value), static_cast<std::uint32_t>(category));
    else
      hooked += hookCallable(value, module, utf8Of(key), static_cast<std::uint32_t>(category));
  }
  return PyLong_FromLong(hooked);
}

}  // namespace rlscope::python
