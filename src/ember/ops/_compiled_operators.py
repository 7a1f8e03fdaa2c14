"""Tensor's arithmetic operators (``a + b``, ``a - b``, ``a * b``, ``a / b``, ``-a``) compiled
for their common case: the same steps as ``pointwise``'s Python ops, in C.

A small tensor's ``a * b`` is one NumPy call of a quarter of a microsecond; around it, the
Python op (its frame, its operand checks, the node's fields) costs twice that again. Here each
operator is a method of ``Tensor`` written in C, which takes the common case (an ordinary
tensor on the CPU with an operand of its own dtype or a Python number, under the rows loops'
size, no forward-mode AD, no ``__torch_function__`` dispatch) through NumPy's ufunc and, where
autograd records, through the compiled ``record`` and the node's fields and saved tensors as the
Python op sets them. Every other case calls the Python op (``pointwise.add`` and the rest),
which also raises every error.

The operators are built at their first use, as ember's compiled loops are
(``_backend.native_calls``): until then (and where the headers or a C compiler are missing, or
``EMBER_COMPILED_OPERATORS=0`` is set) ``Tensor``'s operators are the Python ops.
"""
import os
import sys
import sysconfig
import threading

import numpy as np

from .._backend import openmp_kernels
from .._backend.native_calls import include_dirs
from .._tensor import Tensor
from .._torch_function import _switch as dispatch_switch
from ..autograd import graph
from ..autograd._dual import forward as forward_state
from . import _common, pointwise
from ._common import method

__all__ = ["prepare", "install", "installed", "uninstall", "python_operators", "as_python", "OPERATORS", "SOURCE"]

_NAME = "ember_tensor_operators"

# What a node of each operator keeps beyond its operands' shapes and dtypes (the numbers name the
# cases in the C source's ``enum keeps``).
_KEEPS_NOTHING, _KEEPS_ALPHA, _KEEPS_OPERANDS, _KEEPS_QUOTIENT = range(4)

# (Tensor's names for it, ufunc, node class, the Python op, what the node keeps, whether bool
# tensors go to the Python op (which refuses them), whether only float and complex tensors are
# taken)
OPERATORS = (
    (("__add__", "__radd__"), np.add, pointwise.AddBackward0, pointwise.add, _KEEPS_ALPHA, False, False),
    (("__sub__",), np.subtract, pointwise.SubBackward0, pointwise.sub, _KEEPS_ALPHA, True, False),
    (("__mul__", "__rmul__"), np.multiply, pointwise.MulBackward0, pointwise.mul, _KEEPS_OPERANDS, False, False),
    (("__truediv__",), np.true_divide, pointwise.DivBackward0, pointwise.div, _KEEPS_QUOTIENT, False, True),
    (("__neg__",), np.negative, pointwise.NegBackward0, pointwise.neg, _KEEPS_NOTHING, True, False),
)

