"""The compiled functions (``_compiled_functions``) of the splits into views: kind "split", one function
for each form.

``tensor_split(input, sections_or_indices, dim)`` (no keyword forms): ``sections`` an int above 0 (the
first parts one longer where the size does not divide) or a list or tuple of int indices (each wrapped
once from the end and clamped into the dim, a part ending before it starts empty); ``chunk(input,
chunks, dim)``: ``chunks`` an int above 0, parts of ceil(size / chunks) (the last smaller, fewer parts
where they run out; one empty part of a dim of size 0 per chunk); ``unbind(input, dim)`` (called with
None between them): the views at each index of the dim, without it. Each of a writeable tensor with
dims, an int dim within range, where nothing records: the views NumPy's basic indexing gives (the same data
pointer, shape and strides), each a view of ``input`` sharing its version counter; a tuple of them.
Every other case (a tensor that requires grad: the Python op records the node) goes to the Python op,
which raises the errors.
"""

__all__ = ["SOURCE", "FORMS"]

# (``enum split_form`` in the C source)
FORMS = ("tensor_split", "chunk", "unbind")

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations and
# ``_compiled_factorizations``' helpers)
SOURCE = r'''
enum split_form { TENSOR_SPLIT, CHUNK_SPLIT, UNBIND_SPLIT };

/* An int argument (not a bool) as a long long (1 with ``*v`` set), or 0 (no error set). */
static int split_int(PyObject *o, long long *v) {
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    *v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (*v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow;
}

/* A view of ``a``'s elements ``start`` to ``start + length`` along ``dim`` (``length`` < 0: the one at
   ``start``, without the dim), as NumPy's basic indexing makes it, made a view of ``t`` (``make_view``).
   NULL on error. */
static PyObject *part_of(PyObject *t, PyArrayObject *a, int dim, npy_intp start, npy_intp length) {
    int nd = PyArray_NDIM(a), out_nd = length < 0 ? nd - 1 : nd;
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int d = 0, k = 0; d < nd; d++) {
        if (d == dim && length < 0) continue;
        dims[k] = d == dim ? length : PyArray_DIM(a, d);
        strides[k++] = PyArray_STRIDE(a, d);
    }
    PyObject *view = view_of(a, out_nd, dims, strides, PyArray_BYTES(a) + start * PyArray_STRIDE(a, dim),
                             NPY_ARRAY_WRITEABLE);
    return view == NULL ? NULL : make_view(view, t);
}

/* ``tensor_split``, ``chunk`` or ``unbind`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: a tuple of views, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. */
static PyObject *split_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    PyArrayObject *a = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    long long count = 0;
    npy_intp dim;
    /* (a read-only array's empty views: NumPy gives them another data pointer) */
    if (a == NULL || PyArray_NDIM(a) == 0 || !PyArray_ISWRITEABLE(a) || !dim_arg(args[2], PyArray_NDIM(a), &dim))
        return NULL;
    npy_intp n = PyArray_DIM(a, (int)dim);
    PyObject *indices = NULL;   /* (tensor_split's list or tuple of indices) */
    if (f->form == UNBIND_SPLIT) {
        count = n;
    } else if (split_int(args[1], &count)) {
        if (count <= 0 || count > (1 << 20)) return NULL;
    } else if (f->form == TENSOR_SPLIT && (PyList_CheckExact(args[1]) || PyTuple_CheckExact(args[1]))) {
        indices = args[1];
        count = PySequence_Fast_GET_SIZE(indices) + 1;
        if (count > (1 << 20)) return NULL;
        for (Py_ssize_t i = 0; i < count - 1; i++) {
            long long v;
            if (!split_int(PySequence_Fast_GET_ITEM(indices, i), &v)) return NULL;
        }
    } else {
        return NULL;
    }
    if (!records_nothing(args, 1, handled)) return NULL;
    npy_intp chunk = f->form == CHUNK_SPLIT && n ? (n + count - 1) / count : 0;
    if (f->form == CHUNK_SPLIT && n) count = (n + chunk - 1) / chunk;
    *handled = 1;
    PyObject *parts = PyTuple_New((Py_ssize_t)count);
    npy_intp low = 0;
    for (long long i = 0; parts != NULL && i < count; i++) {
        npy_intp start = low, length;
        if (f->form == UNBIND_SPLIT) {
            length = -1;
            start = (npy_intp)i;
        } else if (f->form == CHUNK_SPLIT) {
            length = n ? (n - low < chunk ? n - low : chunk) : 0;
        } else if (indices == NULL) {
            length = n / count + (i < n % count ? 1 : 0);
        } else {
            npy_intp high = n;
            if (i < count - 1) {
                long long p = 0;
                split_int(PySequence_Fast_GET_ITEM(indices, (Py_ssize_t)i), &p);   /* (checked above) */
                p = p < 0 ? p + n : p;
                high = p < 0 ? 0 : p > n ? n : (npy_intp)p;
            }
            length = high > low ? high - low : 0;
            low = high;
        }
        PyObject *part = part_of(t, a, (int)dim, start, length);
        if (part == NULL) {
            Py_CLEAR(parts);
            break;
        }
        PyTuple_SET_ITEM(parts, (Py_ssize_t)i, part);
        if (f->form != UNBIND_SPLIT && indices == NULL) low += length;
    }
    return parts;
}
'''
