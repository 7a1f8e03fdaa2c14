"""Two of autograd's hottest paths compiled: recording an op's node (``ops._common.record``)
and the backward engine's loop (``engine._run_all``), the same steps in C.

Recording a node is a few attribute reads and writes per input and output, and running a node
is a few calls (its ``backward_arrays``, a gradient's wrapping); the work around them (the node's
edges, popping it and its gradients, handing each gradient on, counting down the edges still
to come) is dictionary, list and attribute work that costs CPython's interpreter as much again.
Here it is an extension module's, built and cached as ember's compiled loops are
(``_backend.native_calls``). What is rare stays in Python and is called from it: ``record``
hands anything but one plain tensor output of a node class without its own ``__init__`` (and
anything under forward-mode AD or anomaly detection) to the Python ``record``; the loop adds a
leaf's gradient into its ``.grad`` itself where nothing watches the leaf (no hooks, a gradient of
its dtype and shape, no graph of the backward being built) and calls Python for the other
nodes with hooks, a leaf's in any other case, and under anomaly detection
(``engine._run_with_hooks``), a second
gradient for one node output (``_add_to_buffer``, ``_add_in_place``), the bookkeeping of who may
hold a large gradient (``_mark_if_shared``) and a result that is not a tuple (``_as_tuple``).
Where the Python or NumPy headers or a C compiler are missing, or ``EMBER_COMPILED_AUTOGRAD=0``
is set, both run in Python.
"""
import logging
import os
import sys
import sysconfig

import numpy as np

from .._backend.native_calls import include_dirs

__all__ = ["loop", "recorder", "SOURCE", "FLAG_SOURCE"]

log = logging.getLogger("ember.autograd")

_NAME = "ember_autograd_paths"

# C shared with the other compiled paths (``ops/_compiled_methods.py``).
FLAG_SOURCE = r'''
/* The truth of ``o.name``: 0 or 1, -1 on error. */
static int flag(PyObject *o, PyObject *name) {
    PyObject *value = PyObject_GetAttr(o, name);
    if (value == NULL) return -1;
    int truth = value == Py_True ? 1 : value == Py_False ? 0 : PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}
'''

