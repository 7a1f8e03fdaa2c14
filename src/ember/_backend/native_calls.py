"""Calling ember's compiled loops (``vector_math``, ``special_loops``, ``openmp_kernels``) at a
CPython extension's cost instead of ctypes'.

A ctypes call converts each argument through Python-level objects, and each array's address
has to be read first (``pointers.address``): a call of a loop on a few elements costs several
times the loop's work. ``bind`` gives a function that takes the arrays themselves: for each
signature (a string of argument kinds) a small extension module is generated, compiled with the
machine's C compiler against the Python and NumPy headers and cached like the loops
(``_inductor._compiler``); its one function reads each array's data pointer in C, releases the
GIL as ctypes does, and calls the loop through its address. Where the headers or the compiler
are missing, the bound function converts the arguments for ctypes instead: the same results at
ctypes' cost.

Argument kinds: ``p`` a pointer (a NumPy array, whose data it points to; None for NULL; or an
address as an int), ``q`` an int64, ``i`` an int, ``f`` a float, ``d`` a double; ``P``, ``Q``
and ``D`` a C array of pointers, int64s or doubles, given as a tuple (``D`` also None, for
NULL), of at most ``MAX_LIST`` elements. A loop returns nothing, or (``result="i"``) an int: its
status, say, which the bound function returns.
"""
import ctypes
import functools
import logging
import os
import sys
import sysconfig
import threading

import numpy as np

from .pointers import address

__all__ = ["bind", "include_dirs", "KINDS", "MAX_LIST", "native"]

log = logging.getLogger("ember._backend")

MAX_LIST = 256   # (a strided copy's sizes and strides: 1 + 2 * 64 dimensions)

# kind -> (C type of the argument, ctypes type of the loop's parameter)
KINDS = {"p": ("void *", ctypes.c_void_p), "q": ("int64_t", ctypes.c_int64), "i": ("int", ctypes.c_int),
         "f": ("float", ctypes.c_float), "d": ("double", ctypes.c_double),
         "P": ("void **", ctypes.POINTER(ctypes.c_void_p)), "Q": ("int64_t *", ctypes.POINTER(ctypes.c_int64)),
         "D": ("double *", ctypes.POINTER(ctypes.c_double))}
_KIND_OF_CTYPE = {ctype: kind for kind, (_, ctype) in KINDS.items()}

_PRELUDE = r'''
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>

#define MAX_LIST %(max_list)d

static int pointer_of(PyObject *o, void **out) {
    if (PyArray_Check(o)) { *out = PyArray_DATA((PyArrayObject *)o); return 0; }
    if (o == Py_None) { *out = NULL; return 0; }
    if (PyLong_Check(o)) { *out = PyLong_AsVoidPtr(o); return PyErr_Occurred() ? -1 : 0; }
    PyErr_Format(PyExc_TypeError, "a compiled loop takes an array, an address or None for a pointer, not %%.100s",
                 Py_TYPE(o)->tp_name);
    return -1;
}

static int int64_of(PyObject *o, int64_t *out) {
    long long value = PyLong_AsLongLong(o);
    if (value == -1 && PyErr_Occurred()) return -1;
    *out = (int64_t)value;
    return 0;
}

static int int_of(PyObject *o, int *out) {
    long value = PyLong_AsLong(o);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (value < INT_MIN || value > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a compiled loop's int argument is out of range");
        return -1;
    }
    *out = (int)value;
    return 0;
}

static int double_of(PyObject *o, double *out) {
    double value = PyFloat_AsDouble(o);
    if (value == -1.0 && PyErr_Occurred()) return -1;
    *out = value;
    return 0;
}

static int float_of(PyObject *o, float *out) {
    double value;
    if (double_of(o, &value) < 0) return -1;
    *out = (float)value;
    return 0;
}

static PyObject *sequence_of(PyObject *o, Py_ssize_t *count) {
    PyObject *items = PySequence_Fast(o, "a compiled loop takes a tuple for a C array");
    if (items == NULL) return NULL;
    *count = PySequence_Fast_GET_SIZE(items);
    if (*count > MAX_LIST) {
        Py_DECREF(items);
        PyErr_Format(PyExc_ValueError, "a compiled loop takes at most %%d elements in a C array", MAX_LIST);
        return NULL;
    }
    return items;
}

#define LIST_OF(name, type, convert)                                                           \
static int name(PyObject *o, type *values) {                                                   \
    Py_ssize_t count;                                                                          \
    PyObject *items = sequence_of(o, &count);                                                  \
    if (items == NULL) return -1;                                                              \
    PyObject **item = PySequence_Fast_ITEMS(items);                                            \
    for (Py_ssize_t i = 0; i < count; i++)                                                     \
        if (convert(item[i], &values[i]) < 0) { Py_DECREF(items); return -1; }                 \
    Py_DECREF(items);                                                                          \
    return 0;                                                                                  \
}
LIST_OF(pointers_of, void *, pointer_of)
LIST_OF(int64s_of, int64_t, int64_of)
LIST_OF(doubles_of, double, double_of)
'''

# kind -> C statements that declare argument ``a{n}`` and convert ``args[{m}]`` into it
_CONVERT = {
    "p": "void *a{n}; if (pointer_of(args[{m}], &a{n}) < 0) return NULL;",
    "q": "int64_t a{n}; if (int64_of(args[{m}], &a{n}) < 0) return NULL;",
    "i": "int a{n}; if (int_of(args[{m}], &a{n}) < 0) return NULL;",
    "f": "float a{n}; if (float_of(args[{m}], &a{n}) < 0) return NULL;",
    "d": "double a{n}; if (double_of(args[{m}], &a{n}) < 0) return NULL;",
    "P": "void *l{n}[MAX_LIST]; if (pointers_of(args[{m}], l{n}) < 0) return NULL; void **a{n} = l{n};",
    "Q": "int64_t l{n}[MAX_LIST]; if (int64s_of(args[{m}], l{n}) < 0) return NULL; int64_t *a{n} = l{n};",
    "D": ("double l{n}[MAX_LIST]; double *a{n} = NULL;\n"
          "    if (args[{m}] != Py_None) {{ if (doubles_of(args[{m}], l{n}) < 0) return NULL; a{n} = l{n}; }}"),
}