SOURCE = r'''
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* What ``configure`` is given. */
static PyTypeObject *TensorType;
static PyObject *forward_state, *dispatch_switch, *record, *plain_save;
static Py_ssize_t small_bytes;   /* arrays this large or larger go to the Python op (its rows loops) */
/* Where Tensor's slots lie in its instances. */
static Py_ssize_t o_data, o_requires_grad, o_grad_fn, o_version_counter;
static PyObject *s_active, *s_on, *s_self_shape, *s_self_dtype, *s_other_shape, *s_other_dtype,
                *s_other_scalar, *s_alpha, *s_save, *s_saved, *s_versions, *zero, *one;

#define SLOT(o, offset) (*(PyObject **)((char *)(o) + (offset)))

enum keeps { KEEPS_NOTHING, KEEPS_ALPHA, KEEPS_OPERANDS, KEEPS_QUOTIENT };

typedef struct {
    PyObject *ufunc, *node_cls, *python_op;
    int keeps, refuses_bool, floats_only, unary;
} Operator;

#define MAX_OPERATORS 8
static Operator operators[MAX_OPERATORS];
static int n_operators;

/* The offset of Tensor's slot ``name`` in its instances; -1 with an exception set. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
    PyObject *descriptor = PyObject_GetAttrString((PyObject *)type, name);
    if (descriptor == NULL) return -1;
    int is_slot = PyObject_TypeCheck(descriptor, &PyMemberDescr_Type);
    PyMemberDef *member = is_slot ? ((PyMemberDescrObject *)descriptor)->d_member : NULL;
    Py_DECREF(descriptor);   /* (the class keeps it) */
    if (!is_slot) {
        PyErr_Format(PyExc_TypeError, "Tensor has no slot %s", name);
        return -1;
    }
    if (member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "Tensor's slot %s is not an object slot", name);
        return -1;
    }
    return member->offset;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *type;
    if (!PyArg_ParseTuple(args, "O!OOOOn", &PyType_Type, &type, &forward_state, &dispatch_switch, &record,
                          &plain_save, &small_bytes))
        return NULL;
    TensorType = (PyTypeObject *)type;
    Py_INCREF(type);
    Py_INCREF(forward_state);
    Py_INCREF(dispatch_switch);
    Py_INCREF(record);
    Py_INCREF(plain_save);
    if ((o_data = slot_offset(TensorType, "_data")) < 0
            || (o_requires_grad = slot_offset(TensorType, "_requires_grad")) < 0
            || (o_grad_fn = slot_offset(TensorType, "grad_fn")) < 0
            || (o_version_counter = slot_offset(TensorType, "_version_counter")) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* The truth of ``o.name``: 0 or 1, -1 on error. */
static int flag(PyObject *o, PyObject *name) {
    PyObject *value = PyObject_GetAttr(o, name);
    if (value == NULL) return -1;
    int truth = value == Py_True ? 1 : value == Py_False ? 0 : PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* Whether tensor ``t`` requires grad: 0 or 1, -1 on error. */
static int requires_grad(PyObject *t) {
    PyObject *value = SLOT(t, o_requires_grad);
    if (value == Py_False) return 0;
    if (value == Py_True) return 1;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_requires_grad");
        return -1;
    }
    return PyObject_IsTrue(value);
}

/* ``_tensor._make(data)``: a new Tensor that does not require grad around ``data`` (a reference
   taken over; a NumPy scalar becomes a 0-d array). */
static PyObject *make(PyObject *data) {
    if (!PyArray_CheckExact(data)) {
        PyObject *array = PyArray_FromScalar(data, NULL);
        Py_DECREF(data);
        if (array == NULL) return NULL;
        data = array;
    }
    PyObject *counter = PyList_New(1);
    PyObject *t = counter == NULL ? NULL : TensorType->tp_alloc(TensorType, 0);
    if (t == NULL) {
        Py_XDECREF(counter);
        Py_DECREF(data);
        return NULL;
    }
    Py_INCREF(zero);
    PyList_SET_ITEM(counter, 0, zero);
    SLOT(t, o_data) = data;
    Py_INCREF(Py_False);
    SLOT(t, o_requires_grad) = Py_False;
    Py_INCREF(Py_None);
    SLOT(t, o_grad_fn) = Py_None;
    SLOT(t, o_version_counter) = counter;
    return t;
}

/* The array of an ordinary tensor ``t`` (borrowed) where it is a NumPy array, else NULL. */
static PyArrayObject *array_of(PyObject *t) {
    PyObject *data = SLOT(t, o_data);
    return data != NULL && PyArray_CheckExact(data) ? (PyArrayObject *)data : NULL;
}

/* Whether the op may run here at all: no __torch_function__ dispatch and no forward-mode AD.
   0 or 1, -1 on error. */
static int plain_mode(void) {
    int on = flag(dispatch_switch, s_on);
    if (on) return on < 0 ? -1 : 0;
    int forward = flag(forward_state, s_active);
    return forward < 0 ? -1 : !forward;
}

/* The version of tensor ``t`` now (a new reference): ``t._version_counter[0]``. */
static PyObject *version_of(PyObject *t) {
    PyObject *counter = SLOT(t, o_version_counter);
    if (counter == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_version_counter");
        return NULL;
    }
    return PySequence_GetItem(counter, 0);
}

/* ``node.save(x, y)`` for two tensors (either may be None) that are not the node's outputs, as
   Node.save does it while no saved-tensor hooks are active (``plain_save``): 0, or -1 on error. */
static int save_two(PyObject *node, PyObject *x, PyObject *y) {
    PyObject *save = PyObject_GetAttr((PyObject *)Py_TYPE(node), s_save);
    if (save == NULL) return -1;
    int plain = save == plain_save;
    Py_DECREF(save);
    if (!plain) {
        PyObject *r = PyObject_CallMethodObjArgs(node, s_save, x, y, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    PyObject *saved = PyTuple_Pack(2, x, y), *versions = PyTuple_New(2);
    int status = saved == NULL || versions == NULL ? -1 : 0;
    PyObject *pair[2] = {x, y};
    for (int i = 0; i < 2 && status == 0; i++) {
        PyObject *version = pair[i] == Py_None ? Py_NewRef(Py_None) : version_of(pair[i]);
        if (version == NULL) status = -1;
        else PyTuple_SET_ITEM(versions, i, version);
    }
    if (status == 0 && (PyObject_SetAttr(node, s_saved, saved) < 0 || PyObject_SetAttr(node, s_versions, versions) < 0))
        status = -1;
    Py_XDECREF(saved);
    Py_XDECREF(versions);
    return status;
}

/* The node's fields, as pointwise._binary sets them: each operand's shape and dtype (None for a
   number ``other``, kept as ``other_scalar``), alpha for add and sub, and what mul and div save. */
static int set_fields(Operator *op, PyObject *node, PyObject *a, PyObject *b, int b_tensor, PyObject *out) {
    PyArrayObject *ad = array_of(a);
    int status = 0;
    if (op->unary) return 0;
    if (b_tensor) {
        PyArrayObject *bd = array_of(b);
        PyObject *shape = PyObject_GetAttrString((PyObject *)bd, "shape");
        status = shape == NULL ? -1 : PyObject_SetAttr(node, s_other_shape, shape);
        Py_XDECREF(shape);
        if (status < 0 || PyObject_SetAttr(node, s_other_dtype, (PyObject *)PyArray_DESCR(bd)) < 0) return -1;
    } else if (PyObject_SetAttr(node, s_other_shape, Py_None) < 0 || PyObject_SetAttr(node, s_other_dtype, Py_None) < 0
               || PyObject_SetAttr(node, s_other_scalar, b) < 0) {
        return -1;
    }
    PyObject *shape = PyObject_GetAttrString((PyObject *)ad, "shape");
    status = shape == NULL ? -1 : PyObject_SetAttr(node, s_self_shape, shape);
    Py_XDECREF(shape);
    if (status < 0 || PyObject_SetAttr(node, s_self_dtype, (PyObject *)PyArray_DESCR(ad)) < 0) return -1;
    if (op->keeps == KEEPS_ALPHA) return PyObject_SetAttr(node, s_alpha, one);
    if (!b_tensor || (op->keeps != KEEPS_OPERANDS && op->keeps != KEEPS_QUOTIENT)) return 0;
    int a_grad = requires_grad(a), b_grad = requires_grad(b);
    if (a_grad < 0 || b_grad < 0) return -1;
    if (op->keeps == KEEPS_OPERANDS)   /* each operand only for the other's gradient */
        return save_two(node, b_grad ? a : Py_None, a_grad ? b : Py_None);
    /* b for both gradients; a and the result for b's */
    PyObject *r = PyObject_CallMethodObjArgs(node, s_save, b_grad ? a : Py_None, b, b_grad ? out : Py_None, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* The operator on ``a`` (and ``b`` where binary) in the common case: a new tensor, NULL on error,
   or ``*handled`` set to 0 where the case is not the common one (nothing has been done). */
static PyObject *common_case(Operator *op, PyObject *a, PyObject *b, int *handled) {
    *handled = 0;
    PyArrayObject *ad = array_of(a);
    if (ad == NULL || PyArray_NBYTES(ad) >= small_bytes) return NULL;
    char kind = PyArray_DESCR(ad)->kind;
    if ((op->refuses_bool && kind == 'b') || (op->floats_only && kind != 'f' && kind != 'c')) return NULL;
    int b_tensor = 0;
    PyObject *bd = NULL;
    if (!op->unary) {
        if (Py_TYPE(b) == TensorType) {
            PyArrayObject *array = array_of(b);
            if (array == NULL || PyArray_DESCR(array) != PyArray_DESCR(ad)) return NULL;
            b_tensor = 1;
            bd = (PyObject *)array;
        } else if ((PyFloat_CheckExact(b) || PyLong_CheckExact(b)) && (kind == 'f' || kind == 'c')) {
            bd = b;   /* (NumPy takes a Python number in the tensor's dtype, as torch does) */
        } else {
            return NULL;
        }
    }
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *arrays[2] = {(PyObject *)ad, bd};
    PyObject *data = PyObject_Vectorcall(op->ufunc, arrays, op->unary ? 1 : 2, NULL);
    if (data == NULL) {   /* (the Python op raises torch's error) */
        PyErr_Clear();
        return NULL;
    }
    *handled = 1;
    PyObject *out = make(data);
    if (out == NULL) return NULL;
    int a_grad = requires_grad(a), b_grad = b_tensor ? requires_grad(b) : 0;
    if (a_grad < 0 || b_grad < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (!a_grad && !b_grad) return out;
    PyObject *inputs = op->unary ? PyTuple_Pack(1, a) : PyTuple_Pack(2, a, b_tensor ? b : Py_None);
    if (inputs == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    PyObject *args[3] = {op->node_cls, inputs, out};
    PyObject *node = PyObject_Vectorcall(record, args, 3, NULL);
    Py_DECREF(inputs);
    if (node == NULL || (node != Py_None && set_fields(op, node, a, b, b_tensor, out) < 0)) {
        Py_XDECREF(node);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

static PyObject *run(int index, PyObject *a, PyObject *const *args, Py_ssize_t nargs) {
    Operator *op = &operators[index];
    if (nargs == (op->unary ? 0 : 1) && Py_TYPE(a) == TensorType) {
        int handled;
        PyObject *out = common_case(op, a, op->unary ? NULL : args[0], &handled);
        if (handled) return out;
    }
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "an operator takes at most one operand");
        return NULL;
    }
    PyObject *call[2] = {a, nargs ? args[0] : NULL};   /* every other case: the Python op */
    return PyObject_Vectorcall(op->python_op, call, 1 + nargs, NULL);
}

#define OPERATOR(i) \
    static PyObject *operator_##i(PyObject *a, PyObject *const *args, Py_ssize_t nargs) { \
        return run(i, a, args, nargs); \
    }
OPERATOR(0) OPERATOR(1) OPERATOR(2) OPERATOR(3) OPERATOR(4) OPERATOR(5) OPERATOR(6) OPERATOR(7)
static PyObject *(*operator_functions[MAX_OPERATORS])(PyObject *, PyObject *const *, Py_ssize_t) = {
    operator_0, operator_1, operator_2, operator_3, operator_4, operator_5, operator_6, operator_7};
static PyMethodDef definitions[MAX_OPERATORS];

/* add(name, doc, ufunc, node_cls, python_op, keeps, refuses_bool, floats_only, unary): Tensor's
   method ``name`` for this operator (a method descriptor). */
static PyObject *add(PyObject *self, PyObject *args) {
    const char *name, *doc;
    Operator op;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the operators are not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "szOOOiiii", &name, &doc, &op.ufunc, &op.node_cls, &op.python_op, &op.keeps,
                          &op.refuses_bool, &op.floats_only, &op.unary))
        return NULL;
    if (n_operators == MAX_OPERATORS) {
        PyErr_SetString(PyExc_RuntimeError, "too many operators");
        return NULL;
    }
    PyObject *name_object = PyUnicode_InternFromString(name);   /* (kept: the definition points at it) */
    if (name_object == NULL) return NULL;
    PyMethodDef *definition = &definitions[n_operators];
    definition->ml_name = PyUnicode_AsUTF8(name_object);
    definition->ml_meth = (PyCFunction)(void (*)(void))operator_functions[n_operators];
    definition->ml_flags = METH_FASTCALL;
    definition->ml_doc = doc == NULL ? NULL : strdup(doc);
    PyObject *descriptor = PyDescr_NewMethod(TensorType, definition);
    if (descriptor == NULL) return NULL;
    Py_INCREF(op.ufunc);
    Py_INCREF(op.node_cls);
    Py_INCREF(op.python_op);
    operators[n_operators++] = op;
    return descriptor;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)configure, METH_VARARGS,
     "configure(Tensor, forward_state, dispatch_switch, record, plain_save, small_bytes)"},
    {"add", (PyCFunction)add, METH_VARARGS,
     "add(name, doc, ufunc, node_cls, python_op, keeps, refuses_bool, floats_only, unary) -> method"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_NAME(void) {
    import_array();
    const char *names[] = {"active", "on", "self_shape", "self_dtype", "other_shape", "other_dtype",
                           "other_scalar", "alpha", "save", "_saved", "_versions"};
    PyObject **interned[] = {&s_active, &s_on, &s_self_shape, &s_self_dtype, &s_other_shape, &s_other_dtype,
                             &s_other_scalar, &s_alpha, &s_save, &s_saved, &s_versions};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    if ((zero = PyLong_FromLong(0)) == NULL || (one = PyLong_FromLong(1)) == NULL) return NULL;
    return PyModule_Create(&module);
}
'''.replace("NAME", _NAME)