SOURCE = r'''
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>

/* What ``configure_loop`` is given: the classes the loop tells apart and the Python helpers it calls. */
static PyObject *Tensor, *AccumulateGrad, *Summed, *running, *modifier_recording;
static PyObject *run_with_hooks, *add_to_buffer, *add_in_place, *mark_if_shared, *as_tuple, *make;
static PyObject *engine_namespace, *accumulate, *accumulate_into;   /* (engine's, while not patched) */
static Py_ssize_t small_grad;
/* What ``configure_record`` is given. */
static PyObject *RecordedTensor, *grad_state, *forward_state, *plain_init, *grad_accumulator_of,
                *refresh_view_history, *record_in_python;
static PyObject *no_edge, *empty_tuple, *one;
static PyObject *s_next_functions, *s_has_hooks, *s_plain_release, *s_backward_arrays, *s_backward,
                *s_release, *s_saved, *s_released, *s_data, *s_grad_enabled, *s_active, *s_requires_grad,
                *s_grad_fn, *s_grad_acc_ref, *s_base, *s_view_version, *s_version_counter, *s_output_nr,
                *s_init, *s_variable, *s_grad, *s_fw_grad, *s_enabled, *s_pre_hooks, *s_post_hooks,
                *s_tensor_pre_hooks, *s_retain_grad_hooks, *s_leaf_hooks, *s_post_accumulate_hooks,
                *s_accumulate, *s_accumulate_into;

/* Set each ``*slots[i]`` to ``configuration[keys[i]]``. */
static int take(PyObject *configuration, const char **keys, PyObject ***slots, int count) {
    if (!PyDict_Check(configuration)) {
        PyErr_SetString(PyExc_TypeError, "the configuration must be a dict");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        PyObject *value = PyDict_GetItemString(configuration, keys[i]);
        if (value == NULL) {
            PyErr_Format(PyExc_KeyError, "the configuration lacks %s", keys[i]);
            return -1;
        }
        Py_INCREF(value);
        Py_XSETREF(*slots[i], value);
    }
    return 0;
}

static PyObject *configure_loop(PyObject *self, PyObject *configuration) {
    const char *keys[] = {"Tensor", "AccumulateGrad", "_Summed", "running", "run_with_hooks", "add_to_buffer",
                          "add_in_place", "mark_if_shared", "as_tuple", "make", "modifier_recording",
                          "engine_namespace", "_accumulate", "accumulate_into"};
    PyObject **slots[] = {&Tensor, &AccumulateGrad, &Summed, &running, &run_with_hooks, &add_to_buffer,
                          &add_in_place, &mark_if_shared, &as_tuple, &make, &modifier_recording,
                          &engine_namespace, &accumulate, &accumulate_into};
    if (take(configuration, keys, slots, 14) < 0) return NULL;
    PyObject *small = PyDict_GetItemString(configuration, "small_grad_elements");
    if (small == NULL) {
        PyErr_SetString(PyExc_KeyError, "the configuration lacks small_grad_elements");
        return NULL;
    }
    small_grad = PyLong_AsSsize_t(small);
    if (small_grad == -1 && PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *configure_record(PyObject *self, PyObject *configuration) {
    const char *keys[] = {"Tensor", "grad_state", "forward_state", "plain_init", "grad_accumulator_of",
                          "refresh_view_history", "record_in_python"};
    PyObject **slots[] = {&RecordedTensor, &grad_state, &forward_state, &plain_init, &grad_accumulator_of,
                          &refresh_view_history, &record_in_python};
    if (take(configuration, keys, slots, 7) < 0) return NULL;
    Py_RETURN_NONE;
}

FLAG

/* The edge from a node to where the gradient of input ``t`` goes (Node.__init__'s): (None, 0) for
   None or a tensor that does not require grad, a leaf's AccumulateGrad, or (grad_fn, output_nr). */
static PyObject *edge_of(PyObject *t) {
    if (t == Py_None) {
        Py_INCREF(no_edge);
        return no_edge;
    }
    int requires = flag(t, s_requires_grad);
    if (requires < 0) return NULL;
    if (!requires) {
        Py_INCREF(no_edge);
        return no_edge;
    }
    PyObject *fn = PyObject_GetAttr(t, s_grad_fn);
    if (fn == NULL) return NULL;
    if (fn == Py_None) {   /* a leaf: its AccumulateGrad, while it lives */
        Py_DECREF(fn);
        PyObject *ref = PyObject_GetAttr(t, s_grad_acc_ref), *acc = NULL;
        if (ref == NULL) return NULL;
        if (ref != Py_None) {
            acc = PyObject_CallNoArgs(ref);
            if (acc == NULL) {
                Py_DECREF(ref);
                return NULL;
            }
            if (acc == Py_None) Py_CLEAR(acc);
        }
        Py_DECREF(ref);
        if (acc == NULL && (acc = PyObject_CallOneArg(grad_accumulator_of, t)) == NULL) return NULL;
        PyObject *edge = PyTuple_Pack(2, acc, PyTuple_GET_ITEM(no_edge, 1));
        Py_DECREF(acc);
        return edge;
    }
    PyObject *base = PyObject_GetAttr(t, s_base);
    if (base == NULL) {
        Py_DECREF(fn);
        return NULL;
    }
    int stale = 0;
    if (base != Py_None) {   /* a view: modified in place since it got its history? */
        PyObject *seen = PyObject_GetAttr(t, s_view_version), *counter = PyObject_GetAttr(t, s_version_counter);
        PyObject *now = counter == NULL ? NULL : PySequence_GetItem(counter, 0);
        stale = seen == NULL || now == NULL ? -1 : PyObject_RichCompareBool(seen, now, Py_NE);
        Py_XDECREF(seen);
        Py_XDECREF(counter);
        Py_XDECREF(now);
    }
    Py_DECREF(base);
    if (stale < 0) {
        Py_DECREF(fn);
        return NULL;
    }
    if (stale) {
        Py_SETREF(fn, PyObject_CallOneArg(refresh_view_history, t));
        if (fn == NULL) return NULL;
    }
    PyObject *nr = PyObject_GetAttr(t, s_output_nr);
    if (nr == NULL) {
        Py_DECREF(fn);
        return NULL;
    }
    PyObject *edge = PyTuple_Pack(2, fn, nr);
    Py_DECREF(fn);
    Py_DECREF(nr);
    return edge;
}

/* record(node_cls, inputs, out): ops._common.record for one plain tensor output; anything else is
   handed to the Python ``record_in_python(node_cls, inputs, out)``. */
static PyObject *record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record takes 3 arguments");
        return NULL;
    }
    if (RecordedTensor == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the compiled record is not configured");
        return NULL;
    }
    PyObject *node_cls = args[0], *inputs = args[1], *out = args[2];
    int enabled = flag(grad_state, s_grad_enabled);
    if (enabled < 0) return NULL;
    int forward = flag(forward_state, s_active);
    if (forward < 0) return NULL;
    if (forward) return PyObject_Vectorcall(record_in_python, args, 3, NULL);
    if (!enabled) Py_RETURN_NONE;
    PyObject *items = PySequence_Fast(inputs, "record's inputs must be a sequence");
    if (items == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    int any = 0;
    for (Py_ssize_t i = 0; i < n && !any; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(items, i);
        if (t != Py_None && (any = flag(t, s_requires_grad)) < 0) {
            Py_DECREF(items);
            return NULL;
        }
    }
    if (!any) {
        Py_DECREF(items);
        Py_RETURN_NONE;
    }
    int plain = (PyObject *)Py_TYPE(out) == RecordedTensor && PyType_Check(node_cls);
    if (plain) {   /* an array autograd records (not a bool, integer or complex one) */
        PyObject *data = PyObject_GetAttr(out, s_data);
        if (data == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        plain = PyArray_CheckExact(data) && strchr("biuc", PyArray_DESCR((PyArrayObject *)data)->kind) == NULL;
        Py_DECREF(data);
    }
    if (plain) {   /* a node class with Node's own __init__ (anomaly detection swaps it) */
        PyObject *init = PyObject_GetAttr(node_cls, s_init);
        if (init == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        plain = init == plain_init;
        Py_DECREF(init);
    }
    if (!plain) {
        Py_DECREF(items);
        return PyObject_Vectorcall(record_in_python, args, 3, NULL);
    }
    PyObject *edges = PyTuple_New(n);
    if (edges == NULL) {
        Py_DECREF(items);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *edge = edge_of(PySequence_Fast_GET_ITEM(items, i));
        if (edge == NULL) {
            Py_DECREF(items);
            Py_DECREF(edges);
            return NULL;
        }
        PyTuple_SET_ITEM(edges, i, edge);
    }
    Py_DECREF(items);
    PyTypeObject *type = (PyTypeObject *)node_cls;
    PyObject *node = type->tp_new(type, empty_tuple, NULL);
    if (node == NULL || PyObject_SetAttr(node, s_next_functions, edges) < 0
            || PyObject_SetAttr(node, s_saved, empty_tuple) < 0) {
        Py_DECREF(edges);
        Py_XDECREF(node);
        return NULL;
    }
    Py_DECREF(edges);
    PyObject *previous = PyObject_GetAttr(out, s_grad_fn);   /* an in-place op recorded again over its input */
    int status = previous == NULL ? -1 : 0;
    if (previous != NULL && previous != Py_None) {
        PyObject *zero = PyLong_FromLong(0);
        status = zero == NULL ? -1 : PyObject_SetAttr(out, s_output_nr, zero);
        Py_XDECREF(zero);
    }
    Py_XDECREF(previous);
    if (status < 0 || PyObject_SetAttr(out, s_requires_grad, Py_True) < 0
            || PyObject_SetAttr(out, s_grad_fn, node) < 0) {
        Py_DECREF(node);
        return NULL;
    }
    return node;
}

/* deps[key] (a count of edges) as a C long; -1 with an exception set where it is missing or
   not an int. */
static long count_of(PyObject *deps, PyObject *key) {
    PyObject *count = PyDict_GetItemWithError(deps, key);
    if (count == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
        return -1;
    }
    return PyLong_AsLong(count);
}

/* deps[key] = value; 0, or -1 on error. */
static int set_count(PyObject *deps, PyObject *key, long value) {
    PyObject *number = PyLong_FromLong(value);
    if (number == NULL) return -1;
    int status = PyDict_SetItem(deps, key, number);
    Py_DECREF(number);
    return status;
}

/* ``dict[key] -= 1`` where it is more than one; 1 (and the count left alone) where it is one,
   the last edge into ``key``; -1 on error. */
static int count_down(PyObject *deps, PyObject *key) {
    long left = count_of(deps, key);
    if (left < 0) return -1;
    if (left == 1) return 1;
    return set_count(deps, key, left - 1);
}

/* A node no gradient reached: its inputs stop waiting for it. */
static int skip(PyObject *edges, PyObject *deps, PyObject *ready) {
    Py_ssize_t n = PyTuple_GET_SIZE(edges);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *next = PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, i), 0);
        if (next == Py_None) continue;
        long left = count_of(deps, next);
        if (left < 0 || set_count(deps, next, left - 1) < 0) return -1;
        if (left == 1 && PyList_Append(ready, next) < 0) return -1;
    }
    return 0;
}

/* engine._add_in_place's common case: two tensors' NumPy arrays of one dtype and shape, the
   second added into the first. 1 when done, 0 when not this case, -1 on error. */
static int add_arrays_in_place(PyObject *total, PyObject *grad) {
    if ((PyObject *)Py_TYPE(total) != Tensor || (PyObject *)Py_TYPE(grad) != Tensor) return 0;
    PyObject *a = PyObject_GetAttr(total, s_data), *b = a == NULL ? NULL : PyObject_GetAttr(grad, s_data);
    int status = a == NULL || b == NULL ? -1 : 0;
    if (!status && PyArray_CheckExact(a) && PyArray_CheckExact(b)
            && PyArray_DESCR((PyArrayObject *)a) == PyArray_DESCR((PyArrayObject *)b)
            && PyArray_SAMESHAPE((PyArrayObject *)a, (PyArrayObject *)b)) {
        PyObject *sum = PyNumber_InPlaceAdd(a, b);
        status = sum == NULL ? -1 : 1;
        Py_XDECREF(sum);
    }
    Py_XDECREF(a);
    Py_XDECREF(b);
    return status;
}

/* Hand gradient ``grad`` for output ``nr`` of node ``next`` to its buffer, as engine._run_all does. */
static int hand_on(PyObject *buffers, PyObject *held, PyObject *next, PyObject *nr, PyObject *grad) {
    int first_output = PyLong_CheckExact(nr) && PyLong_AsLong(nr) == 0;
    if (first_output) {
        PyObject *old = PyDict_GetItemWithError(buffers, next);
        if (old == NULL) {
            if (PyErr_Occurred()) return -1;
            PyObject *list = PyList_New(1);
            if (list == NULL) return -1;
            Py_INCREF(grad);
            PyList_SET_ITEM(list, 0, grad);
            int status = PyDict_SetItem(buffers, next, list);
            Py_DECREF(list);
            return status;
        }
        if ((PyObject *)Py_TYPE(old) == Summed) {   /* a sum the engine made: add into it */
            int added = add_arrays_in_place(PyList_GET_ITEM(old, 0), grad);
            if (added) return added < 0 ? -1 : 0;
            PyObject *args[2] = {PyList_GET_ITEM(old, 0), grad};
            PyObject *r = PyObject_Vectorcall(add_in_place, args, 2, NULL);
            Py_XDECREF(r);
            return r == NULL ? -1 : 0;
        }
    }
    PyObject *args[5] = {buffers, held, next, nr, grad};
    PyObject *r = PyObject_Vectorcall(add_to_buffer, args, 5, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Whether ``grad`` is an ordinary tensor of at most ``small_grad`` elements in a NumPy array. */
static int is_small(PyObject *grad) {
    if ((PyObject *)Py_TYPE(grad) != Tensor) return 0;
    PyObject *data = PyObject_GetAttr(grad, s_data);
    if (data == NULL) {
        PyErr_Clear();
        return 0;
    }
    int small = PyArray_Check(data) && PyArray_SIZE((PyArrayObject *)data) <= small_grad;
    Py_DECREF(data);
    return small;
}

/* A node's gradients for its inputs, computed on the arrays where it can (``backward_arrays``);
   its saved state released unless ``retain``. A new reference, or NULL. */
static PyObject *run_node(PyObject *node, PyObject *grads, int retain, int arrays_ok) {
    PyObject *plain_flag = PyObject_GetAttr(node, s_plain_release);
    if (plain_flag == NULL) return NULL;
    int plain = PyObject_IsTrue(plain_flag);
    Py_DECREF(plain_flag);
    if (plain < 0) return NULL;
    if (!(retain || plain) && PyObject_SetAttr(running, s_released, node) < 0) return NULL;
    PyObject **given = &PyList_GET_ITEM(grads, 0);
    Py_ssize_t count = PyList_GET_SIZE(grads);
    PyObject *input_grads = NULL;
    if (arrays_ok) {
        PyObject *fast = PyObject_GetAttr(node, s_backward_arrays);
        if (fast == NULL) return NULL;
        if (fast != Py_None) {
            input_grads = PyObject_Vectorcall(fast, given, count, NULL);
            Py_DECREF(fast);
            if (input_grads == NULL) return NULL;
            if (input_grads == Py_None) Py_CLEAR(input_grads);   /* declined: backward runs */
        } else {
            Py_DECREF(fast);
        }
    }
    if (input_grads == NULL) {
        PyObject *backward = PyObject_GetAttr(node, s_backward);
        if (backward == NULL) return NULL;
        input_grads = PyObject_Vectorcall(backward, given, count, NULL);
        Py_DECREF(backward);
        if (input_grads == NULL) return NULL;
    }
    if (!retain) {
        int status;
        if (plain) {
            status = PyObject_SetAttr(node, s_saved, Py_None);
        } else {
            PyObject *r = PyObject_CallMethodNoArgs(node, s_release);
            status = r == NULL ? -1 : 0;
            Py_XDECREF(r);
        }
        if (status < 0) {
            Py_DECREF(input_grads);
            return NULL;
        }
    }
    if (!PyTuple_CheckExact(input_grads)) {
        PyObject *tuple = PyObject_CallOneArg(as_tuple, input_grads);
        Py_DECREF(input_grads);
        input_grads = tuple;
    }
    return input_grads;
}

/* Whether each of ``o``'s fields ``names`` is None or empty: 1, 0 where one is set, -1 on error. */
static int all_unset(PyObject *o, PyObject **names, int count) {
    for (int i = 0; i < count; i++) {
        PyObject *value = PyObject_GetAttr(o, names[i]);
        if (value == NULL) return -1;
        int set = value == Py_None ? 0 : PyObject_IsTrue(value);
        Py_DECREF(value);
        if (set) return set < 0 ? -1 : 0;
    }
    return 1;
}

/* The NumPy array of exactly-Tensor ``t`` (a new reference), or NULL (no error set) where ``t`` is
   another kind of tensor or holds another kind of array. */
static PyArrayObject *plain_array(PyObject *t) {
    if (Py_TYPE(t) != (PyTypeObject *)Tensor) return NULL;
    PyObject *data = PyObject_GetAttr(t, s_data);
    if (data == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyArray_CheckExact(data)) {
        Py_DECREF(data);
        return NULL;
    }
    return (PyArrayObject *)data;
}

/* A leaf's AccumulateGrad run when nothing watches it (no hooks on the node or its tensor, no
   record of in-place modifiers, the engine's accumulation not patched) and its one gradient is an
   ordinary tensor's array of the leaf's dtype and shape: engine._run_accumulate's steps for that
   case, while no graph of the backward is built. The first gradient becomes ``.grad`` as it is
   where the engine alone holds it (large, an array of its own: ``owned``), else a copy; a later
   one is added into ``.grad`` in place. 1 when done, 0 where the Python steps must run (nothing
   done), -1 on error. */
static int accumulate_plain(PyObject *node, PyObject *grads, int owned) {
    if (PyList_GET_SIZE(grads) != 1 || !PyDict_Check(engine_namespace)) return 0;
    /* (the engine's accumulation patched, by the profiler or a test's spy: its Python steps run) */
    if (PyDict_GetItem(engine_namespace, s_accumulate) != accumulate
            || PyDict_GetItem(engine_namespace, s_accumulate_into) != accumulate_into)
        return 0;
    PyObject *grad = PyList_GET_ITEM(grads, 0);
    PyObject *node_hooks[] = {s_pre_hooks, s_post_hooks, s_tensor_pre_hooks, s_retain_grad_hooks};
    PyObject *leaf_hooks[] = {s_leaf_hooks, s_post_accumulate_hooks};
    int quiet = all_unset(node, node_hooks, 4);
    if (quiet == 1) quiet = !flag(modifier_recording, s_enabled) ? 1 : PyErr_Occurred() ? -1 : 0;
    if (quiet <= 0) return quiet;
    PyObject *variable = PyObject_GetAttr(node, s_variable);
    if (variable == NULL) return -1;
    PyArrayObject *gd = NULL, *vd = NULL, *od = NULL;
    PyObject *old = NULL;
    int status = Py_TYPE(variable) != (PyTypeObject *)Tensor ? 0 : all_unset(variable, leaf_hooks, 2);
    if (status == 1) {
        gd = plain_array(grad);
        vd = gd == NULL ? NULL : plain_array(variable);
        status = vd != NULL && PyArray_DESCR(gd) == PyArray_DESCR(vd) && PyArray_NDIM(gd) == PyArray_NDIM(vd)
                 && memcmp(PyArray_DIMS(gd), PyArray_DIMS(vd), PyArray_NDIM(gd) * sizeof(npy_intp)) == 0;
    }
    if (status == 1 && (old = PyObject_GetAttr(variable, s_grad)) == NULL) status = -1;
    if (status == 1 && old == Py_None) {
        status = 0;
        if (owned && PyArray_SIZE(gd) > small_grad) {   /* kept as it is, where it is an array of its own */
            int requires = PyArray_BASE(gd) == NULL ? flag(grad, s_requires_grad) : 1;
            PyObject *fn = requires == 0 ? PyObject_GetAttr(grad, s_grad_fn) : NULL;
            PyObject *tangent = fn == Py_None ? PyObject_GetAttr(grad, s_fw_grad) : NULL;
            if (requires < 0 || (requires == 0 && fn == NULL) || (fn == Py_None && tangent == NULL))
                status = -1;
            else if (tangent == Py_None)
                status = PyObject_SetAttr(variable, s_grad, grad) < 0 ? -1 : 1;
            Py_XDECREF(fn);
            Py_XDECREF(tangent);
        } else if (PyArray_IS_C_CONTIGUOUS(gd)) {   /* a copy (``grad.detach().clone()``) */
            PyObject *copy = PyArray_NewCopy(gd, NPY_CORDER);
            PyObject *t = copy == NULL ? NULL : PyObject_CallOneArg(make, copy);
            Py_XDECREF(copy);
            status = t == NULL ? -1 : PyObject_SetAttr(variable, s_grad, t) < 0 ? -1 : 1;
            Py_XDECREF(t);
        }
    } else if (status == 1) {   /* added in place (``old._iadd_grad(grad)``), its version counted */
        od = plain_array(old);
        PyObject *counter = od == NULL ? NULL : PyObject_GetAttr(old, s_version_counter);
        status = counter != NULL && PyList_CheckExact(counter) && PyList_GET_SIZE(counter) >= 1
                 && PyLong_CheckExact(PyList_GET_ITEM(counter, 0)) && PyArray_DESCR(od) == PyArray_DESCR(gd)
                 && PyArray_NDIM(od) == PyArray_NDIM(gd) && PyArray_ISWRITEABLE(od)
                 && memcmp(PyArray_DIMS(od), PyArray_DIMS(gd), PyArray_NDIM(gd) * sizeof(npy_intp)) == 0;
        if (counter == NULL) PyErr_Clear();
        if (status == 1) {
            PyObject *sum = PyNumber_InPlaceAdd((PyObject *)od, (PyObject *)gd);
            PyObject *version = sum == NULL ? NULL : PyNumber_Add(PyList_GET_ITEM(counter, 0), one);
            status = version == NULL ? -1 : PyList_SetItem(counter, 0, version) < 0 ? -1 : 1;
            Py_XDECREF(sum);
        }
        Py_XDECREF(counter);
    }
    Py_DECREF(variable);
    Py_XDECREF(gd);
    Py_XDECREF(vd);
    Py_XDECREF(od);
    Py_XDECREF(old);
    return status;
}

/* One node taken off ``ready`` and run: engine._run_all's loop body. 0, or -1 on error. */
static int step(PyObject *node, PyObject *ready, PyObject *deps, PyObject *buffers, PyObject *held,
                PyObject *retain_graph, int retain, int checked, int arrays_ok) {
    PyObject *edges = NULL, *grads = NULL, *seen = NULL, *input_grads = NULL;
    int status = -1;
    grads = PyDict_GetItemWithError(buffers, node);
    if (grads == NULL && PyErr_Occurred()) return -1;
    Py_XINCREF(grads);
    if (grads != NULL && PyDict_DelItem(buffers, node) < 0) goto done;
    edges = PyObject_GetAttr(node, s_next_functions);
    if (edges == NULL) goto done;
    if (!PyTuple_CheckExact(edges)) {
        PyErr_SetString(PyExc_TypeError, "a node's next_functions must be a tuple");
        goto done;
    }
    if (grads == NULL) {   /* no gradient reached it: what it saved is not needed any more */
        if (!retain) {
            PyObject *r = PyObject_CallMethodNoArgs(node, s_release);
            if (r == NULL) goto done;
            Py_DECREF(r);
        }
        status = skip(edges, deps, ready);
        goto done;
    }
    if (!PyList_Check(grads) || PyList_GET_SIZE(grads) == 0) {
        PyErr_SetString(PyExc_TypeError, "a node's gradient buffer must be a non-empty list");
        goto done;
    }
    if (PyDict_GET_SIZE(held)) {
        seen = PyDict_GetItemWithError(held, node);
        if (seen == NULL && PyErr_Occurred()) goto done;
        Py_XINCREF(seen);
        if (seen != NULL && PyDict_DelItem(held, node) < 0) goto done;
    }
    if (seen == NULL) seen = PyLong_FromLong(0);
    if (seen == NULL) goto done;
    PyObject *hooks_flag = PyObject_GetAttr(node, s_has_hooks);
    if (hooks_flag == NULL) goto done;
    int hooked = PyObject_IsTrue(hooks_flag);
    Py_DECREF(hooks_flag);
    if (hooked < 0) goto done;
    if (!checked && arrays_ok && Py_TYPE(node) == (PyTypeObject *)AccumulateGrad) {
        int was_seen = PyObject_IsTrue(seen);
        int done = was_seen < 0 ? -1 : accumulate_plain(node, grads, !was_seen);
        if (done) {
            status = done < 0 ? -1 : 0;
            goto done;
        }
    }
    if (hooked || checked) {   /* AccumulateGrad has hooks by class */
        PyObject *args[4] = {node, grads, seen, retain_graph};
        input_grads = PyObject_Vectorcall(run_with_hooks, args, 4, NULL);
        if (input_grads == NULL) goto done;
        if (input_grads == Py_None) {
            status = 0;
            goto done;
        }
        Py_SETREF(seen, PyLong_FromLong(2));   /* engine._BY_USER */
        if (seen == NULL) goto done;
    } else {
        input_grads = run_node(node, grads, retain, arrays_ok);
        if (input_grads == NULL) goto done;
    }
    if (!PyTuple_Check(input_grads)) {
        PyErr_SetString(PyExc_TypeError, "a node's gradients must come as a tuple");
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(edges), m = PyTuple_GET_SIZE(input_grads), sent = 0;
    if (m < n) n = m;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        PyObject *next = PyTuple_GET_ITEM(edge, 0);
        if (next == Py_None) continue;
        PyObject *grad = PyTuple_GET_ITEM(input_grads, i);
        if (grad != Py_None) {
            sent++;
            if (hand_on(buffers, held, next, PyTuple_GET_ITEM(edge, 1), grad) < 0) goto done;
        }
        int last = count_down(deps, next);
        if (last < 0) goto done;
        if (last && PyList_Append(ready, next) < 0) goto done;   /* the last edge into it */
    }
    int was_seen = PyObject_IsTrue(seen);
    if (was_seen < 0) goto done;
    if ((was_seen || sent > 1) && !is_small(PyList_GET_ITEM(grads, 0))) {
        PyObject *args[5] = {held, edges, input_grads, grads, seen};
        PyObject *r = PyObject_Vectorcall(mark_if_shared, args, 5, NULL);
        if (r == NULL) goto done;
        Py_DECREF(r);
    }
    status = 0;
done:
    Py_XDECREF(edges);
    Py_XDECREF(grads);
    Py_XDECREF(seen);
    Py_XDECREF(input_grads);
    return status;
}

/* dependencies(root_nodes): engine._dependencies, for every node reachable from the roots the
   number of edges that lead into it. */
static PyObject *dependencies(PyObject *self, PyObject *roots) {
    PyObject *deps = PyDict_New(), *stack = PySequence_List(roots);
    if (deps == NULL || stack == NULL) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(stack); i++)
        if (set_count(deps, PyList_GET_ITEM(stack, i), 0) < 0) goto fail;
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
        PyObject *node = PyList_GET_ITEM(stack, last);
        Py_INCREF(node);
        if (PyList_SetSlice(stack, last, last + 1, NULL) < 0) {
            Py_DECREF(node);
            goto fail;
        }
        PyObject *edges = PyObject_GetAttr(node, s_next_functions);
        Py_DECREF(node);
        if (edges == NULL) goto fail;
        PyObject *items = PySequence_Fast(edges, "a node's next_functions must be a sequence");
        Py_DECREF(edges);
        if (items == NULL) goto fail;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
            PyObject *next = PySequence_GetItem(PySequence_Fast_GET_ITEM(items, i), 0);
            if (next == NULL) {
                Py_DECREF(items);
                goto fail;
            }
            int status = 0;
            if (next != Py_None) {
                int seen = PyDict_Contains(deps, next);
                if (seen < 0) {
                    status = -1;
                } else if (seen) {
                    long count = count_of(deps, next);
                    status = count < 0 ? -1 : set_count(deps, next, count + 1);
                } else {
                    status = set_count(deps, next, 1) < 0 || PyList_Append(stack, next) < 0 ? -1 : 0;
                }
            }
            Py_DECREF(next);
            if (status < 0) {
                Py_DECREF(items);
                goto fail;
            }
        }
        Py_DECREF(items);
    }
    Py_DECREF(stack);
    return deps;
fail:
    Py_XDECREF(deps);
    Py_XDECREF(stack);
    return NULL;
}

/* run_all(ready, deps, buffers, held, retain_graph, checked, arrays_ok): engine._run_all. */
static PyObject *run_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "run_all takes 7 arguments");
        return NULL;
    }
    if (Tensor == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the compiled engine loop is not configured");
        return NULL;
    }
    PyObject *ready = args[0], *deps = args[1], *buffers = args[2], *held = args[3];
    if (!PyList_CheckExact(ready) || !PyDict_CheckExact(deps) || !PyDict_CheckExact(buffers)
            || !PyDict_CheckExact(held)) {
        PyErr_SetString(PyExc_TypeError, "run_all takes a list and three dicts");
        return NULL;
    }
    int retain = PyObject_IsTrue(args[4]), checked = PyObject_IsTrue(args[5]), arrays_ok = PyObject_IsTrue(args[6]);
    if (retain < 0 || checked < 0 || arrays_ok < 0) return NULL;
    while (PyList_GET_SIZE(ready)) {
        Py_ssize_t last = PyList_GET_SIZE(ready) - 1;
        PyObject *node = PyList_GET_ITEM(ready, last);
        Py_INCREF(node);
        if (PyList_SetSlice(ready, last, last + 1, NULL) < 0) {
            Py_DECREF(node);
            return NULL;
        }
        int status = step(node, ready, deps, buffers, held, args[4], retain, checked, arrays_ok);
        Py_DECREF(node);
        if (status < 0) return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure_loop", (PyCFunction)configure_loop, METH_O, "configure_loop(dict of what run_all calls)"},
    {"configure_record", (PyCFunction)configure_record, METH_O, "configure_record(dict of what record calls)"},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL, "record(node_cls, inputs, out)"},
    {"dependencies", (PyCFunction)dependencies, METH_O, "dependencies(root_nodes)"},
    {"run_all", (PyCFunction)(void (*)(void))run_all, METH_FASTCALL,
     "run_all(ready, deps, buffers, held, retain_graph, checked, arrays_ok)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_NAME(void) {
    import_array();
    const char *names[] = {"next_functions", "_has_hooks", "_plain_release", "backward_arrays", "backward",
                           "release", "_saved", "released", "_data", "grad_enabled", "active", "_requires_grad",
                           "grad_fn", "_grad_acc_ref", "_base", "_view_version", "_version_counter",
                           "_output_nr", "__init__", "variable", "_grad", "_fw_grad", "enabled", "_pre_hooks",
                           "_post_hooks", "_tensor_pre_hooks", "_retain_grad_hooks", "_leaf_hooks",
                           "_post_accumulate_hooks", "_accumulate", "accumulate_into"};
    PyObject **interned[] = {&s_next_functions, &s_has_hooks, &s_plain_release, &s_backward_arrays,
                             &s_backward, &s_release, &s_saved, &s_released, &s_data, &s_grad_enabled,
                             &s_active, &s_requires_grad, &s_grad_fn, &s_grad_acc_ref, &s_base,
                             &s_view_version, &s_version_counter, &s_output_nr, &s_init, &s_variable, &s_grad,
                             &s_fw_grad, &s_enabled, &s_pre_hooks, &s_post_hooks, &s_tensor_pre_hooks,
                             &s_retain_grad_hooks, &s_leaf_hooks, &s_post_accumulate_hooks, &s_accumulate,
                             &s_accumulate_into};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    if ((empty_tuple = PyTuple_New(0)) == NULL || (one = PyLong_FromLong(1)) == NULL) return NULL;
    if ((no_edge = Py_BuildValue("(Oi)", Py_None, 0)) == NULL) return NULL;
    return PyModule_Create(&module);
}
'''.replace("NAME", _NAME).replace("FLAG\n", FLAG_SOURCE)


