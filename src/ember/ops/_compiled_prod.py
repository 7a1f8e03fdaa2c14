"""The compiled function (``_compiled_functions``) of ``prod``, kind "prod": ``prod(input, dim, keepdim)`` of
a small C-contiguous float32 or float64 tensor with dims (of fewer than
``reduce.BLOCKED_PRODUCT_MIN_ELEMENTS`` elements for the product of all, where the Python op multiplies in
blocks from there), ``dim`` None or an int in range, ``keepdim`` a bool: each product element after element
in the dtype, as NumPy's ``multiply.reduce`` (the Python op's ``ndarray.prod``) multiplies them; the node
recorded as the Python op records it (``ProdBackward0`` for all elements, ``ProdBackward1`` with ``dim``
and ``keepdim`` along one; the input and the result saved). Where a product raises a floating-point
exception other than an inexact result (NumPy may warn), the result is dropped and the Python op runs.
Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The products of the lanes along ``dim`` of the row-major ``x`` (``lanes_along``: ``outer`` blocks of
   ``inner`` lanes of ``n``) into ``out``, each element after element in ``T``. */
#define LANE_PRODUCTS(T)                                                                                   \
    static void lane_products_##T(const T *x, T *out, npy_intp outer, npy_intp n, npy_intp inner) {        \
        for (npy_intp o = 0; o < outer; o++)                                                               \
            for (npy_intp i = 0; i < inner; i++) {                                                         \
                const T *lane = x + o * n * inner + i;                                                     \
                T product = 1;                                                                             \
                for (npy_intp k = 0; k < n; k++) product *= lane[k * inner];                               \
                out[o * inner + i] = product;                                                              \
            }                                                                                              \
    }
LANE_PRODUCTS(float)
LANE_PRODUCTS(double)

/* ``prod(input, dim, keepdim)`` in the common case (``_compiled_prod``), no ``__torch_function__`` dispatch
   or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *prod_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *keep = args[2];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    int type = x == NULL ? 0 : PyArray_TYPE(x), nd = x == NULL ? 0 : PyArray_NDIM(x);
    if (x == NULL || (type != NPY_FLOAT32 && type != NPY_FLOAT64) || nd == 0 || !PyArray_IS_C_CONTIGUOUS(x)
            || !PyArray_ISNOTSWAPPED(x) || !PyArray_ISALIGNED(x) || PyArray_NBYTES(x) >= small_bytes
            || (keep != Py_True && keep != Py_False))
        return NULL;
    int whole = args[1] == Py_None;
    npy_intp dim = 0, n = PyArray_SIZE(x), inner = 1, outer = 1;
    if (whole ? n > f->max_elements || keep == Py_True : !dim_arg(args[1], nd, &dim)) return NULL;
    if (!whole) lanes_along(x, dim, &n, &inner, &outer);
    int grad = requires_grad(t);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    int out_nd = 0;
    for (int d = 0; d < nd && !whole; d++)
        if (d != dim || keep == Py_True) dims[out_nd++] = d == dim ? 1 : PyArray_DIM(x, d);
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(out_nd, dims, type);
    if (values == NULL) {
        *handled = 1;
        return NULL;
    }
    fenv_t outside;
    feholdexcept(&outside);
    if (type == NPY_FLOAT32) lane_products_float(PyArray_DATA(x), PyArray_DATA(values), outer, n, inner);
    else lane_products_double(PyArray_DATA(x), PyArray_DATA(values), outer, n, inner);
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    if (raised) {   /* (the Python op's reduction warns or raises as NumPy's settings say) */
        Py_DECREF(values);
        return NULL;
    }
    *handled = 1;
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(whole ? f->whole_node : f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *at = whole ? NULL : PyLong_FromSsize_t(dim);
        PyObject *r = (!whole && (at == NULL || PyObject_SetAttr(node, s_dim, at) < 0
                                  || PyObject_SetAttr(node, s_keepdim, keep) < 0))
                      ? NULL : PyObject_CallMethodObjArgs(node, s_save, t, out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at);
    }
    return with_node(out, node);
}
'''
