"""The compiled functions (``_compiled_functions``) of the diagonals made and taken: kind "diag_embed",
``diag_embed(input, offset, dim1, dim2)`` of a small tensor of numbers with dims, int ``offset`` and
distinct int dims within range (zeros with the input's last dim written on the ``offset`` diagonal of
the planes of ``dim1`` and ``dim2``, the input's other dims in order along the rest), its node recorded
as the Python op records it; kind "diag", ``diag(input, diagonal)`` with an int ``diagonal``: of a 1-d
tensor, ``diag_embed``'s matrix (its node recorded as ``diag_embed`` records it); of a 2-d one where
nothing records, a copy of its ``diagonal``-th diagonal. Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* Whether ``x`` (NULL: no) is a small array of numbers with dims, as the diagonals' C functions take. */
static int diagonal_operand(PyArrayObject *x) {
    return x != NULL && small_numbers(x) && PyArray_NDIM(x) > 0 && PyArray_NDIM(x) < NPY_MAXDIMS
           && PyArray_ISNOTSWAPPED(x);
}

/* An int argument as a long (1 with ``*v`` set), or 0. */
static int diagonal_offset(PyObject *o, long *v) {
    if (!PyLong_CheckExact(o)) return 0;
    *v = PyLong_AsLong(o);
    if (*v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return *v > -(1L << 40) && *v < (1L << 40);
}

/* ``diag_embed`` of ``x`` into a new array (zeros elsewhere), NULL on error. */
static PyArrayObject *embedded_diagonals(PyArrayObject *x, long offset, int d1, int d2) {
    int nd = PyArray_NDIM(x) + 1;
    npy_intp last = PyArray_DIM(x, nd - 2), n = last + (offset < 0 ? -offset : offset), dims[NPY_MAXDIMS];
    int rest[NPY_MAXDIMS];   /* (the out dim of each of x's dims but its last) */
    for (int d = 0, k = 0; d < nd; d++) {
        if (d == d1 || d == d2) {
            dims[d] = n;
        } else {
            rest[k] = d;
            dims[d] = PyArray_DIM(x, k++);
        }
    }
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *out = (PyArrayObject *)PyArray_Zeros(nd, dims, descr, 0);
    if (out == NULL) return NULL;
    if (PyArray_SIZE(x) == 0) return out;
    /* each of x's rows (its last dim) along a diagonal of out: its first element's place, then a step along both
       dims a time */
    npy_intp at[NPY_MAXDIMS] = {0}, itemsize = PyArray_ITEMSIZE(x), rows = PyArray_SIZE(x) / last;
    const npy_intp along = PyArray_STRIDE(out, d1) + PyArray_STRIDE(out, d2), step = PyArray_STRIDE(x, nd - 2);
    const npy_intp start = offset >= 0 ? offset * PyArray_STRIDE(out, d2) : -offset * PyArray_STRIDE(out, d1);
    for (npy_intp r = 0; r < rows; r++, advance(at, PyArray_DIMS(x), nd - 2)) {
        npy_intp to = start, from = 0;
        for (int i = 0; i < nd - 2; i++) {
            to += at[i] * PyArray_STRIDE(out, rest[i]);
            from += at[i] * PyArray_STRIDE(x, i);
        }
        char *dst = PyArray_BYTES(out) + to;
        const char *src = PyArray_BYTES(x) + from;
        if (itemsize == 4)
            for (npy_intp k = 0; k < last; k++) memcpy(dst + k * along, src + k * step, 4);
        else if (itemsize == 8)
            for (npy_intp k = 0; k < last; k++) memcpy(dst + k * along, src + k * step, 8);
        else
            for (npy_intp k = 0; k < last; k++) memcpy(dst + k * along, src + k * step, itemsize);
    }
    return out;
}

/* ``record(node_cls, (input,), out)`` and the node's ``offset``, ``dim1`` and ``dim2``, as ``diag_embed`` sets
   them; ``out`` with its node (``with_node``), NULL on error. */
static PyObject *with_diag_embed_node(Function *f, PyObject *input, PyObject *out, long offset, int d1, int d2) {
    PyObject *node = record_node(f->node_cls, input, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *fields[3] = {PyLong_FromLong(offset), PyLong_FromLong(d1), PyLong_FromLong(d2)};
        const char *names[3] = {"offset", "dim1", "dim2"};
        for (int i = 0; i < 3; i++)
            if (node != NULL && (fields[i] == NULL || PyObject_SetAttrString(node, names[i], fields[i]) < 0))
                Py_CLEAR(node);
        for (int i = 0; i < 3; i++) Py_XDECREF(fields[i]);
    }
    return with_node(out, node);
}

/* ``diag_embed(input, offset, dim1, dim2)`` in the common case (``_compiled_diagonals``), no
   ``__torch_function__`` dispatch or forward-mode AD. A new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one. */
static PyObject *diag_embed_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    long offset;
    npy_intp d1, d2;
    if (!diagonal_operand(x) || !diagonal_offset(args[1], &offset) || !dim_arg(args[2], PyArray_NDIM(x) + 1, &d1)
            || !dim_arg(args[3], PyArray_NDIM(x) + 1, &d2) || d1 == d2)
        return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *embedded = embedded_diagonals(x, offset, (int)d1, (int)d2);
    PyObject *out = embedded == NULL ? NULL : make((PyObject *)embedded);
    return out == NULL || !grad ? out : with_diag_embed_node(f, args[0], out, offset, (int)d1, (int)d2);
}

/* ``diag(input, diagonal)`` in the common case (``_compiled_diagonals``). A new tensor, NULL on error, or
   ``*handled`` set to 0 where the case is not this one. */
static PyObject *diag_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    long offset;
    if (!diagonal_operand(x) || PyArray_NDIM(x) > 2 || !diagonal_offset(args[1], &offset)) return NULL;
    int grad = requires_grad(args[0]);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || (grad && PyArray_NDIM(x) == 2)) {   /* (a 2-d input's: diagonal's and clone's nodes) */
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    if (PyArray_NDIM(x) == 1) {
        PyArrayObject *embedded = embedded_diagonals(x, offset, 0, 1);
        PyObject *out = embedded == NULL ? NULL : make((PyObject *)embedded);
        return out == NULL || !grad ? out : with_diag_embed_node(f, args[0], out, offset, 0, 1);
    }
    npy_intp rows = PyArray_DIM(x, 0), cols = PyArray_DIM(x, 1);
    npy_intp n = offset >= 0 ? cols - offset : rows + offset, shorter = offset >= 0 ? rows : cols;
    if (n > shorter) n = shorter;
    if (n < 0) n = 0;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *picked = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, 1, &n, NULL, NULL, 0, NULL);
    if (picked == NULL) return NULL;
    npy_intp itemsize = PyArray_ITEMSIZE(x);
    for (npy_intp k = 0; k < n; k++) {
        npy_intp i = offset >= 0 ? k : k - offset, j = offset >= 0 ? k + offset : k;
        memcpy(PyArray_BYTES(picked) + k * itemsize,
               PyArray_BYTES(x) + i * PyArray_STRIDE(x, 0) + j * PyArray_STRIDE(x, 1), itemsize);
    }
    return make((PyObject *)picked);
}
'''