_lock = threading.Lock()
_state = {"python_ops": {}, "first_use": {}, "compiled": {}, "tried": False}


def _build():
    if os.environ.get("EMBER_COMPILED_OPERATORS", "1") == "0":
        return None
    include = include_dirs()
    if include is None:
        return None
    from .._inductor import _compiler
    source = f"/* Python {sys.version.split()[0]} ({sysconfig.get_config_var('SOABI')}), NumPy {np.__version__} */\n"
    module = _compiler.load_module(source + SOURCE, _NAME, include)
    if module is None:
        return None
    module.configure(Tensor, forward_state, dispatch_switch, _common.recording_function(), graph._save_plain,
                     openmp_kernels.ROWS_MIN_BYTES)
    compiled = {}
    for names, ufunc, node_cls, python_op, keeps, refuses_bool, floats_only in OPERATORS:
        for name in names:
            compiled[name] = module.add(name, python_op.__doc__, ufunc, node_cls, python_op, keeps,
                                        refuses_bool, floats_only, python_op is pointwise.neg)
    return compiled


def _first_use(name):
    """Tensor's operator ``name`` until the compiled ones are installed: install them, then run."""
    def operator(*args, **kwargs):
        install()
        return getattr(Tensor, name)(*args, **kwargs)
    operator.__name__ = operator.__qualname__ = name
    operator.__doc__ = _state["python_ops"][name].__doc__
    return operator


