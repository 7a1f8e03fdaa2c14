"""The compiled functions (``_compiled_functions``) of the singular value and symmetric eigenvalue
decompositions.

Kind "svd": ``linalg.svd(A, full_matrices)``, ``linalg.svdvals(A)`` and ``svd(A, some, compute_uv)`` (no
``out``; the flags bools), one function for each form and job, of a small float32 or float64 tensor of two
or more dims with elements, every number finite, where nothing records: ``openmp_kernels``' gesdd driver
(its address, and that of LAPACK's gesdd it calls, given at the first call) on the matrices, as
``lapack.gesdd`` calls it, so the same bits; ``linalg.svd``'s U, S and Vh in its result type,
``svdvals``' S, ``svd``'s U, S and V (a view of Vh, its last two dims swapped) in its result type, or,
without ``compute_uv``, zeros for U (m x m) and V (n x n). A matrix that does not converge, or a tensor
holding NaN or an infinity (the Python op's error, or its NaN factors), goes to the Python op.

Kind "eigh": ``linalg.eigh(A, UPLO)`` and ``linalg.eigvalsh(A, UPLO)`` (no ``out``; ``UPLO`` "L" or "U"),
one function for each, of a small float32 or float64 tensor of square matrices with elements, where
nothing records: ``openmp_kernels``' syevd driver (its address, and that of LAPACK's syevd it calls, given
at the first call) reading the triangle ``UPLO`` names, as ``lapack.syevd`` calls it, so the same bits;
``eigh``'s eigenvalues and eigenvectors in its result type, ``eigvalsh``'s eigenvalues. A matrix that
does not converge goes to the Python op, which raises.

Kind "orgqr": ``linalg.householder_product(A, tau)`` and ``orgqr(A, tau)`` (no ``out``) of a small float32
or float64 tensor of m x n matrices (m >= n, elements) and scales of its dtype and batch shape (k <= n),
where nothing records: ``openmp_kernels``' orgqr driver (its address, and that of LAPACK's orgqr it calls,
given at the first call) on the matrices, as ``lapack.orgqr`` calls it, so the same bits. Every other case
goes to the Python op, which raises the errors.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations and
# ``_compiled_factorizations``' helpers)
SOURCE = r'''
/* the forms of a decomposition's function: linalg.svd's, svdvals', svd's with U and V, svd's without them;
   eigh's, eigvalsh's */
enum decomposition_form { LINALG_SVD, SVD_VALUES, TORCH_SVD, TORCH_SVD_NO_UV, EIGH_VECTORS, EIGH_VALUES };

/* Whether every number of the float32 or float64 array ``a`` is finite. */
static int all_finite(PyArrayObject *a) {
    NpyIter *iter = NpyIter_New(a, NPY_ITER_READONLY | NPY_ITER_EXTERNAL_LOOP | NPY_ITER_REFS_OK, NPY_KEEPORDER,
                                NPY_NO_CASTING, NULL);
    if (iter == NULL) {
        PyErr_Clear();
        return 0;
    }
    NpyIter_IterNextFunc *next = NpyIter_GetIterNext(iter, NULL);
    char **data = NpyIter_GetDataPtrArray(iter);
    npy_intp *stride = NpyIter_GetInnerStrideArray(iter), *size = NpyIter_GetInnerLoopSizePtr(iter);
    int wide = PyArray_TYPE(a) == NPY_FLOAT64, finite = next != NULL;
    if (finite) {
        do {
            const char *p = data[0];
            for (npy_intp i = 0; i < *size && finite; i++, p += stride[0])
                finite = wide ? isfinite(*(const double *)p) : isfinite(*(const float *)p);
        } while (finite && next(iter));
    }
    NpyIter_Deallocate(iter);
    return finite;
}

/* The dims of ``a``'s batch with its last two replaced by ``rows`` and ``columns`` (``columns`` < 0: one
   last dim of ``rows``) in ``dims``: their count. */
static int batch_dims(PyArrayObject *a, npy_intp rows, npy_intp columns, npy_intp *dims) {
    int nd = PyArray_NDIM(a);
    for (int i = 0; i < nd - 2; i++) dims[i] = PyArray_DIM(a, i);
    dims[nd - 2] = rows;
    if (columns < 0) return nd - 1;
    dims[nd - 1] = columns;
    return nd;
}

/* A decomposition driver's status (``openmp_kernels``' small_gesdd and small_syevd): 0 where it
   succeeded; -1 with MemoryError set where memory ran out; 1 where a matrix did not converge (the
   Python op then raises or computes otherwise). */
static int driver_failed(const int64_t *status) {
    if (status[0]) {
        PyErr_SetString(PyExc_MemoryError, "out of memory for LAPACK's workspace");
        return -1;
    }
    return status[1] != 0;
}

/* The driver of ``f``'s dtype (``wide``: float64's) on ``arrays`` and ``sizes``, the GIL released, then its
   ``status`` (``driver_failed``'s). */
static int run_driver(Function *f, int wide, void **arrays, int64_t *sizes, const int64_t *status) {
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    Py_END_ALLOW_THREADS
    return driver_failed(status);
}

/* ``svd``'s result in its result type: U and S made tensors, V a view of Vh (made a tensor) with its last
   two dims swapped, or, where ``vh`` is NULL, U and V made tensors as they are; the arrays are taken over.
   NULL on error. */
static PyObject *torch_svd_result(PyObject *result_type, PyArrayObject *u, PyArrayObject *s, PyArrayObject *v,
                                  PyArrayObject *vh) {
    PyObject *parts[3] = {make((PyObject *)u), make((PyObject *)s), NULL};
    if (vh != NULL) {
        PyObject *vh_tensor = make((PyObject *)vh);
        int nd = PyArray_NDIM(vh);
        PyObject *swapped = vh_tensor == NULL ? NULL : PyArray_SwapAxes(vh, nd - 2, nd - 1);
        parts[2] = swapped == NULL ? NULL : make_view(swapped, vh_tensor);
        Py_XDECREF(vh_tensor);
    } else {
        parts[2] = make((PyObject *)v);
    }
    PyObject *result = parts[0] != NULL && parts[1] != NULL && parts[2] != NULL
        ? PyObject_Vectorcall(result_type, parts, 3, NULL) : NULL;
    for (int i = 0; i < 3; i++) Py_XDECREF(parts[i]);
    return result;
}

/* ``linalg.svd``, ``svdvals`` or ``svd`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. */
static PyObject *svd_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int type = PyArray_TYPE(a), nd = PyArray_NDIM(a), wide = type == NPY_FLOAT64;
    if (f->lapack_routines[wide] == NULL || !records_nothing(args, 1, handled) || !all_finite(a))
        return NULL;   /* (NaN or an infinity: the Python op's error, or its NaN factors) */
    *handled = 1;
    npy_intp m = PyArray_DIM(a, nd - 2), n = PyArray_DIM(a, nd - 1), k = m < n ? m : n, count = 1;
    for (int i = 0; i < nd - 2; i++) count *= PyArray_DIM(a, i);
    int job = f->lapack_job;   /* (gesdd's: 0 "N", 1 "S", 2 "A") */
    npy_intp s_dims[NPY_MAXDIMS], u_dims[NPY_MAXDIMS], vh_dims[NPY_MAXDIMS];
    batch_dims(a, k, -1, s_dims);
    batch_dims(a, m, job == 2 ? m : k, u_dims);
    batch_dims(a, job == 2 ? n : k, n, vh_dims);
    PyArrayObject *matrices = (PyArrayObject *)PyArray_GETCONTIGUOUS(a);
    PyArrayObject *s = matrices == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd - 1, s_dims, type);
    PyArrayObject *u = s == NULL || !job ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, u_dims, type);
    PyArrayObject *vh = u == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, vh_dims, type);
    if (s == NULL || (job && vh == NULL)) {
        Py_XDECREF(matrices);
        Py_XDECREF(s);
        Py_XDECREF(u);
        return NULL;
    }
    int64_t status[2] = {0, 0};
    void *arrays[6] = {PyArray_DATA(matrices), PyArray_DATA(s), job ? PyArray_DATA(u) : NULL,
                       job ? PyArray_DATA(vh) : NULL, f->lapack_routines[wide], status};
    int64_t sizes[5] = {count, m, n, job, f->ilp64};
    int failed = run_driver(f, wide, arrays, sizes, status);
    Py_DECREF(matrices);
    if (failed) {
        Py_DECREF(s);
        Py_XDECREF(u);
        Py_XDECREF(vh);
        *handled = failed < 0;   /* (a matrix that did not converge: the Python op's error) */
        return NULL;
    }
    if (f->form == SVD_VALUES) return make((PyObject *)s);
    if (f->form == LINALG_SVD) {
        PyObject *parts[3] = {(PyObject *)u, (PyObject *)s, (PyObject *)vh};
        return result_of(f->result_type, parts, 3, 3);
    }
    if (f->form == TORCH_SVD) return torch_svd_result(f->result_type, u, s, NULL, vh);
    batch_dims(a, m, m, u_dims);   /* (svd without compute_uv: zeros for U and V) */
    batch_dims(a, n, n, vh_dims);
    u = (PyArrayObject *)PyArray_ZEROS(nd, u_dims, type, 0);
    PyArrayObject *v = u == NULL ? NULL : (PyArrayObject *)PyArray_ZEROS(nd, vh_dims, type, 0);
    if (v == NULL) {
        Py_DECREF(s);
        Py_XDECREF(u);
        return NULL;
    }
    return torch_svd_result(f->result_type, u, s, v, NULL);
}

/* ``linalg.eigh`` or ``eigvalsh`` in the common case (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled`` set to 0 where the case is
   not this one. */
static PyObject *eigh_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    if (a == NULL) return NULL;
    int type = PyArray_TYPE(a), nd = PyArray_NDIM(a), wide = type == NPY_FLOAT64;
    npy_intp n = PyArray_DIM(a, nd - 1), count = 1, w_dims[NPY_MAXDIMS];
    if (PyArray_DIM(a, nd - 2) != n || f->lapack_routines[wide] == NULL || !records_nothing(args, 1, handled))
        return NULL;
    *handled = 1;
    for (int i = 0; i < nd - 2; i++) count *= PyArray_DIM(a, i);
    int vectors = f->form == EIGH_VECTORS;
    batch_dims(a, n, -1, w_dims);
    PyArrayObject *matrices = (PyArrayObject *)PyArray_GETCONTIGUOUS(a);
    PyArrayObject *w = matrices == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd - 1, w_dims, type);
    PyArrayObject *v = w == NULL || !vectors ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(a), type);
    if (w == NULL || (vectors && v == NULL)) {
        Py_XDECREF(matrices);
        Py_XDECREF(w);
        return NULL;
    }
    int64_t status[2] = {0, 0};
    void *arrays[5] = {PyArray_DATA(matrices), PyArray_DATA(w), vectors ? PyArray_DATA(v) : NULL,
                       f->lapack_routines[wide], status};
    int64_t sizes[5] = {count, n, vectors, f->lapack_job, f->ilp64};   /* (syevd's uplo: 1 "L", 0 "U") */
    int failed = run_driver(f, wide, arrays, sizes, status);
    Py_DECREF(matrices);
    if (failed) {
        Py_DECREF(w);
        Py_XDECREF(v);
        *handled = failed < 0;   /* (a matrix that did not converge: the Python op's error) */
        return NULL;
    }
    if (!vectors) return make((PyObject *)w);
    PyObject *parts[2] = {(PyObject *)w, (PyObject *)v};
    return result_of(f->result_type, parts, 2, 2);
}

/* ``linalg.householder_product(A, tau)`` or ``orgqr(A, tau)`` in the common case (the module's docstring), no
   ``__torch_function__`` dispatch or forward-mode AD: the op's result, NULL on error, or ``*handled`` set to 0
   where the case is not this one. */
static PyObject *orgqr_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *a = small_float_matrices(f, args[0]);
    PyArrayObject *tau = a != NULL && Py_TYPE(args[1]) == TensorType ? array_of(args[1]) : NULL;
    if (tau == NULL) return NULL;
    int type = PyArray_TYPE(a), nd = PyArray_NDIM(a), wide = type == NPY_FLOAT64;
    npy_intp m = PyArray_DIM(a, nd - 2), n = PyArray_DIM(a, nd - 1), count = 1;
    if (PyArray_TYPE(tau) != type || !PyArray_ISNOTSWAPPED(tau) || PyArray_NDIM(tau) != nd - 1 || m < n
            || PyArray_DIM(tau, nd - 2) > n || f->lapack_routines[wide] == NULL)
        return NULL;
    for (int i = 0; i < nd - 2; i++) {
        if (PyArray_DIM(tau, i) != PyArray_DIM(a, i)) return NULL;
        count *= PyArray_DIM(a, i);
    }
    if (!records_nothing(args, 2, handled)) return NULL;
    *handled = 1;
    PyArrayObject *matrices = (PyArrayObject *)PyArray_GETCONTIGUOUS(a);
    PyArrayObject *scales = matrices == NULL ? NULL : (PyArrayObject *)PyArray_GETCONTIGUOUS(tau);
    PyArrayObject *q = scales == NULL ? NULL : (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(a), type);
    if (q == NULL) {
        Py_XDECREF(matrices);
        Py_XDECREF(scales);
        return NULL;
    }
    int64_t status = 0;
    void *arrays[5] = {PyArray_DATA(matrices), PyArray_DATA(scales), PyArray_DATA(q), f->lapack_routines[wide],
                       &status};
    int64_t sizes[5] = {count, m, n, PyArray_DIM(tau, nd - 2), f->ilp64};
    Py_BEGIN_ALLOW_THREADS
    ((factor_loop)f->loops[wide])(arrays, sizes, NULL, 1);
    Py_END_ALLOW_THREADS
    Py_DECREF(matrices);
    Py_DECREF(scales);
    if (status) {
        Py_DECREF(q);
        PyErr_SetString(PyExc_MemoryError, "out of memory for LAPACK's workspace");
        return NULL;
    }
    return make((PyObject *)q);
}
'''
