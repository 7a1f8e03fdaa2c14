"""The compiled functions (``_compiled_functions``) of ``sort`` (kind "sort") and ``topk`` (kind
"topk"): a small C-contiguous float32, float64, int64 or int32 tensor with dims, an int dim and
bool flags, each row along the dim of at most ``max_row`` elements ordered in C by a stable
insertion sort as ``sort._sort_arrays`` orders it (ascending with NaN last, or descending with NaN
first, equal elements in their order), topk keeping the first k of each row where its Python op
sorts the rows too (k at most a ``partition_ratio``-th of the row: it partitions). The values and
int64 indices as the Python op's result type, its node recorded as ``sort._selected`` records it.

And of ``median``/``nanmedian`` (kind "median": of all elements, or along a dim), ``mode`` (kind
"mode") and ``kthvalue`` (kind "kthvalue") of such a tensor of at most ``max_elements`` elements (the size
to which the Python ops sort rows in Python): each row's element at its position in the stable
ascending order, as ``sort._pick_small`` picks it (mode's: the first longest run of equal elements
there, as ``sort._mode_run`` finds it). Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
#define SORTED_ROW_LIMIT 64   /* (the most a ``max_row`` may be: the insertion sort's order on the stack) */

/* Whether ``v`` comes before ``u`` in a stable sort: ascending with NaN last, or descending with NaN
   first (NaNs equal among themselves, as other equal elements). */
#define FLOAT_BEFORE(v, u, descending) \
    ((descending) ? !isnan(u) && (isnan(v) || (v) > (u)) : !isnan(v) && (isnan(u) || (v) < (u)))
#define INT_BEFORE(v, u, descending) ((descending) ? (v) > (u) : (v) < (u))

/* The stable order of the ``n`` elements ``step`` apart from ``x`` into ``order`` (their positions):
   an insertion sort, each element moving before those it comes before. */
#define STABLE_ORDER(T, BEFORE)                                                                            \
    static void order_##T(const T *x, npy_intp step, npy_intp n, int descending, npy_intp *order) {       \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            T v = x[i * step];                                                                             \
            npy_intp j = i;                                                                                \
            for (; j > 0; j--) {                                                                           \
                T u = x[order[j - 1] * step];                                                              \
                if (!BEFORE(v, u, descending)) break;                                                      \
                order[j] = order[j - 1];                                                                   \
            }                                                                                              \
            order[j] = i;                                                                                  \
        }                                                                                                  \
    }
STABLE_ORDER(float, FLOAT_BEFORE)
STABLE_ORDER(double, FLOAT_BEFORE)
STABLE_ORDER(npy_int64, INT_BEFORE)
STABLE_ORDER(npy_int32, INT_BEFORE)

/* The first ``k`` of each row along ``dim`` of ``x`` (C-contiguous, a ``sorted_type``) in its stable
   order: (values, int64 indices) as ``f``'s result type, the node recorded where ``grad``. A new
   reference, NULL on error. */
static PyObject *sorted_rows(Function *f, PyObject *t, PyArrayObject *x, npy_intp dim, npy_intp k, int descending,
                             int grad) {
    int ndim = PyArray_NDIM(x), type = PyArray_TYPE(x);
    npy_intp shape[NPY_MAXDIMS], n = PyArray_DIM(x, (int)dim), inner = 1, outer = 1, order[SORTED_ROW_LIMIT];
    for (int d = 0; d < ndim; d++) {
        shape[d] = d == dim ? k : PyArray_DIM(x, d);
        if (d < dim) outer *= PyArray_DIM(x, d);
        if (d > dim) inner *= PyArray_DIM(x, d);
    }
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(ndim, shape, type);
    PyArrayObject *indices = values == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(ndim, shape, NPY_INT64);
    if (indices == NULL) {
        Py_XDECREF(values);
        return NULL;
    }
    npy_intp itemsize = PyArray_ITEMSIZE(x);
    const char *from = PyArray_DATA(x);
    char *to = PyArray_DATA(values);
    npy_int64 *at = PyArray_DATA(indices);
    for (npy_intp o = 0; o < outer; o++) {
        for (npy_intp i = 0; i < inner; i++) {
            npy_intp start = o * n * inner + i, out_start = o * k * inner + i;
            if (type == NPY_FLOAT32) order_float((const float *)from + start, inner, n, descending, order);
            else if (type == NPY_FLOAT64) order_double((const double *)from + start, inner, n, descending, order);
            else if (type == NPY_INT64) order_npy_int64((const npy_int64 *)from + start, inner, n, descending, order);
            else order_npy_int32((const npy_int32 *)from + start, inner, n, descending, order);
            for (npy_intp j = 0; j < k; j++) {
                memcpy(to + (out_start + j * inner) * itemsize, from + (start + order[j] * inner) * itemsize, itemsize);
                at[out_start + j * inner] = order[j];
            }
        }
    }
    return selected_arrays(f, t, x, values, indices, dim, 1, grad);
}

/* The array of ``t`` where it is a sort's: small, C-contiguous, float32, float64, int64 or int32,
   with dims; ``*dim`` set from ``dim_object`` (an int) where its row along it has at most
   ``f->max_row`` elements. NULL where it is not. */
static PyArrayObject *sorted_type(Function *f, PyObject *t, PyObject *dim_object, npy_intp *dim) {
    PyArrayObject *x = Py_TYPE(t) == TensorType && PyLong_CheckExact(dim_object) ? array_of(t) : NULL;
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64 && type != NPY_INT64 && type != NPY_INT32) || !small_numbers(x)
            || PyArray_NDIM(x) == 0 || !PyArray_IS_C_CONTIGUOUS(x) || !dim_arg(dim_object, PyArray_NDIM(x), dim)
            || PyArray_DIM(x, (int)*dim) > f->max_row || PyArray_SIZE(x) > f->max_elements)
        return NULL;
    return x;
}

/* ``sort(input, dim, descending)`` and ``topk(input, k, dim, largest, sorted)`` in the common case
   (``sorted_type``; topk's k an int from 0 to the row's length, and above a ``f->partition_ratio``-th
   of it unless 0), no ``__torch_function__`` dispatch or forward-mode AD. A new result, NULL on error,
   or ``*handled`` set to 0 where the case is not this one. */
static PyObject *sort_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    int topk = f->kind == TOPK_FUNCTION;
    PyObject *t = args[0], *descending = args[topk ? 3 : 2];
    npy_intp dim, k = 0;
    PyArrayObject *x = sorted_type(f, t, args[topk ? 2 : 1], &dim);
    if (x == NULL || (descending != Py_True && descending != Py_False)
            || (topk && args[4] != Py_True && args[4] != Py_False))
        return NULL;
    npy_intp n = PyArray_DIM(x, (int)dim);
    if (topk) {
        if (!PyLong_CheckExact(args[1])) return NULL;
        long long asked = PyLong_AsLongLong(args[1]);
        if (asked == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (asked < 0 || asked > n || (asked > 0 && asked * f->partition_ratio <= n)) return NULL;
        k = (npy_intp)asked;
    } else {
        k = n;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    return sorted_rows(f, t, x, dim, k, descending == Py_True, grad);
}

/* The position ``sort._median_row_position`` takes in a stably sorted row of ``n`` elements, ``nans``
   of them NaN: the lower median (of those not NaN where ``ignores_nan``; else the first NaN, if any). */
static npy_intp median_position(npy_intp n, npy_intp nans, int ignores_nan) {
    if (ignores_nan) return n - nans - 1 > 0 ? (n - nans - 1) / 2 : 0;
    return nans ? n - nans : (n - 1) / 2;
}

/* The NaNs among the ``n`` elements ``step`` apart from ``x`` (0 for integers). */
static npy_intp nans_in(const char *x, int type, npy_intp step, npy_intp n) {
    npy_intp nans = 0;
    for (npy_intp i = 0; i < n; i++) {
        if (type == NPY_FLOAT32) nans += isnan(((const float *)x)[i * step]);
        else if (type == NPY_FLOAT64) nans += isnan(((const double *)x)[i * step]);
    }
    return nans;
}

/* Whether the elements ``i`` and ``j`` of ``x`` (``step`` apart, of ``type``) differ (NaN from
   everything, itself included, as Python's ``!=``). */
static int differ(const char *x, int type, npy_intp step, npy_intp i, npy_intp j) {
    if (type == NPY_FLOAT32) return ((const float *)x)[i * step] != ((const float *)x)[j * step];
    if (type == NPY_FLOAT64) return ((const double *)x)[i * step] != ((const double *)x)[j * step];
    if (type == NPY_INT64) return ((const npy_int64 *)x)[i * step] != ((const npy_int64 *)x)[j * step];
    return ((const npy_int32 *)x)[i * step] != ((const npy_int32 *)x)[j * step];
}

/* Of the ``n`` elements ``step`` apart from ``x`` (of ``type``), the index of the element ``f`` picks
   (``k - 1``-th in the stable ascending order for kthvalue, a median's; for mode, the last of the
   first longest run of equal elements, ``sort._mode_run``'s), and in ``*value_at`` the index of its
   value (the same; for mode, the first of that run). */
static npy_intp picked_of(Function *f, const char *x, int type, npy_intp step, npy_intp n, npy_intp k,
                          npy_intp *value_at) {
    npy_intp order[SORTED_ROW_LIMIT];
    if (type == NPY_FLOAT32) order_float((const float *)x, step, n, 0, order);
    else if (type == NPY_FLOAT64) order_double((const double *)x, step, n, 0, order);
    else if (type == NPY_INT64) order_npy_int64((const npy_int64 *)x, step, n, 0, order);
    else order_npy_int32((const npy_int32 *)x, step, n, 0, order);
    if (f->kind == MODE_FUNCTION) {
        npy_intp best = 0, first = 0, last = 0, start = 0;
        for (npy_intp end = 1; end <= n; end++) {
            if (end == n || differ(x, type, step, order[end], order[start])) {
                if (end - start > best) {
                    best = end - start;
                    first = order[start];
                    last = order[end - 1];
                }
                start = end;
            }
        }
        *value_at = first;
        return last;
    }
    *value_at = order[f->kind == KTHVALUE_FUNCTION ? k - 1
                      : median_position(n, nans_in(x, type, step, n), f->ignores_nan)];
    return *value_at;
}

/* ``median(input)`` or ``nanmedian(input)`` of all elements: the picked element as a 0-d array, the
   node (``f->all_node``) saving the input and the result. */
static PyObject *median_of_all(Function *f, PyObject *t, PyArrayObject *x, int grad) {
    npy_intp at;
    picked_of(f, PyArray_DATA(x), PyArray_TYPE(x), 1, PyArray_SIZE(x), 0, &at);
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *value = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, 0, NULL, NULL, NULL, 0, NULL);
    if (value == NULL) return NULL;
    memcpy(PyArray_DATA(value), PyArray_BYTES(x) + at * PyArray_ITEMSIZE(x), PyArray_ITEMSIZE(x));
    PyObject *out = make((PyObject *)value);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->all_node, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *r = PyObject_CallMethodObjArgs(node, s_save, t, out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    return with_node(out, node);
}

/* ``median(input, dim, keepdim)``, ``nanmedian(...)`` (``f->ignores_nan``), ``mode(input, dim,
   keepdim)`` and ``kthvalue(input, k, dim, keepdim)`` in the common case: a small C-contiguous
   float32, float64, int64 or int32 tensor with dims and at most ``f->max_elements`` elements, a dim
   that is an int (or None for a median of all elements), a bool keepdim, kthvalue's k an int from 1
   to the row's length; no ``__torch_function__`` dispatch or forward-mode AD: each row's picked
   element and its index as the Python op's result type, the node recorded as ``sort._selected``
   records it. A new result, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *pick_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    int kth = f->kind == KTHVALUE_FUNCTION;
    PyObject *t = args[0], *dim_object = args[kth ? 2 : 1], *keep = args[kth ? 3 : 2];
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    int type = x == NULL ? -1 : PyArray_TYPE(x), ndim = x == NULL ? 0 : PyArray_NDIM(x);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64 && type != NPY_INT64 && type != NPY_INT32) || !small_numbers(x)
            || ndim == 0 || !PyArray_IS_C_CONTIGUOUS(x) || PyArray_SIZE(x) > f->max_elements
            || PyArray_SIZE(x) > SORTED_ROW_LIMIT || (keep != Py_True && keep != Py_False)
            || (dim_object == Py_None ? kth || f->kind == MODE_FUNCTION || keep == Py_True
                                      : !PyLong_CheckExact(dim_object)))
        return NULL;
    npy_intp dim = 0, k = 0;
    if (dim_object != Py_None && !dim_arg(dim_object, ndim, &dim)) return NULL;
    npy_intp n = PyArray_DIM(x, (int)dim);
    if (kth) {
        if (!PyLong_CheckExact(args[1])) return NULL;
        long long asked = PyLong_AsLongLong(args[1]);
        if (asked == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (asked < 1 || asked > n) return NULL;
        k = (npy_intp)asked;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    if (dim_object == Py_None) return median_of_all(f, t, x, grad);
    int keepdim = keep == Py_True, out_ndim = 0;
    npy_intp shape[NPY_MAXDIMS], inner = 1, outer = 1;
    for (int d = 0; d < ndim; d++) {
        if (d != dim || keepdim) shape[out_ndim++] = d == dim ? 1 : PyArray_DIM(x, d);
        if (d < dim) outer *= PyArray_DIM(x, d);
        if (d > dim) inner *= PyArray_DIM(x, d);
    }
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(out_ndim, shape, type);
    PyArrayObject *indices = values == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(out_ndim, shape, NPY_INT64);
    if (indices == NULL) {
        Py_XDECREF(values);
        return NULL;
    }
    npy_intp itemsize = PyArray_ITEMSIZE(x);
    const char *from = PyArray_DATA(x);
    char *to = PyArray_DATA(values);
    npy_int64 *at = PyArray_DATA(indices);
    for (npy_intp o = 0; o < outer; o++) {
        for (npy_intp i = 0; i < inner; i++) {
            const char *row = from + (o * n * inner + i) * itemsize;
            npy_intp value_at, picked = picked_of(f, row, type, inner, n, k, &value_at);
            memcpy(to + (o * inner + i) * itemsize, row + value_at * inner * itemsize, itemsize);
            at[o * inner + i] = picked;
        }
    }
    return selected_arrays(f, t, x, values, indices, dim, keepdim, grad);
}
'''