def prepare():
    """Make each compiled operator's name on ``Tensor`` build and install them at its first use
    (``ops/__init__`` calls this once the Python ops are attached)."""
    for names, *_ in OPERATORS:
        for name in names:
            _state["python_ops"][name] = Tensor.__dict__[name]
            method(name)(_first_use(name))
    _state["first_use"] = {name: Tensor.__dict__[name] for name in _state["python_ops"]}


def install():
    """Build the compiled operators (once) and put them on ``Tensor`` in place of each operator
    that is still ember's own (not patched meanwhile); where they cannot be built, the Python ops
    go back."""
    with _lock:
        if not _state["tried"]:
            _state["compiled"] = _build() or {}
            _state["tried"] = True
        for name, python_op in _state["python_ops"].items():
            if Tensor.__dict__.get(name) in (_state["first_use"][name], python_op):
                method(name)(_state["compiled"].get(name, python_op))


def python_operators():
    """{name: the Python op} for each of ``Tensor``'s operators compiled here."""
    return dict(_state["python_ops"])


def as_python(name, value):
    """``value`` (``Tensor.__dict__[name]``), or the Python op where it is this module's compiled
    or first-use operator: what code that wraps or patches Tensor's methods (the profiler, fx's
    patching, ``__torch_function__``'s registry) takes as the method."""
    python_op = _state["python_ops"].get(name)
    if python_op is not None and (value is _state["first_use"].get(name) or value is _state["compiled"].get(name)):
        return python_op
    return value


def installed():
    """Whether ``Tensor``'s operators are the compiled ones."""
    return bool(_state["compiled"]) and all(Tensor.__dict__.get(name) is op for name, op in _state["compiled"].items())


def uninstall():
    """Put the Python ops back as ``Tensor``'s operators (until ``install``)."""
    with _lock:
        for name, python_op in _state["python_ops"].items():
            if Tensor.__dict__.get(name) is _state["compiled"].get(name):
                method(name)(python_op)
