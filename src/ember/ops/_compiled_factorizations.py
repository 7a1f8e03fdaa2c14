"""The compiled functions (``_compiled_functions``) of the LU, QR, LDL and Cholesky factorizations
and of triangular solves.

Kind "lu_factor":
``linalg.lu_factor_ex(A)`` and ``linalg.lu_factor(A)`` (pivoting, no ``out``) of a small float32 or
float64 tensor of two or more dims with elements, where nothing records: a row-major copy of A
factored in place by ``openmp_kernels``' recursive LU (its address, and that of NumPy's CBLAS gemm
it calls, given at the first call), as ``lu.getrf`` factors it, so the same bits; the pivots
(1-based int32) and ``info`` as the Python op returns them, in its result type; ``linalg.lu(A)`` (pivoting,
no ``out``) the same factors unpacked into P, L and U by ``openmp_kernels``' unpacking loop, as the Python
op unpacks them. ``lu_factor``'s case
with a zero pivot (``info`` not 0) goes to the Python op, which raises. A tensor that requires grad
(the Python op records the node), and every other case, goes to the Python op.

Kind "qr": ``linalg.qr(A, mode)`` and ``qr(A, some)`` (no ``out``), one function for each mode, of a
small float32 or float64 tensor of two or more dims with elements, where nothing records:
``openmp_kernels``' QR driver (its address, and those of LAPACK's geqrf and orgqr it calls, given at
the first call) on each matrix, as ``lapack.qr`` calls it, so the same bits; Q (an empty tensor for
mode "r") and R in the op's result type. Every other case goes to the Python op.

Kind "lu_unpack": ``lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)`` (no ``out``), one function
for each pair of flags but (False, False), of a small float32 or float64 tensor of two or more dims with
elements and int32 pivots of its batch shape, each naming one of its rows, where nothing records:
``openmp_kernels``' unpacking loop, as the Python op calls it, the parts not asked for empty tensors, in
the op's result type. Every other case goes to the Python op, which raises the errors.

Kind "ldl_factor": ``linalg.ldl_factor_ex(A)`` and ``linalg.ldl_factor(A)`` (symmetric, no ``check_errors``
or ``out``) of a small float32 or float64 tensor of two or more dims with elements, where nothing records:
``openmp_kernels``' sytf2 loop on a row-major copy of A, its strict upper triangle then zeroed, as
``ldl.sytrf`` factors it, so the same bits; ``ldl_factor``'s case with a singular D (``info`` not 0) goes to
the Python op, which raises.

Kind "triangular_solve": ``triangular_solve(b, A, upper, transpose, unitriangular)`` and
``linalg.solve_triangular(A, B, upper=..., unitriangular=...)`` (left, no ``out``; the flags bools) of small
float32 or float64 tensors of one dtype and batch shape with elements, where nothing records:
``openmp_kernels``' recursive triangular solve on a row-major copy of b, A read where it lies (a matrix
stored column by column as its transpose), as ``triangular._substitute`` calls it, so the same bits;
``triangular_solve``'s copy of A beside the solution, in its result type. ``cholesky_solve(b, L,
upper)`` (called with ``upper`` as the transpose flag and False) is two such solves on the copy, the
second with the transpose flag turned, as ``triangular.cholesky_solve`` computes it. Every other case (a
batch that broadcasts among them) goes to the Python op.

Kind "cholesky": ``linalg.cholesky(A, upper=...)``, ``cholesky(A, upper)`` and ``linalg.cholesky_ex(A,
upper=...)`` (no ``check_errors`` or ``out``; ``upper`` a bool), one function for each, of a small float32
or float64 tensor of two or more dims with elements, where nothing records: ``openmp_kernels``' recursive
Cholesky factorization on a row-major copy of A, as ``_potrf`` calls it, so the same bits; the upper
factor a row-major copy of the lower one's transpose; ``cholesky_ex``'s ``info`` (zeros) beside it in its
result type. A matrix that is not positive-definite goes to the Python op (its error, or its ``info``).
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``openmp_kernels``' recursive LU loop (``RECURSIVE_LU``): arrays a (count row-major m x n matrices,
   factored in place), pivots, info, the gemm's address; sizes count, m, n, ilp64; no scalars; threads. */
typedef void (*factor_loop)(void **, const int64_t *, const double *, int);

/* ``t``'s array where ``t`` is a plain tensor of small float32 or float64 matrices (two or more dims, elements,
   native byte order) whose dtype's loop ``f`` has; NULL otherwise (no error set). */
static PyArrayObject *small_float_matrices(Function *f, PyObject *t) {
    PyArrayObject *a = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (a == NULL) return NULL;
    int type = PyArray_TYPE(a);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || PyArray_NDIM(a) < 2 || PyArray_SIZE(a) == 0
            || !PyArray_ISNOTSWAPPED(a) || PyArray_NBYTES(a) >= small_bytes || f->loops[type == NPY_FLOAT64] == NULL)
        return NULL;
    return a;
}

/* Whether nothing records a call on the first ``tensors`` of ``args``: none requires grad, no
   ``__torch_function__`` dispatch or forward-mode AD. Where something does, ``*handled`` is set where
   an error was raised (else the Python op runs). */
static int records_nothing(PyObject *const *args, int tensors, int *handled) {
    int grad = any_requires_grad(args, tensors);
    int plain = grad < 0 ? -1 : plain_mode();
    *handled = plain < 0 || grad < 0;
    return plain > 0 && !grad;
}

/* The arrays a case made released (``c`` may be NULL) and the case left to the Python op (``*handled`` 0),
   where a loop's ``info`` says the Python op raises or computes otherwise: NULL. */
static PyObject *declined(PyArrayObject *a, PyArrayObject *b, PyArrayObject *c, int *handled) {
    Py_DECREF(a);
    Py_DECREF(b);
    Py_XDECREF(c);
    *handled = 0;
    return NULL;
}

/* ``result_type(*tensors)`` of the first ``passed`` of ``count`` new arrays, each made a tensor (``make``
   takes every array, released here whatever happens): the op's result, NULL on error. */
static PyObject *result_of(PyObject *result_type, PyObject **arrays, int count, int passed) {
    int made = 1;
    for (int i = 0; i < count; i++) {
        arrays[i] = make(arrays[i]);
        made &= arrays[i] != NULL;
    }
    PyObject *result = made ? PyObject_Vectorcall(result_type, arrays, passed, NULL) : NULL;
    for (int i = 0; i < count; i++) Py_XDECREF(arrays[i]);
    return result;
}

/* Whether any of the ``count`` int32 ``info`` a loop gave is not 0 (a zero pivot, a singular D, a matrix
   that is not positive-definite). */
static int any_failed(PyArrayObject *info, npy_intp count) {
    const int32_t *found = PyArray_DATA(info);
    for (npy_intp i = 0; i < count; i++)
        if (found[i] != 0) return 1;
    return 0;
}

/* ``result_type(P, L, U)`` from the factors ``lu`` (count C-contiguous m x n matrices, the batch its leading
   dims) and their 1-based int32 ``pivots`` (each in 1..m), by ``openmp_kernels``' unpacking ``loop``
   (``LU_UNPACK``: arrays lu, pivots, P, L, U, the rows' order (int64 scratch), a part not asked for NULL;
   sizes count, m, n): P where ``permutation``, L and U where ``data``, each part not asked for an empty
   array of the dtype. NULL on error. */
static PyObject *unpacked_factors(void *loop, PyArrayObject *lu, const int32_t *pivots, int data, int permutation,
                                  PyObject *result_type) {
    int nd = PyArray_NDIM(lu), type = PyArray_TYPE(lu);
    npy_intp m = PyArray_DIM(lu, nd - 2), n = PyArray_DIM(lu, nd - 1), k = m < n ? m : n, count = 1, none = 0;
    npy_intp p_dims[NPY_MAXDIMS], l_dims[NPY_MAXDIMS], u_dims[NPY_MAXDIMS];
    for (int i = 0; i < nd - 2; i++) {
        p_dims[i] = l_dims[i] = u_dims[i] = PyArray_DIM(lu, i);
        count *= p_dims[i];
    }
    p_dims[nd - 2] = p_dims[nd - 1] = l_dims[nd - 2] = m;
    l_dims[nd - 1] = u_dims[nd - 2] = k;
    u_dims[nd - 1] = n;
    PyObject *parts[3] = {PyArray_SimpleNew(permutation ? nd : 1, permutation ? p_dims : &none, type),
                          PyArray_SimpleNew(data ? nd : 1, data ? l_dims : &none, type),
                          PyArray_SimpleNew(data ? nd : 1, data ? u_dims : &none, type)};
    PyArrayObject *order = permutation ? (PyArrayObject *)PyArray_SimpleNew(nd - 1, p_dims, NPY_INT64) : NULL;
    if (parts[0] != NULL && parts[1] != NULL && parts[2] != NULL && (order != NULL || !permutation)) {
        void *arrays[6] = {PyArray_DATA(lu), (void *)pivots,
                           permutation ? PyArray_DATA((PyArrayObject *)parts[0]) : NULL,
                           data ? PyArray_DATA((PyArrayObject *)parts[1]) : NULL,
                           data ? PyArray_DATA((PyArrayObject *)parts[2]) : NULL,
                           permutation ? PyArray_DATA(order) : NULL};
        int64_t sizes[3] = {count, m, n};
        ((factor_loop)loop)(arrays, sizes, NULL, 1);
        Py_XDECREF(order);
        return result_of(result_type, parts, 3, 3);
    }
    for (int i = 0; i < 3; i++) Py_XDECREF(parts[i]);
    Py_XDECREF(order);
    return NULL;
}

/* ``lu_factor_ex(A)`` or ``lu_factor(A)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled``
   set to 0 where the case is not this one. */
static PyObject *lu_factor_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int nd = PyArray_NDIM(a), wide = PyArray_TYPE(a) == NPY_FLOAT64;
    if (f->gemms[wide] == NULL || (f->unpacks && f->unpack_loops[wide] == NULL)
            || !records_nothing(args, 1, handled))   /* (a tensor that requires grad: the Python op records) */
        return NULL;
    *handled = 1;
    npy_intp m = PyArray_DIM(a, nd - 2), n = PyArray_DIM(a, nd - 1), count = 1, dims[NPY_MAXDIMS];
    for (int i = 0; i < nd - 2; i++) {
        dims[i] = PyArray_DIM(a, i);
        count *= dims[i];
    }
    dims[nd - 2] = m < n ? m : n;
    PyArrayObject *lu = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
    PyArrayObject *pivots = lu == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd - 1, dims, NPY_INT32);
    PyArrayObject *info = pivots == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(nd - 2, dims, NPY_INT32, 0);
    if (info == NULL) {
        Py_XDECREF(lu);
        Py_XDECREF(pivots);
        return NULL;
    }
    void *arrays[4] = {PyArray_DATA(lu), PyArray_DATA(pivots), PyArray_DATA(info), f->gemms[wide]};
    int64_t sizes[4] = {count, m, n, f->ilp64};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    Py_END_ALLOW_THREADS
    if (f->checks_errors && any_failed(info, count))   /* (lu_factor's error: the Python op raises it) */
        return declined(lu, pivots, info, handled);
    if (f->unpacks) {   /* (linalg.lu's P, L and U) */
        PyObject *result = unpacked_factors(f->unpack_loops[wide], lu, PyArray_DATA(pivots), 1, 1, f->result_type);
        Py_DECREF(lu);
        Py_DECREF(pivots);
        Py_DECREF(info);
        return result;
    }
    PyObject *parts[3] = {(PyObject *)lu, (PyObject *)pivots, (PyObject *)info};
    return result_of(f->result_type, parts, 3, f->checks_errors ? 2 : 3);
}

enum qr_mode { REDUCED_QR, COMPLETE_QR, R_ONLY_QR };

/* ``linalg.qr(A, mode)`` or ``qr(A, some)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled``
   set to 0 where the case is not this one. */
static PyObject *qr_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int type = PyArray_TYPE(a), nd = PyArray_NDIM(a), wide = type == NPY_FLOAT64, complete = f->qr_mode == COMPLETE_QR;
    if (f->geqrfs[wide] == NULL || (f->qr_mode != R_ONLY_QR && f->orgqrs[wide] == NULL)
            || !records_nothing(args, 1, handled))   /* (a tensor that requires grad: the Python op records) */
        return NULL;
    *handled = 1;
    npy_intp m = PyArray_DIM(a, nd - 2), n = PyArray_DIM(a, nd - 1), k = m < n ? m : n, count = 1;
    npy_intp r_dims[NPY_MAXDIMS], q_dims[NPY_MAXDIMS], no_q = 0;
    for (int i = 0; i < nd - 2; i++) {
        r_dims[i] = q_dims[i] = PyArray_DIM(a, i);
        count *= r_dims[i];
    }
    npy_intp rows = complete ? m : k, width = complete ? m : k;
    r_dims[nd - 2] = rows;
    r_dims[nd - 1] = n;
    q_dims[nd - 2] = m;
    q_dims[nd - 1] = width;
    PyArrayObject *matrices = (PyArrayObject *)PyArray_GETCONTIGUOUS(a);
    PyArrayObject *r = matrices == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, r_dims, type);
    int r_only = f->qr_mode == R_ONLY_QR;   /* (Q then an empty tensor) */
    PyArrayObject *q = r == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(r_only ? 1 : nd, r_only ? &no_q : q_dims,
                                                                           type);
    if (q == NULL) {
        Py_XDECREF(matrices);
        Py_XDECREF(r);
        return NULL;
    }
    int64_t status = 0;
    void *arrays[6] = {PyArray_DATA(matrices), PyArray_DATA(r), r_only ? NULL : PyArray_DATA(q), f->geqrfs[wide],
                       r_only ? NULL : f->orgqrs[wide], &status};
    int64_t sizes[6] = {count, m, n, rows, width, f->ilp64};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    Py_END_ALLOW_THREADS
    Py_DECREF(matrices);
    if (status) {
        Py_DECREF(r);
        Py_DECREF(q);
        PyErr_SetString(PyExc_MemoryError, "out of memory for LAPACK's workspace");
        return NULL;
    }
    PyObject *parts[2] = {(PyObject *)q, (PyObject *)r};
    return result_of(f->result_type, parts, 2, 2);
}

/* ``lu_unpack(LU_data, LU_pivots)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled``
   set to 0 where the case is not this one. */
static PyObject *lu_unpack_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    PyArrayObject *p = Py_TYPE(args[1]) == TensorType ? array_of(args[1]) : NULL;
    if (a == NULL || p == NULL) return NULL;
    int type = PyArray_TYPE(a), nd = PyArray_NDIM(a), wide = type == NPY_FLOAT64;
    if (PyArray_TYPE(p) != NPY_INT32 || PyArray_NDIM(p) != nd - 1 || !PyArray_IS_C_CONTIGUOUS(p)
            || !PyArray_ISNOTSWAPPED(p))
        return NULL;
    npy_intp m = PyArray_DIM(a, nd - 2), n = PyArray_DIM(a, nd - 1), k = m < n ? m : n, count = 1;
    for (int i = 0; i < nd - 2; i++) {
        if (PyArray_DIM(p, i) != PyArray_DIM(a, i)) return NULL;
        count *= PyArray_DIM(a, i);
    }
    if (PyArray_DIM(p, nd - 2) != k) return NULL;
    const int32_t *pivots = PyArray_DATA(p);
    for (npy_intp i = 0; i < count * k; i++)
        if (pivots[i] < 1 || pivots[i] > m) return NULL;   /* (the Python op's error) */
    if (!records_nothing(args, 1, handled)) return NULL;   /* (a tensor that requires grad: the Python op records) */
    *handled = 1;
    PyArrayObject *lu = (PyArrayObject *)PyArray_GETCONTIGUOUS(a);
    if (lu == NULL) return NULL;
    PyObject *result = unpacked_factors(f->loops[wide], lu, pivots, f->unpacks_data, f->unpacks_pivots,
                                        f->result_type);
    Py_DECREF(lu);
    return result;
}

/* ``linalg.ldl_factor_ex(A)`` or ``linalg.ldl_factor(A)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled`` set to
   0 where the case is not this one. The loop (``LDL_FACTOR``): arrays a (count row-major n x n matrices,
   factored in place), pivots, info; sizes count, n; scalars alpha. */
static PyObject *ldl_factor_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int nd = PyArray_NDIM(a), wide = PyArray_TYPE(a) == NPY_FLOAT64;
    if (PyArray_DIM(a, nd - 1) != PyArray_DIM(a, nd - 2)
            || !records_nothing(args, 1, handled))   /* (a tensor that requires grad: the Python op records) */
        return NULL;
    *handled = 1;
    npy_intp n = PyArray_DIM(a, nd - 1), count = 1, dims[NPY_MAXDIMS];
    for (int i = 0; i < nd - 2; i++) {
        dims[i] = PyArray_DIM(a, i);
        count *= dims[i];
    }
    dims[nd - 2] = n;
    PyArrayObject *ld = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
    PyArrayObject *pivots = ld == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(nd - 1, dims, NPY_INT32, 0);
    PyArrayObject *info = pivots == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(nd - 2, dims, NPY_INT32, 0);
    if (info == NULL) {
        Py_XDECREF(ld);
        Py_XDECREF(pivots);
        return NULL;
    }
    void *arrays[3] = {PyArray_DATA(ld), PyArray_DATA(pivots), PyArray_DATA(info)};
    int64_t sizes[2] = {count, n};
    double scalars[1] = {f->alpha};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, scalars, 1);
    Py_END_ALLOW_THREADS
    if (f->checks_errors && any_failed(info, count))   /* (ldl_factor's error: the Python op raises it) */
        return declined(ld, pivots, info, handled);
    char *base = PyArray_BYTES(ld);
    npy_intp item = PyArray_ITEMSIZE(ld);
    for (npy_intp b = 0; b < count; b++)   /* (the strict upper triangle zeroed: NumPy's tril) */
        for (npy_intp i = 0; i < n; i++)
            memset(base + ((b * n + i) * n + i + 1) * item, 0, (size_t)((n - 1 - i) * item));
    PyObject *parts[3] = {(PyObject *)ld, (PyObject *)pivots, (PyObject *)info};
    return result_of(f->result_type, parts, 3, f->checks_errors ? 2 : 3);
}

/* ``triangular_solve(b, A, upper, transpose, unitriangular)`` or ``linalg.solve_triangular``'s left solve
   in the common case (the module's docstring), no ``__torch_function__`` dispatch or forward-mode AD: the
   op's result, NULL on error, or ``*handled`` set to 0 where the case is not this one. The loop
   (``RECURSIVE_TRSM``): arrays a, b (solved in place), the gemm; sizes count, n, k, a's step between
   matrices, lower, transpose, unitriangular, ilp64. */
enum solve_form { PLAIN_SOLVE, SOLVE_WITH_CLONE, CHOLESKY_SOLVE };

static PyObject *triangular_solve_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    for (int i = 2; i < 5; i++)
        if (args[i] != Py_True && args[i] != Py_False) return NULL;
    PyArrayObject *b = small_float_matrices(f, args[0]), *a = small_float_matrices(f, args[1]);
    if (a == NULL || b == NULL) return NULL;
    int nd = PyArray_NDIM(a), wide = PyArray_TYPE(a) == NPY_FLOAT64;
    if (PyArray_TYPE(b) != PyArray_TYPE(a) || PyArray_NDIM(b) != nd || f->gemms[wide] == NULL) return NULL;
    npy_intp n = PyArray_DIM(a, nd - 1), k = PyArray_DIM(b, nd - 1), count = 1, item = PyArray_ITEMSIZE(a);
    if (PyArray_DIM(a, nd - 2) != n || PyArray_DIM(b, nd - 2) != n) return NULL;
    for (int i = 0; i < nd - 2; i++) {
        if (PyArray_DIM(a, i) != PyArray_DIM(b, i)) return NULL;
        count *= PyArray_DIM(a, i);
    }
    int upper = args[2] == Py_True, transpose = args[3] == Py_True, flipped = 0;
    npy_intp step = count > 1 ? n * n : 0;
    if (!PyArray_IS_C_CONTIGUOUS(a)) {   /* (a matrix stored column by column: its transpose, as trsm_recursive) */
        npy_intp s0 = PyArray_STRIDE(a, nd - 2), s1 = PyArray_STRIDE(a, nd - 1);
        if (s0 != item || s1 != n * item || (nd > 3 && count > 1) || n < 2) return NULL;
        if (nd == 3 && count > 1) {
            if (PyArray_STRIDE(a, 0) % item) return NULL;
            step = PyArray_STRIDE(a, 0) / item;
        }
        flipped = 1;
    }
    if (!records_nothing(args, 2, handled)) return NULL;   /* (a tensor that requires grad: the Python op records) */
    *handled = 1;
    if (flipped) {
        upper = !upper;
        transpose = !transpose;
    }
    PyArrayObject *x = (PyArrayObject *)PyArray_NewCopy(b, NPY_CORDER);
    if (x == NULL) return NULL;
    void *arrays[3] = {PyArray_DATA(a), PyArray_DATA(x), f->gemms[wide]};
    int64_t sizes[8] = {count, n, k, step, upper == transpose, transpose, args[4] == Py_True, f->ilp64};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    if (f->solve_form == CHOLESKY_SOLVE) {   /* (then the triangle's transpose: L^T X = Y, or U X = Y) */
        transpose = !transpose;
        sizes[4] = upper == transpose;
        sizes[5] = transpose;
        ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    }
    Py_END_ALLOW_THREADS
    PyObject *solution = make((PyObject *)x);
    if (solution == NULL || f->solve_form != SOLVE_WITH_CLONE) return solution;
    PyObject *clone = PyArray_NewCopy(a, NPY_KEEPORDER);
    PyObject *parts[2] = {solution, clone == NULL ? NULL : make(clone)};
    PyObject *result = parts[1] == NULL ? NULL : PyObject_Vectorcall(f->result_type, parts, 2, NULL);
    Py_DECREF(parts[0]);
    Py_XDECREF(parts[1]);
    return result;
}

/* ``linalg.cholesky``, ``cholesky`` or ``linalg.cholesky_ex`` in the common case (the module's docstring),
   no ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. The loop (``RECURSIVE_CHOLESKY``): arrays a (count row-major n x n
   matrices, factored in place), info, the gemm; sizes count, n, ilp64. */
static PyObject *cholesky_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int nd = PyArray_NDIM(a), wide = PyArray_TYPE(a) == NPY_FLOAT64;
    if (f->gemms[wide] == NULL || PyArray_DIM(a, nd - 1) != PyArray_DIM(a, nd - 2)
            || !records_nothing(args, 1, handled))   /* (a tensor that requires grad: the Python op records) */
        return NULL;
    *handled = 1;
    npy_intp n = PyArray_DIM(a, nd - 1), count = 1, dims[NPY_MAXDIMS];
    for (int i = 0; i < nd - 2; i++) {
        dims[i] = PyArray_DIM(a, i);
        count *= dims[i];
    }
    PyArrayObject *factor = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
    PyArrayObject *info = factor == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(nd - 2, dims, NPY_INT32, 0);
    if (info == NULL) {
        Py_XDECREF(factor);
        return NULL;
    }
    void *arrays[3] = {PyArray_DATA(factor), PyArray_DATA(info), f->gemms[wide]};
    int64_t sizes[3] = {count, n, f->ilp64};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    Py_END_ALLOW_THREADS
    if (any_failed(info, count))   /* (not positive-definite: the Python op raises, or gives its info) */
        return declined(factor, info, NULL, handled);
    if (f->upper_factor) {   /* (the lower factor's transpose, copied row-major, as ``_transposed``) */
        PyObject *swapped = PyArray_SwapAxes(factor, nd - 2, nd - 1);
        PyObject *upper = swapped == NULL ? NULL : PyArray_NewCopy((PyArrayObject *)swapped, NPY_CORDER);
        Py_XDECREF(swapped);
        Py_DECREF(factor);
        if (upper == NULL) {
            Py_DECREF(info);
            return NULL;
        }
        factor = (PyArrayObject *)upper;
    }
    if (!f->returns_info) {
        Py_DECREF(info);
        return make((PyObject *)factor);
    }
    PyObject *parts[2] = {(PyObject *)factor, (PyObject *)info};
    return result_of(f->result_type, parts, 2, 2);
}
'''
