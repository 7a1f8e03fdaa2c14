"""The compiled functions (``_compiled_functions``) of ``addcmul`` and ``addcdiv``, kind "addc", and
of ``lerp`` with a number weight, kind "lerp". ``addcmul`` and ``addcdiv``:
``input + value * tensor1 * tensor2`` (``/ tensor2``) of three float tensors of one dtype and shape (of up
to the function's ``max_elements``) and a number ``value``, in C, each step rounded to the dtype as
NumPy's passes of the Python op round it: ``tensor1 * value`` (``tensor1`` itself where ``value`` is 1),
times (divided by) ``tensor2``, plus ``input``. Where a step raises a floating-point exception other than
an inexact result (a division by zero, an invalid operation, an overflow or an underflow, on which NumPy
may warn or raise), the result is dropped and the Python op runs. ``lerp(input, end, weight)`` of two
float tensors of one dtype and shape (up to ``max_elements``) and a number weight the dtype holds, as
``ternary._lerp_in_passes`` computes it (``input + weight * (end - input)`` where ``|weight| <
0.5``, else ``end - (end - input) * (1 - weight)``, each step rounded to the dtype), the same
fallback. ``addcmul`` of three small tensors of one integer dtype (not bool) whose shapes broadcast
and an int value the dtype holds: each step wrapping around as the Python op's NumPy passes wrap
(computed in 64 bits, whose low bits are the dtype's). Every other case goes to the Python op.
"""

__all__ = ["SOURCE"]

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* Whether the first ``n`` of ``args`` are C-contiguous float32 or float64 tensors of one dtype and shape,
   with elements, at most ``most`` (their arrays into ``arrays``). */
static int same_float_tensors(PyObject *const *args, int n, PyArrayObject **arrays, npy_intp most) {
    for (int i = 0; i < n; i++) {
        PyArrayObject *a = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (a == NULL || (PyArray_TYPE(a) != NPY_FLOAT32 && PyArray_TYPE(a) != NPY_FLOAT64)
                || (i > 0 && (PyArray_TYPE(a) != PyArray_TYPE(arrays[0]) || PyArray_NDIM(a) != PyArray_NDIM(arrays[0])
                              || !PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(arrays[0]), PyArray_NDIM(a))))
                || !PyArray_ISNOTSWAPPED(a) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)
                || PyArray_SIZE(a) == 0 || PyArray_SIZE(a) > most)
            return 0;
        arrays[i] = a;
    }
    return 1;
}

/* ``s + (a * v) op b`` (``a`` alone where not ``scales``; op a product or, where ``divides``, a
   quotient) of ``n`` elements, each operation rounded to ``T`` (no fused multiply-add). */
#define ADDC_TERMS(T)                                                                                      \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void addc_##T(const T *s, const T *a, const T *b, T *out, npy_intp n, T v, int scales,        \
                         int divides) {                                                                    \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            T scaled = scales ? a[i] * v : a[i];                                                           \
            T term = divides ? scaled / b[i] : scaled * b[i];                                              \
            out[i] = s[i] + term;                                                                          \
        }                                                                                                  \
    }
ADDC_TERMS(float)
ADDC_TERMS(double)

/* ``value`` as the operands' ``type`` takes it (NumPy's weak Python number: converted to the dtype):
   a finite float that stays finite, or an int the dtype holds exactly. 1 with ``*v`` set, or 0. */
static int addc_value(PyObject *value, int type, double *v) {
    double limit = type == NPY_FLOAT32 ? 16777216.0 : 9007199254740992.0;
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long whole = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (whole == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        *v = (double)whole;
        return fabs(*v) <= limit;
    }
    if (!PyFloat_CheckExact(value)) return 0;
    *v = PyFloat_AS_DOUBLE(value);
    return isfinite(*v) && (type == NPY_FLOAT64 || isfinite((float)*v));
}

/* ``record(node_cls, (input, tensor1, tensor2), out)`` and the node's fields as ``ternary._addc`` sets
   them: ``value``, ``metas`` (each tensor's shape and dtype) and the saved ``tensor1`` and ``tensor2``.
   The node (a new reference; None where nothing is recorded), NULL on error. */
