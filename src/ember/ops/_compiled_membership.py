"""The compiled function (``_compiled_functions``) of ``isin``, kind "isin": ``isin(elements,
test_elements, invert)`` of two small C-contiguous tensors of one dtype (float32, float64 or an
integer dtype) with elements, whose sizes multiply to at most ``statistics.ISIN_PAIRWISE_MAX`` (the
Python op compares every pair there): for each element whether any test element equals it (NaN
equals nothing, -0.0 equals 0.0), the reverse where ``invert``. Every other case goes to the Python
op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* For each of the ``n`` elements of ``a`` whether one of the ``m`` of ``b`` equals it (``flip``: whether none
   does), into ``found``. */
#define MEMBERSHIP(T)                                                                                      \
    static void members_##T(const T *a, npy_intp n, const T *b, npy_intp m, npy_bool *found, int flip) {  \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            int hit = 0;                                                                                   \
            for (npy_intp j = 0; j < m && !hit; j++) hit = a[i] == b[j];                                   \
            found[i] = (npy_bool)(hit != flip);                                                            \
        }                                                                                                  \
    }
MEMBERSHIP(float)
MEMBERSHIP(double)
MEMBERSHIP(npy_uint8)   /* (integers of every width: equal where their bits are) */
MEMBERSHIP(npy_uint16)
MEMBERSHIP(npy_uint32)
MEMBERSHIP(npy_uint64)

/* ``isin(elements, test_elements, invert)`` in the common case (``_compiled_membership``), no
   ``__torch_function__`` dispatch. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is
   not this one. */
static PyObject *isin_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    PyArrayObject *b = Py_TYPE(args[1]) == TensorType ? array_of(args[1]) : NULL;
    PyObject *invert = args[2];
    if (a == NULL || b == NULL || (invert != Py_True && invert != Py_False) || PyArray_TYPE(a) != PyArray_TYPE(b)
            || !(PyArray_TYPE(a) == NPY_FLOAT32 || PyArray_TYPE(a) == NPY_FLOAT64 || PyArray_ISINTEGER(a)))
        return NULL;
    for (int i = 0; i < 2; i++) {
        PyArrayObject *x = i ? b : a;
        if (!PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x) || PyArray_SIZE(x) == 0
                || PyArray_NBYTES(x) >= small_bytes)
            return NULL;
    }
    if ((double)PyArray_SIZE(a) * (double)PyArray_SIZE(b) > (double)f->max_elements) return NULL;
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *found = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), NPY_BOOL);
    if (found == NULL) return NULL;
    npy_intp n = PyArray_SIZE(a), m = PyArray_SIZE(b);
    const void *x = PyArray_DATA(a), *y = PyArray_DATA(b);
    npy_bool *out = PyArray_DATA(found);
    int flip = invert == Py_True, size = (int)PyArray_ITEMSIZE(a);
    if (PyArray_TYPE(a) == NPY_FLOAT32) members_float(x, n, y, m, out, flip);
    else if (PyArray_TYPE(a) == NPY_FLOAT64) members_double(x, n, y, m, out, flip);
    else if (size == 1) members_npy_uint8(x, n, y, m, out, flip);
    else if (size == 2) members_npy_uint16(x, n, y, m, out, flip);
    else if (size == 4) members_npy_uint32(x, n, y, m, out, flip);
    else members_npy_uint64(x, n, y, m, out, flip);
    return make((PyObject *)found);
}
'''
