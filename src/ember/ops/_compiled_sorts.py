"""The compiled functions (``_compiled_functions``) of ``sort`` (kind "sort") and ``topk`` (kind
"topk"): a small C-contiguous float32, float64, int64 or int32 tensor with dims, an int dim and
bool flags, each row along the dim of at most ``max_row`` elements ordered in C by a stable
insertion sort as ``sort._sort_arrays`` orders it (ascending with NaN last, or descending with NaN
first, equal elements in their order), topk keeping the first k of each row where its Python op
sorts the rows too (k at most a ``partition_ratio``-th of the row: it partitions). The values and
int64 indices as the Python op's result type, its node recorded as ``sort._selected`` records it.
Every other case goes to the Python op.
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
    PyObject *value_t = make((PyObject *)values), *index_t = value_t == NULL ? NULL : make((PyObject *)indices);
    if (index_t == NULL) {
        if (value_t == NULL) Py_DECREF(indices);
        Py_XDECREF(value_t);
        return NULL;
    }
    return selected_pair(f, t, x, value_t, index_t, dim, 1, grad);
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
'''
