"""The compiled functions (``_compiled_functions``) of ops that select each element's value from
a few in C, on small C-contiguous float32 and float64 tensors (and the Python paths' selections,
so the same bits):

- kind "hardshrink": ``hardshrink(input, lambd)``, a number lambd: +0 where ``-lambd <= x <=
  lambd`` (lambd in the dtype), else x (NaN kept), the node recorded as
  ``nn.functional.hardshrink`` records it;
- kind "nan_to_num": ``nan_to_num(input, nan, posinf, neginf)`` (an input of any layout), each a
  number the dtype holds or None (the dtype's greatest and least finite values): a row-major copy
  with NaN and the infinities replaced, the node recorded as ``unary.nan_to_num`` records it;
- kind "heaviside": ``heaviside(input, values)`` of two tensors of one dtype and shape (int64 and
  int32 too): ``values`` where x is 0, 1 where it is greater, else 0 (NaN included), as
  ``pointwise._heaviside_kernel`` selects; no node (the Python op's records no gradient);
- kind "frexp": ``frexp(input)`` of a small float32 or float64 tensor: NumPy's ``frexp`` (the
  mantissa and the int32 exponent) called from C, as the Python op's result type, the node
  recorded as ``pointwise.frexp`` records it (the mantissa's, the exponent saved).

Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The array of ``t`` where it is a selection's: small, float32 or float64 (or, with ``integers``, int64
   or int32), with elements, C-contiguous unless ``any_layout``; else NULL. */
static PyArrayObject *selected_operand(PyObject *t, int integers, int any_layout) {
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if (!(type == NPY_FLOAT32 || type == NPY_FLOAT64 || (integers && (type == NPY_INT64 || type == NPY_INT32)))
            || !PyArray_ISNOTSWAPPED(x) || !(any_layout || PyArray_IS_C_CONTIGUOUS(x)) || !PyArray_ISALIGNED(x)
            || PyArray_SIZE(x) == 0 || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    return x;
}

#define SELECTIONS(T)                                                                                      \
    static void shrunk_##T(const T *x, T *out, npy_intp n, T lambd) {                                     \
        for (npy_intp i = 0; i < n; i++) out[i] = x[i] >= -lambd && x[i] <= lambd ? (T)0 : x[i];           \
    }                                                                                                      \
    static void finite_##T(const T *x, T *out, npy_intp n, T nan, T posinf, T neginf) {                   \
        for (npy_intp i = 0; i < n; i++)                                                                   \
            out[i] = isnan(x[i]) ? nan : x[i] == (T)INFINITY ? posinf : x[i] == -(T)INFINITY ? neginf : x[i];  \
    }
SELECTIONS(float)
SELECTIONS(double)
#define STEPS(T)                                                                                           \
    static void steps_##T(const T *x, const T *values, T *out, npy_intp n) {                              \
        for (npy_intp i = 0; i < n; i++) out[i] = x[i] == 0 ? values[i] : x[i] > 0 ? (T)1 : (T)0;          \
    }
STEPS(float)
STEPS(double)
STEPS(npy_int64)
STEPS(npy_int32)

/* A row-major copy of ``v`` broadcast to ``x``'s shape (``v``'s dims aligned to ``x``'s last ones, each of
   its sizes ``x``'s or 1) in ``*spread``: 1, 0 where ``v`` does not broadcast to that shape, -1 on error. */
static int spread_to(PyArrayObject *v, PyArrayObject *x, PyArrayObject **spread) {
    int nd = PyArray_NDIM(x), vd = PyArray_NDIM(v);
    if (vd > nd) return 0;
    npy_intp strides[NPY_MAXDIMS];
    for (int d = 0; d < nd; d++) {
        int k = d - (nd - vd);
        npy_intp size = k < 0 ? 1 : PyArray_DIM(v, k);
        if (size != PyArray_DIM(x, d) && size != 1) return 0;
        strides[d] = k < 0 || size != PyArray_DIM(x, d) ? 0 : PyArray_STRIDE(v, k);
    }
    PyArray_Descr *descr = PyArray_DESCR(v);
    Py_INCREF(descr);
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, nd, PyArray_DIMS(x), strides, PyArray_DATA(v), 0,
                                          NULL);
    if (view == NULL) return -1;
    Py_INCREF(v);
    if (PyArray_SetBaseObject((PyArrayObject *)view, (PyObject *)v) < 0) {
        Py_DECREF(view);
        return -1;
    }
    *spread = (PyArrayObject *)PyArray_NewCopy((PyArrayObject *)view, NPY_CORDER);
    Py_DECREF(view);
    return *spread == NULL ? -1 : 1;
}

/* ``f``'s call in the common case of its kind (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set to 0 where the case
   is not this one. */
static PyObject *select_values_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    int heaviside = f->kind == HEAVISIDE_FUNCTION, replaces = f->kind == NAN_TO_NUM_FUNCTION;
    PyArrayObject *x = selected_operand(args[0], heaviside, replaces), *values = NULL;
    if (x == NULL) return NULL;
    int type = PyArray_TYPE(x);
    char numbers[3][8];   /* (hardshrink's lambd; nan_to_num's nan, posinf and neginf) */
    if (heaviside) {   /* (values of x's shape, or broadcasting to it: spread in a copy below) */
        values = selected_operand(args[1], 1, 0);
        if (values == NULL || PyArray_TYPE(values) != type) return NULL;
        int nd = PyArray_NDIM(values);
        if (nd != PyArray_NDIM(x) || !PyArray_CompareLists(PyArray_DIMS(values), PyArray_DIMS(x), nd)) {
            if (nd > PyArray_NDIM(x)) return NULL;
            for (int k = 0; k < nd; k++) {
                npy_intp size = PyArray_DIM(values, k);
                if (size != 1 && size != PyArray_DIM(x, PyArray_NDIM(x) - nd + k)) return NULL;
            }
        }
    } else if (f->kind == HARDSHRINK_FUNCTION) {
        if (!number_element(args[1], type, numbers[0])) return NULL;
    } else {
        for (int i = 0; i < 3; i++) {
            PyObject *o = args[i + 1];
            if (o == Py_None && i > 0 && type == NPY_FLOAT32) {   /* (the dtype's greatest or least finite value) */
                float single = i == 1 ? FLT_MAX : -FLT_MAX;
                memcpy(numbers[i], &single, sizeof single);
            } else if (o == Py_None && i > 0) {
                double wide = i == 1 ? DBL_MAX : -DBL_MAX;
                memcpy(numbers[i], &wide, sizeof wide);
            } else if (!number_element(o, type, numbers[i])) {
                return NULL;
            }
        }
    }
    int grad = heaviside ? 0 : requires_grad(args[0]);
    if (heaviside) {   /* (the Python op's node refuses gradients: tensors that require them go there) */
        int a = requires_grad(args[0]), b = a < 0 ? -1 : requires_grad(args[1]);
        if (a < 0 || b < 0) {
            *handled = 1;
            return NULL;
        }
        if (a || b) return NULL;
    }
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    /* (nan_to_num's: a row-major copy, as the Python op's ``copy``, its values replaced in place) */
    PyArrayObject *selected = (PyArrayObject *)(replaces ? PyArray_NewCopy(x, NPY_CORDER)
                                                         : PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), type));
    if (selected == NULL) return NULL;
    npy_intp n = PyArray_SIZE(x);
    void *from = replaces ? PyArray_DATA(selected) : PyArray_DATA(x), *to = PyArray_DATA(selected);
    PyArrayObject *spread = NULL;
    if (heaviside && (PyArray_NDIM(values) != PyArray_NDIM(x)
                      || !PyArray_CompareLists(PyArray_DIMS(values), PyArray_DIMS(x), PyArray_NDIM(x)))
            && spread_to(values, x, &spread) <= 0) {
        Py_DECREF(selected);
        return NULL;
    }
    if (heaviside) {
        void *v = PyArray_DATA(spread != NULL ? spread : values);
        if (type == NPY_FLOAT32) steps_float(from, v, to, n);
        else if (type == NPY_FLOAT64) steps_double(from, v, to, n);
        else if (type == NPY_INT64) steps_npy_int64(from, v, to, n);
        else steps_npy_int32(from, v, to, n);
        Py_XDECREF(spread);
    } else if (f->kind == HARDSHRINK_FUNCTION) {
        if (type == NPY_FLOAT32) shrunk_float(from, to, n, *(const float *)numbers[0]);
        else shrunk_double(from, to, n, *(const double *)numbers[0]);
    } else if (type == NPY_FLOAT32) {
        finite_float(from, to, n, *(const float *)numbers[0], *(const float *)numbers[1], *(const float *)numbers[2]);
    } else {
        finite_double(from, to, n, *(const double *)numbers[0], *(const double *)numbers[1],
                      *(const double *)numbers[2]);
    }
    PyObject *out = make((PyObject *)selected);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *r = f->kind == HARDSHRINK_FUNCTION && PyObject_SetAttrString(node, "lambd", args[1]) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, args[0], NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    return with_node(out, node);
}

/* ``frexp(input)`` in the common case (the module's docstring), no ``__torch_function__`` dispatch or
   forward-mode AD. A new result, NULL on error, or ``*handled`` set to 0 where the case is not this
   one. */
static PyObject *frexp_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_SIZE(x) == 0 || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *parts = PyObject_CallOneArg(numpy_frexp, (PyObject *)x);
    if (parts == NULL || !PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 2
            || !PyArray_Check(PyTuple_GET_ITEM(parts, 1))
            || PyArray_TYPE((PyArrayObject *)PyTuple_GET_ITEM(parts, 1)) != NPY_INT32) {
        *handled = parts == NULL;   /* (an exponent of another dtype: the Python op casts it) */
        Py_XDECREF(parts);
        return NULL;
    }
    *handled = 1;
    PyObject *mantissa = make(Py_NewRef(PyTuple_GET_ITEM(parts, 0)));
    PyObject *exponent = mantissa == NULL ? NULL : make(Py_NewRef(PyTuple_GET_ITEM(parts, 1)));
    Py_DECREF(parts);
    if (exponent == NULL) {
        Py_XDECREF(mantissa);
        return NULL;
    }
    int status = 0;
    if (grad) {
        PyObject *inputs = PyTuple_Pack(1, t);
        PyObject *call[4] = {f->node_cls, inputs, mantissa, Py_None};
        PyObject *node = inputs == NULL ? NULL : PyObject_Vectorcall(record_outputs, call, 4, NULL);
        Py_XDECREF(inputs);
        PyObject *r = node == NULL ? NULL : node == Py_None ? Py_NewRef(Py_None)
                      : PyObject_CallMethodObjArgs(node, s_save, exponent, NULL);
        status = r == NULL ? -1 : 0;
        Py_XDECREF(r);
        Py_XDECREF(node);
    }
    PyObject *pair[2] = {mantissa, exponent};
    PyObject *result = status < 0 ? NULL : PyObject_Vectorcall(f->whole_node, pair, 2, NULL);
    Py_DECREF(mantissa);
    Py_DECREF(exponent);
    return result;
}
'''
