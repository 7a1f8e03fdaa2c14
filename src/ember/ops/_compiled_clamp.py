"""The compiled functions (``_compiled_functions``) of ``clamp`` and ``logit`` (which clamps to its
eps). Kind "clamp": a small tensor with
number bounds (a float32 or float64 tensor with int or float bounds it holds, or an int64 or int32
one with int bounds every signed integer dtype holds, -128 to 127; each given to NumPy as a 0-d
array of the tensor's dtype, the value NumPy converts the number to), or a small float tensor with bounds that are
tensors of its dtype broadcasting to its shape (or None): NumPy's ``maximum`` with the lower bound,
then ``minimum`` with the upper, called from C as ``ternary._clamp_forward`` calls them, the node
recorded as ``ternary._clamp`` records it (``ClampBackward1``'s bounds, the number node, or
``ClampBackward0``'s shapes, dtypes and saved tensors). A larger C-contiguous float32 tensor with
number bounds (not NaN) is clipped on ``openmp_kernels``' clamp loop, the one the Python op clips it on.

Kind "logit": ``logit(input, eps)`` of a small float32 or float64 tensor (integers and bools as
the default float dtype; float32 below the size from which the Python op takes its loop), eps None
or a finite number in [0, 1]: the steps of ``unary._logit_on_arrays``, NumPy's ``clip`` to eps
and 1 - eps in the dtype and ``x / (1 - x)`` in C as NumPy computes them, then NumPy's ``log``,
odds of 0 or below (inputs outside (0, 1), up to 1024 elements) given -inf or the bits NumPy's
``log`` gives a negative number without its warnings, as the Python op's errstate keeps it silent;
the node recorded as ``unary.logit`` records it.

Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* Whether ``b`` is a bound ``clamp``'s compiled case takes for an input array ``x``: None, a number
   (a float the dtype holds or an int it holds exactly for a float input, an int from -128 to 127
   for an int64 or int32 one), or, where ``tensors``, a tensor of ``x``'s float dtype broadcasting
   to its shape. */
static int clamp_bound(PyObject *b, PyArrayObject *x, int tensors) {
    if (b == Py_None) return 1;
    int floats = PyArray_TYPE(x) == NPY_FLOAT32 || PyArray_TYPE(x) == NPY_FLOAT64;
    if (!tensors) {
        char element[8];
        if (PyFloat_CheckExact(b)) return floats && number_element(b, PyArray_TYPE(x), element);
        if (!PyLong_CheckExact(b)) return 0;
        int overflow;
        long v = PyLong_AsLongAndOverflow(b, &overflow);
        return !overflow && (floats ? v >= -16777216 && v <= 16777216 : v >= -128 && v <= 127);
    }
    PyArrayObject *a = Py_TYPE(b) == TensorType ? array_of(b) : NULL;
    if (!floats || a == NULL || PyArray_TYPE(a) != PyArray_TYPE(x) || PyArray_NDIM(a) > PyArray_NDIM(x)) return 0;
    for (int d = 1; d <= PyArray_NDIM(a); d++) {
        npy_intp have = PyArray_DIM(a, PyArray_NDIM(a) - d);
        if (have != 1 && have != PyArray_DIM(x, PyArray_NDIM(x) - d)) return 0;
    }
    return 1;
}

/* ``node``'s fields as ``ternary._record_clamp_tensors`` sets them: the number bounds (None for a
   tensor's), each operand's shape and dtype, the input and the tensor bounds saved. 0, or -1. */
static int clamp_tensor_fields(PyObject *node, PyObject *t, PyObject *lo, PyObject *hi) {
    PyObject *bounds[2] = {lo, hi};
    const char *names[2][3] = {{"lo", "lo_shape", "lo_dtype"}, {"hi", "hi_shape", "hi_dtype"}};
    PyArrayObject *x = array_of(t);
    PyObject *x_shape = PyArray_IntTupleFromIntp(PyArray_NDIM(x), PyArray_DIMS(x));
    int set = x_shape == NULL || PyObject_SetAttrString(node, "x_shape", x_shape) < 0
              || PyObject_SetAttrString(node, "x_dtype", (PyObject *)PyArray_DESCR(x)) < 0 ? -1 : 0;
    Py_XDECREF(x_shape);
    if (set < 0) return -1;
    for (int i = 0; i < 2; i++) {
        PyArrayObject *a = bounds[i] == Py_None ? NULL : array_of(bounds[i]);
        PyObject *shape = a == NULL ? Py_NewRef(Py_None) : PyArray_IntTupleFromIntp(PyArray_NDIM(a), PyArray_DIMS(a));
        PyObject *dtype = a == NULL ? Py_None : (PyObject *)PyArray_DESCR(a);
        int status = shape == NULL || PyObject_SetAttrString(node, names[i][0], Py_None) < 0
                     || PyObject_SetAttrString(node, names[i][1], shape) < 0
                     || PyObject_SetAttrString(node, names[i][2], dtype) < 0 ? -1 : 0;
        Py_XDECREF(shape);
        if (status < 0) return -1;
    }
    PyObject *r = PyObject_CallMethodObjArgs(node, s_save, t, lo, hi, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* The number bound ``b`` (a float or an int ``clamp_bound`` takes, or None: ``missing``) as the clamp loop takes
   it, into ``*v``: 1, or 0 for a NaN (which the loop does not keep as NumPy's clip does). */
static int loop_bound(PyObject *b, double missing, double *v) {
    *v = b == Py_None ? missing : PyFloat_AsDouble(b);
    if (*v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return *v == *v;
}

/* The C-contiguous float32 array ``x`` clipped to ``bounds`` (``loop_bound``'s) on the loop at ``f->loops[0]``
   (``openmp_kernels.clamp``'s), on the loops' threads: a new array, NULL on error. */
static PyObject *clipped_on_loop(Function *f, PyArrayObject *x, double *bounds) {
    long n_threads = loop_thread_count();
    if (n_threads < 0) return NULL;
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), NPY_FLOAT32);
    if (values == NULL) return NULL;
    void *arrays[2] = {PyArray_DATA(x), PyArray_DATA(values)};
    const int64_t sizes[1] = {PyArray_SIZE(x)};
    ((whole_reduction_loop)f->loops[0])(arrays, sizes, bounds, (int)n_threads);
    return (PyObject *)values;
}

/* ``clamp(input, min, max)`` in the common case (``clamp_bound``: both bounds numbers, or both
   tensors or None, not both None), a small input of at most ``f->max_elements`` elements (a larger
   C-contiguous float32 one with number bounds on ``openmp_kernels``' clamp loop), no
   ``__torch_function__`` dispatch or forward-mode AD. A new tensor, NULL on error, or ``*handled``
   set to 0 where the case is not this one. */
static PyObject *clamp_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *lo = args[1], *hi = args[2];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if (x == NULL || (lo == Py_None && hi == Py_None) || !PyArray_ISNOTSWAPPED(x) || PyArray_SIZE(x) == 0
            || !(type == NPY_FLOAT32 || type == NPY_FLOAT64 || type == NPY_INT64 || type == NPY_INT32))
        return NULL;
    int tensors = Py_TYPE(lo) == TensorType || Py_TYPE(hi) == TensorType;
    /* (past the small tensors, a C-contiguous float32 one with number bounds: the loop the Python op clips on) */
    double bounds[2];
    int on_loop = PyArray_SIZE(x) > f->max_elements && !tensors && type == NPY_FLOAT32 && f->loops[0] != NULL
                  && PyArray_IS_C_CONTIGUOUS(x) && PyArray_ISALIGNED(x) && loop_threads != NULL;
    if (!on_loop && (PyArray_NBYTES(x) >= small_bytes || PyArray_SIZE(x) > f->max_elements)) return NULL;
    if (!clamp_bound(lo, x, tensors) || !clamp_bound(hi, x, tensors)) return NULL;
    if (on_loop && !(loop_bound(lo, -INFINITY, &bounds[0]) && loop_bound(hi, INFINITY, &bounds[1]))) return NULL;
    int grad = requires_grad(t);
    for (int i = 1; i < 3 && grad >= 0 && tensors; i++) {
        int r = args[i] == Py_None ? 0 : requires_grad(args[i]);
        grad = r < 0 ? -1 : grad | r;
    }
    int plain = grad < 0 ? -1 : on_loop ? plain_and_settled() : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyObject *values = on_loop ? clipped_on_loop(f, x, bounds) : Py_NewRef((PyObject *)x);
    for (int i = 1; i < 3 && values != NULL && !on_loop; i++) {
        if (args[i] == Py_None) continue;
        /* (a number as a 0-d array of the input's dtype: the value NumPy converts it to, in one step less) */
        PyObject *operand = tensors ? Py_NewRef((PyObject *)array_of(args[i])) : NULL;
        if (!tensors) {
            PyArray_Descr *descr = PyArray_DESCR(x);
            Py_INCREF(descr);
            operand = PyArray_NewFromDescr(&PyArray_Type, descr, 0, NULL, NULL, NULL, 0, NULL);
            if (operand != NULL) number_element(args[i], type, PyArray_DATA((PyArrayObject *)operand));
        }
        PyObject *call[2] = {values, operand};
        Py_SETREF(values, operand == NULL ? NULL : PyObject_Vectorcall(i == 1 ? numpy_maximum : numpy_minimum, call, 2,
                                                                       NULL));
        Py_XDECREF(operand);
    }
    PyObject *out = values == NULL ? NULL : make(values);
    if (out == NULL || !grad) return out;
    PyObject *node;
    if (tensors) {
        PyObject *inputs = PyTuple_Pack(3, t, lo == Py_None ? Py_None : lo, hi == Py_None ? Py_None : hi);
        PyObject *call[3] = {f->node_cls, inputs, out};
        node = inputs == NULL ? NULL : PyObject_Vectorcall(record, call, 3, NULL);
        Py_XDECREF(inputs);
        if (node != NULL && node != Py_None && clamp_tensor_fields(node, t, lo, hi) < 0) Py_CLEAR(node);
    } else {
        node = record_node(f->number_node, t, NULL, out);
        if (node != NULL && node != Py_None) {
            PyObject *bounds = PyTuple_Pack(2, lo, hi);
            PyObject *r = bounds == NULL || PyObject_SetAttrString(node, "bounds", bounds) < 0 ? NULL
                          : PyObject_CallMethodObjArgs(node, s_save, t, NULL);
            if (r == NULL) Py_CLEAR(node);
            Py_XDECREF(r);
            Py_XDECREF(bounds);
        }
    }
    return with_node(out, node);
}

/* The odds ``x / (1 - x)`` of each of the ``n`` elements of ``x`` into ``out``, each clipped first where
   ``clips`` to [lo, hi] as NumPy's ``clip`` clips (NaN kept; the greater of x and lo, then the lesser
   of that and hi, each comparison strict), each step rounded to ``T``. */
#define LOGIT_ODDS(T)                                                                                      \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void odds_##T(const T *x, T *out, npy_intp n, int clips, T lo, T hi) {                         \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            T v = x[i];                                                                                    \
            if (clips) {                                                                                   \
                v = isnan(v) ? v : (v > lo ? v : lo);                                                      \
                v = isnan(v) ? v : (v < hi ? v : hi);                                                      \
            }                                                                                              \
            T rest = (T)1 - v;                                                                             \
            out[i] = v / rest;                                                                             \
        }                                                                                                  \
    }
LOGIT_ODDS(float)
LOGIT_ODDS(double)

/* the most elements a logit takes with odds of 0 or below (outside (0, 1)) */
#define LOGIT_MAX_OUTSIDE 1024

/* ``logit(input, eps)`` in the common case (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is
   not this one. */
static PyObject *logit_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *eps = args[1];
    double e = 0.0;
    if (Py_TYPE(t) != TensorType || (eps != Py_None && !PyFloat_CheckExact(eps) && !PyLong_CheckExact(eps)))
        return NULL;
    if (eps != Py_None) {
        e = PyFloat_AsDouble(eps);
        if (e == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (!(e >= 0.0 && e <= 1.0)) return NULL;
    }
    PyArrayObject *x = special_operand(t, 1);   /* (integers and bools as the default float dtype) */
    if (x == NULL) {
        *handled = PyErr_Occurred() != NULL;
        return NULL;
    }
    int type = PyArray_TYPE(x), clips = eps != Py_None;
    float lo32 = (float)e, hi32 = (float)(1.0 - e);
    int grad = (type == NPY_FLOAT32 && PyArray_SIZE(x) > f->max_elements)
               || (clips && (type == NPY_FLOAT32 ? !(lo32 <= hi32) : !(e <= 1.0 - e)))
               ? -2 : requires_grad(t);   /* (-2: the loop's size, or bounds the Python op selects by where) */
    int plain = grad == -2 ? 0 : grad < 0 ? -1 : plain_mode();
    PyArrayObject *odds = plain > 0 ? (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), type) : NULL;
    if (odds == NULL) {
        Py_DECREF(x);
        *handled = plain < 0 || (plain > 0 && PyErr_Occurred() != NULL);
        return NULL;
    }
    fenv_t held;   /* (the Python op's division is silent, in NumPy's errstate) */
    feholdexcept(&held);
    if (type == NPY_FLOAT32) odds_float(PyArray_DATA(x), PyArray_DATA(odds), PyArray_SIZE(x), clips, lo32, hi32);
    else odds_double(PyArray_DATA(x), PyArray_DATA(odds), PyArray_SIZE(x), clips, e, 1.0 - e);
    fesetenv(&held);
    Py_DECREF(x);
    /* Odds of 0 or below (inputs outside (0, 1)), where NumPy's log warns and the Python op, silent as torch's,
       ignores the warning: 1 in their place for the log, then -inf for a zero and the bits NumPy's log gives a
       negative number (``f->log_of_negative``) for the others. A negative subnormal, which NumPy's float32 log
       takes for zero, goes to the Python op. */
    npy_intp n = PyArray_SIZE(odds);
    char outside[LOGIT_MAX_OUTSIDE];   /* (0 inside, 1 a zero, 2 a negative number) */
    int any_outside = 0;
    for (npy_intp i = 0; i < n; i++) {
        double v = type == NPY_FLOAT32 ? ((const float *)PyArray_DATA(odds))[i]
                                       : ((const double *)PyArray_DATA(odds))[i];
        int here = v == 0 ? 1 : v < 0 ? 2 : 0;
        if (here && (n > LOGIT_MAX_OUTSIDE || (v < 0 && v > (type == NPY_FLOAT32 ? -FLT_MIN : -DBL_MIN)))) {
            Py_DECREF(odds);
            return NULL;
        }
        if (n <= LOGIT_MAX_OUTSIDE) outside[i] = (char)here;
        if (here && type == NPY_FLOAT32) ((float *)PyArray_DATA(odds))[i] = 1;
        else if (here) ((double *)PyArray_DATA(odds))[i] = 1;
        any_outside |= here;
    }
    *handled = 1;
    PyObject *values = PyObject_CallOneArg(numpy_log, (PyObject *)odds);
    Py_DECREF(odds);
    for (npy_intp i = 0; any_outside && values != NULL && i < n; i++) {
        if (!outside[i]) continue;
        if (type == NPY_FLOAT32) {
            uint32_t bits = (uint32_t)f->log_of_negative[0];
            float negative;
            memcpy(&negative, &bits, sizeof negative);
            ((float *)PyArray_DATA((PyArrayObject *)values))[i] = outside[i] == 1 ? -INFINITY : negative;
        } else {
            double negative;
            memcpy(&negative, &f->log_of_negative[1], sizeof negative);
            ((double *)PyArray_DATA((PyArrayObject *)values))[i] = outside[i] == 1 ? -INFINITY : negative;
        }
    }
    PyObject *out = values == NULL ? NULL : make(values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *r = PyObject_SetAttrString(node, "eps", eps) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, t, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    return with_node(out, node);
}
'''
