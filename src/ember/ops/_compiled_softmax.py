"""The compiled functions (``_compiled_functions``) of ``softmax`` and ``log_softmax``, kind "softmax":
``softmax(input, dim)`` along the last dim of a small C-contiguous float32 tensor with elements, in
rows that ``vector_math.softmax_rows`` takes (of ``min_width`` elements or more, or of any width in
a tensor of at most ``narrow_max`` elements), on that loop (its address given at the first call,
run on the calling thread: below the size from which it takes more), where the kernel choice is
settled; the node recorded as ``nn.functional.softmax`` records it (the result saved, the dim).
Every other case (another dim or dtype, a dtype argument, none given) goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
typedef void (*softmax_loop)(const float *, float *, int64_t, int64_t, int, int, int);

/* ``softmax`` (``log_softmax`` where ``f->divides``) in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. */
static PyObject *softmax_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || PyArray_TYPE(x) != NPY_FLOAT32 || !PyArray_ISNOTSWAPPED(x) || !PyArray_IS_C_CONTIGUOUS(x)
            || !PyArray_ISALIGNED(x) || PyArray_NDIM(x) == 0 || PyArray_SIZE(x) == 0
            || PyArray_NBYTES(x) >= small_bytes || f->loops[0] == NULL)
        return NULL;
    int ndim = PyArray_NDIM(x);
    npy_intp dim, width = PyArray_DIM(x, ndim - 1);
    if (!dim_arg(args[1], ndim, &dim) || dim != ndim - 1
            || (width < f->min_width && PyArray_SIZE(x) > f->max_elements))
        return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    PyObject *settled = plain > 0 ? PyObject_CallNoArgs(choice_settled) : NULL;
    if (grad < 0 || plain < 0 || (plain > 0 && settled == NULL)) {
        *handled = 1;
        return NULL;
    }
    int is_settled = settled == Py_True;
    Py_XDECREF(settled);
    if (!plain || !is_settled) return NULL;
    *handled = 1;
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(ndim, PyArray_DIMS(x), NPY_FLOAT32);
    if (values == NULL) return NULL;
    ((softmax_loop)f->loops[0])(PyArray_DATA(x), PyArray_DATA(values), PyArray_SIZE(x) / width, width, f->divides, 0,
                                1);
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *at = PyLong_FromSsize_t(dim);
        PyObject *r = at == NULL || PyObject_SetAttr(node, s_dim, at) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at);
    }
    return with_node(out, node);
}
'''
