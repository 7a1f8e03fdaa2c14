"""The compiled function (``_compiled_functions``) of the Vandermonde matrices, kind "vander":
``linalg.vander(x, N)`` (where the function takes ``True``) and ``vander(x, N, increasing)`` of a
small C-contiguous float32, float64 or integer tensor (``linalg.vander``'s of any number of dims, a
0-d one as one value; ``vander``'s of one dim; the matrix of any size) where nothing records, ``N``
None (the last size) or an int (above 1 for ``linalg.vander``, above 0 for ``vander``): the powers of
each element, each the one before times the element (a running product, float32's in float64, as
torch's cumprod keeps it; integers as int64, wrapping around), as ``matrix_functions.powers_array``
runs them, in increasing order or, for ``vander`` without ``increasing``, decreasing. Every other case
goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The ``N`` powers of each of the ``n`` elements of ``x`` into the rows of ``out`` (``n`` x ``N``), each the
   one before times the element: a running product in ``W`` (float32's in double, as torch's cumprod keeps
   it; int64's in uint64, wrapping around), each stored as ``T``, from the right where ``decreasing``; the
   rows in blocks of ``VANDER_BLOCK``, their products side by side (one row's chain of products waits on
   each one before). */
#define VANDER_BLOCK 8
#define VANDER_ROWS(name, X, T, W)                                                                         \
    static void name(const X *x, T *out, npy_intp n, npy_intp N, int decreasing) {                        \
        npy_intp i = 0;                                                                                    \
        for (; i + VANDER_BLOCK <= n; i += VANDER_BLOCK) {                                                 \
            W v[VANDER_BLOCK], power[VANDER_BLOCK];                                                       \
            for (int l = 0; l < VANDER_BLOCK; l++) {                                                       \
                v[l] = (W)(T)x[i + l];                                                                     \
                power[l] = 1;                                                                              \
            }                                                                                              \
            for (npy_intp k = 0; k < N; k++) {                                                             \
                T *column = out + i * N + (decreasing ? N - 1 - k : k);                                    \
                for (int l = 0; l < VANDER_BLOCK; l++) {                                                   \
                    column[l * N] = (T)power[l];                                                           \
                    power[l] *= v[l];                                                                      \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
        for (; i < n; i++) {                                                                               \
            T *row = out + i * N;                                                                          \
            W v = (W)(T)x[i], power = 1;                                                                   \
            for (npy_intp k = 0; k < N; k++) {                                                             \
                row[decreasing ? N - 1 - k : k] = (T)power;                                               \
                power *= v;                                                                                \
            }                                                                                              \
        }                                                                                                  \
    }
VANDER_ROWS(vander_float, float, float, double)
VANDER_ROWS(vander_double, double, double, double)
VANDER_ROWS(vander_int64, npy_int64, npy_int64, npy_uint64)

/* ``x``'s elements as int64 (any integer dtype; a new array), NULL on error. */
static PyArrayObject *vander_int64_of(PyArrayObject *x) {
    return (PyArrayObject *)PyArray_CastToType(x, PyArray_DescrFromType(NPY_INT64), 0);
}

/* ``linalg.vander(x, N)`` (``f->divides``: the function is linalg's) or ``vander(x, N, increasing)`` in the
   common case (``_compiled_vander``), no ``__torch_function__`` dispatch or forward-mode AD. A new tensor,
   NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *vander_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    int linalg = f->divides;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    PyObject *increasing = args[2];
    if (x == NULL || (increasing != Py_True && increasing != Py_False) || !PyArray_IS_C_CONTIGUOUS(x)
            || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x) || PyArray_NBYTES(x) >= small_bytes
            || !(PyArray_TYPE(x) == NPY_FLOAT32 || PyArray_TYPE(x) == NPY_FLOAT64 || PyArray_ISINTEGER(x))
            || (linalg ? PyArray_NDIM(x) > NPY_MAXDIMS - 1 : PyArray_NDIM(x) != 1))
        return NULL;
    int nd = PyArray_NDIM(x);
    npy_intp n = nd == 0 ? 1 : PyArray_DIM(x, nd - 1), N = n;
    if (args[1] != Py_None) {
        if (!PyLong_CheckExact(args[1])) return NULL;
        int overflow;
        long long given = PyLong_AsLongLongAndOverflow(args[1], &overflow);
        if (overflow || (given == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        N = (npy_intp)given;
    }
    if (N < (linalg ? 2 : 1) || (double)PyArray_SIZE(x) * (double)N > (double)NPY_MAX_INTP / 8) return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    int type = PyArray_ISINTEGER(x) ? NPY_INT64 : PyArray_TYPE(x);
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < nd; d++) dims[d] = PyArray_DIM(x, d);
    if (nd == 0) dims[nd++] = 1;   /* (a 0-d x: one value) */
    dims[nd] = N;
    PyArrayObject *source = type == NPY_INT64 ? vander_int64_of(x) : (PyArrayObject *)Py_NewRef(x);
    PyArrayObject *powers = source == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd + 1, dims, type);
    if (powers != NULL) {
        int decreasing = increasing == Py_False;
        void *from = PyArray_DATA(source), *to = PyArray_DATA(powers);
        if (type == NPY_FLOAT32) vander_float(from, to, PyArray_SIZE(x), N, decreasing);
        else if (type == NPY_FLOAT64) vander_double(from, to, PyArray_SIZE(x), N, decreasing);
        else vander_int64(from, to, PyArray_SIZE(x), N, decreasing);
    }
    Py_XDECREF(source);
    return powers == NULL ? NULL : make((PyObject *)powers);
}
'''
