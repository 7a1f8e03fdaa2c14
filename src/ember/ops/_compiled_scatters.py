"""The compiled function (``_compiled_functions``) of ``scatter_reduce``, kind "scatter_reduce":
reduce "sum" or "prod" of a src tensor of the input's dtype (float32, float64, int64 or
int32) into a copy of the input (both of any size) at a small int64 index (the common case of ``scatter``'s C function,
``picks_dim``), each element combined in the index's order (NumPy's ``ufunc.at``, the Python
op's; int64 and int32 wrapping around), the written positions first set to 0 or 1 where
``include_self`` is False; the node recorded as ``index.scatter_reduce`` records it. Where the
function takes ``True`` (``scatter``'s with a reduce and a src tensor), reduce "add" or "multiply"
(include_self True), recording nothing: tensors that require grad go to the Python op. Every other
case goes to the Python op.

Kind "index_reduce": ``index_reduce(input, dim, index, source, reduce, include_self)`` of a small
float32, float64, int64 or int32 input with dims, an int dim, a 1-d int64 index within range (the
common case of ``index_add``'s C function) and a source of the input's dtype and shape but along
``dim`` (the index's size there), reduce "prod", "amax", "amin" (each element combined in the
index's order as NumPy's ``ufunc.at`` combines it: a NaN met kept) or, for floats, "mean" (the sums
divided by the count of each slice, itself included where ``include_self``), the written slices
first set to the reduction's identity where ``include_self`` is False: the values the Python op's
``scatter_reduce`` of the index spread along ``dim`` gives. Nothing records: tensors that require
grad, and every other case, go to the Python op.

Kind "masked_scatter": ``masked_scatter(input, mask, source)`` of a small tensor of numbers with elements,
a bool mask whose shape broadcasts with it and a source of its dtype with at least as many elements as
the mask (broadcast) holds True, where nothing records: a row-major copy of the input (broadcast), the
source's elements in row-major order written, one after another, where the mask (broadcast) holds, in
row-major order: the Python op's boolean-index assignment. Every other case (fewer source elements: the
Python op's error) goes to the Python op.

Kind "index_put": ``index_put(input, (index,), values, accumulate)`` of a small tensor of numbers with
dims, one 1-d int64 index tensor within range of its first dim (negative indices counted from the end)
and values of its dtype whose shape broadcasts to the rows indexed, where nothing records: a row-major
copy of the input with the values (broadcast) written row by row in the index's order, a repeated row
taking its last values (NumPy's fancy assignment, the Python op's), or, with ``accumulate`` (float32 or
float64), added in that order (NumPy's ``add.at``). Every other case goes to the Python op. Its in-place
form, ``index_put_``'s, writes into the input itself (a C-contiguous, writeable array, where no modifier is
being recorded) and counts its version. Its flat form is ``put(input, index, source, accumulate)``'s (and
``put_``'s, in place): an int64 index of any shape within range of the input's elements (negative ones
counted from the end), a source of the input's dtype with as many elements, each written (or with
``accumulate``, for float32, float64, int64 and int32, added) in the index's row-major order at its position
in the input seen row-major as 1-d: the Python op's ``put_elements`` loop and ``add.at``.
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

/* ``*to = maximum(*to, *from)`` (``is_max``) or ``minimum`` of one element of ``type`` (``adds_type``'s), as
   NumPy's ``maximum.at`` and ``minimum.at``: a NaN in either kept. */
static void extreme_element(int type, int is_max, char *to, const char *from) {
#define EXTREME(T) {                                                   \
        const T a = *(const T *)to, b = *(const T *)from;              \
        *(T *)to = (is_max ? a >= b : a <= b) || a != a ? a : b;       \
    }
    if (type == NPY_FLOAT32) EXTREME(float)
    else if (type == NPY_FLOAT64) EXTREME(double)
    else if (type == NPY_INT64) EXTREME(npy_int64)
    else EXTREME(npy_int32)
#undef EXTREME
}

/* The lowest (``lowest``) or highest element of ``type`` (``adds_type``'s) into ``to``: -inf and inf for floats. */
static void bound_element(int type, int lowest, char *to) {
    if (type == NPY_FLOAT32) *(float *)to = lowest ? -INFINITY : INFINITY;
    else if (type == NPY_FLOAT64) *(double *)to = lowest ? -INFINITY : INFINITY;
    else if (type == NPY_INT64) *(npy_int64 *)to = lowest ? NPY_MIN_INT64 : NPY_MAX_INT64;
    else *(npy_int32 *)to = lowest ? NPY_MIN_INT32 : NPY_MAX_INT32;
}

/* index_reduce's reductions (``_compiled_scatters``) */
enum index_reduction { INDEX_PROD, INDEX_MEAN, INDEX_AMAX, INDEX_AMIN };

/* ``index_reduce(input, dim, index, source, reduce, include_self)`` in the common case
   (``_compiled_scatters``), no ``__torch_function__`` dispatch or forward-mode AD. A new tensor, NULL on
   error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *index_reduce_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *index = args[2], *src = args[3], *reduce = args[4], *include = args[5];
    if (Py_TYPE(t) != TensorType || Py_TYPE(index) != TensorType || Py_TYPE(src) != TensorType
            || !PyLong_CheckExact(args[1]) || !PyUnicode_CheckExact(reduce)
            || (include != Py_True && include != Py_False))
        return NULL;
    static const char *const names[] = {"prod", "mean", "amax", "amin"};
    int reduction = -1;
    for (int r = 0; r < 4 && reduction < 0; r++)
        if (PyUnicode_CompareWithASCIIString(reduce, names[r]) == 0) reduction = r;
    PyArrayObject *x = array_of(t), *idx = array_of(index), *source = array_of(src);
    if (reduction < 0 || !small_numbers(x) || PyArray_NDIM(x) == 0 || !small_indices(idx) || PyArray_NDIM(idx) != 1
            || source == NULL || !adds_type(PyArray_TYPE(x)) || PyArray_TYPE(source) != PyArray_TYPE(x)
            || (reduction == INDEX_MEAN && !PyArray_ISFLOAT(x)) || !PyArray_ISNOTSWAPPED(source)
            || !PyArray_ISALIGNED(source) || PyArray_NDIM(source) != PyArray_NDIM(x)
            || PyArray_NBYTES(source) >= small_bytes)
        return NULL;
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x);
    npy_intp dim;
    if (!dim_arg(args[1], ndim, &dim)) return NULL;
    for (int d = 0; d < ndim; d++)
        if (PyArray_DIM(source, d) != (d == dim ? PyArray_SIZE(idx) : PyArray_DIM(x, d))) return NULL;
    npy_intp size = PyArray_DIM(x, (int)dim);
    if (!indices_within(idx, 0, size)) return NULL;
    PyObject *both[2] = {t, src};
    int grad = any_requires_grad(both, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    double *counts = reduction == INDEX_MEAN ? PyMem_Calloc(size, sizeof(double)) : NULL;
    if (copy == NULL || (reduction == INDEX_MEAN && counts == NULL)) {
        Py_XDECREF(copy);
        return reduction == INDEX_MEAN && counts == NULL ? PyErr_NoMemory() : NULL;
    }
    /* each element of the slices written (the source's shape), in C order: the identity first where
       the input's own are left out, then each combined in */
    npy_intp shape[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++) shape[d] = PyArray_DIM(source, d);
    for (int pass = include == Py_True; pass < 2; pass++) {
        npy_intp at[NPY_MAXDIMS] = {0};
        for (npy_intp n = PyArray_SIZE(source); n > 0; n--, advance(at, shape, ndim)) {
            npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + at[dim] * PyArray_STRIDE(idx, 0));
            char *to = PyArray_BYTES(copy) + k * PyArray_STRIDE(copy, (int)dim) + offset_of(copy, at, (int)dim);
            const char *from = PyArray_BYTES(source) + offset_of(source, at, -1);
            if (pass == 0 && reduction >= INDEX_AMAX) bound_element(type, reduction == INDEX_AMAX, to);
            else if (pass == 0) identity_element(type, reduction == INDEX_PROD, to);
            else if (reduction == INDEX_PROD) multiply_element(type, to, from);
            else if (reduction == INDEX_MEAN) add_element(type, to, from);
            else extreme_element(type, reduction == INDEX_AMAX, to, from);
        }
    }
    if (reduction == INDEX_MEAN) {   /* (each slice's count: the times the index names it, and itself) */
        for (npy_intp j = 0; j < PyArray_SIZE(idx); j++)
            counts[*(const npy_int64 *)(PyArray_BYTES(idx) + j * PyArray_STRIDE(idx, 0))] += 1;
        npy_intp at[NPY_MAXDIMS] = {0};
        for (npy_intp n = PyArray_SIZE(copy); n > 0; n--, advance(at, PyArray_DIMS(copy), ndim)) {
            double count = counts[at[dim]] + (include == Py_True);
            char *to = PyArray_BYTES(copy) + offset_of(copy, at, -1);
            if (count == 0) count = 1;
            if (type == NPY_FLOAT32) *(float *)to = *(float *)to / (float)count;
            else *(double *)to = *(double *)to / count;
        }
        PyMem_Free(counts);
    }
    return make((PyObject *)copy);
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
            || !PyArray_ISALIGNED(source) || PyArray_NDIM(source) != ndim)   /* (of any size: the index's part read) */
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

/* ``masked_scatter(input, mask, source)`` in the common case (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set to 0 where the case is not
   this one. */
static PyObject *masked_scatter_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *mask = args[1], *source = args[2];
    if (Py_TYPE(t) != TensorType || Py_TYPE(mask) != TensorType || Py_TYPE(source) != TensorType) return NULL;
    PyArrayObject *x = array_of(t), *m = array_of(mask), *s = array_of(source);
    npy_intp shape[NPY_MAXDIMS];
    int nd = !small_numbers(x) || m == NULL || s == NULL || PyArray_TYPE(m) != NPY_BOOL
             || PyArray_TYPE(s) != PyArray_TYPE(x) || !PyArray_ISNOTSWAPPED(s) || PyArray_NBYTES(m) >= small_bytes
             || PyArray_NBYTES(s) >= small_bytes ? -1 : broadcast_shape(x, m, shape);
    if (nd < 0) return NULL;
    npy_intp size = 1;
    for (int d = 0; d < nd; d++) size *= shape[d];
    if (size * PyArray_ITEMSIZE(x) >= small_bytes) return NULL;
    int grad = requires_grad(t), source_grad = grad < 0 ? 0 : requires_grad(source);
    int plain = grad < 0 || source_grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad || source_grad) {   /* (a tensor that requires grad: the Python op records) */
        *handled = plain < 0;
        return NULL;
    }
    PyArrayObject *holds = broadcast_copy(m, shape, nd);
    if (holds == NULL) {
        *handled = 1;
        return NULL;
    }
    const npy_bool *held = PyArray_DATA(holds);
    npy_intp count = 0;
    for (npy_intp i = 0; i < size; i++) count += held[i] != 0;
    if (count > PyArray_SIZE(s)) {   /* (too few source elements: the Python op's error) */
        Py_DECREF(holds);
        return NULL;
    }
    *handled = 1;
    PyArrayObject *out = broadcast_copy(x, shape, nd);
    PyArrayObject *values = out == NULL ? NULL : (PyArrayObject *)PyArray_GETCONTIGUOUS(s);
    if (values == NULL) {
        Py_DECREF(holds);
        Py_XDECREF(out);
        return NULL;
    }
    npy_intp itemsize = PyArray_ITEMSIZE(x);
    char *to = PyArray_DATA(out);
    const char *from = PyArray_DATA(values);
    for (npy_intp i = 0; i < size; i++, to += itemsize) {
        if (!held[i]) continue;
        memcpy(to, from, itemsize);
        from += itemsize;
    }
    Py_DECREF(holds);
    Py_DECREF(values);
    return make((PyObject *)out);
}

/* ``put(input, index, source, accumulate)`` (``put_``'s where ``f->writes``) in the common case (the module's
   docstring), no ``__torch_function__`` dispatch or forward-mode AD: a new tensor (the input), NULL on error, or
   ``*handled`` set to 0 where the case is not this one. */
static PyObject *put_case(Function *f, PyObject *const *args, int *handled) {
    PyObject *t = args[0], *index_tensor = args[1], *v = args[2];
    if (Py_TYPE(t) != TensorType || Py_TYPE(index_tensor) != TensorType || Py_TYPE(v) != TensorType
            || (args[3] != Py_True && args[3] != Py_False))
        return NULL;
    PyArrayObject *x = array_of(t), *index = array_of(index_tensor), *values = array_of(v);
    int accumulate = args[3] == Py_True, type = x == NULL ? -1 : PyArray_TYPE(x);
    if (!small_numbers(x) || index == NULL || values == NULL || PyArray_DESCR(index)->kind != 'i'
            || PyArray_ITEMSIZE(index) != 8 || !PyArray_ISNOTSWAPPED(index) || PyArray_TYPE(values) != type
            || !PyArray_ISNOTSWAPPED(values) || PyArray_SIZE(values) != PyArray_SIZE(index)
            || PyArray_NBYTES(index) >= small_bytes || PyArray_NBYTES(values) >= small_bytes
            || (accumulate && !adds_type(type)) || (f->writes && (!PyArray_IS_C_CONTIGUOUS(x)
                                                                   || !PyArray_ISWRITEABLE(x))))
        return NULL;
    PyObject *operands[2] = {t, v};
    int grad = any_requires_grad(operands, 2), plain = grad < 0 ? -1 : plain_mode();
    int recording = plain <= 0 || grad || !f->writes ? 0 : flag(modifier_recording, s_enabled);
    if (plain <= 0 || grad || recording) {   /* (a tensor that requires grad: the Python op records) */
        *handled = plain < 0 || grad < 0 || recording < 0;
        return NULL;
    }
    PyArrayObject *at = (PyArrayObject *)PyArray_GETCONTIGUOUS(index);
    PyArrayObject *from = at == NULL ? NULL : (PyArrayObject *)PyArray_GETCONTIGUOUS(values);
    npy_intp n = PyArray_SIZE(x), k = PyArray_SIZE(index), item = PyArray_ITEMSIZE(x);
    const npy_int64 *positions = at == NULL ? NULL : (const npy_int64 *)PyArray_DATA(at);
    int in_range = from != NULL;
    for (npy_intp j = 0; j < k && in_range; j++) in_range = positions[j] >= -n && positions[j] < n;
    PyArrayObject *out = !in_range ? NULL : f->writes ? (PyArrayObject *)Py_NewRef(x)
                         : (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    if (out != NULL) {
        for (npy_intp j = 0; j < k; j++) {
            char *to = PyArray_BYTES(out) + (positions[j] < 0 ? positions[j] + n : positions[j]) * item;
            const char *element = PyArray_BYTES(from) + j * item;
            if (accumulate)
                add_element(type, to, element);
            else
                memcpy(to, element, (size_t)item);
        }
    }
    Py_XDECREF(at);
    Py_XDECREF(from);
    *handled = out != NULL || PyErr_Occurred();   /* (an index out of range: the Python op's error) */
    if (!*handled) return NULL;
    if (out == NULL || !f->writes) return out == NULL ? NULL : make((PyObject *)out);
    Py_DECREF(out);
    return count_change(t) < 0 ? NULL : Py_NewRef(t);
}

/* ``index_put(input, (index,), values, accumulate)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one. */
static PyObject *index_put_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    if (f->form) return put_case(f, args, handled);
    PyObject *t = args[0], *indices = args[1], *v = args[2];
    if (Py_TYPE(t) != TensorType || Py_TYPE(v) != TensorType || (args[3] != Py_True && args[3] != Py_False)
            || !(PyTuple_CheckExact(indices) || PyList_CheckExact(indices)) || PySequence_Fast_GET_SIZE(indices) != 1
            || Py_TYPE(PySequence_Fast_GET_ITEM(indices, 0)) != TensorType)
        return NULL;
    PyObject *index_tensor = PySequence_Fast_GET_ITEM(indices, 0);
    PyArrayObject *x = array_of(t), *index = array_of(index_tensor), *values = array_of(v);
    int accumulate = args[3] == Py_True;
    if (!small_numbers(x) || PyArray_NDIM(x) == 0 || index == NULL || values == NULL
            || PyArray_DESCR(index)->kind != 'i' || PyArray_ITEMSIZE(index) != 8 || PyArray_NDIM(index) != 1
            || !PyArray_ISNOTSWAPPED(index) || PyArray_TYPE(values) != PyArray_TYPE(x) || !PyArray_ISNOTSWAPPED(values)
            || PyArray_NBYTES(index) >= small_bytes || PyArray_NBYTES(values) >= small_bytes
            || (accumulate && PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64))
        return NULL;
    int nd = PyArray_NDIM(x), vd = PyArray_NDIM(values);
    npy_intp n = PyArray_DIM(x, 0), k = PyArray_DIM(index, 0), shape[NPY_MAXDIMS], row = 1;
    shape[0] = k;
    for (int d = 1; d < nd; d++) row *= shape[d] = PyArray_DIM(x, d);
    if (vd > nd || k * row * PyArray_ITEMSIZE(x) >= small_bytes) return NULL;
    for (int d = 0; d < vd; d++) {
        npy_intp size = PyArray_DIM(values, d), wanted = shape[nd - vd + d];
        if (size != wanted && size != 1) return NULL;
    }
    const char *at = PyArray_BYTES(index);
    npy_intp step = PyArray_STRIDE(index, 0);
    for (npy_intp j = 0; j < k; j++) {
        npy_int64 i = *(const npy_int64 *)(at + j * step);
        if (i < -n || i >= n) return NULL;   /* (out of range: the Python op's error) */
    }
    if (f->writes && (!PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISWRITEABLE(x))) return NULL;
    PyObject *operands[2] = {t, v};
    int grad = any_requires_grad(operands, 2), plain = grad < 0 ? -1 : plain_mode();
    int recording = plain <= 0 || grad || !f->writes ? 0 : flag(modifier_recording, s_enabled);
    if (plain <= 0 || grad || recording) {   /* (a tensor that requires grad: the Python op records) */
        *handled = plain < 0 || grad < 0 || recording < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *out = f->writes ? (PyArrayObject *)Py_NewRef(x) : (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    PyArrayObject *spread = out == NULL ? NULL : broadcast_copy(values, shape, nd);
    if (spread == NULL) {
        Py_XDECREF(out);
        return NULL;
    }
    npy_intp bytes = row * PyArray_ITEMSIZE(x);
    for (npy_intp j = 0; j < k; j++) {
        npy_int64 i = *(const npy_int64 *)(at + j * step);
        char *to = PyArray_BYTES(out) + (i < 0 ? i + n : i) * bytes;
        const char *from = PyArray_BYTES(spread) + j * bytes;
        if (!accumulate)
            memcpy(to, from, (size_t)bytes);
        else if (PyArray_TYPE(x) == NPY_FLOAT32)
            for (npy_intp e = 0; e < row; e++) ((float *)to)[e] = ((float *)to)[e] + ((const float *)from)[e];
        else
            for (npy_intp e = 0; e < row; e++) ((double *)to)[e] = ((double *)to)[e] + ((const double *)from)[e];
    }
    Py_DECREF(spread);
    if (!f->writes) return make((PyObject *)out);
    Py_DECREF(out);
    return count_change(t) < 0 ? NULL : Py_NewRef(t);
}
'''
