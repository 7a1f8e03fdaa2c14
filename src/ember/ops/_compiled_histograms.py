"""The compiled function (``_compiled_functions``) of ``histc``, kind "histc": ``histc(input, bins, min,
max)`` of a small C-contiguous float32 or float64 tensor, an int ``bins`` above 0 and number bounds
(the data's least and greatest element where both are equal, the bounds widened by 1 either way where
those are equal too): each element within the bounds counted in the bin ``(x - min) * bins / (max -
min)`` (each step in the dtype, the bounds and their difference rounded to it, the last bin taking
``max``), as ``sort.histc``'s NumPy passes compute it, the counts in the dtype. Bounds that are not
finite or not in order, and every other case, go to the Python op (which raises its errors).

Kind "histogram": ``histogram(input, bins)`` of a small C-contiguous float32 or float64 tensor with
elements where nothing records, an int ``bins`` above 0 and nothing else given: torch's edges from the
data's least to its greatest element (widened by 1/2 either way where equal; linspace's, by
``openmp_kernels``' loop) and each element's bin by ``openmp_kernels``' histogram loop, both called from
C as ``statistics.histogram`` calls them, the counts in the dtype. Data holding a NaN or a zero at either
end goes to the Python op, as every other case.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The counts of the ``n`` elements of ``x`` in ``bins`` bins from ``low`` to ``high`` (``width`` = high -
   low, as a double) into ``counts`` (zeroed), each step in ``T``. */
#define HISTOGRAM_COUNTS(T)                                                                                \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void histogram_##T(const T *x, npy_intp n, npy_int64 bins, double low, double high, double width, \
                              T *counts) {                                                                 \
        const T lo = (T)low, hi = (T)high, span = (T)width, many = (T)bins;                              \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            if (!(x[i] >= lo && x[i] <= hi)) continue;                                                     \
            npy_int64 at = (npy_int64)((x[i] - lo) * many / span);                                         \
            counts[at < bins - 1 ? at : bins - 1] += 1;                                                    \
        }                                                                                                  \
    }
HISTOGRAM_COUNTS(float)
HISTOGRAM_COUNTS(double)

/* A bound of ``histc`` as a double: an int or a float (1 with ``*v`` set), or 0. */
static int histc_bound(PyObject *bound, double *v) {
    if (PyFloat_CheckExact(bound)) *v = PyFloat_AS_DOUBLE(bound);
    else if (PyLong_CheckExact(bound)) *v = PyLong_AsDouble(bound);
    else return 0;
    if (*v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* ``histc(input, bins, min, max)`` in the common case (``_compiled_histograms``), no ``__torch_function__``
   dispatch. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *histc_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    double low, high;
    if (x == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64) || !PyLong_CheckExact(args[1])
            || !histc_bound(args[2], &low) || !histc_bound(args[3], &high) || !PyArray_IS_C_CONTIGUOUS(x)
            || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x) || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    long bins = PyLong_AsLong(args[1]);
    if (bins == -1 && PyErr_Occurred()) PyErr_Clear();
    if (bins <= 0 || (double)bins * PyArray_ITEMSIZE(x) >= (double)small_bytes) return NULL;
    int wide = PyArray_TYPE(x) == NPY_FLOAT64;
    npy_intp n = PyArray_SIZE(x);
    if (low == high && n > 0) {   /* (the data's least and greatest elements; a NaN: the Python op's error) */
        const char *data = PyArray_DATA(x);
        low = INFINITY;
        high = -INFINITY;
        for (npy_intp i = 0; i < n; i++) {
            double v = wide ? ((const double *)data)[i] : (double)((const float *)data)[i];
            if (v != v) return NULL;
            if (v < low) low = v;
            if (v > high) high = v;
        }
    }
    if (low == high) {
        low -= 1;
        high += 1;
    }
    if (!isfinite(low) || !isfinite(high) || low > high) return NULL;
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    npy_intp size = bins;
    PyArrayObject *counts = (PyArrayObject *)PyArray_ZEROS(1, &size, PyArray_TYPE(x), 0);
    if (counts == NULL) return NULL;
    if (wide) histogram_double(PyArray_DATA(x), n, bins, low, high, high - low, PyArray_DATA(counts));
    else histogram_float(PyArray_DATA(x), n, bins, low, high, high - low, PyArray_DATA(counts));
    return make((PyObject *)counts);
}
/* ``openmp_kernels``' loops, as the pdist's: ``loop(arrays, sizes, scalars, threads)`` */
typedef void (*histogram_loop)(void **, const int64_t *, const double *, int);

/* ``histogram(input, bins)`` with an int number of bins and nothing else given, in the common case
   (``_compiled_histograms``), no ``__torch_function__`` dispatch or forward-mode AD. A new
   ``return_types.histogram``, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *histogram_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    int type = x == NULL ? 0 : PyArray_TYPE(x), wide = type == NPY_FLOAT64;
    if (x == NULL || (type != NPY_FLOAT32 && !wide) || !PyLong_CheckExact(args[1]) || PyArray_SIZE(x) == 0
            || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_NBYTES(x) >= small_bytes || f->loops[wide] == NULL || f->own_loops[wide] == NULL)
        return NULL;
    long bins = PyLong_AsLong(args[1]);
    if (bins == -1 && PyErr_Occurred()) PyErr_Clear();
    if (bins <= 0 || (double)(bins + 1) * PyArray_ITEMSIZE(x) >= (double)small_bytes) return NULL;
    /* the data's least and greatest elements (NaN, or a zero, whose sign NumPy's reduction picks: the
       Python op's) */
    npy_intp n = PyArray_SIZE(x);
    const char *data = PyArray_DATA(x);
    double low = INFINITY, high = -INFINITY;
    for (npy_intp i = 0; i < n; i++) {
        double v = wide ? ((const double *)data)[i] : (double)((const float *)data)[i];
        if (v != v) return NULL;
        if (v < low) low = v;
        if (v > high) high = v;
    }
    if (low == 0 || high == 0 || !isfinite(low) || !isfinite(high)) return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    if (low == high) {
        low -= 0.5;
        high += 0.5;
    }
    npy_intp steps = bins + 1, count = bins;
    PyArrayObject *edges = (PyArrayObject *)PyArray_SimpleNew(1, &steps, type);
    PyArrayObject *flat = edges == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT64);
    PyArrayObject *counts = flat == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(1, &count, type, 0);
    PyObject *result = NULL;
    if (counts != NULL) {
        /* torch's edges (linspace's, from the bounds in the dtype), then each element's bin */
        const double bounds[2] = {wide ? low : (double)(float)low, wide ? high : (double)(float)high};
        const int64_t linspace_sizes[1] = {steps}, bins_sizes[4] = {n, 1, 1, steps};
        void *linspace_arrays[1] = {PyArray_DATA(edges)};
        void *bins_arrays[3] = {(void *)data, PyArray_DATA(edges), PyArray_DATA(flat)};
        ((histogram_loop)f->own_loops[wide])(linspace_arrays, linspace_sizes, bounds, 1);
        ((histogram_loop)f->loops[wide])(bins_arrays, bins_sizes, NULL, 1);
        const npy_int64 *at = PyArray_DATA(flat);
        for (npy_intp i = 0; i < n; i++) {
            if (at[i] < 0) continue;
            if (wide) ((double *)PyArray_DATA(counts))[at[i]] += 1;
            else ((float *)PyArray_DATA(counts))[at[i]] += 1;
        }
        PyObject *hist = make((PyObject *)counts), *edge_tensor = make((PyObject *)edges);   /* (each stolen) */
        counts = edges = NULL;
        if (hist != NULL && edge_tensor != NULL)
            result = PyObject_CallFunctionObjArgs(f->result_type, hist, edge_tensor, NULL);
        Py_XDECREF(hist);
        Py_XDECREF(edge_tensor);
    }
    Py_XDECREF(edges);
    Py_XDECREF(flat);
    Py_XDECREF(counts);
    return result;
}
'''
