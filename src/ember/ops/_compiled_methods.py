"""Tensor's most frequent methods compiled for their common case: the arithmetic operators
(``a + b``, ``a - b``, ``a * b``, ``a / b``, ``-a``), their in-place forms (``+=``, ``add_`` and
the rest), the comparisons (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``) and the view ops
(``view``, ``reshape``, ``transpose``, ``unsqueeze``, ``expand``, ``squeeze``, ``flatten``,
``diagonal``, ``as_strided``, ``unfold``, and ``x[key]`` for a basic key: ints, slices, ``None`` and ``...``), the
same steps as
their Python ops in C.

A small tensor's ``a * b`` is one NumPy call of a quarter of a microsecond; around it, the
Python op (its frame, its operand checks, the node's fields) costs twice that again. Here each
method is a method of ``Tensor`` written in C. The operators take the common case (an ordinary
tensor on the CPU with an operand of its own dtype or a Python number, under the rows loops'
size) through NumPy's ufunc and, where autograd records, through the compiled ``record`` and the
node's fields and saved tensors as the Python op sets them (a comparison records nothing, as
its Python op). The in-place operators take a writeable float or complex tensor with an operand
of its dtype or a Python number where autograd does not record (neither requires grad, or grad
mode is off) and write into its memory, counting its version. The view ops take a tensor that
does not require grad, with integer arguments (or a basic key), and make the view as the Python
op does, with torch's strides; ``x[key]`` takes a tensor that requires grad too, recording the
node the Python op records (named after the key's last step that did something). None
runs under forward-mode AD or ``__torch_function__`` dispatch. Every other case calls the Python
op (``pointwise.add``, ``view.transpose`` and the rest), which also raises every error.

The backward of those operators' nodes (``AddBackward0``, ``SubBackward0``, ``MulBackward0``,
``DivBackward0``, ``NegBackward0``) and of ``TanhBackward0``, ``ExpBackward0`` and
``SigmoidBackward0`` is compiled the same way: each node class's
``backward_arrays`` is a C method that, for a gradient and saved tensors that are small,
C-contiguous float32 or float64 arrays of one shape (the saved ones unmodified), computes the
formula in one loop (no NumPy call, so no ufunc dispatch per gradient) and otherwise calls the
Python ``backward_arrays``, which also raises the errors (a saved tensor modified in place or
freed). The same extension holds the compiled functions of ``_compiled_functions`` (ops whose
forward on a small tensor is one call: ``sigmoid``, ``exp``, ``maximum``, ``atan2``, ``mm``,
``where``, ``cat``, ``stack``, ``sum``, ``mean``, ``amax``, ``max(dim)``, ...).

The methods are built at their first use, as ember's compiled loops are
(``_backend.native_calls``): until then (and where the headers or a C compiler are missing, or
``EMBER_COMPILED_METHODS=0`` is set) ``Tensor``'s methods are the Python ops, the nodes'
gradients their Python ones, and the functions their Python paths.
"""
import inspect
import os
import sys
import sysconfig
import threading

import numpy as np

from .. import _dtype
from .._backend import choice, openmp_kernels
from .._backend.native_calls import include_dirs
from .._tensor import Tensor
from .._torch_function import _switch as dispatch_switch
from ..autograd import graph
from ..autograd._compiled import FLAG_SOURCE
from ..autograd._dual import forward as forward_state
from ..autograd.grad_mode import state as grad_state
from . import _common, _compiled_functions, pointwise, unary, view
from ._common import method

__all__ = ["prepare", "install", "installed", "uninstall", "reinstall", "python_methods", "python_gradients",
           "as_python", "as_python_gradient", "METHODS", "GRADIENTS", "SOURCE"]

_NAME = "ember_tensor_methods"

# The kinds of method (the numbers name the cases in the C source's ``enum kind``), and what the
# node of an operator keeps beyond its operands' shapes and dtypes (``enum keeps``).
(_BINARY, _UNARY, _COMPARE, _TRANSPOSE, _UNSQUEEZE, _VIEW, _RESHAPE, _SELECT, _INPLACE, _EXPAND, _SQUEEZE, _FLATTEN,
 _DIAGONAL, _AS_STRIDED, _UNFOLD) = range(15)
_KEEPS_NOTHING, _KEEPS_ALPHA, _KEEPS_OPERANDS, _KEEPS_QUOTIENT = range(4)

# (Tensor's names for it, kind, and for an operator: its ufunc, its node class (None for a
# comparison or an in-place operator, which record nothing here), what the node keeps, the dtype
# kinds that go to the Python op (which refuses them: bool for ``-``, complex for an ordering),
# whether only float and complex tensors are taken (the in-place operators': the Python op keeps
# its checks of integer and bool results). The Python op of each name is Tensor's method when ``prepare`` runs.
METHODS = (
    (("__add__", "__radd__"), _BINARY, np.add, pointwise.AddBackward0, _KEEPS_ALPHA, "", False),
    (("__sub__",), _BINARY, np.subtract, pointwise.SubBackward0, _KEEPS_ALPHA, "b", False),
    (("__mul__", "__rmul__"), _BINARY, np.multiply, pointwise.MulBackward0, _KEEPS_OPERANDS, "", False),
    (("__truediv__",), _BINARY, np.true_divide, pointwise.DivBackward0, _KEEPS_QUOTIENT, "", True),
    (("__neg__",), _UNARY, np.negative, pointwise.NegBackward0, _KEEPS_NOTHING, "b", False),
    (("__eq__",), _COMPARE, np.equal, None, _KEEPS_NOTHING, "", False),
    (("__ne__",), _COMPARE, np.not_equal, None, _KEEPS_NOTHING, "", False),
    (("__lt__",), _COMPARE, np.less, None, _KEEPS_NOTHING, "c", False),
    (("__le__",), _COMPARE, np.less_equal, None, _KEEPS_NOTHING, "c", False),
    (("__gt__",), _COMPARE, np.greater, None, _KEEPS_NOTHING, "c", False),
    (("__ge__",), _COMPARE, np.greater_equal, None, _KEEPS_NOTHING, "c", False),
    (("__iadd__", "add_"), _INPLACE, np.add, None, _KEEPS_NOTHING, "", True),
    (("__isub__", "sub_", "subtract_"), _INPLACE, np.subtract, None, _KEEPS_NOTHING, "", True),
    (("__imul__", "mul_", "multiply_"), _INPLACE, np.multiply, None, _KEEPS_NOTHING, "", True),
    (("__itruediv__", "div_", "divide_", "true_divide_"), _INPLACE, np.true_divide, None, _KEEPS_NOTHING, "", True),
    (("transpose", "swapdims", "swapaxes"), _TRANSPOSE),
    (("unsqueeze",), _UNSQUEEZE),
    (("view",), _VIEW),
    (("reshape",), _RESHAPE),
    (("__getitem__",), _SELECT),
    (("expand",), _EXPAND),
    (("squeeze",), _SQUEEZE),
    (("flatten",), _FLATTEN),
    (("diagonal",), _DIAGONAL),
    (("as_strided",), _AS_STRIDED),
    (("unfold",), _UNFOLD),
)

# The nodes whose ``backward_arrays`` is compiled too, each with its formula (``enum formula``):
# the gradients of the operators above, and tanh's, exp's and sigmoid's. The Python one of each is the class's when
# ``prepare`` runs.
_GRAD_ADD, _GRAD_SUB, _GRAD_MUL, _GRAD_NEG, _GRAD_TANH, _GRAD_DIV, _GRAD_EXP, _GRAD_SIGMOID = range(8)
GRADIENTS = (
    (pointwise.AddBackward0, _GRAD_ADD),
    (pointwise.SubBackward0, _GRAD_SUB),
    (pointwise.MulBackward0, _GRAD_MUL),
    (pointwise.NegBackward0, _GRAD_NEG),
    (unary.TanhBackward0, _GRAD_TANH),
    (pointwise.DivBackward0, _GRAD_DIV),
    (unary.ExpBackward0, _GRAD_EXP),
    (unary.SigmoidBackward0, _GRAD_SIGMOID),
)

