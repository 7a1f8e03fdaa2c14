"""The compiled function (``_compiled_functions``) of ``pdist``, kind "pdist": the Euclidean
distances (``p`` 2, an int or a float) between the rows of a small C-contiguous float32 or float64
matrix of at least two rows and one column, on ``openmp_kernels``' pdist loop (its addresses given
at the first call) on the calling thread, as ``matrix_decompositions._pdist_euclidean`` calls it;
the node recorded as ``pdist`` records it (the input and the result saved).

Kind "cdist": ``cdist(x1, x2, p, compute_mode)`` of two small C-contiguous float32 or float64 matrices of
one dtype and number of columns, with elements, p 1 or 2 (an int or a float), ``compute_mode`` the default
(its matrix product taken only for more than 25 rows: the Python op's there) or
"donot_use_mm_for_euclid_dist": each distance the absolute differences (squared for p 2) added up as
NumPy's ``add.reduce`` adds a row (its pairwise sum), the square root's for p 2, each step in the dtype,
as ``matrix_decompositions._pairwise_norm`` computes it; the node recorded as the Python op records it.
Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``openmp_kernels``' loops: ``loop(arrays, sizes, scalars, threads)`` */
typedef void (*openmp_loop)(void **, const int64_t *, const double *, int);

/* ``pdist(input, p)`` in the common case (``_compiled_distances``); no ``__torch_function__`` dispatch or
   forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *pdist_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    PyObject *p = args[1];
    int euclidean = (PyLong_CheckExact(p) && PyLong_AsLong(p) == 2)
                    || (PyFloat_CheckExact(p) && PyFloat_AS_DOUBLE(p) == 2.0);
    if (PyErr_Occurred()) PyErr_Clear();   /* (an int beyond a long: not 2) */
    int type = x == NULL ? 0 : PyArray_TYPE(x);
    if (!euclidean || x == NULL || PyArray_NDIM(x) != 2 || (type != NPY_FLOAT32 && type != NPY_FLOAT64)
            || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_DIM(x, 0) < 2 || PyArray_DIM(x, 1) < 1 || PyArray_NBYTES(x) >= small_bytes
            || f->loops[type == NPY_FLOAT64] == NULL)
        return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    npy_intp n = PyArray_DIM(x, 0), m = PyArray_DIM(x, 1), count = n * (n - 1) / 2;
    PyArrayObject *distances = (PyArrayObject *)PyArray_SimpleNew(1, &count, type);
    if (distances == NULL) return NULL;
    void *arrays[2] = {PyArray_DATA(x), PyArray_DATA(distances)};
    const int64_t sizes[3] = {n, m, 0};   /* (not split over threads: it runs on this one) */
    ((openmp_loop)f->loops[type == NPY_FLOAT64])(arrays, sizes, NULL, 1);
    PyObject *out = make((PyObject *)distances);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], NULL, out);
    if (node != NULL && node != Py_None && function_fields(f, node, args, out) < 0) Py_CLEAR(node);
    return with_node(out, node);
}
/* NumPy's pairwise sum of the ``n`` elements of ``a`` (its ``pairwise_sum``: below 8 one after another from
   -0.0, up to 128 in eight running sums, beyond in two halves), as ``add.reduce`` adds a row. */
#define PAIRWISE_SUM(T)                                                                                    \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static T pairwise_sum_##T(const T *a, npy_intp n) {                                                    \
        if (n < 8) {                                                                                       \
            T res = (T)-0.0;                                                                               \
            for (npy_intp i = 0; i < n; i++) res += a[i];                                                 \
            return res;                                                                                    \
        }                                                                                                  \
        if (n <= 128) {                                                                                    \
            T r[8];                                                                                        \
            for (int k = 0; k < 8; k++) r[k] = a[k];                                                       \
            npy_intp i = 8;                                                                                \
            for (; i < n - (n % 8); i += 8)                                                                \
                for (int k = 0; k < 8; k++) r[k] += a[i + k];                                              \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                     \
            for (; i < n; i++) res += a[i];                                                                \
            return res;                                                                                    \
        }                                                                                                  \
        npy_intp half = n / 2;                                                                             \
        half -= half % 8;                                                                                  \
        return pairwise_sum_##T(a, half) + pairwise_sum_##T(a + half, n - half);                          \
    }                                                                                                      \
    /* the p-norms (``squares``: p 2, else p 1) of each row of ``x`` (P x M) less each of ``y`` (R x M), \
       into ``out`` (P x R), ``terms`` a buffer of M */                                                    \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void row_distances_##T(const T *x, const T *y, T *out, npy_intp P, npy_intp R, npy_intp M,     \
                                  int squares, T *terms) {                                                \
        for (npy_intp p = 0; p < P; p++)                                                                   \
            for (npy_intp r = 0; r < R; r++) {                                                             \
                for (npy_intp k = 0; k < M; k++) {                                                         \
                    T d = x[p * M + k] - y[r * M + k];                                                     \
                    d = d < 0 ? -d : d;                                                                    \
                    terms[k] = squares ? d * d : d;                                                        \
                }                                                                                          \
                T total = (T)-0.0 + pairwise_sum_##T(terms, M);                                            \
                out[p * R + r] = squares ? (T)sqrt((double)total) : total;                                 \
            }                                                                                              \
    }
PAIRWISE_SUM(float)
PAIRWISE_SUM(double)

/* ``cdist(x1, x2, p, compute_mode)`` in the common case (``_compiled_distances``), no ``__torch_function__``
   dispatch or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not
   this one. */
static PyObject *cdist_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    PyArrayObject *y = Py_TYPE(args[1]) == TensorType ? array_of(args[1]) : NULL;
    PyObject *p = args[2], *mode = args[3];
    double pv = PyFloat_CheckExact(p) ? PyFloat_AS_DOUBLE(p) : PyLong_CheckExact(p) ? PyLong_AsDouble(p) : -1.0;
    if (pv == -1.0 && PyErr_Occurred()) PyErr_Clear();
    int type = x == NULL ? 0 : PyArray_TYPE(x);
    if (x == NULL || y == NULL || (pv != 1.0 && pv != 2.0) || !PyUnicode_CheckExact(mode)
            || (type != NPY_FLOAT32 && type != NPY_FLOAT64) || PyArray_TYPE(y) != type || PyArray_NDIM(x) != 2
            || PyArray_NDIM(y) != 2 || PyArray_DIM(x, 1) != PyArray_DIM(y, 1) || PyArray_SIZE(x) == 0
            || PyArray_SIZE(y) == 0)
        return NULL;
    int never = PyUnicode_CompareWithASCIIString(mode, "donot_use_mm_for_euclid_dist") == 0;
    npy_intp P = PyArray_DIM(x, 0), R = PyArray_DIM(y, 0), M = PyArray_DIM(x, 1);
    if (!never && (PyUnicode_CompareWithASCIIString(mode, "use_mm_for_euclid_dist_if_necessary") != 0
                   || (pv == 2.0 && (P > 25 || R > 25))))   /* (the product's distances: the Python op's) */
        return NULL;
    for (int i = 0; i < 2; i++) {
        PyArrayObject *a = i ? y : x;
        if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a)
                || PyArray_NBYTES(a) >= small_bytes)
            return NULL;
    }
    if ((double)P * (double)R * PyArray_ITEMSIZE(x) >= (double)small_bytes) return NULL;
    int grad = any_requires_grad(args, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    npy_intp dims[2] = {P, R};
    PyArrayObject *distances = (PyArrayObject *)PyArray_SimpleNew(2, dims, type);
    void *terms = distances == NULL ? NULL : PyMem_Malloc(M * PyArray_ITEMSIZE(x));
    if (terms == NULL) {
        Py_XDECREF(distances);
        return distances == NULL ? NULL : PyErr_NoMemory();
    }
    if (type == NPY_FLOAT32)
        row_distances_float(PyArray_DATA(x), PyArray_DATA(y), PyArray_DATA(distances), P, R, M, pv == 2.0, terms);
    else
        row_distances_double(PyArray_DATA(x), PyArray_DATA(y), PyArray_DATA(distances), P, R, M, pv == 2.0, terms);
    PyMem_Free(terms);
    PyObject *out = make((PyObject *)distances);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], args[1], out);
    if (node != NULL && node != Py_None) {
        PyObject *norm = PyFloat_FromDouble(pv);
        PyObject *r = norm == NULL || PyObject_SetAttrString(node, "p", norm) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, args[0], args[1], out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(norm);
    }
    return with_node(out, node);
}
'''
