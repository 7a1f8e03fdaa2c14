"""The compiled function (``_compiled_functions``) of ``prelu``, kind "prelu": ``prelu(input, weight)`` of a
small C-contiguous float32 input with dims and a float32 weight of one element or of one per channel
(dim 1) where nothing records and the kernel choice is settled: ``x`` where ``x > 0``, else the channel's
weight times ``x``, in float32, as ``openmp_kernels.prelu_forward`` (the Python op's kernel) computes it.
Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``prelu(input, weight)`` in the common case (``_compiled_activations``), no ``__torch_function__`` dispatch
   or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *prelu_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    PyArrayObject *w = Py_TYPE(args[1]) == TensorType ? array_of(args[1]) : NULL;
    if (x == NULL || w == NULL || PyArray_TYPE(x) != NPY_FLOAT32 || PyArray_TYPE(w) != NPY_FLOAT32
            || PyArray_NDIM(x) == 0 || PyArray_NDIM(w) > 1 || PyArray_SIZE(x) == 0 || !PyArray_IS_C_CONTIGUOUS(x)
            || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x) || !PyArray_IS_C_CONTIGUOUS(w)
            || !PyArray_ISALIGNED(w) || !PyArray_ISNOTSWAPPED(w) || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    npy_intp channels = PyArray_SIZE(w);
    if (channels != 1 && (PyArray_NDIM(x) < 2 || PyArray_DIM(x, 1) != channels)) return NULL;
    int grad = any_requires_grad(args, 2);
    int ready = grad < 0 ? -1 : grad ? 0 : plain_and_settled();
    if (ready <= 0) {
        *handled = ready < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *y = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), NPY_FLOAT32);
    if (y == NULL) return NULL;
    npy_intp n = PyArray_SIZE(x), inner = channels == 1 ? n : n / (PyArray_DIM(x, 0) * channels);
    const float *xs = PyArray_DATA(x), *ws = PyArray_DATA(w);
    float *ys = PyArray_DATA(y);
    for (npy_intp i = 0; i < n; i++) {
        const float weight = ws[channels == 1 ? 0 : (i / inner) % channels];
        ys[i] = xs[i] > 0.0f ? xs[i] : weight * xs[i];
    }
    return make((PyObject *)y);
}
'''
