"""The compiled functions (``_compiled_functions``) of ops that lay a tensor's elements out anew:

- kind "triangle": ``tril`` and ``triu`` of a small C-contiguous tensor of numbers (not complex)
  with two dims or more and an int diagonal, each element kept or zeroed (all its bits, as the
  Python op's mask clears them) in a new row-major array, the node recorded as
  ``shape._triangle`` records it;
- kind "flip": ``flip`` (and ``fliplr``, ``flipud``) of a small tensor of numbers with dims (below
  the size from which the Python op copies rows on its loop) and a tuple of distinct int dims, a
  row-major copy reversed along them, the node recorded as ``shape.flip`` records it;
- kind "trace": ``trace`` of a float32, float64 or int64 matrix, the sum of its diagonal (read in
  place, any layout and size), the node recorded as ``shape.trace`` records it.

Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``tril(input, diagonal)`` (``triu``'s where ``f->divides``: it keeps the upper triangle) in the common
   case, no ``__torch_function__`` dispatch or forward-mode AD. A new tensor, NULL on error, or
   ``*handled`` set to 0 where the case is not this one. */
static PyObject *triangle_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    if (Py_TYPE(t) != TensorType || !PyLong_CheckExact(args[1])) return NULL;
    PyArrayObject *x = array_of(t);
    int ndim = x == NULL ? 0 : PyArray_NDIM(x);
    npy_intp itemsize = x == NULL ? 0 : PyArray_ITEMSIZE(x);
    if (!small_numbers(x) || ndim < 2 || !PyArray_IS_C_CONTIGUOUS(x)
            || (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8))
        return NULL;
    int overflow;
    long long diagonal = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (overflow || (diagonal == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *kept = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(x), NULL,
                                                                NULL, 0, NULL);
    if (kept == NULL) return NULL;
    npy_intp rows = PyArray_DIM(x, ndim - 2), cols = PyArray_DIM(x, ndim - 1), n = PyArray_SIZE(x);
    const char *from = PyArray_DATA(x);
    char *to = PyArray_DATA(kept);
    for (npy_intp at = 0; at < n; at++) {
        long long column = at % cols, row = (at / cols) % rows;
        int keeps = f->divides ? column - row >= diagonal : column - row <= diagonal;
        if (keeps) memcpy(to + at * itemsize, from + at * itemsize, itemsize);
        else memset(to + at * itemsize, 0, itemsize);
    }
    PyObject *out = make((PyObject *)kept);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None && PyObject_SetAttrString(node, "diagonal", args[1]) < 0) Py_CLEAR(node);
    return with_node(out, node);
}

/* A row-major copy of the large array ``x`` reversed along the dims ``reversed``: where its last dim is reversed
   and adjacent, of elements of 4 or 8 bytes, on ``openmp_kernels``' row loop of their size (``f->loops``,
   as ``shape._flipped`` takes it), else NumPy's copy of the reversed view. A new reference, NULL on
   error. */
typedef void (*strided_rows_loop)(void **, const int64_t *, const double *, int);
static PyArrayObject *flipped_copy(Function *f, PyArrayObject *x, const char *reversed) {
    int ndim = PyArray_NDIM(x);
    npy_intp strides[NPY_MAXDIMS], itemsize = PyArray_ITEMSIZE(x);
    char *first = PyArray_BYTES(x);
    for (int d = 0; d < ndim; d++) {
        strides[d] = PyArray_STRIDE(x, d);
        if (reversed[d]) {
            first += (PyArray_DIM(x, d) - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    void *loop = itemsize == 4 ? f->loops[0] : itemsize == 8 ? f->loops[1] : NULL;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    if (loop != NULL && reversed[ndim - 1] && PyArray_STRIDE(x, ndim - 1) == itemsize && loop_threads != NULL) {
        PyArrayObject *out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(x), NULL,
                                                                   NULL, 0, NULL);
        long n_threads = out == NULL ? -1 : loop_thread_count();
        if (n_threads < 0) {
            Py_XDECREF(out);
            return NULL;
        }
        int64_t sizes[1 + 2 * NPY_MAXDIMS];
        sizes[0] = ndim;
        for (int d = 0; d < ndim; d++) {
            sizes[1 + d] = PyArray_DIM(x, d);
            sizes[1 + ndim + d] = strides[d];
        }
        void *arrays[2] = {first, PyArray_DATA(out)};
        ((strided_rows_loop)loop)(arrays, sizes, NULL, (int)n_threads);
        return out;
    }
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(x), strides, first,
                                          NPY_ARRAY_ALIGNED, NULL);
    if (view != NULL && PyArray_SetBaseObject((PyArrayObject *)view, Py_NewRef((PyObject *)x)) < 0) Py_CLEAR(view);
    PyArrayObject *copy = view == NULL ? NULL : (PyArrayObject *)PyArray_NewCopy((PyArrayObject *)view, NPY_CORDER);
    Py_XDECREF(view);
    return copy;
}

/* A row-major copy of the small array ``x`` reversed along the dims ``reversed``, element by element. A new
   reference, NULL on error. */
static PyArrayObject *small_flipped_copy(PyArrayObject *x, const char *reversed) {
    int ndim = PyArray_NDIM(x);
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(x), NULL,
                                                                NULL, 0, NULL);
    if (copy == NULL) return NULL;
    npy_intp itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0};
    char *to = PyArray_DATA(copy);
    for (npy_intp n = PyArray_SIZE(x); n > 0; n--, to += itemsize, advance(at, PyArray_DIMS(x), ndim)) {
        npy_intp offset = 0;
        for (int d = 0; d < ndim; d++)
            offset += (reversed[d] ? PyArray_DIM(x, d) - 1 - at[d] : at[d]) * PyArray_STRIDE(x, d);
        memcpy(to, PyArray_BYTES(x) + offset, itemsize);
    }
    return copy;
}

/* ``flip(input, dims)`` in the common case: an input of numbers (not complex) with dims and elements, a
   tuple of distinct int dims; no ``__torch_function__`` dispatch or forward-mode AD: a row-major copy of
   the input reversed along the dims (a large one's by ``flipped_copy``), the node recorded as
   ``shape.flip`` records it (``dims`` sorted). A new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one. */
static PyObject *flip_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *dims = args[1];
    if (Py_TYPE(t) != TensorType || !PyTuple_CheckExact(dims)) return NULL;
    PyArrayObject *x = array_of(t);
    int ndim = x == NULL ? 0 : PyArray_NDIM(x);
    if (!numbers(x) || ndim == 0 || PyTuple_GET_SIZE(dims) > ndim) return NULL;
    int large = PyArray_SIZE(x) > f->max_elements || PyArray_NBYTES(x) >= small_bytes;
    char reversed[NPY_MAXDIMS] = {0};
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++) {
        npy_intp d;
        PyObject *item = PyTuple_GET_ITEM(dims, i);
        if (!PyLong_CheckExact(item) || !dim_arg(item, ndim, &d) || reversed[d]) return NULL;   /* (the errors) */
        reversed[d] = 1;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = large ? flipped_copy(f, x, reversed) : small_flipped_copy(x, reversed);
    if (copy == NULL) return NULL;
    PyObject *out = make((PyObject *)copy);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        Py_ssize_t count = 0;
        for (int d = 0; d < ndim; d++) count += reversed[d];
        PyObject *sorted = PyTuple_New(count);
        for (int d = 0, k = 0; sorted != NULL && d < ndim; d++) {
            PyObject *number = reversed[d] ? PyLong_FromLong(d) : NULL;
            if (reversed[d] && number == NULL) Py_CLEAR(sorted);
            else if (reversed[d]) PyTuple_SET_ITEM(sorted, k++, number);
        }
        if (sorted == NULL || PyObject_SetAttr(node, s_dims, sorted) < 0) Py_CLEAR(node);
        Py_XDECREF(sorted);
    }
    return with_node(out, node);
}
/* ``trace(input)`` in the common case: a float32, float64 or int64 matrix with a diagonal (of any size: only
   the diagonal is read), no
   ``__torch_function__`` dispatch or forward-mode AD: the diagonal's sum (NumPy's pairwise sum for floats,
   as ``ndarray.trace`` adds it; int64 wraps around as NumPy's), a 0-d tensor, the node recorded as
   ``shape.trace`` records it. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not
   this one. */
static PyObject *trace_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if (x == NULL || (type != NPY_FLOAT32 && type != NPY_FLOAT64 && type != NPY_INT64) || PyArray_NDIM(x) != 2
            || !PyArray_ISNOTSWAPPED(x) || !PyArray_ISALIGNED(x) || PyArray_SIZE(x) == 0)
        return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    npy_intp n = PyArray_DIM(x, 0) < PyArray_DIM(x, 1) ? PyArray_DIM(x, 0) : PyArray_DIM(x, 1);
    npy_intp step = PyArray_STRIDE(x, 0) + PyArray_STRIDE(x, 1);
    const char *p = PyArray_DATA(x);
    PyArrayObject *total = (PyArrayObject *)PyArray_SimpleNew(0, NULL, type);
    if (total == NULL) return NULL;
    if (type == NPY_FLOAT32) {
        *(float *)PyArray_DATA(total) = 0.0f + strided_pairwise_float(p, n, step);
    } else if (type == NPY_FLOAT64) {
        *(double *)PyArray_DATA(total) = 0.0 + strided_pairwise_double(p, n, step);
    } else {
        npy_uint64 sum = 0;   /* (unsigned: wrapping around as NumPy's int64 sum does) */
        for (npy_intp i = 0; i < n; i++) sum += (npy_uint64)*(const npy_int64 *)(p + i * step);
        *(npy_int64 *)PyArray_DATA(total) = (npy_int64)sum;
    }
    PyObject *out = make((PyObject *)total);
    if (out == NULL || !grad || type == NPY_INT64) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *shape = PyArray_IntTupleFromIntp(2, PyArray_DIMS(x));
        if (shape == NULL || PyObject_SetAttr(node, s_in_shape, shape) < 0) Py_CLEAR(node);
        Py_XDECREF(shape);
    }
    return with_node(out, node);
}
'''