static PyObject *addc_node(Function *f, PyObject *const *args, PyArrayObject *x, PyObject *out) {
    PyObject *inputs = PyTuple_Pack(3, args[0], args[1], args[2]);
    if (inputs == NULL) return NULL;
    PyObject *call[3] = {f->node_cls, inputs, out};
    PyObject *node = PyObject_Vectorcall(record, call, 3, NULL);
    Py_DECREF(inputs);
    if (node == NULL || node == Py_None) return node;
    PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(x), PyArray_DIMS(x));
    PyObject *meta = shape == NULL ? NULL : PyTuple_Pack(2, shape, (PyObject *)PyArray_DESCR(x));
    PyObject *metas = meta == NULL ? NULL : PyTuple_Pack(3, meta, meta, meta);
    PyObject *r = metas == NULL || PyObject_SetAttrString(node, "value", args[3]) < 0
                  || PyObject_SetAttrString(node, "metas", metas) < 0
                  ? NULL : PyObject_CallMethodObjArgs(node, s_save, args[1], args[2], NULL);
    Py_XDECREF(shape);
    Py_XDECREF(meta);
    Py_XDECREF(metas);
    if (r == NULL) Py_CLEAR(node);
    Py_XDECREF(r);
    return node;
}

/* The low ``size`` bytes of the integer at ``p`` (any integer dtype) as a 64-bit unsigned number, and
   ``v``'s low bytes stored there: what wrapping arithmetic needs of them. */
static npy_uint64 integer_bits(const char *p, int size) {
    return size == 1 ? *(const npy_uint8 *)p : size == 2 ? *(const npy_uint16 *)p
           : size == 4 ? *(const npy_uint32 *)p : *(const npy_uint64 *)p;
}

static void store_integer_bits(char *p, int size, npy_uint64 v) {
    if (size == 1) *(npy_uint8 *)p = (npy_uint8)v;
    else if (size == 2) *(npy_uint16 *)p = (npy_uint16)v;
    else if (size == 4) *(npy_uint32 *)p = (npy_uint32)v;
    else *(npy_uint64 *)p = v;
}

/* ``addcmul(input, tensor1, tensor2, value)`` of three small tensors of one integer dtype (not bool) whose
   shapes broadcast and an int value the dtype holds (``_compiled_addc``). A new tensor, NULL on error, or
   ``*handled`` set to 0 where the case is not this one. */
static PyObject *integer_addcmul_case(PyObject *const *args, int *handled) {
    PyArrayObject *arrays[3];
    int nd = 0;
    for (int i = 0; i < 3; i++) {
        PyArrayObject *a = arrays[i] = Py_TYPE(args[i]) == TensorType ? array_of(args[i]) : NULL;
        if (a == NULL || !PyArray_ISINTEGER(a) || PyArray_TYPE(a) != PyArray_TYPE(arrays[0]) || !PyArray_ISNOTSWAPPED(a)
                || !PyArray_ISALIGNED(a) || PyArray_SIZE(a) == 0 || PyArray_NBYTES(a) >= small_bytes)
            return NULL;
        if (PyArray_NDIM(a) > nd) nd = PyArray_NDIM(a);
    }
    int size = (int)PyArray_ITEMSIZE(arrays[0]), bits = 8 * size;
    if (!PyLong_CheckExact(args[3])) return NULL;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(args[3], &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    int fits = PyArray_ISSIGNED(arrays[0]) ? bits == 64 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)))
               : v >= 0 && (bits == 64 || v < (1LL << bits));
    if (!fits) return NULL;
    /* the broadcast shape, and each operand's byte strides over it (0 where it broadcasts) */
    npy_intp shape[NPY_MAXDIMS], strides[3][NPY_MAXDIMS];
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
        for (int i = 0; i < 3; i++) {
            int k = d - (nd - PyArray_NDIM(arrays[i]));
            npy_intp n = k < 0 ? 1 : PyArray_DIM(arrays[i], k);
            if (n != 1 && shape[d] != 1 && n != shape[d]) return NULL;   /* (the Python op's error) */
            if (n != 1) shape[d] = n;
        }
        for (int i = 0; i < 3; i++) {
            int k = d - (nd - PyArray_NDIM(arrays[i]));
            strides[i][d] = k < 0 || PyArray_DIM(arrays[i], k) == 1 ? 0 : PyArray_STRIDE(arrays[i], k);
        }
    }
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(nd, shape, PyArray_TYPE(arrays[0]));
    if (values == NULL) return NULL;
    npy_intp at[NPY_MAXDIMS] = {0};
    char *to = PyArray_BYTES(values);
    for (npy_intp n = PyArray_SIZE(values); n > 0; n--, to += size, advance(at, shape, nd)) {
        npy_uint64 operand[3];
        for (int i = 0; i < 3; i++) {
            npy_intp offset = 0;
            for (int d = 0; d < nd; d++) offset += at[d] * strides[i][d];
            operand[i] = integer_bits(PyArray_BYTES(arrays[i]) + offset, size);
        }
        store_integer_bits(to, size, operand[0] + operand[1] * (npy_uint64)v * operand[2]);
    }
    return make((PyObject *)values);
}

