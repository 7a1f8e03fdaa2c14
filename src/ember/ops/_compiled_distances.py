"""The compiled function (``_compiled_functions``) of ``pdist``, kind "pdist": the Euclidean
distances (``p`` 2, an int or a float) between the rows of a small C-contiguous float32 or float64
matrix of at least two rows and one column, on ``openmp_kernels``' pdist loop (its addresses given
at the first call) on the calling thread, as ``matrix_decompositions._pdist_euclidean`` calls it;
the node recorded as ``pdist`` records it (the input and the result saved). Every other case goes
to the Python op.
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
'''