def _module_name(kinds, result=None):
    # module names are C identifiers: upper-case kinds are spelled with a leading underscore
    name = "ember_call_" + "".join(k if k.islower() else "_" + k.lower() for k in kinds)
    return name if result is None else f"{name}_returns_{result}"


def source(kinds, result=None):
    """The C source of the extension module that calls loops of the signature ``kinds`` (that
    return nothing, or an int where ``result`` is "i"): its function ``call(address,
    *arguments)``."""
    if result not in (None, "i"):
        raise ValueError(f"a compiled loop returns nothing or an int (result 'i'), not {result!r}")
    name = _module_name(kinds, result)
    count = len(kinds)
    converts = "\n    ".join(_CONVERT[k].format(n=n, m=n + 1) for n, k in enumerate(kinds))
    types = ", ".join(KINDS[k][0] for k in kinds) or "void"
    arguments = ", ".join(f"a{n}" for n in range(count))
    returned, declare, assign, give = (("void", "", "", "Py_RETURN_NONE;") if result is None else
                                       ("int", "int r;", "r = ", "return PyLong_FromLong(r);"))
    return (f"/* Python {sys.version.split()[0]} ({sysconfig.get_config_var('SOABI')}), "
            f"NumPy {np.__version__} */\n" + _PRELUDE % {"max_list": MAX_LIST} + f'''
static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    if (nargs != {count + 1}) {{
        PyErr_Format(PyExc_TypeError, "a compiled loop takes {count} arguments (%zd given)", nargs - 1);
        return NULL;
    }}
    {returned} (*loop)({types}) = ({returned} (*)({types}))PyLong_AsVoidPtr(args[0]);
    if (loop == NULL) {{
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a compiled loop's address is NULL");
        return NULL;
    }}
    {converts}
    {declare}
    Py_BEGIN_ALLOW_THREADS
    {assign}loop({arguments});
    Py_END_ALLOW_THREADS
    {give}
}}

static PyMethodDef methods[] = {{
    {{"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(address, *arguments)"}},
    {{NULL, NULL, 0, NULL}},
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    import_array();
    return PyModule_Create(&module);
}}
''')


def include_dirs():
    """The Python and NumPy header directories, or None where Python's are not installed."""
    python = sysconfig.get_paths().get("include")
    if not python or not os.path.exists(os.path.join(python, "Python.h")):
        return None
    return python, np.get_include()


_callers = {}          # (kinds, result) -> the extension's ``call``, or None where it cannot be built
_lock = threading.Lock()


def native(kinds, result=None):
    """The extension function that calls loops of the signature ``kinds`` (``call(address,
    *arguments)``), or None where it cannot be built here."""
    caller = _callers.get((kinds, result), False)
    if caller is False:
        with _lock:
            caller = _callers.get((kinds, result), False)
            if caller is False:
                caller = _build(kinds, result)
                _callers[kinds, result] = caller
    return caller


def _build(kinds, result):
    include = include_dirs()
    if include is None:
        log.info("ember: Python's headers are not installed; compiled loops are called through ctypes")
        return None
    from .._inductor import _compiler
    module = _compiler.load_module(source(kinds, result), _module_name(kinds, result), include)
    return None if module is None else module.call


def kinds_of(argtypes):
    """The kinds string of a loop's ctypes ``argtypes``."""
    return "".join(_KIND_OF_CTYPE[t] for t in argtypes)


def bind(function, kinds, result=None):
    """``function`` (a ctypes function of a compiled loop, which returns nothing, or an int
    where ``result`` is "i") as a Python callable that takes its arguments as ``kinds`` spells
    them, arrays where the loop takes pointers, and returns what the loop returns; None where
    ``function`` is None."""
    if function is None:
        return None
    caller = native(kinds, result)
    if caller is not None:
        return functools.partial(caller, ctypes.cast(function, ctypes.c_void_p).value)
    return through_ctypes(function, kinds, result)


def _pointer(value):
    return address(value) if isinstance(value, np.ndarray) else value


def _pointer_list(values):
    return (ctypes.c_void_p * len(values))(*[_pointer(v) for v in values])


def _int64_list(values):
    return (ctypes.c_int64 * len(values))(*values)


def _double_list(values):
    return None if values is None else (ctypes.c_double * len(values))(*values)


def _same(value):
    return value


_CTYPES_CONVERSIONS = {"p": _pointer, "q": _same, "i": _same, "f": _same, "d": _same,
                       "P": _pointer_list, "Q": _int64_list, "D": _double_list}


def through_ctypes(function, kinds, result=None):
    """``bind``'s callable where the extension cannot be built: the arguments converted for
    ctypes (arrays to their addresses, tuples to C arrays) in Python."""
    conversions = tuple(_CTYPES_CONVERSIONS[k] for k in kinds)
    returns = result is not None
    if returns:
        function = ctypes.CFUNCTYPE(ctypes.c_int, *[KINDS[k][1] for k in kinds])(
            ctypes.cast(function, ctypes.c_void_p).value)

    def call(*arguments):
        if len(arguments) != len(conversions):
            raise TypeError(f"a compiled loop takes {len(conversions)} arguments ({len(arguments)} given)")
        value = function(*[convert(a) for convert, a in zip(conversions, arguments)])
        return value if returns else None
    return call
