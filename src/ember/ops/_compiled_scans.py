"""The compiled functions (``_compiled_functions``) of ``cumsum`` and ``cumprod``, kind "scan": a
small C-contiguous float32 (below the size from which the Python op takes its loop), float64 or
int64 tensor with dims and an int dim (no dtype), each
running sum (product) along the dim in C, element after element in the tensor's dtype as NumPy's
accumulation of the Python op adds (multiplies) them (int64 wrapping around). The node recorded as
the Python op records it. Where a step raises a floating-point exception other than an inexact
result, the result is dropped and the Python op runs (NumPy may warn or raise). Every other case
goes to the Python op.

Kind "logcumsumexp": ``logcumsumexp(input, dim)`` of a small C-contiguous float32 or float64 tensor with
dims and an int dim: each running ``log(sum(exp(...)))`` along the dim, element after element by
NumPy's ``logaddexp`` formula (two equal terms: the value plus log 2; else the larger plus
``log1p(exp(-|d|))`` of their difference ``d``, by the C library's ``exp`` and ``log1p`` as NumPy's scalar
loop calls them; NaN passed on), as the Python op's ``logaddexp.accumulate`` computes it; the node
recorded as the Python op records it. Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The lanes along ``dim`` of the row-major ``x``: their length ``*n``, the step ``*inner`` between their
   elements, and ``*outer`` blocks of ``*inner`` of them (each lane starting at ``o * n * inner + i``). */
static void lanes_along(PyArrayObject *x, npy_intp dim, npy_intp *n, npy_intp *inner, npy_intp *outer) {
    *n = PyArray_DIM(x, (int)dim);
    *inner = *outer = 1;
    for (int d = 0; d < PyArray_NDIM(x); d++) {
        if (d < dim) *outer *= PyArray_DIM(x, d);
        if (d > dim) *inner *= PyArray_DIM(x, d);
    }
}

/* The array of a running op's tensor ``args[0]`` along its int dim ``args[1]`` where they are its case: a
   small C-contiguous float32 or float64 tensor with dims (int64 too where ``takes_int64``; float32 of at most
   ``float32_max`` elements), the dim in range, no ``__torch_function__`` dispatch or forward-mode AD; ``*dim``
   the dim wrapped, ``*grad`` whether the tensor requires grad. NULL where they are not (``*handled`` set
   where that is an error). */
static PyArrayObject *running_operand(PyObject *const *args, int takes_int64, npy_intp float32_max, npy_intp *dim,
                                      int *grad, int *handled) {
    if (Py_TYPE(args[0]) != TensorType || !PyLong_CheckExact(args[1])) return NULL;
    PyArrayObject *x = array_of(args[0]);
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64 && !(takes_int64 && type == NPY_INT64)) || !small_numbers(x)
            || PyArray_NDIM(x) == 0 || !PyArray_IS_C_CONTIGUOUS(x)
            || (type == NPY_FLOAT32 && PyArray_SIZE(x) > float32_max) || !dim_arg(args[1], PyArray_NDIM(x), dim))
        return NULL;
    *grad = requires_grad(args[0]);
    int plain = *grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    return x;
}

/* The running sums (products, where ``multiplies``) of the ``n`` elements ``inner`` apart from ``x``
   into ``out``. */
#define RUNNING_TERMS(T, W)                                                                                \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void scan_##T(const T *x, T *out, npy_intp n, npy_intp inner, int multiplies) {                \
        W acc = (W)x[0];                                                                                   \
        out[0] = (T)acc;                                                                                   \
        for (npy_intp k = 1; k < n; k++) {                                                                 \
            acc = multiplies ? acc * (W)x[k * inner] : acc + (W)x[k * inner];                              \
            out[k * inner] = (T)acc;                                                                       \
        }                                                                                                  \
    }
RUNNING_TERMS(float, float)
RUNNING_TERMS(double, double)
RUNNING_TERMS(npy_int64, npy_uint64)   /* (unsigned: wrapping around, as NumPy's int64 does) */

/* ``cumsum(input, dim)`` (``cumprod``'s where ``f->divides``: it multiplies) in the common case, no
   ``__torch_function__`` dispatch or forward-mode AD: the running terms, the node recorded as
   ``reduce._scan`` records it (``dim``, ``in_dtype``; cumprod's saving the input and the result).
   A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one (or a step
   raises a floating-point exception). */
static PyObject *scan_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    npy_intp dim;
    int grad;
    PyArrayObject *x = running_operand(args, 1, f->max_elements, &dim, &grad, handled);
    if (x == NULL) return NULL;
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x);
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(ndim, PyArray_DIMS(x), type);
    if (values == NULL) {
        *handled = 1;
        return NULL;
    }
    fenv_t outside;
    feholdexcept(&outside);
    npy_intp n, inner, outer;
    lanes_along(x, dim, &n, &inner, &outer);
    for (npy_intp o = 0; o < outer; o++) {
        for (npy_intp i = 0; i < inner; i++) {
            npy_intp start = o * n * inner + i;
            if (type == NPY_FLOAT32)
                scan_float((const float *)PyArray_DATA(x) + start, (float *)PyArray_DATA(values) + start, n, inner,
                           f->divides);
            else if (type == NPY_FLOAT64)
                scan_double((const double *)PyArray_DATA(x) + start, (double *)PyArray_DATA(values) + start, n,
                            inner, f->divides);
            else
                scan_npy_int64((const npy_int64 *)PyArray_DATA(x) + start, (npy_int64 *)PyArray_DATA(values) + start,
                               n, inner, f->divides);
        }
    }
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    if (raised) {   /* (the Python op's accumulation warns or raises as NumPy's settings say) */
        Py_DECREF(values);
        return NULL;
    }
    *handled = 1;
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *at_dim = PyLong_FromSsize_t(dim);
        PyObject *r = at_dim == NULL || PyObject_SetAttr(node, s_dim, at_dim) < 0
                      || PyObject_SetAttr(node, s_in_dtype, (PyObject *)PyArray_DESCR(x)) < 0 ? NULL
                      : f->divides ? PyObject_CallMethodObjArgs(node, s_save, t, out, NULL) : Py_NewRef(Py_None);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at_dim);
    }
    return with_node(out, node);
}

/* NumPy's ``logaddexp`` of two elements of ``T`` (its ``npy_logaddexp``), ``LOG1P`` and ``EXP`` the C
   library's; the running terms of the ``n`` elements ``inner`` apart from ``x`` into ``out``. */
#define LOG_ADD_EXP(T, LOG1P, EXP, LOGE2)                                                                  \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static T log_add_exp_##T(T x, T y) {                                                                   \
        if (x == y) return x + LOGE2;                                                                      \
        const T d = x - y;                                                                                 \
        return d > 0 ? x + LOG1P(EXP(-d)) : d <= 0 ? y + LOG1P(EXP(d)) : d;                              \
    }                                                                                                      \
    static void log_scan_##T(const T *x, T *out, npy_intp n, npy_intp inner) {                             \
        T acc = x[0];                                                                                      \
        out[0] = acc;                                                                                      \
        for (npy_intp k = 1; k < n; k++) out[k * inner] = acc = log_add_exp_##T(acc, x[k * inner]);       \
    }
LOG_ADD_EXP(float, log1pf, expf, 0.693147180559945309417232121458176568f)
LOG_ADD_EXP(double, log1p, exp, 0.693147180559945309417232121458176568)

/* ``logcumsumexp(input, dim)`` in the common case (``_compiled_scans``), no ``__torch_function__``
   dispatch or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not
   this one. */
static PyObject *logcumsumexp_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    npy_intp dim;
    int grad;
    PyArrayObject *x = running_operand(args, 0, NPY_MAX_INTP, &dim, &grad, handled);
    if (x == NULL) return NULL;
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x);
    *handled = 1;
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(ndim, PyArray_DIMS(x), type);
    if (values == NULL) return NULL;
    npy_intp n, inner, outer;
    lanes_along(x, dim, &n, &inner, &outer);
    for (npy_intp o = 0; o < outer; o++)
        for (npy_intp i = 0; i < inner; i++) {
            npy_intp start = o * n * inner + i;
            if (type == NPY_FLOAT32)
                log_scan_float((const float *)PyArray_DATA(x) + start, (float *)PyArray_DATA(values) + start, n,
                               inner);
            else
                log_scan_double((const double *)PyArray_DATA(x) + start, (double *)PyArray_DATA(values) + start, n,
                                inner);
        }
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *at_dim = PyLong_FromSsize_t(dim);
        PyObject *r = at_dim == NULL || PyObject_SetAttr(node, s_dim, at_dim) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, t, out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at_dim);
    }
    return with_node(out, node);
}
'''
