"""The compiled functions (``_compiled_functions``) of the products added to a tensor, kind
"add_product": ``addmm(input, mat1, mat2, beta, alpha)``, ``addmv(input, mat, vec, beta, alpha)``,
``baddbmm(input, batch1, batch2, beta, alpha)`` and ``addbmm(input, batch1, batch2, beta, alpha)`` (the
batches side by side, one product summing theirs, as ``linalg.addbmm`` multiplies them) of small float32 or
float64 tensors of one dtype and
Python numbers ``beta`` and ``alpha`` (floats or ints): NumPy's matmul called from C on the two
factors (below the size from which the Python op's product may take another kernel), the product
scaled by ``alpha`` in place where it is not 1, then, where ``beta`` is not 0, the input (times
``beta`` where that is not 1) added into it, by NumPy's ufuncs, as ``linalg._add_product`` and
``_scale_sum`` compute them; the node recorded as ``_add_product`` records it (the factors saved,
``beta``, ``alpha`` and the input's shape). Every other case (an input that does not broadcast to
the product, a FLOP counter counting, factors with an inner size of 1, which the Python op
multiplies) goes to the Python op.

Kind "outer": ``outer(input, vec2)`` of two small float32 or float64 vectors of one dtype with
elements where nothing records: ``input[i] * vec2[j]`` in C (each product rounded to the dtype, as
``linalg.rank_one_array`` and NumPy's broadcast multiply round it). Tensors that require grad (the
Python op records the composite's nodes), and every other case, go to the Python op.

Kind "kron": ``kron(input, other)`` of two tensors of one dtype (float32, float64 or int64), with elements,
whose sizes multiply to fewer than ``max_elements``, where nothing records: each element of the input times
the whole of the other (the smaller rank padded with leading ones), each product the one NumPy's broadcast
multiply rounds, written in C. Tensors that require grad (the Python op records the composite's nodes), and
every other case, go to the Python op.

Kind "rank_one": ``addr(input, vec1, vec2, beta, alpha)`` of small float32 or float64 tensors of one
dtype (``input`` of at most two dims broadcasting to the product) and Python numbers ``beta`` and
``alpha``, where nothing records: ``openmp_kernels``' rank-one loop (its address given at the first
call) on the calling thread, as ``linalg.rank_one_untracked`` calls it. Every other case goes to the
Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The CBLAS routines NumPy's matmul and dot call (their addresses in the function's ``gemms``, ``gemvs`` and
   ``dots``), with sizes of int64 (ILP64) or int. */
#define CBLAS_ROUTINES(T, P, I)                                                                            \
    typedef void (*P##gemm_##I##_routine)(int, int, int, I, I, I, T, const T *, I, const T *, I, T, T *, I); \
    typedef void (*P##gemv_##I##_routine)(int, int, I, I, T, const T *, I, const T *, I, T, T *, I);         \
    typedef T (*P##dot_##I##_routine)(I, const T *, I, const T *, I);
CBLAS_ROUTINES(float, s, int64_t)
CBLAS_ROUTINES(float, s, int)
CBLAS_ROUTINES(double, d, int64_t)
CBLAS_ROUTINES(double, d, int)
enum { CBLAS_ROW_MAJOR = 101, CBLAS_COLUMN_MAJOR = 102, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

/* ``routine(T, P, I)`` called with the function's routine for the dtype (``wide``: float64) and its sizes */
#define BY_DTYPE_AND_SIZES(CALL) \
    if (wide && f->ilp64) CALL(double, d, int64_t) \
    else if (wide) CALL(double, d, int) \
    else if (f->ilp64) CALL(float, s, int64_t) \
    else CALL(float, s, int)

/* out (m x p) = x (m x n) @ y (n x p), each row-major: NumPy's matrix product's gemm */
static void blas_gemm(Function *f, int wide, npy_intp m, npy_intp n, npy_intp p, const void *x, const void *y,
                      void *out) {
#define GEMM(T, P, I) ((P##gemm_##I##_routine)f->gemms[wide])(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, \
        (I)m, (I)p, (I)n, 1, x, (I)n, y, (I)p, 0, out, (I)p);
    BY_DTYPE_AND_SIZES(GEMM)
#undef GEMM
}

/* NumPy's matmul or dot of the float32 or float64 arrays ``x`` and ``y`` (of one dtype, the caller
   having checked their ranks and sizes) by the CBLAS routine NumPy's own loop calls where the operands
   are laid out as taken here, so the same bits: C-contiguous, aligned, not overlapping (where NumPy may
   take syrk for a product of a matrix and its transpose); gemm for matrices (or batches of them) of more
   than one row and column, gemv for a matrix and a vector, of more than one row or column and element,
   dot for two vectors. A new array; NULL with no error set where the case is another (or the routines
   were not found), for NumPy's ufunc; NULL with an error on error. */
static PyObject *blas_product(Function *f, PyArrayObject *x, PyArrayObject *y) {
    int wide = PyArray_TYPE(x) == NPY_FLOAT64, xd = PyArray_NDIM(x), yd = PyArray_NDIM(y);
    const char *xs = PyArray_DATA(x), *ys = PyArray_DATA(y);
    if (f->gemms[wide] == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && !wide) || PyArray_TYPE(y) != PyArray_TYPE(x)
            || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_IS_C_CONTIGUOUS(y) || !PyArray_ISALIGNED(x)
            || !PyArray_ISALIGNED(y) || (xs < ys + PyArray_NBYTES(y) && ys < xs + PyArray_NBYTES(x))
            || xd > 3 || yd > 3 || (xd == 3) != (yd == 3))
        return NULL;
    npy_intp n = PyArray_DIM(x, xd - 1), m = xd >= 2 ? PyArray_DIM(x, xd - 2) : 1;
    npy_intp p = yd >= 2 ? PyArray_DIM(y, yd - 1) : 1, count = xd == 3 ? PyArray_DIM(x, 0) : 1;
    if (n != PyArray_DIM(y, yd == 1 ? 0 : yd - 2) || n < 2 || m > INT_MAX / 2 || n > INT_MAX / 2 || p > INT_MAX / 2
            || (xd >= 2 && yd >= 2 && (m < 2 || p < 2)) || (xd >= 2 && yd == 1 && m < 2)
            || (xd == 1 && yd >= 2 && p < 2) || (xd == 3 && PyArray_DIM(y, 0) != count))
        return NULL;
    npy_intp dims[3];
    int nd = 0;
    if (xd == 3) dims[nd++] = count;
    if (xd >= 2) dims[nd++] = m;
    if (yd >= 2) dims[nd++] = p;
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(nd, dims, PyArray_TYPE(x));
    if (out == NULL) return NULL;
    char *os = PyArray_DATA(out);
    size_t item = PyArray_ITEMSIZE(x);
    if (xd >= 2 && yd >= 2) {
        for (npy_intp b = 0; b < count; b++)
            blas_gemm(f, wide, m, n, p, xs + b * m * n * item, ys + b * n * p * item, os + b * m * p * item);
    } else if (yd == 1 && xd == 2) {   /* (matrix @ vector: gemv on the matrix as column-major, transposed) */
#define GEMV(T, P, I) ((P##gemv_##I##_routine)f->gemvs[wide])(CBLAS_COLUMN_MAJOR, CBLAS_TRANS, (I)n, (I)m, 1, \
        (const T *)xs, (I)n, (const T *)ys, 1, 0, (T *)os, 1);
        BY_DTYPE_AND_SIZES(GEMV)
#undef GEMV
    } else if (xd == 1 && yd == 2) {   /* (vector @ matrix: gemv on the matrix, row-major, transposed) */
#define GEMV(T, P, I) ((P##gemv_##I##_routine)f->gemvs[wide])(CBLAS_ROW_MAJOR, CBLAS_TRANS, (I)n, (I)p, 1, \
        (const T *)ys, (I)p, (const T *)xs, 1, 0, (T *)os, 1);
        BY_DTYPE_AND_SIZES(GEMV)
#undef GEMV
    } else {   /* (two vectors: dot, its result through a double as NumPy sums its chunks) */
#define DOT(T, P, I) *(T *)os = (T)(0.0 + (double)((P##dot_##I##_routine)f->dots[wide])((I)n, (const T *)xs, 1, \
        (const T *)ys, 1));
        BY_DTYPE_AND_SIZES(DOT)
#undef DOT
    }
    return (PyObject *)out;
}
/* The shape of the product of ``x`` and ``y`` where they are ``f``'s operands (``enum product_operands``:
   matrices, batches of them, batches summed or a matrix and a vector) with elements and an inner size that
   ``products.matmul`` leaves to NumPy's matmul (and does not multiply, as for an inner size of 1
   between matrices): its number of dims, or 0. */
static int product_shape(Function *f, PyArrayObject *x, PyArrayObject *y, npy_intp *shape) {
    int xd = PyArray_NDIM(x), yd = PyArray_NDIM(y), p = f->product_operands;
    int ranks = p == MATRICES ? xd == 2 && yd == 2
                : p == BATCHES || p == SUMMED_BATCHES ? xd == 3 && yd == 3 && PyArray_DIM(x, 0) == PyArray_DIM(y, 0)
                : p == MATRIX_VECTOR && xd == 2 && yd == 1;
    if (!ranks || PyArray_SIZE(x) == 0 || PyArray_SIZE(y) == 0) return 0;
    npy_intp k = PyArray_DIM(x, xd - 1), inner = p == SUMMED_BATCHES ? k * PyArray_DIM(x, 0) : k;
    /* (the sizes' product: a product of matrices' multiply-adds times k, a matrix and a vector's exactly) */
    double work = (double)PyArray_SIZE(x) * (double)PyArray_SIZE(y) / (yd == 1 ? (double)k : 1.0);
    if (k != PyArray_DIM(y, yd == 1 ? 0 : yd - 2) || (inner == 1 && yd > 1) || work >= (double)f->max_elements)
        return 0;
    int nd = 0;
    if (p == BATCHES) shape[nd++] = PyArray_DIM(x, 0);
    shape[nd++] = PyArray_DIM(x, xd - 2);
    if (yd > 1) shape[nd++] = PyArray_DIM(y, yd - 1);
    return nd;
}

/* Whether ``bias`` broadcasts to the ``nd`` sizes ``shape`` (of no more dims). */
static int broadcasts_to_product(PyArrayObject *bias, const npy_intp *shape, int nd) {
    int bd = PyArray_NDIM(bias);
    if (bd > nd) return 0;
    for (int i = 0; i < bd; i++) {
        npy_intp size = PyArray_DIM(bias, i);
        if (size != shape[nd - bd + i] && size != 1) return 0;
    }
    return 1;
}

/* The node's fields as ``linalg._add_product`` sets them: the factors saved, ``beta``, ``alpha`` and the
   input's shape. 0, or -1 on error. */
static int add_product_fields(PyObject *node, PyObject *const *args, PyArrayObject *bias) {
    PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(bias), PyArray_DIMS(bias));
    int status = shape == NULL || PyObject_SetAttrString(node, "beta", args[3]) < 0
                 || PyObject_SetAttrString(node, "alpha", args[4]) < 0
                 || PyObject_SetAttrString(node, "in_shape", shape) < 0 ? -1 : 0;
    Py_XDECREF(shape);
    if (status < 0) return -1;
    PyObject *r = PyObject_CallMethodObjArgs(node, s_save, args[1], args[2], NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* The factors of addbmm's one product: the (b, n, k) batches ``x`` side by side, (n, b * k), and the (b, k, p)
   batches ``y`` one above the other, (b * k, p), in ``factors`` (new references). 0, or -1 on error. */
static int side_by_side(PyArrayObject *x, PyArrayObject *y, PyObject **factors) {
    npy_intp b = PyArray_DIM(x, 0), n = PyArray_DIM(x, 1), k = PyArray_DIM(x, 2), p = PyArray_DIM(y, 2);
    npy_intp order[3] = {1, 0, 2}, x_dims[2] = {n, b * k}, y_dims[2] = {b * k, p};
    PyArray_Dims to_order = {order, 3}, x_shape = {x_dims, 2}, y_shape = {y_dims, 2};
    PyObject *moved = PyArray_Transpose(x, &to_order);
    factors[0] = moved == NULL ? NULL : PyArray_Newshape((PyArrayObject *)moved, &x_shape, NPY_CORDER);
    Py_XDECREF(moved);
    factors[1] = factors[0] == NULL ? NULL : PyArray_Newshape(y, &y_shape, NPY_CORDER);
    if (factors[1] == NULL) Py_CLEAR(factors[0]);
    return factors[1] == NULL ? -1 : 0;
}

/* ``f``'s product added to its input (the module's docstring) in the common case, no
   ``__torch_function__`` dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled``
   set to 0 where the case is not this one. */
static PyObject *add_product_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *arrays[3];
    for (int i = 0; i < 3; i++) {
        PyArrayObject *a = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (a == NULL || (PyArray_TYPE(a) != NPY_FLOAT32 && PyArray_TYPE(a) != NPY_FLOAT64)
                || (i > 0 && PyArray_TYPE(a) != PyArray_TYPE(arrays[0])) || !PyArray_ISNOTSWAPPED(a)
                || (PyArray_NBYTES(a) >= small_bytes && f->product_operands != MATRIX_VECTOR))
            return NULL;   /* (a matrix and a vector: the Python op's product is NumPy's at every size) */
        arrays[i] = a;
    }
    npy_intp shape[3];
    int nd = product_shape(f, arrays[1], arrays[2], shape);
    if (nd == 0 || !broadcasts_to_product(arrays[0], shape, nd)) return NULL;
    PyObject *beta = args[3], *alpha = args[4];
    if (!(PyFloat_CheckExact(beta) || PyLong_CheckExact(beta))
            || !(PyFloat_CheckExact(alpha) || PyLong_CheckExact(alpha)))
        return NULL;
    int grad = any_requires_grad(args, 3);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *counter = PyObject_GetAttr(f->flop_hook, s_counter);   /* (counting: the Python op counts) */
    int counting = counter != Py_None;
    Py_XDECREF(counter);
    if (counter == NULL) *handled = 1;
    if (counter == NULL || counting) return NULL;
    *handled = 1;
    int scales = PyObject_RichCompareBool(alpha, one, Py_NE), ignores = PyObject_RichCompareBool(beta, zero, Py_EQ);
    int weights = PyObject_RichCompareBool(beta, one, Py_NE);
    if (scales < 0 || ignores < 0 || weights < 0) return NULL;
    PyObject *factors[2] = {Py_NewRef(arrays[1]), Py_NewRef(arrays[2])};
    if (f->product_operands == SUMMED_BATCHES) {
        Py_DECREF(factors[0]);
        Py_DECREF(factors[1]);
        if (side_by_side(arrays[1], arrays[2], factors) < 0) return NULL;
    }
    PyObject *product = blas_product(f, (PyArrayObject *)factors[0], (PyArrayObject *)factors[1]);
    if (product == NULL && !PyErr_Occurred()) product = PyObject_Vectorcall(f->ufunc, factors, 2, NULL);
    Py_DECREF(factors[0]);
    Py_DECREF(factors[1]);
    if (product == NULL) return NULL;
    int status = 0;
    if (scales) {   /* (product *= alpha) */
        PyObject *scaling[3] = {product, alpha, product};
        PyObject *r = PyObject_Vectorcall(numpy_multiply, scaling, 3, NULL);
        status = r == NULL ? -1 : 0;
        Py_XDECREF(r);
    }
    if (status == 0 && !ignores) {   /* (product += input, or input * beta) */
        PyObject *weighting[2] = {(PyObject *)arrays[0], beta};
        PyObject *term = weights ? PyObject_Vectorcall(numpy_multiply, weighting, 2, NULL) : Py_NewRef(arrays[0]);
        PyObject *terms[3] = {product, term, product};
        PyObject *r = term == NULL ? NULL : PyObject_Vectorcall(numpy_add, terms, 3, NULL);
        status = r == NULL ? -1 : 0;
        Py_XDECREF(term);
        Py_XDECREF(r);
    }
    if (status < 0) {
        Py_DECREF(product);
        return NULL;
    }
    PyObject *out = make(product);
    if (out == NULL || !grad) return out;
    PyObject *inputs = PyTuple_Pack(3, args[0], args[1], args[2]);
    if (inputs == NULL) return with_node(out, NULL);
    PyObject *call[3] = {f->node_cls, inputs, out};
    PyObject *node = PyObject_Vectorcall(record, call, 3, NULL);
    Py_DECREF(inputs);
    if (node != NULL && node != Py_None && add_product_fields(node, args, arrays[0]) < 0) Py_CLEAR(node);
    return with_node(out, node);
}
#define OUTER_PRODUCTS(T)                                                                                  \
    static void outer_##T(const char *a, npy_intp sa, npy_intp m, const char *b, npy_intp sb, npy_intp n,  \
                          T *out) {                                                                        \
        for (npy_intp i = 0; i < m; i++) {                                                                 \
            T ai = *(const T *)(a + i * sa);                                                               \
            for (npy_intp j = 0; j < n; j++) out[i * n + j] = ai * *(const T *)(b + j * sb);               \
        }                                                                                                  \
    }
OUTER_PRODUCTS(float)
OUTER_PRODUCTS(double)

/* ``outer(input, vec2)`` in the common case (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set to 0 where the case
   is not this one. */
static PyObject *outer_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *v[2];
    for (int i = 0; i < 2; i++) {
        v[i] = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (v[i] == NULL || (PyArray_TYPE(v[i]) != NPY_FLOAT32 && PyArray_TYPE(v[i]) != NPY_FLOAT64)
                || PyArray_TYPE(v[i]) != PyArray_TYPE(v[0]) || PyArray_NDIM(v[i]) != 1 || PyArray_SIZE(v[i]) == 0
                || !PyArray_ISNOTSWAPPED(v[i]) || !PyArray_ISALIGNED(v[i]))
            return NULL;
    }
    npy_intp dims[2] = {PyArray_DIM(v[0], 0), PyArray_DIM(v[1], 0)};
    if ((double)dims[0] * (double)dims[1] * PyArray_ITEMSIZE(v[0]) >= (double)small_bytes) return NULL;
    int grad = any_requires_grad(args, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {   /* (tensors that require grad: the Python op's composite records) */
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *products = (PyArrayObject *)PyArray_SimpleNew(2, dims, PyArray_TYPE(v[0]));
    if (products == NULL) return NULL;
    if (PyArray_TYPE(v[0]) == NPY_FLOAT32)
        outer_float(PyArray_DATA(v[0]), PyArray_STRIDE(v[0], 0), dims[0], PyArray_DATA(v[1]),
                    PyArray_STRIDE(v[1], 0), dims[1], PyArray_DATA(products));
    else
        outer_double(PyArray_DATA(v[0]), PyArray_STRIDE(v[0], 0), dims[0], PyArray_DATA(v[1]),
                     PyArray_STRIDE(v[1], 0), dims[1], PyArray_DATA(products));
    return make((PyObject *)products);
}
/* (``PRODUCT(x, y)``: an int64's wraps around, as NumPy's) */
#define KRON_PRODUCTS(T, PRODUCT)                                                                          \
    static void kron_##T(const T *a, const npy_intp *a_shape, const T *b, const npy_intp *b_shape, int nd,  \
                         T *out) {                                                                         \
        npy_intp a_size = 1, b_size = 1, at[NPY_MAXDIMS], bt[NPY_MAXDIMS], strides[NPY_MAXDIMS];            \
        for (int d = 0; d < nd; d++) {                                                                     \
            a_size *= a_shape[d];                                                                          \
            b_size *= b_shape[d];                                                                          \
        }                                                                                                  \
        npy_intp stride = 1;                                                                               \
        for (int d = nd - 1; d >= 0; stride *= a_shape[d] * b_shape[d], d--) strides[d] = stride;          \
        memset(at, 0, sizeof(at));                                                                         \
        for (npy_intp i = 0; i < a_size; i++) {                                                            \
            npy_intp base = 0;                                                                             \
            for (int d = 0; d < nd; d++) base += at[d] * b_shape[d] * strides[d];                          \
            memset(bt, 0, sizeof(bt));                                                                     \
            for (npy_intp j = 0; j < b_size; j++) {                                                        \
                npy_intp offset = base;                                                                    \
                for (int d = 0; d < nd; d++) offset += bt[d] * strides[d];                                 \
                out[offset] = PRODUCT(a[i], b[j]);                                                         \
                for (int d = nd - 1; d >= 0 && ++bt[d] == b_shape[d]; d--) bt[d] = 0;                      \
            }                                                                                              \
            for (int d = nd - 1; d >= 0 && ++at[d] == a_shape[d]; d--) at[d] = 0;                          \
        }                                                                                                  \
    }
#define TIMES(x, y) ((x) * (y))
#define WRAPPING_TIMES(x, y) ((npy_int64)((npy_uint64)(x) * (npy_uint64)(y)))
KRON_PRODUCTS(float, TIMES)
KRON_PRODUCTS(double, TIMES)
KRON_PRODUCTS(npy_int64, WRAPPING_TIMES)

/* ``kron(input, other)`` in the common case (the module's docstring), no ``__torch_function__`` dispatch or
   forward-mode AD: a new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *kron_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *v[2];
    for (int i = 0; i < 2; i++) {
        v[i] = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (v[i] == NULL || (PyArray_TYPE(v[i]) != NPY_FLOAT32 && PyArray_TYPE(v[i]) != NPY_FLOAT64
                             && PyArray_TYPE(v[i]) != NPY_INT64)
                || PyArray_TYPE(v[i]) != PyArray_TYPE(v[0]) || PyArray_SIZE(v[i]) == 0 || !PyArray_ISNOTSWAPPED(v[i]))
            return NULL;
    }
    if ((double)PyArray_SIZE(v[0]) * (double)PyArray_SIZE(v[1]) >= (double)f->max_elements) return NULL;
    int grad = any_requires_grad(args, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {   /* (tensors that require grad: the Python op's composite records) */
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    *handled = 1;
    int nd = PyArray_NDIM(v[0]) > PyArray_NDIM(v[1]) ? PyArray_NDIM(v[0]) : PyArray_NDIM(v[1]);
    npy_intp a_shape[NPY_MAXDIMS], b_shape[NPY_MAXDIMS], dims[NPY_MAXDIMS];
    for (int d = 0; d < nd; d++) {   /* (the smaller rank padded with leading ones) */
        int i = d - (nd - PyArray_NDIM(v[0])), j = d - (nd - PyArray_NDIM(v[1]));
        a_shape[d] = i < 0 ? 1 : PyArray_DIM(v[0], i);
        b_shape[d] = j < 0 ? 1 : PyArray_DIM(v[1], j);
        dims[d] = a_shape[d] * b_shape[d];
    }
    int type = PyArray_TYPE(v[0]);
    PyArrayObject *a = (PyArrayObject *)PyArray_GETCONTIGUOUS(v[0]);
    PyArrayObject *b = a == NULL ? NULL : (PyArrayObject *)PyArray_GETCONTIGUOUS(v[1]);
    PyArrayObject *out = b == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, dims, type);
    if (out != NULL && type == NPY_FLOAT32)
        kron_float(PyArray_DATA(a), a_shape, PyArray_DATA(b), b_shape, nd, PyArray_DATA(out));
    else if (out != NULL && type == NPY_FLOAT64)
        kron_double(PyArray_DATA(a), a_shape, PyArray_DATA(b), b_shape, nd, PyArray_DATA(out));
    else if (out != NULL)
        kron_npy_int64(PyArray_DATA(a), a_shape, PyArray_DATA(b), b_shape, nd, PyArray_DATA(out));
    Py_XDECREF(a);
    Py_XDECREF(b);
    return out == NULL ? NULL : make((PyObject *)out);
}
/* ``openmp_kernels``' rank-one update loop (``RANK_ONE``): arrays a, b, d (NULL: none), out; sizes n, m
   and d's row and column strides in elements; scalars alpha and beta; threads. */
typedef void (*rank_one_loop)(void **, const int64_t *, const double *, int);

/* ``addr(input, vec1, vec2, beta, alpha)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: a new tensor, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. */
static PyObject *rank_one_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (v[i] == NULL || (PyArray_TYPE(v[i]) != NPY_FLOAT32 && PyArray_TYPE(v[i]) != NPY_FLOAT64)
                || PyArray_TYPE(v[i]) != PyArray_TYPE(v[0]) || !PyArray_ISNOTSWAPPED(v[i]) || !PyArray_ISALIGNED(v[i]))
            return NULL;
    }
    PyObject *beta = args[3], *alpha = args[4];
    if (PyArray_NDIM(v[1]) != 1 || PyArray_NDIM(v[2]) != 1 || PyArray_SIZE(v[1]) == 0 || PyArray_SIZE(v[2]) == 0
            || !(PyFloat_CheckExact(beta) || PyLong_CheckExact(beta))
            || !(PyFloat_CheckExact(alpha) || PyLong_CheckExact(alpha)) || f->loops[0] == NULL)
        return NULL;
    int type = PyArray_TYPE(v[0]);
    npy_intp itemsize = PyArray_ITEMSIZE(v[0]), dims[2] = {PyArray_DIM(v[1], 0), PyArray_DIM(v[2], 0)};
    if ((double)dims[0] * (double)dims[1] * itemsize >= (double)small_bytes) return NULL;
    double b = PyFloat_AsDouble(beta), a = PyFloat_AsDouble(alpha);
    if ((b == -1.0 || a == -1.0) && PyErr_Occurred()) {   /* (an int beyond a double's range) */
        PyErr_Clear();
        return NULL;
    }
    /* the input's strides in elements over the result's two dims (0 where it broadcasts) */
    int64_t strides[2] = {0, 0};
    PyArrayObject *d = b == 0 ? NULL : v[0];
    for (int k = 0; d != NULL && k < PyArray_NDIM(d); k++) {
        int axis = 2 - PyArray_NDIM(d) + k;
        npy_intp size = PyArray_DIM(d, k), stride = PyArray_STRIDE(d, k);
        if (PyArray_NDIM(d) > 2 || (size != 1 && (size != dims[axis] || stride % itemsize))) return NULL;
        if (size != 1) strides[axis] = stride / itemsize;
    }
    if (PyArray_NDIM(v[0]) > 2) return NULL;
    int grad = any_requires_grad(args, 3);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {   /* (tensors that require grad: the Python op records) */
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    PyObject *counter = PyObject_GetAttr(f->flop_hook, s_counter);   /* (counting: the Python op) */
    int counting = counter != Py_None;
    Py_XDECREF(counter);
    if (counter == NULL) *handled = 1;
    if (counter == NULL || counting) return NULL;
    *handled = 1;
    PyArrayObject *a1 = (PyArrayObject *)PyArray_GETCONTIGUOUS(v[1]);
    PyArrayObject *a2 = (PyArrayObject *)PyArray_GETCONTIGUOUS(v[2]);
    PyArrayObject *products = a1 == NULL || a2 == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(2, dims, type);
    if (products != NULL) {
        void *arrays[4] = {PyArray_DATA(a1), PyArray_DATA(a2), d == NULL ? NULL : PyArray_DATA(d),
                           PyArray_DATA(products)};
        int64_t sizes[4] = {dims[0], dims[1], strides[0], strides[1]};
        double scalars[2] = {a, b};
        ((rank_one_loop)f->loops[type == NPY_FLOAT64])(arrays, sizes, scalars, 1);
    }
    Py_XDECREF(a1);
    Py_XDECREF(a2);
    return products == NULL ? NULL : make((PyObject *)products);
}
'''