SOURCE = r'''
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* What ``configure`` is given. */
static PyTypeObject *TensorType;
static PyObject *forward_state, *dispatch_switch, *record, *plain_save, *grad_state, *modifier_recording;
static Py_ssize_t small_bytes;   /* arrays this large or larger go to the Python op (its rows loops) */
/* Where Tensor's slots lie in its instances. */
static Py_ssize_t o_data, o_requires_grad, o_grad_fn, o_version_counter;
static PyObject *s_base, *s_view_version, *s_active, *s_on, *s_self_shape, *s_self_dtype, *s_other_shape,
                *s_other_dtype, *s_other_scalar, *s_alpha, *s_save, *s_saved, *s_versions, *s_next_functions,
                *s_grad_enabled, *s_enabled, *s_in_shape, *s_key, *zero, *one, *out_keyword;

#define SLOT(o, offset) (*(PyObject **)((char *)(o) + (offset)))

enum kind { BINARY, UNARY, COMPARE, TRANSPOSE, UNSQUEEZE, VIEW, RESHAPE, SELECT, INPLACE, EXPAND, SQUEEZE, FLATTEN,
            DIAGONAL, AS_STRIDED, UNFOLD };
/* The nodes indexing records (``configure_views``): AliasBackward0, SliceBackward0, SelectBackward0,
   UnsqueezeBackward0. */
enum index_node { ALIAS_NODE, SLICE_NODE, SELECT_NODE, UNSQUEEZE_NODE };
static PyObject *node_classes[4];
enum keeps { KEEPS_NOTHING, KEEPS_ALPHA, KEEPS_OPERANDS, KEEPS_QUOTIENT };

typedef struct {
    PyObject *python_op, *ufunc, *node_cls;   /* (the last two None but for operators) */
    int kind, keeps, floats_only;
    char refused[8];   /* dtype kinds left to the Python op */
} Method;

#define MAX_METHODS 40
static Method methods_[MAX_METHODS];
static int n_methods;

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
    if (!PyArg_ParseTuple(args, "O!OOOOnOO", &PyType_Type, &type, &forward_state, &dispatch_switch, &record,
                          &plain_save, &small_bytes, &grad_state, &modifier_recording))
        return NULL;
    TensorType = (PyTypeObject *)type;
    Py_INCREF(type);
    Py_INCREF(grad_state);
    Py_INCREF(modifier_recording);
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

FLAG

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

/* ``record(node_cls, (a,), out)``, or ``record(node_cls, (a, b), out)`` where ``b`` is not NULL (None
   for a number operand): the node recorded for ``out`` (a new reference; None where nothing is
   recorded), or NULL on error. */
static PyObject *record_node(PyObject *node_cls, PyObject *a, PyObject *b, PyObject *out) {
    PyObject *inputs = b == NULL ? PyTuple_Pack(1, a) : PyTuple_Pack(2, a, b);
    if (inputs == NULL) return NULL;
    PyObject *args[3] = {node_cls, inputs, out};
    PyObject *node = PyObject_Vectorcall(record, args, 3, NULL);
    Py_DECREF(inputs);
    return node;
}

/* ``out`` with the reference to its node (None where nothing was recorded) released, or NULL
   (``out`` released) where ``node`` is NULL: recording it, or setting its fields, failed. */
static PyObject *with_node(PyObject *out, PyObject *node) {
    if (node == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

/* ``node.<shape_name> = array.shape`` and ``node.<dtype_name> = array.dtype``: 0, or -1 on error. */
static int set_shape_and_dtype(PyObject *node, PyObject *shape_name, PyObject *dtype_name, PyArrayObject *array) {
    PyObject *shape = PyObject_GetAttrString((PyObject *)array, "shape");
    int status = shape == NULL ? -1 : PyObject_SetAttr(node, shape_name, shape);
    Py_XDECREF(shape);
    return status < 0 ? -1 : PyObject_SetAttr(node, dtype_name, (PyObject *)PyArray_DESCR(array));
}

/* The node's fields, as pointwise._binary sets them: each operand's shape and dtype (None for a
   number ``other``, kept as ``other_scalar``), alpha for add and sub, and what mul and div save. */
static int set_fields(Method *op, PyObject *node, PyObject *a, PyObject *b, int b_tensor, PyObject *out) {
    PyArrayObject *ad = array_of(a);
    if (op->kind == UNARY) return 0;
    if (b_tensor) {
        if (set_shape_and_dtype(node, s_other_shape, s_other_dtype, array_of(b)) < 0) return -1;
    } else if (PyObject_SetAttr(node, s_other_shape, Py_None) < 0 || PyObject_SetAttr(node, s_other_dtype, Py_None) < 0
               || PyObject_SetAttr(node, s_other_scalar, b) < 0) {
        return -1;
    }
    if (set_shape_and_dtype(node, s_self_shape, s_self_dtype, ad) < 0) return -1;
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

/* Whether an array of dtype ``x`` is one a comparison of two dtypes takes: bool, a signed integer, uint8,
   float32 or float64 (torch promotes no other unsigned integer with another dtype). */
static int compared_exactly(PyArray_Descr *x) {
    npy_intp size = PyDataType_ELSIZE(x);
    return x->kind == 'b' || x->kind == 'i' || (x->kind == 'u' && size == 1)
           || (x->kind == 'f' && (size == 4 || size == 8));
}

/* Whether NumPy's comparison of arrays (each with dims) of the dtypes ``x`` and ``y`` (each taken by
   ``compared_exactly``) gives torch's answer, which compares in their promoted dtype: two integer or bool
   dtypes compare exactly either way; with float64, both compare in float64; float32 with bool, int8, uint8
   or int16 in float32 (with a wider integer NumPy compares in float64, torch in float32). */
static int compares_as_torch(PyArray_Descr *x, PyArray_Descr *y) {
    int x_float = x->kind == 'f', y_float = y->kind == 'f';
    if (!x_float && !y_float) return 1;
    if ((x_float && PyDataType_ELSIZE(x) == 8) || (y_float && PyDataType_ELSIZE(y) == 8)) return 1;
    PyArray_Descr *other = x_float ? y : x;
    return other->kind != 'f' && PyDataType_ELSIZE(other) <= 2;
}

/* The Python number ``number`` (a float, or an int within 2**53) as a 0-d array of the float32 or float64 dtype
   ``x``: what a ufunc makes of it with an array of that dtype (the double rounded once to the dtype), which it
   takes sooner in that form. A new reference, or NULL with no error set where it is another number. */
static PyObject *number_array(PyObject *number, PyArray_Descr *x) {
    double v;
    if (PyFloat_CheckExact(number)) {
        v = PyFloat_AS_DOUBLE(number);
    } else {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (overflow || (i == -1 && PyErr_Occurred()) || i > (1LL << 53) || i < -(1LL << 53)) {
            PyErr_Clear();
            return NULL;
        }
        v = (double)i;
    }
    Py_INCREF(x);
    PyArrayObject *a = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, x, 0, NULL, NULL, NULL, 0, NULL);
    if (a == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (PyArray_TYPE(a) == NPY_FLOAT32)
        *(float *)PyArray_DATA(a) = (float)v;
    else
        *(double *)PyArray_DATA(a) = v;
    return (PyObject *)a;
}

/* Whether ``x`` is float32 or float64 in the machine's byte order (``number_array``'s dtypes). */
static int float32_or_64(PyArray_Descr *x) {
    return (x->type_num == NPY_FLOAT32 || x->type_num == NPY_FLOAT64) && PyDataType_ISNOTSWAPPED(x);
}

/* The Python int ``number`` as torch takes it with a tensor of the integer dtype ``x``: wrapped around into the
   dtype's range (a new Python int), or NULL, with no error set, where it does not fit 64 bits. */
static PyObject *wrapped_int(PyObject *number, PyArray_Descr *x) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    int is_signed = x->kind == 'i';
    switch (PyDataType_ELSIZE(x)) {
    case 1: return PyLong_FromLong(is_signed ? (long)(npy_int8)v : (long)(npy_uint8)v);
    case 2: return PyLong_FromLong(is_signed ? (long)(npy_int16)v : (long)(npy_uint16)v);
    case 4: return PyLong_FromLongLong(is_signed ? (long long)(npy_int32)v : (long long)(npy_uint32)v);
    case 8: return is_signed ? PyLong_FromLongLong(v) : PyLong_FromUnsignedLongLong((npy_uint64)v);
    }
    return NULL;
}

/* The operator on ``a`` (and ``b`` where binary) in the common case: a new tensor, NULL on error,
   or ``*handled`` set to 0 where the case is not the common one (nothing has been done). A comparison
   takes two tensors with dims of two dtypes where NumPy's comparison gives torch's answer
   (``compares_as_torch``); an integer tensor takes a Python int, wrapped into its dtype as torch
   converts it (``wrapped_int``: NumPy then keeps the tensor's dtype). */
static PyObject *common_case(Method *op, PyObject *a, PyObject *b, int *handled) {
    *handled = 0;
    PyArrayObject *ad = array_of(a);
    if (ad == NULL || PyArray_NBYTES(ad) >= small_bytes) return NULL;
    char kind = PyArray_DESCR(ad)->kind;
    if (strchr(op->refused, kind) != NULL || (op->floats_only && kind != 'f' && kind != 'c')) return NULL;
    int b_tensor = 0;
    PyObject *bd = NULL, *number = NULL;
    if (op->kind != UNARY) {
        if (Py_TYPE(b) == TensorType) {
            PyArrayObject *array = array_of(b);
            if (array == NULL) return NULL;
            PyArray_Descr *x = PyArray_DESCR(ad), *y = PyArray_DESCR(array);
            if (y != x && !(op->kind == COMPARE && PyArray_NDIM(ad) > 0 && PyArray_NDIM(array) > 0
                            && PyArray_ISNOTSWAPPED(ad) && PyArray_ISNOTSWAPPED(array) && compared_exactly(x)
                            && compared_exactly(y) && compares_as_torch(x, y)))
                return NULL;
            b_tensor = 1;
            bd = (PyObject *)array;
        } else if ((PyFloat_CheckExact(b) || PyLong_CheckExact(b)) && (kind == 'f' || kind == 'c')) {
            /* (NumPy takes a Python number in the tensor's dtype, as torch does) */
            number = float32_or_64(PyArray_DESCR(ad)) ? number_array(b, PyArray_DESCR(ad)) : NULL;
            bd = number != NULL ? number : b;
        } else if (PyLong_CheckExact(b) && (kind == 'i' || kind == 'u')) {
            if ((number = wrapped_int(b, PyArray_DESCR(ad))) == NULL) return NULL;
            bd = number;
        } else {
            return NULL;
        }
    }
    int plain = plain_mode();
    if (plain <= 0) {
        Py_XDECREF(number);
        *handled = plain < 0;
        return NULL;
    }
    PyObject *arrays[2] = {(PyObject *)ad, bd};
    PyObject *data = PyObject_Vectorcall(op->ufunc, arrays, op->kind == UNARY ? 1 : 2, NULL);
    Py_XDECREF(number);
    if (data == NULL) {   /* (the Python op raises torch's error) */
        PyErr_Clear();
        return NULL;
    }
    *handled = 1;
    PyObject *out = make(data);
    if (out == NULL || op->kind == COMPARE) return out;   /* (a comparison records nothing) */
    int a_grad = requires_grad(a), b_grad = b_tensor ? requires_grad(b) : 0;
    if (a_grad < 0 || b_grad < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (!a_grad && !b_grad) return out;
    PyObject *node = record_node(op->node_cls, a, op->kind == UNARY ? NULL : b_tensor ? b : Py_None, out);
    if (node == NULL || (node != Py_None && set_fields(op, node, a, b, b_tensor, out) < 0)) {
        Py_XDECREF(node);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

/* ``bump_version(t)`` where nothing records modifiers: ``t._version_counter[0] += 1``. 0, or -1 on error. */
static int count_change(PyObject *t) {
    PyObject *counter = SLOT(t, o_version_counter);
    if (counter == NULL || !PyList_Check(counter) || PyList_GET_SIZE(counter) < 1) {
        PyErr_SetString(PyExc_TypeError, "a tensor's version counter must be a list");
        return -1;
    }
    PyObject *version = PyNumber_Add(PyList_GET_ITEM(counter, 0), one);
    return version == NULL || PyList_SetItem(counter, 0, version) < 0 ? -1 : 0;
}

/* ``self op= other`` in the common case, as pointwise._inplace_binary does it where autograd does
   not record: a float or complex tensor that is writeable, with an operand of its dtype or a
   Python number, neither recorded (neither requires grad, or grad mode is off); the result
   written into self's memory and its version counted. A new reference to self, NULL on error, or
   ``*handled`` set to 0 where the case is not this one (nothing done). */
static PyObject *inplace_case(Method *op, PyObject *self, PyObject *b, int *handled) {
    *handled = 0;
    PyArrayObject *sd = array_of(self);
    if (sd == NULL || !PyArray_ISWRITEABLE(sd)) return NULL;
    char kind = PyArray_DESCR(sd)->kind;
    if (strchr(op->refused, kind) != NULL || (op->floats_only && kind != 'f' && kind != 'c')) return NULL;
    PyObject *bd;
    int b_grad = 0;
    if (Py_TYPE(b) == TensorType) {
        PyArrayObject *array = array_of(b);
        if (array == NULL || PyArray_DESCR(array) != PyArray_DESCR(sd)) return NULL;
        if ((b_grad = requires_grad(b)) < 0) {
            *handled = 1;
            return NULL;
        }
        bd = (PyObject *)array;
    } else if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) {
        bd = b;
    } else {
        return NULL;
    }
    int a_grad = requires_grad(self), plain = a_grad < 0 ? -1 : plain_mode();
    int enabled = plain <= 0 ? 0 : (a_grad || b_grad) ? flag(grad_state, s_grad_enabled) : 0;
    int recording = enabled < 0 ? -1 : flag(modifier_recording, s_enabled);
    if (plain < 0 || enabled < 0 || recording < 0) {
        *handled = 1;
        return NULL;
    }
    if (!plain || enabled || recording) return NULL;
    PyObject *number = bd == b && float32_or_64(PyArray_DESCR(sd)) ? number_array(b, PyArray_DESCR(sd)) : NULL;
    PyObject *call[3] = {(PyObject *)sd, number != NULL ? number : bd, (PyObject *)sd};
    PyObject *result = PyObject_Vectorcall(op->ufunc, call, 2, out_keyword);
    Py_XDECREF(number);
    if (result == NULL) {   /* (a shape that does not broadcast: the Python op raises torch's error) */
        PyErr_Clear();
        return NULL;
    }
    Py_DECREF(result);
    *handled = 1;
    return count_change(self) < 0 ? NULL : Py_NewRef(self);
}

/* ``_tensor._make_view(data, base)``: a new Tensor around ``data`` (a reference taken over), a
   view of ``base``'s memory sharing its version counter. */
static PyObject *make_view(PyObject *data, PyObject *base) {
    PyObject *counter = SLOT(base, o_version_counter);
    PyObject *t = counter == NULL ? NULL : TensorType->tp_alloc(TensorType, 0);
    if (t == NULL) {
        if (counter == NULL) PyErr_SetString(PyExc_AttributeError, "_version_counter");
        Py_DECREF(data);
        return NULL;
    }
    SLOT(t, o_data) = data;
    Py_INCREF(Py_False);
    SLOT(t, o_requires_grad) = Py_False;
    Py_INCREF(Py_None);
    SLOT(t, o_grad_fn) = Py_None;
    Py_INCREF(counter);
    SLOT(t, o_version_counter) = counter;
    PyObject *root = PyObject_GetAttr(base, s_base), *version = PySequence_GetItem(counter, 0);
    int status = root == NULL || version == NULL ? -1
        : PyObject_SetAttr(t, s_base, root == Py_None ? base : root) < 0 ? -1
        : PyObject_SetAttr(t, s_view_version, version);
    Py_XDECREF(root);
    Py_XDECREF(version);
    if (status < 0) Py_CLEAR(t);
    return t;
}

/* A dimension argument: an int in [-n, n), wrapped into ``*dim``; 0 where it is anything else. */
static int dim_arg(PyObject *o, npy_intp n, npy_intp *dim) {
    if (!PyLong_CheckExact(o)) return 0;
    long d = PyLong_AsLong(o);
    if (d == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (d < -n || d >= n) return 0;
    *dim = d < 0 ? d + n : d;
    return 1;
}

/* as_strided's size or stride (a tuple or list of ints, none negative) into ``values``: their count,
   or -1 where it is anything else (the Python op then raises torch's error or takes the case). */
static int int_list(PyObject *o, npy_intp *values) {
    if (!PyTuple_Check(o) && !PyList_CheckExact(o)) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject **items = PySequence_Fast_ITEMS(o);
    if (n > NPY_MAXDIMS) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i])) return -1;
        long long v = PyLong_AsLongLong(items[i]);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (v < 0 || v > NPY_MAX_INTP) return -1;
        values[i] = (npy_intp)v;
    }
    return (int)n;
}

/* as_strided's view for ``a`` (``dims`` and ``strides`` its size and stride in elements, ``offset`` the
   storage offset asked, -1 for the tensor's own): the storage is ``a``'s owner (``a`` itself or its
   base), C-contiguous; ``strides`` turned into bytes and ``*start`` set to the view's first byte from
   the owner's. 0 where the case is not this one or the view would read outside the storage (the Python
   op then raises torch's error). */
static int strided_view(PyArrayObject *a, PyArrayObject **owner, int n, npy_intp *dims, npy_intp *strides,
                        long long offset, npy_intp *start) {
    PyObject *base = PyArray_BASE(a);
    PyArrayObject *root = a;
    if (base != NULL) {
        if (!PyArray_CheckExact(base) || PyArray_BASE((PyArrayObject *)base) != NULL) return 0;
        root = (PyArrayObject *)base;
    }
    npy_intp item = PyArray_ITEMSIZE(a), skip = PyArray_BYTES(a) - PyArray_BYTES(root);
    if (!PyArray_IS_C_CONTIGUOUS(root) || item == 0 || skip < 0 || skip % item) return 0;
    if (offset < 0) offset = skip / item;
    npy_intp storage = PyArray_NBYTES(root) / item, needed = 1, empty = 0;
    if (offset > storage) return 0;
    for (int i = 0; i < n; i++) {
        if (dims[i] == 0) empty = 1;
        if (strides[i] > NPY_MAX_INTP / item) return 0;
    }
    for (int i = 0; i < n && !empty; i++) {
        if (strides[i] && dims[i] - 1 > (NPY_MAX_INTP - needed) / strides[i]) return 0;
        needed += (dims[i] - 1) * strides[i];
    }
    if (!empty && needed > storage - offset) return 0;
    for (int i = 0; i < n; i++) strides[i] *= item;
    *owner = root;
    *start = (npy_intp)offset * item;
    return 1;
}

/* view's and reshape's shape arguments (ints, or one tuple or list of ints; one -1 inferred) for
   an array of ``numel`` elements, into ``dims``: their count, or -1 where they are anything else
   (the Python op then gives the shape or torch's error). */
static int shape_args(PyObject *const *args, Py_ssize_t nargs, npy_intp numel, npy_intp *dims) {
    PyObject *const *items = args;
    Py_ssize_t n = nargs;
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_CheckExact(args[0]))) {
        items = PySequence_Fast_ITEMS(args[0]);
        n = PySequence_Fast_GET_SIZE(args[0]);
    }
    if (n > NPY_MAXDIMS) return -1;
    npy_intp known = 1;
    int inferred = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i])) return -1;
        long size = PyLong_AsLong(items[i]);
        if (size == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (size == -1) {
            if (inferred >= 0) return -1;
            inferred = (int)i;
        } else if (size < 0) {
            return -1;
        } else {
            dims[i] = size;
            known *= size;
        }
    }
    if (inferred >= 0) {
        if (known == 0 || numel % known) return -1;
        dims[inferred] = numel / known;
    } else if (known != numel) {
        return -1;
    }
    return (int)n;
}

/* ``data[key]`` for a basic key (an int, a slice with a positive step, None, ``...``, or a tuple
   of these) as torch applies it: the items in turn, an int dropping its dim, a slice stepping
   it, None inserting a dim of size 1 whose stride is the size times the stride of the dim it
   goes before (one element at the end). Into ``dims``, ``strides`` and ``*offset`` (bytes): the
   view's dimension count, or -1 where the key is anything else or out of range (the Python op
   then indexes, or raises torch's error); into ``*node``, the node torch names the indexing
   after: the last step that did something (``view._basic_node_cls``). */
static int basic_key(PyArrayObject *a, PyObject *key, npy_intp *dims, npy_intp *strides, npy_intp *offset,
                     int *node) {
    PyObject *const *items = &key;
    Py_ssize_t n = 1;
    int tuple = PyTuple_CheckExact(key);
    if (tuple) {
        items = &PyTuple_GET_ITEM(key, 0);
        n = PyTuple_GET_SIZE(key);
    }
    *node = ALIAS_NODE;
    const int nd = PyArray_NDIM(a);
    const npy_intp *in_dims = PyArray_DIMS(a), *in_strides = PyArray_STRIDES(a);
    int real = 0, ellipses = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (items[i] == Py_Ellipsis) ellipses++;
        else if (items[i] != Py_None) real++;
    }
    if (ellipses > 1 || real > nd) return -1;
    int in = 0, out = 0;
    *offset = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (o == Py_Ellipsis) {
            for (int k = real; k < nd; k++, in++, out++) {
                if (out >= NPY_MAXDIMS) return -1;
                dims[out] = in_dims[in];
                strides[out] = in_strides[in];
            }
        } else if (o == Py_None) {
            if (out >= NPY_MAXDIMS) return -1;
            dims[out] = 1;
            strides[out++] = in < nd ? in_dims[in] * in_strides[in] : PyArray_ITEMSIZE(a);
            *node = UNSQUEEZE_NODE;
        } else if (PyLong_CheckExact(o)) {
            long index = PyLong_AsLong(o);
            if (index == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return -1;
            }
            if (index < -in_dims[in] || index >= in_dims[in]) return -1;
            *offset += (index < 0 ? index + in_dims[in] : index) * in_strides[in];
            in++;
            *node = SELECT_NODE;
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) {
                PyErr_Clear();
                return -1;
            }
            if (step <= 0 || out >= NPY_MAXDIMS) return -1;
            dims[out] = PySlice_AdjustIndices(in_dims[in], &start, &stop, step);
            strides[out++] = in_strides[in] * step;
            *offset += start * in_strides[in];
            in++;
            PySliceObject *slice = (PySliceObject *)o;   /* (x[:] alone is a slice too, as in torch) */
            if (!tuple || slice->start != Py_None || slice->stop != Py_None || slice->step != Py_None)
                *node = SLICE_NODE;
        } else {
            return -1;
        }
    }
    for (; in < nd; in++, out++) {
        if (out >= NPY_MAXDIMS) return -1;
        dims[out] = in_dims[in];
        strides[out] = in_strides[in];
    }
    return out;
}

/* ``out``, the view ``t[key]`` of a tensor that requires grad, with the node torch names the
   indexing after (``node_classes[node_kind]``) recorded, its input's shape and the key kept, as
   ``view._slice_view`` records it; NULL (``out`` released) on error. */
static PyObject *recorded_index(PyObject *out, PyObject *t, PyObject *key, int node_kind) {
    PyObject *node = record_node(node_classes[node_kind], t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *shape = PyObject_GetAttrString(SLOT(t, o_data), "shape");
        if (shape == NULL || PyObject_SetAttr(node, s_in_shape, shape) < 0 || PyObject_SetAttr(node, s_key, key) < 0)
            Py_CLEAR(node);
        Py_XDECREF(shape);
    }
    return with_node(out, node);
}

/* ``expand``'s shape and torch's strides (``view.expanded_array``'s) for the C-contiguous array
   ``a`` with elements from the sizes in ``args`` (ints, or one tuple or list of them; -1 keeps a
   size): a dim that grows gets stride 0, a new leading dim of size 1 the span of the dims after
   it. ``*repeats`` set where an element repeats (the view is then read-only). The number of dims,
   or -1 where the sizes are not this case (the Python op raises the errors). */
static int expanded_shape(PyArrayObject *a, PyObject *const *args, Py_ssize_t nargs, npy_intp *dims, npy_intp *strides,
                          npy_intp *repeats) {
    PyObject *const *items = args;
    Py_ssize_t n = nargs;
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_CheckExact(args[0]))) {
        items = PySequence_Fast_ITEMS(args[0]);
        n = PySequence_Fast_GET_SIZE(args[0]);
    }
    int nd = PyArray_NDIM(a);
    if (n > NPY_MAXDIMS || n < nd) return -1;
    Py_ssize_t lead = n - nd;
    *repeats = 0;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        if (!PyLong_CheckExact(items[i])) return -1;
        long size = PyLong_AsLong(items[i]);
        if (size == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (i >= lead) {
            npy_intp have = PyArray_DIM(a, (int)(i - lead));
            if (size == -1) size = have;
            if (size < 0 || (size != have && have != 1)) return -1;
            dims[i] = size;
            strides[i] = size != have ? 0 : PyArray_STRIDE(a, (int)(i - lead));
            if (size != have && size > 1) *repeats = 1;
        } else {
            if (size < 0) return -1;
            dims[i] = size;
            strides[i] = size != 1 ? 0 : i + 1 < n ? dims[i + 1] * strides[i + 1] : PyArray_ITEMSIZE(a);
            if (size > 1) *repeats = 1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (dims[i] == 0) *repeats = 0;   /* (no elements: nothing repeats) */
    return (int)n;
}

/* The view op on a tensor that does not require grad (``x[key]``: one that does, too), as the
   Python op makes it: a new tensor,
   NULL on error, or ``*handled`` set to 0 where the case is not this one (nothing done). */
static PyObject *view_case(Method *m, PyObject *t, PyObject *const *args, Py_ssize_t nargs, int *handled) {
    *handled = 0;
    PyArrayObject *a = array_of(t);
    if (a == NULL || (m->kind != SELECT && SLOT(t, o_requires_grad) != Py_False)) return NULL;
    int nd = PyArray_NDIM(a), node_kind = ALIAS_NODE;
    npy_intp d0 = 0, d1 = 0, start = 0;   /* (start: the diagonal's or strided view's first element, in bytes) */
    PyArrayObject *owner = a;   /* (the array the view looks into: as_strided's, the storage's owner) */
    long offset = 0;
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    PyArray_Dims shape = {dims, 0};
    switch (m->kind) {
    case TRANSPOSE:
        if (nargs != 2 || nd == 0 || !dim_arg(args[0], nd, &d0) || !dim_arg(args[1], nd, &d1)) return NULL;
        break;
    case UNSQUEEZE:
        if (nargs != 1 || nd == NPY_MAXDIMS || !dim_arg(args[0], nd + 1, &d0)) return NULL;
        for (int i = 0, j = 0; i <= nd; i++) dims[i] = i == d0 ? 1 : PyArray_DIM(a, j++);
        shape.len = nd + 1;
        break;
    case VIEW:
    case RESHAPE:
        if (nargs == 0 || (m->kind == VIEW && !PyArray_IS_C_CONTIGUOUS(a))) return NULL;
        if ((shape.len = shape_args(args, nargs, PyArray_SIZE(a), dims)) < 0) return NULL;
        break;
    case SELECT:
        if (nargs != 1 || !PyArray_ISWRITEABLE(a)) return NULL;
        if ((shape.len = basic_key(a, args[0], dims, strides, &d0, &node_kind)) < 0) return NULL;
        break;
    case EXPAND:
        if (nargs == 0 || PyArray_SIZE(a) == 0 || !PyArray_IS_C_CONTIGUOUS(a)) return NULL;
        if ((shape.len = expanded_shape(a, args, nargs, dims, strides, &d0)) < 0) return NULL;
        break;
    case SQUEEZE:   /* (every dim of size 1, or the one dim given where its size is 1) */
        if (nargs > 1 || nd == 0 || (nargs == 1 && !dim_arg(args[0], nd, &d0))) return NULL;
        for (int i = 0; i < nd; i++) {
            if (PyArray_DIM(a, i) == 1 && (nargs == 0 || i == d0)) continue;
            dims[shape.len] = PyArray_DIM(a, i);
            strides[shape.len++] = PyArray_STRIDE(a, i);
        }
        break;
    case FLATTEN:   /* (dims start_dim to end_dim as one: a reshape; the tensor itself where they are one dim) */
        d1 = nd - 1;
        if (nargs > 2 || nd == 0 || (nargs >= 1 && !dim_arg(args[0], nd, &d0))
                || (nargs == 2 && !dim_arg(args[1], nd, &d1)) || d0 > d1)
            return NULL;
        for (int i = 0; i < nd; i++) {
            if (i > d0 && i <= d1) dims[shape.len - 1] *= PyArray_DIM(a, i);
            else dims[shape.len++] = PyArray_DIM(a, i);
        }
        break;
    case DIAGONAL:   /* (NumPy's diagonal view, as the Python op takes it: writeable where the tensor is) */
        if (nargs > 3 || nd < 2) return NULL;
        d0 = 0;
        d1 = 1;
        if (nargs >= 1 && !PyLong_CheckExact(args[0])) return NULL;
        offset = nargs >= 1 ? PyLong_AsLong(args[0]) : 0;
        if (offset == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if ((nargs >= 2 && !dim_arg(args[1], nd, &d0)) || (nargs == 3 && !dim_arg(args[2], nd, &d1)) || d0 == d1)
            return NULL;
        for (int i = 0; i < nd; i++) {
            if (i == d0 || i == d1) continue;
            dims[shape.len] = PyArray_DIM(a, i);
            strides[shape.len++] = PyArray_STRIDE(a, i);
        }
        {
            npy_intp n0 = PyArray_DIM(a, (int)d0), n1 = PyArray_DIM(a, (int)d1), size;
            if (offset >= 0) {
                n1 -= offset;
                start = offset * PyArray_STRIDE(a, (int)d1);
            } else {
                n0 += offset;
                start = -offset * PyArray_STRIDE(a, (int)d0);
            }
            size = n1 < n0 ? n1 : n0;
            if (size < 0) {
                size = 0;
                start = 0;
            }
            dims[shape.len] = size;
            strides[shape.len++] = PyArray_STRIDE(a, (int)d0) + PyArray_STRIDE(a, (int)d1);
        }
        break;
    case AS_STRIDED:   /* (a view of the storage's C-contiguous owner, the Python op's bounds checked) */
    {
        long long storage_offset = -1;
        if (nargs < 2 || nargs > 3) return NULL;
        if (nargs == 3 && args[2] != Py_None) {
            if (!PyLong_CheckExact(args[2])) return NULL;
            storage_offset = PyLong_AsLongLong(args[2]);
            if (storage_offset == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return NULL;
            }
            if (storage_offset < 0) return NULL;
        }
        shape.len = int_list(args[0], dims);
        if (shape.len < 0 || int_list(args[1], strides) != shape.len
                || !strided_view(a, &owner, shape.len, dims, strides, storage_offset, &start))
            return NULL;
        break;
    }
    case UNFOLD:   /* (each slice of ``size`` along the dim, ``step`` apart, as a new last dim: a C-contiguous view) */
    {
        long size, step;
        if (nargs != 3 || nd == 0 || !PyArray_IS_C_CONTIGUOUS(a) || !dim_arg(args[0], nd, &d0)
                || !PyLong_CheckExact(args[1]) || !PyLong_CheckExact(args[2]))
            return NULL;
        size = PyLong_AsLong(args[1]);
        step = PyLong_AsLong(args[2]);
        if ((size == -1 || step == -1) && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        npy_intp n = PyArray_DIM(a, (int)d0);
        if (size < 0 || size > n || step <= 0) return NULL;   /* (the Python op's errors) */
        for (int i = 0; i < nd; i++) {
            dims[i] = i == d0 ? (n - size) / step + 1 : PyArray_DIM(a, i);
            strides[i] = i == d0 ? PyArray_STRIDE(a, i) * step : PyArray_STRIDE(a, i);
        }
        dims[nd] = size;
        strides[nd] = PyArray_STRIDE(a, (int)d0);
        shape.len = nd + 1;
        break;
    }
    default:
        return NULL;
    }
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    if (m->kind == FLATTEN && d0 == d1) {
        *handled = 1;
        return Py_NewRef(t);
    }
    PyObject *result;
    int is_view = 1;
    if (m->kind == TRANSPOSE) {
        result = PyArray_SwapAxes(a, (int)d0, (int)d1);
    } else if (m->kind == SELECT || m->kind == EXPAND || m->kind == DIAGONAL || m->kind == AS_STRIDED
               || m->kind == UNFOLD) {
        /* data[key] (d0 its offset), the expanded view, or the diagonal or strided view (from ``start``) */
        PyArray_Descr *descr = PyArray_DESCR(a);
        Py_INCREF(descr);
        /* (expand's d0: whether an element repeats, the view then read-only) */
        int writeable = m->kind == SELECT || ((m->kind != EXPAND || !d0) && PyArray_ISWRITEABLE(owner));
        result = PyArray_NewFromDescr(&PyArray_Type, descr, shape.len, dims, strides,
                                      PyArray_BYTES(owner) + (m->kind == SELECT ? d0 : start),
                                      writeable ? NPY_ARRAY_WRITEABLE : 0, NULL);
        Py_INCREF(owner);
        if (result != NULL && PyArray_SetBaseObject((PyArrayObject *)result, (PyObject *)owner) < 0) Py_CLEAR(result);
        else if (result == NULL) Py_DECREF(owner);
    } else if (m->kind == SQUEEZE) {   /* the kept dims' sizes and strides: NumPy's squeeze's view, or an alias */
        if (shape.len == nd) {
            Py_INCREF(a);
            result = (PyObject *)a;
        } else {
            PyArray_Descr *descr = PyArray_DESCR(a);
            Py_INCREF(descr);
            result = PyArray_NewFromDescr(&PyArray_Type, descr, shape.len, dims, strides, PyArray_BYTES(a),
                                          PyArray_ISWRITEABLE(a) ? NPY_ARRAY_WRITEABLE : 0, NULL);
            Py_INCREF(a);
            if (result != NULL && PyArray_SetBaseObject((PyArrayObject *)result, (PyObject *)a) < 0) Py_CLEAR(result);
            else if (result == NULL) Py_DECREF(a);
        }
    } else if ((m->kind == RESHAPE || m->kind == FLATTEN) && !PyArray_IS_C_CONTIGUOUS(a)) {
        if (nd == shape.len && memcmp(PyArray_DIMS(a), dims, nd * sizeof(npy_intp)) == 0) {
            Py_INCREF(a);   /* the same shape: an alias */
            result = (PyObject *)a;
        } else {   /* a view where the strides allow, else a copy: told apart by the result's base */
            result = PyArray_Newshape(a, &shape, NPY_CORDER);
            if (result == NULL) {
                PyErr_Clear();
                return NULL;
            }
            PyObject *owner = PyArray_BASE(a) == NULL ? (PyObject *)a : PyArray_BASE(a);
            PyObject *base = PyArray_BASE((PyArrayObject *)result);
            if (base != owner) {
                int copy = base != NULL && PyArray_CheckExact(base) && PyArray_BASE((PyArrayObject *)base) == NULL
                           && PyArray_CHKFLAGS((PyArrayObject *)base, NPY_ARRAY_OWNDATA);
                if (!copy) {   /* (not told apart here: the Python op decides) */
                    Py_DECREF(result);
                    return NULL;
                }
                is_view = 0;
            }
        }
    } else {
        result = PyArray_Newshape(a, &shape, NPY_CORDER);
    }
    *handled = 1;
    if (result == NULL) return NULL;
    PyObject *out = is_view ? make_view(result, t) : make(result);
    if (out == NULL || m->kind != SELECT || SLOT(t, o_requires_grad) == Py_False) return out;
    return recorded_index(out, t, args[0], node_kind);
}

/* ``function(self, *args, **kwargs)``: the Python op or gradient, for every case not taken here. */
static PyObject *call_python(PyObject *function, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject *small[8], **call = total < 8 ? small : PyMem_Malloc((total + 1) * sizeof(PyObject *));
    if (call == NULL) return PyErr_NoMemory();
    call[0] = self;
    for (Py_ssize_t i = 0; i < total; i++) call[i + 1] = args[i];
    PyObject *out = PyObject_Vectorcall(function, call, 1 + nargs, kwnames);
    if (call != small) PyMem_Free(call);
    return out;
}

static PyObject *run(int index, PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Method *m = &methods_[index];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && Py_TYPE(self) == TensorType) {
        int handled = 0;
        PyObject *out = NULL;
        if (m->kind == BINARY || m->kind == COMPARE) {
            if (nargs == 1) out = common_case(m, self, args[0], &handled);
        } else if (m->kind == INPLACE) {
            if (nargs == 1) out = inplace_case(m, self, args[0], &handled);
        } else if (m->kind == UNARY) {
            if (nargs == 0) out = common_case(m, self, NULL, &handled);
        } else {
            out = view_case(m, self, args, nargs, &handled);
        }
        if (handled) return out;
    }
    return call_python(m->python_op, self, args, nargs, kwnames);   /* every other case */
}

#define METHOD(i) \
    static PyObject *method_##i(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) { \
        return run(i, self, args, (size_t)nargsf, kwnames); \
    }
METHOD(0) METHOD(1) METHOD(2) METHOD(3) METHOD(4) METHOD(5) METHOD(6) METHOD(7)
METHOD(8) METHOD(9) METHOD(10) METHOD(11) METHOD(12) METHOD(13) METHOD(14) METHOD(15)
METHOD(16) METHOD(17) METHOD(18) METHOD(19) METHOD(20) METHOD(21) METHOD(22) METHOD(23)
METHOD(24) METHOD(25) METHOD(26) METHOD(27) METHOD(28) METHOD(29) METHOD(30) METHOD(31)
METHOD(32) METHOD(33) METHOD(34) METHOD(35) METHOD(36) METHOD(37) METHOD(38) METHOD(39)
static PyObject *(*method_functions[MAX_METHODS])(PyObject *, PyObject *const *, Py_ssize_t, PyObject *) = {
    method_0, method_1, method_2, method_3, method_4, method_5, method_6, method_7,
    method_8, method_9, method_10, method_11, method_12, method_13, method_14, method_15,
    method_16, method_17, method_18, method_19, method_20, method_21, method_22, method_23,
    method_24, method_25, method_26, method_27, method_28, method_29, method_30, method_31,
    method_32, method_33, method_34, method_35, method_36, method_37, method_38, method_39};
static PyMethodDef definitions[MAX_METHODS];

/* add(name, doc, python_op, kind, ufunc, node_cls, keeps, refused_kinds, floats_only): Tensor's
   method ``name`` (a method descriptor). */
static PyObject *add(PyObject *self, PyObject *args) {
    const char *name, *doc, *refused;
    Method m;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the methods are not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "szOiOOisi", &name, &doc, &m.python_op, &m.kind, &m.ufunc, &m.node_cls, &m.keeps,
                          &refused, &m.floats_only))
        return NULL;
    if (strlen(refused) >= sizeof(m.refused)) {
        PyErr_SetString(PyExc_ValueError, "too many refused kinds");
        return NULL;
    }
    strcpy(m.refused, refused);
    if (n_methods == MAX_METHODS) {
        PyErr_SetString(PyExc_RuntimeError, "too many methods");
        return NULL;
    }
    PyObject *name_object = PyUnicode_InternFromString(name);   /* (kept: the definition points at it) */
    if (name_object == NULL) return NULL;
    PyMethodDef *definition = &definitions[n_methods];
    definition->ml_name = PyUnicode_AsUTF8(name_object);
    definition->ml_meth = (PyCFunction)(void (*)(void))method_functions[n_methods];
    definition->ml_flags = METH_FASTCALL | METH_KEYWORDS;
    definition->ml_doc = doc == NULL ? NULL : strdup(doc);
    PyObject *descriptor = PyDescr_NewMethod(TensorType, definition);
    if (descriptor == NULL) return NULL;
    Py_INCREF(m.python_op);
    Py_INCREF(m.ufunc);
    Py_INCREF(m.node_cls);
    methods_[n_methods++] = m;
    return descriptor;
}

/* -- the gradients of some of the operators' nodes (``backward_arrays``) ----------------------------- */

enum formula { GRAD_ADD, GRAD_SUB, GRAD_MUL, GRAD_NEG, GRAD_TANH, GRAD_DIV, GRAD_EXP, GRAD_SIGMOID };

typedef struct {
    PyObject *python_gradient;   /* the node class's own backward_arrays, for every other case */
    int formula;
} Gradient;

#define MAX_GRADIENTS 8
static Gradient gradients_[MAX_GRADIENTS];
static int n_gradients;
static PyArray_Descr *float32_descr, *float64_descr;

#define LOOPS(T) \
    static void multiply_##T(T *out, const T *a, const T *b, npy_intp n) { \
        for (npy_intp i = 0; i < n; i++) out[i] = a[i] * b[i]; \
    } \
    static void scale_##T(T *out, const T *a, T b, npy_intp n) { \
        for (npy_intp i = 0; i < n; i++) out[i] = a[i] * b; \
    } \
    static void negate_##T(T *out, const T *a, npy_intp n) { \
        for (npy_intp i = 0; i < n; i++) out[i] = -a[i]; \
    } \
    __attribute__((optimize("fp-contract=off"))) \
    static void tanh_gradient_##T(T *out, const T *g, const T *y, npy_intp n) {   /* g * (1 - y * y) */ \
        for (npy_intp i = 0; i < n; i++) { \
            T square = y[i] * y[i]; \
            out[i] = g[i] * ((T)1 - square); \
        } \
    } \
    static void sigmoid_gradient_##T(T *out, const T *g, const T *y, npy_intp n) {   /* g * y * (1 - y) */ \
        for (npy_intp i = 0; i < n; i++) { \
            T product = g[i] * y[i]; \
            out[i] = product * ((T)1 - y[i]); \
        } \
    } \
    static void divide_##T(T *out, const T *a, const T *b, npy_intp n) { \
        for (npy_intp i = 0; i < n; i++) out[i] = a[i] / b[i]; \
    } \
    static void divide_by_##T(T *out, const T *a, T b, npy_intp n) { \
        for (npy_intp i = 0; i < n; i++) out[i] = a[i] / b; \
    } \
    static void quotient_gradient_##T(T *out, const T *g, const T *q, const T *b, npy_intp n) {   /* -(g * q / b) */ \
        for (npy_intp i = 0; i < n; i++) { \
            T product = g[i] * q[i]; \
            out[i] = -(product / b[i]); \
        } \
    }
LOOPS(float)
LOOPS(double)

/* The array of ``t`` where it is an ordinary tensor's float32 or float64 NumPy array that is
   C-contiguous, aligned and under ``small_bytes`` (what the loops here take), else NULL. */
static PyArrayObject *loop_array(PyObject *t) {
    if (t == NULL || Py_TYPE(t) != TensorType) return NULL;
    PyArrayObject *a = array_of(t);
    if (a == NULL || PyArray_NBYTES(a) >= small_bytes || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a))
        return NULL;
    PyArray_Descr *descr = PyArray_DESCR(a);
    return descr == float32_descr || descr == float64_descr ? a : NULL;
}

/* A new C-contiguous array of ``a``'s shape and dtype. */
static PyArrayObject *empty_like(PyArrayObject *a) {
    return (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), PyArray_TYPE(a));
}

static int same_shape(PyArrayObject *a, PyArrayObject *b) {
    int nd = PyArray_NDIM(a);
    return nd == PyArray_NDIM(b) && memcmp(PyArray_DIMS(a), PyArray_DIMS(b), nd * sizeof(npy_intp)) == 0;
}

/* Whether the node's field ``name`` is ``a``'s shape as a tuple: 0 or 1, -1 on error. */
static int shape_is(PyObject *node, PyObject *name, PyArrayObject *a) {
    PyObject *shape = PyObject_GetAttr(node, name);
    if (shape == NULL) return -1;
    int nd = PyArray_NDIM(a), same = PyTuple_CheckExact(shape) && PyTuple_GET_SIZE(shape) == nd;
    for (int i = 0; same && i < nd; i++) {
        PyObject *size = PyTuple_GET_ITEM(shape, i);
        same = PyLong_CheckExact(size) && PyLong_AsSsize_t(size) == PyArray_DIM(a, i);
    }
    PyErr_Clear();   /* (a size past Py_ssize_t is simply not this shape) */
    Py_DECREF(shape);
    return same;
}

/* Whether the node's field ``name`` is ``a``'s dtype (the same descriptor): 0 or 1, -1 on error. */
static int dtype_is(PyObject *node, PyObject *name, PyArrayObject *a) {
    PyObject *dtype = PyObject_GetAttr(node, name);
    if (dtype == NULL) return -1;
    int same = dtype == (PyObject *)PyArray_DESCR(a);
    Py_DECREF(dtype);
    return same;
}

/* Whether ``a`` has the shape and dtype of each operand of a binary node (``self`` alone where
   ``other`` is a number): _BinaryNode.matches, told by the same descriptors. 0 or 1, -1 on error. */
static int matches(PyObject *node, PyArrayObject *a, int other_too) {
    int same = shape_is(node, s_self_shape, a);
    if (same == 1) same = dtype_is(node, s_self_dtype, a);
    if (same == 1 && other_too) same = shape_is(node, s_other_shape, a);
    if (same == 1 && other_too) same = dtype_is(node, s_other_dtype, a);
    return same;
}

/* The arrays of the node's ``count`` saved tensors into ``arrays`` (NULL for a None), where each
   is unmodified since it was saved and a loop array of ``like``'s shape and dtype: 1, 0 where they
   are not (freed, packed by hooks, modified, another kind: the Python gradient then runs), -1 on
   error. The arrays are borrowed from the saved tensors, which the node keeps. */
static int saved_arrays(PyObject *node, int count, PyArrayObject *like, PyArrayObject **arrays) {
    PyObject *saved = PyObject_GetAttr(node, s_saved);
    if (saved == NULL) return -1;
    PyObject *versions = PyObject_GetAttr(node, s_versions);
    if (versions == NULL) {
        Py_DECREF(saved);
        return -1;
    }
    int ok = (PyTuple_CheckExact(saved) || PyList_CheckExact(saved)) && PySequence_Fast_GET_SIZE(saved) == count
             && (PyTuple_CheckExact(versions) || PyList_CheckExact(versions))
             && PySequence_Fast_GET_SIZE(versions) == count;
    for (int i = 0; ok == 1 && i < count; i++) {
        PyObject *t = PySequence_Fast_ITEMS(saved)[i];
        arrays[i] = NULL;
        if (t == Py_None) continue;
        PyArrayObject *a = loop_array(t);
        if (a == NULL || PyArray_DESCR(a) != PyArray_DESCR(like) || !same_shape(a, like)) {
            ok = 0;
            break;
        }
        PyObject *version = version_of(t);
        ok = version == NULL ? -1 : PyObject_RichCompareBool(version, PySequence_Fast_ITEMS(versions)[i], Py_EQ);
        Py_XDECREF(version);
        arrays[i] = a;
    }
    Py_DECREF(saved);
    Py_DECREF(versions);
    return ok;
}

/* Whether the node's edge ``i`` leads anywhere (``next_functions[i][0] is not None``): 0 or 1, -1 on error. */
static int has_edge(PyObject *node, int i) {
    PyObject *edges = PyObject_GetAttr(node, s_next_functions);
    if (edges == NULL) return -1;
    int has = -1;
    if (PyTuple_CheckExact(edges) && PyTuple_GET_SIZE(edges) > i && PyTuple_CheckExact(PyTuple_GET_ITEM(edges, i))
            && PyTuple_GET_SIZE(PyTuple_GET_ITEM(edges, i)) > 0)
        has = PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, i), 0) != Py_None;
    else
        PyErr_SetString(PyExc_TypeError, "a node's next_functions must be a tuple of (node, output_nr) pairs");
    Py_DECREF(edges);
    return has;
}

/* A new tensor of ``a``'s shape and dtype computed by the loop ``formula`` from ``a`` (and ``b``
   and ``c``, or the number ``scalar``). */
static PyObject *computed(int formula, PyArrayObject *a, PyArrayObject *b, PyArrayObject *c, double scalar) {
    PyArrayObject *out = empty_like(a);
    if (out == NULL) return NULL;
    npy_intp n = PyArray_SIZE(a);
    int single = PyArray_DESCR(a) == float32_descr;
    void *o = PyArray_DATA(out), *x = PyArray_DATA(a), *y = b == NULL ? NULL : PyArray_DATA(b);
    void *z = c == NULL ? NULL : PyArray_DATA(c);
    switch (formula) {
    case GRAD_MUL:
    case GRAD_EXP:
        if (b == NULL) {
            if (single) scale_float(o, x, (float)scalar, n); else scale_double(o, x, scalar, n);
        } else {
            if (single) multiply_float(o, x, y, n); else multiply_double(o, x, y, n);
        }
        break;
    case GRAD_SUB:
    case GRAD_NEG:
        if (single) negate_float(o, x, n); else negate_double(o, x, n);
        break;
    case GRAD_TANH:
        if (single) tanh_gradient_float(o, x, y, n); else tanh_gradient_double(o, x, y, n);
        break;
    case GRAD_SIGMOID:
        if (single) sigmoid_gradient_float(o, x, y, n); else sigmoid_gradient_double(o, x, y, n);
        break;
    case GRAD_DIV:
        if (b == NULL) {
            if (single) divide_by_float(o, x, (float)scalar, n); else divide_by_double(o, x, scalar, n);
        } else if (c == NULL) {
            if (single) divide_float(o, x, y, n); else divide_double(o, x, y, n);
        } else {   /* (y: the quotient, z: the divisor) */
            if (single) quotient_gradient_float(o, x, y, z, n); else quotient_gradient_double(o, x, y, z, n);
        }
        break;
    }
    return make((PyObject *)out);
}

/* A number that NumPy casts to ``a``'s dtype as C does (a float inside its range, an int it holds
   exactly) into ``*value``: 1, or 0 for any other. */
static int loop_scalar(PyObject *o, PyArrayObject *a, double *value) {
    double limit = PyArray_DESCR(a) == float32_descr ? 3.4028234663852886e38 : 1.7976931348623157e308;
    if (PyFloat_CheckExact(o)) {
        *value = PyFloat_AS_DOUBLE(o);
        return !(isfinite(*value) && fabs(*value) > limit);
    }
    if (!PyLong_CheckExact(o)) return 0;
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *value = (double)v;
    return v >= -(1L << 24) && v <= (1L << 24);
}

/* For a binary node: whether its ``other`` was a number (``other_shape`` None) into
   ``*is_number``, and then that number into ``*value``. 1 where it was one the loops take and
   ``a`` has ``self``'s shape and dtype, 0 where not (or ``other`` was a tensor), -1 on error. */
static int number_operand(PyObject *node, PyArrayObject *a, int *is_number, double *value) {
    PyObject *other_shape = PyObject_GetAttr(node, s_other_shape);
    if (other_shape == NULL) return -1;
    *is_number = other_shape == Py_None;
    Py_DECREF(other_shape);
    if (!*is_number) return 0;
    PyObject *scalar = PyObject_GetAttr(node, s_other_scalar);
    int ok = scalar == NULL ? -1 : loop_scalar(scalar, a, value);
    Py_XDECREF(scalar);
    return ok == 1 ? matches(node, a, 0) : ok;
}

/* The gradient in the common case, or NULL with ``*handled`` 0 where it is not (nothing done). */
static PyObject *gradient_case(Gradient *gradient, PyObject *node, PyObject *grad, int *handled) {
    *handled = 0;
    PyArrayObject *g = loop_array(grad), *saved[3];
    int ok;
    if (gradient->formula == GRAD_ADD) {   /* no arithmetic: any array of the operands' shape and dtype */
        if (grad == NULL || Py_TYPE(grad) != TensorType) return NULL;
        g = array_of(grad);
        if (g == NULL) return NULL;
        PyObject *alpha = PyObject_GetAttr(node, s_alpha);
        ok = alpha == NULL ? -1 : PyObject_RichCompareBool(alpha, one, Py_EQ);
        Py_XDECREF(alpha);
        if (ok == 1) ok = matches(node, g, 1);
        if (ok <= 0) {
            *handled = ok < 0;
            return NULL;
        }
        *handled = 1;
        int first = has_edge(node, 0), second = first < 0 ? -1 : has_edge(node, 1);
        if (second < 0) return NULL;
        return PyTuple_Pack(2, first ? grad : Py_None, second ? grad : Py_None);
    }
    if (g == NULL) return NULL;
    PyObject *first = NULL, *second = NULL;
    switch (gradient->formula) {
    case GRAD_SUB: {
        PyObject *alpha = PyObject_GetAttr(node, s_alpha);
        ok = alpha == NULL ? -1 : PyObject_RichCompareBool(alpha, one, Py_EQ);
        Py_XDECREF(alpha);
        if (ok == 1) ok = matches(node, g, 1);
        if (ok <= 0) break;
        int edge = has_edge(node, 0), other = edge < 0 ? -1 : has_edge(node, 1);
        if (other < 0) {
            ok = -1;
            break;
        }
        first = edge ? Py_NewRef(grad) : Py_NewRef(Py_None);
        second = other ? computed(GRAD_SUB, g, NULL, NULL, 0) : Py_NewRef(Py_None);
        break;
    }
    case GRAD_MUL:
    case GRAD_DIV: {
        int is_number = 0;
        double value = 0;
        ok = number_operand(node, g, &is_number, &value);
        if (ok < 0 || is_number) {   /* ``self``'s gradient alone, by the number */
            if (ok == 1) {
                first = computed(gradient->formula, g, NULL, NULL, value);
                second = Py_NewRef(Py_None);
            }
            break;
        }
        ok = matches(node, g, 1);
        if (gradient->formula == GRAD_MUL) {
            if (ok == 1) ok = saved_arrays(node, 2, g, saved);
            if (ok <= 0) break;   /* each operand was kept only for the other's gradient */
            first = saved[1] == NULL ? Py_NewRef(Py_None) : computed(GRAD_MUL, g, saved[1], NULL, 0);
            second = saved[0] == NULL ? Py_NewRef(Py_None) : computed(GRAD_MUL, g, saved[0], NULL, 0);
            break;
        }
        if (ok == 1) ok = saved_arrays(node, 3, g, saved);   /* (a or None, b, the quotient or None) */
        int edge = ok == 1 ? has_edge(node, 0) : 0, other = edge < 0 ? -1 : ok == 1 ? has_edge(node, 1) : 0;
        if (edge < 0 || other < 0) ok = -1;
        if (ok == 1 && (saved[1] == NULL || (other && saved[2] == NULL))) ok = 0;
        if (ok <= 0) break;
        first = edge ? computed(GRAD_DIV, g, saved[1], NULL, 0) : Py_NewRef(Py_None);
        second = other ? computed(GRAD_DIV, g, saved[2], saved[1], 0) : Py_NewRef(Py_None);
        break;
    }
    case GRAD_NEG:
        ok = 1;
        first = computed(GRAD_NEG, g, NULL, NULL, 0);
        break;
    case GRAD_TANH:
    case GRAD_EXP:
    case GRAD_SIGMOID:   /* from the saved result */
        ok = saved_arrays(node, 1, g, saved);
        if (ok <= 0 || saved[0] == NULL) {
            ok = ok < 0 ? -1 : 0;
            break;
        }
        first = computed(gradient->formula, g, saved[0], NULL, 0);
        break;
    default:
        ok = 0;
    }
    *handled = ok != 0;
    if (ok <= 0) return NULL;
    int one_input = gradient->formula == GRAD_NEG || gradient->formula == GRAD_TANH
                    || gradient->formula == GRAD_EXP || gradient->formula == GRAD_SIGMOID;
    PyObject *result = NULL;
    if (first != NULL && (one_input || second != NULL))
        result = one_input ? PyTuple_Pack(1, first) : PyTuple_Pack(2, first, second);
    Py_XDECREF(first);
    Py_XDECREF(second);
    return result;
}

static PyObject *run_gradient(int index, PyObject *node, PyObject *const *args, Py_ssize_t nargs) {
    Gradient *gradient = &gradients_[index];
    if (nargs == 1) {
        int handled;
        PyObject *out = gradient_case(gradient, node, args[0], &handled);
        if (handled) return out;
    }
    return call_python(gradient->python_gradient, node, args, nargs, NULL);
}

#define GRADIENT(i) \
    static PyObject *gradient_##i(PyObject *node, PyObject *const *args, Py_ssize_t nargs) { \
        return run_gradient(i, node, args, nargs); \
    }
GRADIENT(0) GRADIENT(1) GRADIENT(2) GRADIENT(3) GRADIENT(4) GRADIENT(5) GRADIENT(6) GRADIENT(7)
static PyObject *(*gradient_functions[MAX_GRADIENTS])(PyObject *, PyObject *const *, Py_ssize_t) = {
    gradient_0, gradient_1, gradient_2, gradient_3, gradient_4, gradient_5, gradient_6, gradient_7};
static PyMethodDef gradient_definitions[MAX_GRADIENTS];

/* add_gradient(node_cls, doc, python_gradient, formula): the node class's ``backward_arrays`` (a
   method descriptor). */
static PyObject *add_gradient(PyObject *self, PyObject *args) {
    PyObject *node_cls;
    const char *doc;
    Gradient g;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the methods are not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!zOi", &PyType_Type, &node_cls, &doc, &g.python_gradient, &g.formula)) return NULL;
    if (n_gradients == MAX_GRADIENTS) {
        PyErr_SetString(PyExc_RuntimeError, "too many gradients");
        return NULL;
    }
    PyMethodDef *definition = &gradient_definitions[n_gradients];
    definition->ml_name = "backward_arrays";
    definition->ml_meth = (PyCFunction)(void (*)(void))gradient_functions[n_gradients];
    definition->ml_flags = METH_FASTCALL;
    definition->ml_doc = doc == NULL ? NULL : strdup(doc);
    PyObject *descriptor = PyDescr_NewMethod((PyTypeObject *)node_cls, definition);
    if (descriptor == NULL) return NULL;
    Py_INCREF(g.python_gradient);
    gradients_[n_gradients++] = g;
    return descriptor;
}

/* configure_views(alias, slice, select, unsqueeze): the node classes indexing records. */
static PyObject *configure_views(PyObject *self, PyObject *args) {
    PyObject *classes[4];
    if (!PyArg_ParseTuple(args, "OOOO", &classes[0], &classes[1], &classes[2], &classes[3])) return NULL;
    for (int i = 0; i < 4; i++) {
        Py_INCREF(classes[i]);
        Py_XSETREF(node_classes[i], classes[i]);
    }
    Py_RETURN_NONE;
}

/* write_inplace(self, op, args, finish): ``_common.apply_inplace``'s common case, ``self.op_(*args)`` where
   nothing records (no __torch_function__ dispatch, forward-mode AD or modifier recording; grad disabled,
   or neither self nor a tensor of ``args`` requires grad) and self is an ordinary tensor of a writeable
   NumPy array: ``op(self, *args)``, its array written into self's (a result of self's dtype and shape
   without a node) and self's version counted, or ``finish(self, result)`` (``finish_inplace``) for any
   other result; NotImplemented, having done nothing, where the case is not this one. */
static PyObject *write_inplace(PyObject *module, PyObject *const *a, Py_ssize_t n) {
    if (n != 4 || !PyTuple_CheckExact(a[2])) {
        PyErr_SetString(PyExc_TypeError, "write_inplace(self, op, args, finish)");
        return NULL;
    }
    PyObject *self = a[0], *op = a[1], *args = a[2], *finish = a[3];
    Py_ssize_t count = PyTuple_GET_SIZE(args);
    PyArrayObject *sd = Py_TYPE(self) == TensorType ? array_of(self) : NULL;
    if (sd == NULL || !PyArray_ISWRITEABLE(sd) || count > 7) Py_RETURN_NOTIMPLEMENTED;
    int plain = plain_mode();
    int enabled = plain <= 0 ? 0 : flag(grad_state, s_grad_enabled);
    int grad = enabled <= 0 ? 0 : requires_grad(self);
    for (Py_ssize_t i = 0; i < count && grad == 0 && enabled > 0; i++) {
        PyObject *item = PyTuple_GET_ITEM(args, i);
        if (Py_TYPE(item) == TensorType) grad = requires_grad(item);
        else if (PyObject_TypeCheck(item, TensorType)) grad = 1;   /* (a subclass: the Python steps) */
    }
    int recording = plain <= 0 || enabled < 0 || grad ? 0 : flag(modifier_recording, s_enabled);
    if (plain < 0 || enabled < 0 || grad < 0 || recording < 0) return NULL;
    if (!plain || grad || recording) Py_RETURN_NOTIMPLEMENTED;
    PyObject *stack[8] = {self};
    for (Py_ssize_t i = 0; i < count; i++) stack[i + 1] = PyTuple_GET_ITEM(args, i);
    PyObject *result = PyObject_Vectorcall(op, stack, (size_t)(count + 1), NULL);
    if (result == NULL) return NULL;
    PyArrayObject *rd = Py_TYPE(result) == TensorType ? array_of(result) : NULL;
    if (rd == NULL || SLOT(result, o_grad_fn) != Py_None || !PyArray_EquivTypes(PyArray_DESCR(rd), PyArray_DESCR(sd))
            || PyArray_NDIM(rd) != PyArray_NDIM(sd)
            || !PyArray_CompareLists(PyArray_DIMS(rd), PyArray_DIMS(sd), PyArray_NDIM(sd))) {
        PyObject *finished = PyObject_CallFunctionObjArgs(finish, self, result, NULL);
        Py_DECREF(result);
        return finished;
    }
    int status = PyArray_CopyInto(sd, rd);
    Py_DECREF(result);
    if (status < 0) return NULL;
    return count_change(self) < 0 ? NULL : Py_NewRef(self);
}

FUNCTIONS
static PyMethodDef methods[] = {
    {"configure", (PyCFunction)configure, METH_VARARGS,
     "configure(Tensor, forward_state, dispatch_switch, record, plain_save, small_bytes, grad_state, "
     "modifier_recording)"},
    {"add", (PyCFunction)add, METH_VARARGS,
     "add(name, doc, python_op, kind, ufunc, node_cls, keeps, refused_kinds, floats_only) -> method"},
    {"add_gradient", (PyCFunction)add_gradient, METH_VARARGS,
     "add_gradient(node_cls, doc, python_gradient, formula) -> method"},
    {"configure_functions", (PyCFunction)configure_functions, METH_VARARGS,
     "configure_functions(settled, defaults, record_outputs, threads)"},
    {"write_inplace", (PyCFunction)(void (*)(void))write_inplace, METH_FASTCALL,
     "write_inplace(self, op, args, finish) -> self, or NotImplemented"},
    {"configure_views", (PyCFunction)configure_views, METH_VARARGS,
     "configure_views(AliasBackward0, SliceBackward0, SelectBackward0, UnsqueezeBackward0)"},
    {"add_function", (PyCFunction)add_function, METH_VARARGS,
     "add_function(python_op, node_cls, ufunc, float32_address, float64_address, max_elements, arity, saves) "
     "-> function"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_NAME(void) {
    import_array();
    const char *names[] = {"_base", "_view_version", "active", "on", "self_shape", "self_dtype", "other_shape",
                           "other_dtype", "other_scalar", "alpha", "save", "_saved", "_versions", "next_functions",
                           "grad_enabled", "enabled", "in_shape", "key"};
    PyObject **interned[] = {&s_base, &s_view_version, &s_active, &s_on, &s_self_shape, &s_self_dtype,
                             &s_other_shape, &s_other_dtype, &s_other_scalar, &s_alpha, &s_save, &s_saved,
                             &s_versions, &s_next_functions, &s_grad_enabled, &s_enabled, &s_in_shape, &s_key};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    if ((zero = PyLong_FromLong(0)) == NULL || (one = PyLong_FromLong(1)) == NULL
            || (out_keyword = Py_BuildValue("(s)", "out")) == NULL)
        return NULL;
    float32_descr = PyArray_DescrFromType(NPY_FLOAT32);
    float64_descr = PyArray_DescrFromType(NPY_FLOAT64);
    return PyModule_Create(&module);
}
'''.replace("NAME", _NAME).replace("FLAG\n", FLAG_SOURCE).replace("FUNCTIONS\n", _compiled_functions.SOURCE)


