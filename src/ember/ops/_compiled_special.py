"""The compiled functions (``_compiled_functions``) of ``ember.special``'s functions of two
arguments, kind "special": small float tensors on ``special_loops``' loops, as the Python ops run
them. Their forms:

- "tensors": ``gammainc``/``igamma``, ``gammaincc``/``igammac`` and ``zeta`` of two tensors of
  one float dtype and shape, on a loop ``loop(a, b, out, sizes, threads)`` of two float64 arrays
  (the float32 tensors' loop and the float64 tensors' loop), the float64 result narrowed to the
  tensors' dtype;
- "polygamma": ``polygamma(n, input)``: digamma's (n 0) or trigamma's (n 1) loop in the input's
  own precision, else Hurwitz's zeta loop at ``n + 1`` times ``(-1)**(n + 1) n!``, narrowed;
- "polynomial": an orthogonal polynomial of a tensor and a number (the degree), on its loop of
  the tensor's dtype.

Every other case goes to the Python op.
"""

__all__ = ["FORMS", "SOURCE"]

# the forms (``enum special_form`` in the C source)
FORMS = ("tensors", "polygamma", "polynomial")

# (in ``_compiled_methods``' extension, after ``_compiled_functions``' declarations)
SOURCE = r'''
/* ``ember.special``'s functions of two arguments (``_compiled_special``) on ``special_loops``' loops:
   of two float64 arrays read with steps ``loop(a, b, out, sizes, threads)`` (``sizes``: the count,
   each array's step, any flag), and of one array in its own precision ``loop(x, out, n, threads)``. */
typedef void (*pair_loop)(const void *, const void *, void *, const int64_t *, int);
typedef void (*own_precision_loop)(const void *, void *, int64_t, int);
enum special_form { TENSORS_FORM, POLYGAMMA_FORM, POLYNOMIAL_FORM };

/* The array of the tensor ``t`` where it is a special function's operand: small, C-contiguous,
   float32 or float64 (with ``converts``, also integers and bools, as a new array of the default
   float dtype), with elements. A new reference; NULL with no error set where it is not, NULL with
   an error on error. */
static PyArrayObject *special_operand(PyObject *t, int converts) {
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || !PyArray_ISNOTSWAPPED(x) || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x)
            || PyArray_SIZE(x) == 0 || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    int type = PyArray_TYPE(x);
    if (type == NPY_FLOAT32 || type == NPY_FLOAT64) return (PyArrayObject *)Py_NewRef(x);
    return converts && (PyArray_ISINTEGER(x) || PyArray_ISBOOL(x)) ? as_default_float(x) : NULL;
}

/* Whether the call may run here: the modes plain and the loops' kernel choice settled. 1 yes, 0
   no, -1 on error. */
static int special_settled(void) {
    int plain = plain_mode();
    if (plain <= 0) return plain;
    PyObject *settled = PyObject_CallNoArgs(choice_settled);
    int r = settled == NULL ? -1 : settled == Py_True;
    Py_XDECREF(settled);
    return r;
}

/* A new array of ``x``'s shape and of ``type``, NULL on error. */
static PyArrayObject *special_like(PyArrayObject *x, int type) {
    return (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(x), PyArray_DIMS(x), type);
}

/* The float64 array ``wide`` (a new one, stolen) as ``type``: itself, or each element cast (as
   NumPy's ``astype``, without its overflow warning: the Python ops ignore it). NULL on error. */
static PyObject *special_narrowed(PyArrayObject *wide, int type) {
    if (wide == NULL || type == NPY_FLOAT64) return (PyObject *)wide;
    PyArrayObject *narrow = special_like(wide, NPY_FLOAT32);
    if (narrow != NULL) {
        const double *from = PyArray_DATA(wide);
        float *to = PyArray_DATA(narrow);
        for (npy_intp i = 0, n = PyArray_SIZE(wide); i < n; i++) to[i] = (float)from[i];
    }
    Py_DECREF(wide);
    return (PyObject *)narrow;
}

/* ``loop`` of the float64 forms of ``a`` (NULL: the number ``number``) and of ``b`` into a new
   float64 array of ``b``'s shape, NULL on error. */
static PyArrayObject *special_pair(void *loop, PyArrayObject *a, double number, PyArrayObject *b, int64_t flag) {
    PyArrayObject *wide_a = a == NULL ? NULL : (PyArrayObject *)PyArray_FROMANY((PyObject *)a, NPY_FLOAT64, 0, 0,
                                                                                NPY_ARRAY_CARRAY);
    PyArrayObject *wide_b = (PyArrayObject *)PyArray_FROMANY((PyObject *)b, NPY_FLOAT64, 0, 0, NPY_ARRAY_CARRAY);
    PyArrayObject *out = (a != NULL && wide_a == NULL) || wide_b == NULL ? NULL : special_like(b, NPY_FLOAT64);
    if (out != NULL) {
        const int64_t sizes[4] = {PyArray_SIZE(b), a == NULL ? 0 : 1, 1, flag};
        ((pair_loop)loop)(a == NULL ? (void *)&number : PyArray_DATA(wide_a), PyArray_DATA(wide_b), PyArray_DATA(out),
                          sizes, 1);
    }
    Py_XDECREF(wide_a);
    Py_XDECREF(wide_b);
    return out;
}

/* ``f(input, other)`` of two tensors in the common case: one float dtype and shape, both
   ``special_operand``s of at most ``f->max_elements`` elements. The node recorded as
   ``pointwise._binary`` records it. */
static PyObject *special_tensors(Function *f, PyObject *const *args, int *handled) {
    PyArrayObject *x = special_operand(args[0], 0), *y = x == NULL ? NULL : special_operand(args[1], 0);
    PyObject *out = NULL;
    int type = x == NULL ? 0 : PyArray_TYPE(x);
    if (y != NULL && PyArray_TYPE(y) == type && PyArray_NDIM(y) == PyArray_NDIM(x)
            && PyArray_CompareLists(PyArray_DIMS(x), PyArray_DIMS(y), PyArray_NDIM(x))
            && PyArray_SIZE(x) <= f->max_elements && f->loops[type == NPY_FLOAT64] != NULL) {
        int grad = any_requires_grad(args, 2);
        int settled = grad < 0 ? -1 : special_settled();
        *handled = settled != 0;
        if (settled > 0) {
            out = special_narrowed(special_pair(f->loops[type == NPY_FLOAT64], x, 0.0, y, 0), type);
            out = out == NULL ? NULL : make(out);
            if (out != NULL && grad) {
                PyObject *node = record_node(f->node_cls, args[0], args[1], out);
                if (node != NULL && node != Py_None && function_fields(f, node, args, out) < 0) Py_CLEAR(node);
                out = with_node(out, node);
            }
        }
    }
    Py_XDECREF(x);
    Py_XDECREF(y);
    return out;
}

/* ``polygamma(n, input)`` in the common case: an int n below the count of ``f->factors`` and a
   ``special_operand`` (integers and bools as the default float dtype). The node recorded as
   ``special.polygamma`` records it. Zeta's loop takes at most ``f->max_elements`` elements. */
static PyObject *special_polygamma(Function *f, PyObject *const *args, int *handled) {
    if (!PyLong_CheckExact(args[0])) return NULL;
    long n = PyLong_AsLong(args[0]);
    if (n == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (n < 0 || n >= PyTuple_GET_SIZE(f->factors)) return NULL;
    PyArrayObject *x = special_operand(args[1], 1);
    if (x == NULL) {
        *handled = PyErr_Occurred() != NULL;
        return NULL;
    }
    int type = PyArray_TYPE(x), grad = requires_grad(args[1]);
    int settled = grad < 0 ? -1 : special_settled();
    void *own = n < 2 ? f->own_loops[2 * n + (type == NPY_FLOAT64)] : NULL;
    int on_zeta = n >= 2 && f->loops[1] != NULL && PyArray_SIZE(x) <= f->max_elements;
    PyObject *out = NULL;
    *handled = settled < 0 || (settled > 0 && (on_zeta || own != NULL));
    if (settled > 0 && own != NULL) {   /* digamma's or trigamma's loop */
        PyArrayObject *values = special_like(x, type);
        if (values != NULL) ((own_precision_loop)own)(PyArray_DATA(x), PyArray_DATA(values), PyArray_SIZE(x), 1);
        out = (PyObject *)values;
    } else if (settled > 0 && on_zeta) {   /* (-1)**(n + 1) n! zeta(n + 1, input) */
        PyArrayObject *zeta = special_pair(f->loops[1], NULL, (double)(n + 1), x, 0);
        if (zeta != NULL) {
            double factor = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(f->factors, n));
            double *z = PyArray_DATA(zeta);
            for (npy_intp i = 0, size = PyArray_SIZE(zeta); i < size; i++) z[i] = factor * z[i];
        }
        out = special_narrowed(zeta, type);
    }
    Py_DECREF(x);
    out = out == NULL ? NULL : make(out);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[1], NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *r = PyObject_SetAttrString(node, "n", args[0]) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, args[1], NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    return with_node(out, node);
}

/* An orthogonal polynomial ``f(x, n)`` in the common case: a ``special_operand`` x and an int or
   float degree n, truncated to a whole number (-1, no degree, where it is not finite or not
   within int64), as ``orthogonal_polynomials._whole_degrees`` takes it. It records no node. */
static PyObject *special_polynomial(Function *f, PyObject *const *args, int *handled) {
    PyObject *n = args[1];
    double degree;
    if (PyLong_CheckExact(n)) {   /* (beyond int64: the Python op's) */
        int overflow;
        long long whole = PyLong_AsLongLongAndOverflow(n, &overflow);
        if (overflow || (whole == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        degree = whole == LLONG_MIN ? -1.0 : (double)whole;
    } else if (PyFloat_CheckExact(n)) {
        double v = PyFloat_AS_DOUBLE(n);
        degree = isfinite(v) && fabs(v) < 9223372036854775808.0 ? trunc(v) : -1.0;
    } else {
        return NULL;
    }
    PyArrayObject *x = special_operand(args[0], 0);
    if (x == NULL) return NULL;
    int type = PyArray_TYPE(x), settled = special_settled();
    void *loop = f->loops[type == NPY_FLOAT64];
    PyObject *out = NULL;
    *handled = settled < 0 || (settled > 0 && loop != NULL);
    if (settled > 0 && loop != NULL) {
        PyArrayObject *values = special_like(x, type);
        if (values != NULL) {
            const int64_t sizes[4] = {PyArray_SIZE(x), 1, 0, f->shifted};
            ((pair_loop)loop)(PyArray_DATA(x), &degree, PyArray_DATA(values), sizes, 1);
            out = make((PyObject *)values);
        }
    }
    Py_DECREF(x);
    return out;
}

/* ``f``'s call in the common case of its form: a new tensor, NULL on error, or ``*handled`` set to
   0 where the case is not this one (nothing done). */
static PyObject *special_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    return f->form == TENSORS_FORM ? special_tensors(f, args, handled)
           : f->form == POLYGAMMA_FORM ? special_polygamma(f, args, handled)
           : special_polynomial(f, args, handled);
}
'''
