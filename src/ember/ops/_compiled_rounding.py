"""The compiled function (``_compiled_functions``) of ``round``, kind "round": ``round(input,
decimals)`` of a small C-contiguous float32 or float64 tensor where nothing records and an int
``decimals`` (at most 300 places either way): each element rounded to the nearest whole number,
halves to even, after scaling by ``10 ** decimals`` (the scale, a double, rounded to the dtype; for
negative ``decimals`` a division by ``10 ** -decimals``), then scaled back, each step rounded to the
dtype, as ``unary._round_forward``'s NumPy passes compute it. Where a step raises a floating-point
exception other than an inexact result (on which NumPy may warn), the result is dropped and the
Python op runs. Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``n`` elements of ``x`` rounded into ``out``: ``rint(x * scale) / scale`` (``divides``: ``rint(x / scale) *
   scale``; ``scale`` 1: ``rint(x)``), each step rounded to ``T``. */
#define ROUNDED(T, RINT)                                                                                   \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void rounded_##T(const T *x, T *out, npy_intp n, T scale, int divides, int scales) {          \
        for (npy_intp i = 0; i < n; i++)                                                                   \
            out[i] = !scales ? RINT(x[i]) : divides ? RINT(x[i] / scale) * scale : RINT(x[i] * scale) / scale; \
    }
ROUNDED(float, rintf)
ROUNDED(double, rint)

/* ``round(input, decimals)`` in the common case (``_compiled_rounding``), no ``__torch_function__`` dispatch
   or forward-mode AD, no floating-point exception. A new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one. */
static PyObject *round_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    if (x == NULL || !PyLong_CheckExact(args[1]) || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64)
            || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    long decimals = PyLong_AsLong(args[1]);
    if (decimals == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (decimals > 300 || decimals < -300) return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), PyArray_TYPE(x));
    if (values == NULL) {
        *handled = 1;
        return NULL;
    }
    double scale = pow(10.0, (double)(decimals < 0 ? -decimals : decimals));
    fenv_t outside;
    feholdexcept(&outside);
    npy_intp n = PyArray_SIZE(x);
    if (PyArray_TYPE(x) == NPY_FLOAT32)
        rounded_float(PyArray_DATA(x), PyArray_DATA(values), n, (float)scale, decimals < 0, decimals != 0);
    else
        rounded_double(PyArray_DATA(x), PyArray_DATA(values), n, scale, decimals < 0, decimals != 0);
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    if (raised) {   /* (the Python op's NumPy passes warn or raise as NumPy's settings say) */
        Py_DECREF(values);
        return NULL;
    }
    *handled = 1;
    return make((PyObject *)values);
}
'''