_lock = threading.Lock()
_state = {"python_ops": {}, "first_use": {}, "compiled": {}, "python_gradients": {}, "gradients": {},
          "tried": False, "module": None}


def _build():
    if os.environ.get("EMBER_COMPILED_METHODS", "1") == "0":
        return None
    include = include_dirs()
    if include is None:
        return None
    from .._inductor import _compiler
    source = f"/* Python {sys.version.split()[0]} ({sysconfig.get_config_var('SOABI')}), NumPy {np.__version__} */\n"
    module = _compiler.load_module(source + SOURCE, _NAME, include)
    if module is None:
        return None
    _state["module"] = module
    module.configure(Tensor, forward_state, dispatch_switch, _common.recording_function(), graph._save_plain,
                     openmp_kernels.ROWS_MIN_BYTES, grad_state, graph.modifier_recording)
    module.configure_functions(choice.settled, _dtype._Defaults, _common.record, openmp_kernels.thread_count)
    module.configure_views(view.AliasBackward0, view.SliceBackward0, view.SelectBackward0, view.UnsqueezeBackward0)
    _common.inplace_writer[0] = module.write_inplace
    compiled = {}
    for names, kind, *operator in METHODS:
        ufunc, node_cls, keeps, refused, floats_only = operator or (None, None, 0, "", False)
        for name in names:
            python_op = _state["python_ops"][name]
            compiled[name] = module.add(name, _doc(name, python_op), python_op, kind, ufunc, node_cls, keeps,
                                        refused, floats_only)
    for node_cls, formula in GRADIENTS:
        python_gradient = _state["python_gradients"][node_cls]
        _state["gradients"][node_cls] = module.add_gradient(node_cls, _doc("backward_arrays", python_gradient),
                                                            python_gradient, formula)
    return compiled


