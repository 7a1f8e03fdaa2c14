"""The compiled function (``_compiled_functions``) of ``scatter_reduce``, kind "scatter_reduce":
reduce "sum" or "prod" of a small src tensor of the input's dtype (float32, float64, int64 or
int32) into a copy of the input at an int64 index (the common case of ``scatter``'s C function,
``picks_dim``), each element combined in the index's order (NumPy's ``ufunc.at``, the Python
op's; int64 and int32 wrapping around), the written positions first set to 0 or 1 where
``include_self`` is False; the node recorded as ``index.scatter_reduce`` records it. Where the
function takes ``True`` (``scatter``'s with a reduce and a src tensor), reduce "add" or "multiply"
(include_self True), recording nothing: tensors that require grad go to the Python op. Every other
case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``*to *= *from`` of one element of ``type`` (``adds_type``'s), as NumPy's ``multiply.at``. */
static void multiply_element(int type, char *to, const char *from) {
    if (type == NPY_FLOAT32) *(float *)to *= *(const float *)from;
    else if (type == NPY_FLOAT64) *(double *)to *= *(const double *)from;
    else if (type == NPY_INT64) *(npy_int64 *)to = (npy_int64)((npy_uint64)*(npy_int64 *)to
                                                              * (npy_uint64)*(const npy_int64 *)from);
    else *(npy_int32 *)to = (npy_int32)((npy_uint32)*(npy_int32 *)to * (npy_uint32)*(const npy_int32 *)from);
}

/* The identity of a product (``multiplies``) or a sum as one element of ``type`` into ``to``. */
static void identity_element(int type, int multiplies, char *to) {
    if (type == NPY_FLOAT32) *(float *)to = multiplies ? 1.0f : 0.0f;
    else if (type == NPY_FLOAT64) *(double *)to = multiplies ? 1.0 : 0.0;
    else if (type == NPY_INT64) *(npy_int64 *)to = multiplies;
    else *(npy_int32 *)to = multiplies;
}

/* ``scatter_reduce(input, dim, index, src, reduce, include_self)`` in the common case: ``picks_dim``'s,
   a src tensor of the input's dtype (``adds_type``) and number of dims, no smaller than the index,
   reduce the string "sum" or "prod", a bool include_self; no ``__torch_function__`` dispatch or
   forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this
   one. */
static PyObject *scatter_reduce_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x, *idx;
    long dim = picks_dim(args, &x, &idx);
    PyObject *src = args[3], *reduce = args[4], *include = args[5];
    if (dim < 0 || Py_TYPE(src) != TensorType || !PyUnicode_CheckExact(reduce)
            || (include != Py_True && include != Py_False))
        return NULL;
    int multiplies = PyUnicode_CompareWithASCIIString(reduce, f->scatter_names ? "multiply" : "prod") == 0;
    if (!multiplies && PyUnicode_CompareWithASCIIString(reduce, f->scatter_names ? "add" : "sum") != 0) return NULL;
    PyArrayObject *source = array_of(src);
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x);
    if (source == NULL || !adds_type(type) || PyArray_TYPE(source) != type || !PyArray_ISNOTSWAPPED(source)
            || !PyArray_ISALIGNED(source) || PyArray_NDIM(source) != ndim || PyArray_NBYTES(source) >= small_bytes)
        return NULL;
    for (int d = 0; d < ndim; d++)
        if (PyArray_DIM(idx, d) > PyArray_DIM(source, d)) return NULL;
    PyObject *pair[2] = {args[0], src};
    int grad = any_requires_grad(pair, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || (grad && f->scatter_names)) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    if (copy == NULL) return NULL;
    for (int pass = include == Py_True; pass < 2; pass++) {   /* (without self: the identity written first) */
        npy_intp at[NPY_MAXDIMS] = {0};
        for (npy_intp n = PyArray_SIZE(idx); n > 0; n--, advance(at, PyArray_DIMS(idx), ndim)) {
            npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + offset_of(idx, at, -1));
            char *to = PyArray_BYTES(copy) + k * PyArray_STRIDE(copy, (int)dim) + offset_of(copy, at, (int)dim);
            const char *from = PyArray_BYTES(source) + offset_of(source, at, -1);
            if (pass == 0) identity_element(type, multiplies, to);
            else if (multiplies) multiply_element(type, to, from);
            else add_element(type, to, from);
        }
    }
    PyObject *out = make((PyObject *)copy);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], src, out);
    if (node != NULL && node != Py_None) {
        PyObject *at_dim = PyLong_FromLong(dim);
        PyObject *shape = PyArray_IntTupleFromIntp(ndim, PyArray_DIMS(source));
        PyObject *r = at_dim == NULL || shape == NULL || PyObject_SetAttr(node, s_dim, at_dim) < 0
                      || PyObject_SetAttr(node, s_src_shape, shape) < 0
                      || PyObject_SetAttrString(node, "reduce", reduce) < 0
                      || PyObject_SetAttrString(node, "include_self", include) < 0
                      ? NULL : PyObject_CallMethodObjArgs(node, s_save, args[0], args[2], src, out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at_dim);
        Py_XDECREF(shape);
    }
    return with_node(out, node);
}
'''