_module = []   # the extension module once built, or None where it cannot be


def _built():
    if not _module:
        _module.append(_build())
    return _module[0]


def _build():
    if os.environ.get("EMBER_COMPILED_AUTOGRAD", "1") == "0":
        return None
    include = include_dirs()
    if include is None:
        log.info("ember: Python's headers are not installed; autograd's loops run in Python")
        return None
    from .._inductor import _compiler
    source = f"/* Python {sys.version.split()[0]} ({sysconfig.get_config_var('SOABI')}), NumPy {np.__version__} */\n"
    return _compiler.load_module(source + SOURCE, _NAME, include)


def loop(configuration):
    """The compiled engine's two steps, ``(dependencies(root_nodes), run_all(ready, deps,
    buffers, held, retain_graph, checked, arrays_ok))``, set up with ``configuration`` (a dict:
    the classes and helpers the loop calls, by name), or None where they cannot be built here."""
    module = _built()
    if module is None:
        return None
    module.configure_loop(configuration)
    return module.dependencies, module.run_all


def recorder(configuration):
    """The compiled ``record(node_cls, inputs, out)`` set up with ``configuration`` (a dict: the
    classes, states and helpers it reads and calls, by name), or None where it cannot be built
    here."""
    module = _built()
    if module is None:
        return None
    module.configure_record(configuration)
    return module.record