def _doc(name, python_op):
    """The compiled method's docstring: the Python op's, after its signature in the form that
    gives a C method one (``inspect.signature`` reads it)."""
    doc = python_op.__doc__ or ""
    try:
        parameters = str(inspect.signature(python_op))
    except (TypeError, ValueError):
        return doc
    return f"{name}($" + parameters[1:] + "\n--\n\n" + doc


def _first_use(name):
    """Tensor's method ``name`` until the compiled ones are installed: install them, then run."""
    def first_use(*args, **kwargs):
        install()
        return getattr(Tensor, name)(*args, **kwargs)
    first_use.__name__ = first_use.__qualname__ = name
    first_use.__doc__ = _state["python_ops"][name].__doc__
    return first_use


def prepare():
    """Make each compiled method's name on ``Tensor`` build and install them at its first use
    (``ops/__init__`` calls this once the Python ops are attached)."""
    for names, *_ in METHODS:
        for name in names:
            _state["python_ops"][name] = Tensor.__dict__[name]
            method(name)(_first_use(name))
    _state["first_use"] = {name: Tensor.__dict__[name] for name in _state["python_ops"]}
    _state["python_gradients"] = {node_cls: node_cls.backward_arrays for node_cls, _ in GRADIENTS}


def install():
    """Build the compiled methods (once) and put them on ``Tensor`` in place of each method that
    is still ember's own (not patched meanwhile); where they cannot be built, the Python ops go
    back."""
    with _lock:
        if not _state["tried"]:
            _state["compiled"] = _build() or {}
            _state["tried"] = True
            _compiled_functions.build(_state["module"])
            for node_cls, gradient in _state["gradients"].items():
                node_cls.backward_arrays = gradient
        _put(_state["compiled"] if not dispatch_switch.on else {})