/* ``addcmul(input, tensor1, tensor2, value)`` (``addcdiv``'s where ``f->divides``) in the common
   case: three C-contiguous float32 or float64 tensors of one dtype and shape, of at most
   ``f->max_elements`` elements (the Python op's loop on the threads takes more), a number value
   (``addc_value``), no ``__torch_function__`` dispatch or forward-mode AD, no floating-point
   exception. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *addc_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *first = Py_TYPE(args[0]) == TensorType ? array_of(args[0]) : NULL;
    if (!f->divides && first != NULL && PyArray_ISINTEGER(first)) return integer_addcmul_case(args, handled);
    PyArrayObject *arrays[3];
    if (!same_float_tensors(args, 3, arrays, f->max_elements)) return NULL;
    PyArrayObject *x = arrays[0];
    int type = PyArray_TYPE(x);
    double v;
    if (!addc_value(args[3], type, &v)) return NULL;
    int grad = any_requires_grad(args, 3);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), type);
    if (values == NULL) {
        *handled = 1;
        return NULL;
    }
    fenv_t outside;
    feholdexcept(&outside);
    if (type == NPY_FLOAT32)
        addc_float(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA(arrays[2]), PyArray_DATA(values),
                   PyArray_SIZE(x), (float)v, v != 1.0, f->divides);
    else
        addc_double(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA(arrays[2]), PyArray_DATA(values),
                    PyArray_SIZE(x), v, v != 1.0, f->divides);
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    if (raised) {   /* (the Python op's NumPy passes warn or raise as NumPy's settings say) */
        Py_DECREF(values);
        return NULL;
    }
    *handled = 1;
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    return with_node(out, addc_node(f, args, x, out));
}

/* ``lerp`` of ``n`` elements of ``a`` and ``b`` by ``w`` (``rest`` = 1 - w in double, rounded to ``T``):
   ``ternary._lerp_in_passes``' steps, each rounded to ``T``. */
#define LERP_STEPS(T)                                                                                      \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void lerp_##T(const T *a, const T *b, T *out, npy_intp n, T w, T rest, int small) {             \
        for (npy_intp i = 0; i < n; i++) {                                                                 \
            T diff = b[i] - a[i];                                                                          \
            out[i] = small ? diff * w + a[i] : b[i] - diff * rest;                                         \
        }                                                                                                  \
    }
LERP_STEPS(float)
LERP_STEPS(double)

/* ``lerp(input, end, weight)`` in the common case (the module's docstring), no ``__torch_function__``
   dispatch or forward-mode AD, no floating-point exception. The node recorded as ``ternary.lerp``
   records it (``weight``, ``metas``). A new tensor, NULL on error, or ``*handled`` set to 0 where the
   case is not this one. */
static PyObject *lerp_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *arrays[2];
    if (!same_float_tensors(args, 2, arrays, f->max_elements)) return NULL;
    PyArrayObject *x = arrays[0];
    int type = PyArray_TYPE(x);
    char weight[8], rest[8];
    if (!number_element(args[2], type, weight)) return NULL;
    double w = PyFloat_AsDouble(args[2]);
    PyObject *rest_number = PyFloat_FromDouble(1.0 - w);   /* (Python's 1 - w, then the dtype's) */
    int holds = rest_number != NULL && number_element(rest_number, type, rest);
    Py_XDECREF(rest_number);
    if (!holds) {
        *handled = PyErr_Occurred() != NULL;
        return NULL;
    }
    int grad = any_requires_grad(args, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), type);
    if (values == NULL) {
        *handled = 1;
        return NULL;
    }
    fenv_t outside;
    feholdexcept(&outside);
    if (type == NPY_FLOAT32)
        lerp_float(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA(values), PyArray_SIZE(x),
                   *(const float *)weight, *(const float *)rest, fabs(w) < 0.5);
    else
        lerp_double(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA(values), PyArray_SIZE(x),
                    *(const double *)weight, *(const double *)rest, fabs(w) < 0.5);
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    if (raised) {
        Py_DECREF(values);
        return NULL;
    }
    *handled = 1;
    PyObject *out = make((PyObject *)values);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], args[1], out);
    if (node != NULL && node != Py_None) {
        PyObject *shape = PyArray_IntTupleFromIntp(PyArray_NDIM(x), PyArray_DIMS(x));
        PyObject *meta = shape == NULL ? NULL : PyTuple_Pack(2, shape, (PyObject *)PyArray_DESCR(x));
        PyObject *metas = meta == NULL ? NULL : PyTuple_Pack(2, meta, meta);
        if (metas == NULL || PyObject_SetAttrString(node, "weight", args[2]) < 0
                || PyObject_SetAttrString(node, "metas", metas) < 0)
            Py_CLEAR(node);
        Py_XDECREF(shape);
        Py_XDECREF(meta);
        Py_XDECREF(metas);
    }
    return with_node(out, node);
}
'''
