"""The compiled functions (``_compiled_functions``) of the products added to a tensor, kind
"add_product": ``addmm(input, mat1, mat2)``, ``addmv(input, mat, vec)`` and ``baddbmm(input,
batch1, batch2)`` with ``beta`` and ``alpha`` 1, of small float32 or float64 tensors of one dtype:
NumPy's matmul called from C on the two factors (below the size from which the Python op's
product may take another kernel), then the input added into the product by NumPy's ``add``, as
``linalg._add_product`` and ``_scale_sum`` compute them; the node recorded as ``_add_product``
records it (the factors saved, ``beta``, ``alpha`` and the input's shape). Every other case
(other coefficients, an input that does not broadcast to the product, a FLOP counter counting,
factors with an inner size of 1, which the Python op multiplies) goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* The shape of the product of ``x`` and ``y`` where they are ``f``'s operands (``enum product_operands``:
   matrices, batches of them or a matrix and a vector) with elements and an inner size that
   ``products.matmul`` leaves to NumPy's matmul (and does not multiply, as for an inner size of 1
   between matrices): its number of dims, or 0. */
static int product_shape(Function *f, PyArrayObject *x, PyArrayObject *y, npy_intp *shape) {
    int xd = PyArray_NDIM(x), yd = PyArray_NDIM(y), p = f->product_operands;
    int ranks = p == MATRICES ? xd == 2 && yd == 2
                : p == BATCHES ? xd == 3 && yd == 3 && PyArray_DIM(x, 0) == PyArray_DIM(y, 0)
                : p == MATRIX_VECTOR && xd == 2 && yd == 1;
    if (!ranks || PyArray_SIZE(x) == 0 || PyArray_SIZE(y) == 0) return 0;
    npy_intp k = PyArray_DIM(x, xd - 1);
    if (k != PyArray_DIM(y, yd == 1 ? 0 : yd - 2) || (k == 1 && yd > 1)
            || (double)PyArray_SIZE(x) * (double)PyArray_SIZE(y) >= (double)f->max_elements)
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

/* The node's fields as ``linalg._add_product`` sets them: the factors saved, ``beta`` and ``alpha`` (1)
   and the input's shape. 0, or -1 on error. */
static int add_product_fields(PyObject *node, PyObject *const *args, PyArrayObject *bias) {
    PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(bias), PyArray_DIMS(bias));
    PyObject *one = PyLong_FromLong(1);
    int status = shape == NULL || one == NULL || PyObject_SetAttrString(node, "beta", one) < 0
                 || PyObject_SetAttrString(node, "alpha", one) < 0
                 || PyObject_SetAttrString(node, "in_shape", shape) < 0 ? -1 : 0;
    Py_XDECREF(shape);
    Py_XDECREF(one);
    if (status < 0) return -1;
    PyObject *r = PyObject_CallMethodObjArgs(node, s_save, args[1], args[2], NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
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
                || PyArray_NBYTES(a) >= small_bytes)
            return NULL;
        arrays[i] = a;
    }
    npy_intp shape[3];
    int nd = product_shape(f, arrays[1], arrays[2], shape);
    if (nd == 0 || !broadcasts_to_product(arrays[0], shape, nd)) return NULL;
    int grad = 0;
    for (int i = 0; i < 3 && grad >= 0; i++) {
        int r = requires_grad(args[i]);
        grad = r < 0 ? -1 : grad | r;
    }
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
    PyObject *factors[2] = {(PyObject *)arrays[1], (PyObject *)arrays[2]};
    PyObject *product = PyObject_Vectorcall(f->ufunc, factors, 2, NULL);
    if (product == NULL) return NULL;
    PyObject *terms[3] = {product, (PyObject *)arrays[0], product};   /* (product += input) */
    PyObject *sum = PyObject_Vectorcall(numpy_add, terms, 3, NULL);
    if (sum == NULL) {
        Py_DECREF(product);
        return NULL;
    }
    Py_DECREF(sum);
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
'''