def _put(compiled):
    """Make each method that is still ember's own (first-use, Python or compiled; not patched
    meanwhile) the one in ``compiled``, or the Python op."""
    for name, python_op in _state["python_ops"].items():
        if Tensor.__dict__.get(name) in (_state["first_use"][name], python_op, _state["compiled"].get(name)):
            method(name)(compiled.get(name, python_op))


def reinstall():
    """The compiled methods back on ``Tensor`` where they were built (``__torch_function__``
    dispatch switched off)."""
    with _lock:
        if _state["tried"]:
            _put(_state["compiled"])


def python_methods():
    """{name: the Python op} for each of ``Tensor``'s methods compiled here."""
    return dict(_state["python_ops"])


def python_gradients():
    """{node class: its Python ``backward_arrays``} for each gradient compiled here."""
    return dict(_state["python_gradients"])


def as_python_gradient(node_cls, value):
    """``value`` (``node_cls.__dict__["backward_arrays"]``), or the Python gradient where it is the
    one compiled here (what the profiler times)."""
    if value is not None and value is _state["gradients"].get(node_cls):
        return _state["python_gradients"][node_cls]
    return value


def as_python(name, value):
    """``value`` (``Tensor.__dict__[name]``), or the Python op where it is this module's compiled
    or first-use method: what code that wraps or patches Tensor's methods (the profiler, fx's
    patching, ``__torch_function__``'s registry) takes as the method."""
    python_op = _state["python_ops"].get(name)
    if python_op is not None and (value is _state["first_use"].get(name) or value is _state["compiled"].get(name)):
        return python_op
    return value


def installed():
    """Whether ``Tensor``'s methods named here are the compiled ones."""
    return bool(_state["compiled"]) and all(Tensor.__dict__.get(name) is op for name, op in _state["compiled"].items())


def uninstall():
    """Put the Python ops back as ``Tensor``'s methods (until ``reinstall``): while
    ``__torch_function__`` dispatch is on, handlers see Tensor's own methods as ``func``."""
    with _lock:
        _put({})
