"""The compiled functions (``_compiled_functions``) of ``ember.special``'s functions of two
arguments, kind "special": small float tensors on ``special_loops``' loops, as the Python ops run
them. Their forms:

- "tensors": ``gammainc``/``igamma``, ``gammaincc``/``igammac``, ``zeta`` and
  ``_standard_gamma_grad`` of two tensors of one float dtype and shape, on a loop
  ``loop(a, b, out, sizes, threads)`` of two float64 arrays (the float32 tensors' loop and the
  float64 tensors' loop), the float64 result narrowed to the tensors' dtype; where the form
  takes ``True``, also two tensors of one shape and two dtypes of which one is float32 or float64
  (an integer or bool tensor and a float one, or float32 and float64), each first cast to the
  float dtype torch's promotion gives them, as the Python op's operands are;
- "polygamma": ``polygamma(n, input)``: digamma's (n 0) or trigamma's (n 1) loop in the input's
  own precision, else Hurwitz's zeta loop at ``n + 1`` times ``(-1)**(n + 1) n!``, narrowed;
- "polynomial": an orthogonal polynomial of a tensor and a degree (a number, or a tensor of the
  tensor's shape), on its loop from the tensor's float dtype (float64 for integers and bools) to
  the result's: the form takes whether the polynomial is shifted and the addresses of the loops
  from float32 to float64 and from float64 to float32.

Kind "special_three": ``_dirichlet_grad(x, alpha, total)`` of three tensors of one float dtype and
shape where none requires grad (the Python op's node refuses a backward), on its loop of three
float64 arrays ``loop(a, b, c, out, n, threads)``, the float64 result narrowed to the tensors' dtype.

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

/* What a special function's operand may hold besides float32 and float64: nothing, integers and
   bools as the default float dtype, integers and bools as they are. */
enum special_integers { FLOATS_ONLY, INTEGERS_AS_DEFAULT_FLOAT, INTEGERS_KEPT };

/* The array of the tensor ``t`` where it is a special function's operand: small, C-contiguous,
   float32 or float64 (or integers and bools, as ``integers`` says), with elements. A new
   reference; NULL with no error set where it is not, NULL with an error on error. */
static PyArrayObject *special_operand(PyObject *t, enum special_integers integers) {
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || !PyArray_ISNOTSWAPPED(x) || !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x)
            || PyArray_SIZE(x) == 0 || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    int type = PyArray_TYPE(x);
    if (type == NPY_FLOAT32 || type == NPY_FLOAT64) return (PyArrayObject *)Py_NewRef(x);
    if (integers == FLOATS_ONLY || !(PyArray_ISINTEGER(x) || PyArray_ISBOOL(x))) return NULL;
    return integers == INTEGERS_KEPT ? (PyArrayObject *)Py_NewRef(x) : as_default_float(x);
}

static int special_is_float(int type) {
    return type == NPY_FLOAT32 || type == NPY_FLOAT64;
}

/* The dtype torch's promotion gives two tensors of one shape (so of one dim category) of the
   dtypes ``a`` and ``b`` (float32, float64, integers or bools): the wider float where both are
   floats, the float one of a float and an integer or bool, ``integers`` where neither is a float. */
static int special_promoted(int a, int b, int integers) {
    if (special_is_float(a) && special_is_float(b))
        return a == NPY_FLOAT64 || b == NPY_FLOAT64 ? NPY_FLOAT64 : NPY_FLOAT32;
    return special_is_float(a) ? a : special_is_float(b) ? b : integers;
}

/* ``x`` as ``type``: a new reference to itself, or a new array of its elements cast (as NumPy's
   ``astype``). NULL on error. */
static PyArrayObject *special_cast(PyArrayObject *x, int type) {
    if (PyArray_TYPE(x) == type) return (PyArrayObject *)Py_NewRef(x);
    return (PyArrayObject *)PyArray_CastToType(x, PyArray_DescrFromType(type), 0);
}

static int special_same_shape(PyArrayObject *x, PyArrayObject *y) {
    return PyArray_NDIM(y) == PyArray_NDIM(x)
           && PyArray_CompareLists(PyArray_DIMS(x), PyArray_DIMS(y), PyArray_NDIM(x));
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

/* Up to this many elements a pair's float64 copies and result lie on the stack (``special_pair_as``). */
#define SPECIAL_STACK_ELEMENTS 512

/* The C-contiguous float32 or float64 array ``x`` as float64 in ``wide`` (``n`` elements), or ``x``'s own
   memory where it is float64 already. */
static const double *special_widened(PyArrayObject *x, double *wide) {
    if (PyArray_TYPE(x) == NPY_FLOAT64) return PyArray_DATA(x);
    const float *from = PyArray_DATA(x);
    for (npy_intp i = 0, n = PyArray_SIZE(x); i < n; i++) wide[i] = (double)from[i];
    return wide;
}

/* ``special_pair``'s values (of two arrays of one float dtype and shape, C-contiguous) as a new array of
   ``type``, the float64 copies and result on the stack up to ``SPECIAL_STACK_ELEMENTS`` (the same values:
   each widened, the loop, each narrowed as ``special_narrowed`` narrows). NULL on error. */
static PyObject *special_pair_as(void *loop, PyArrayObject *a, PyArrayObject *b, int type) {
    npy_intp n = PyArray_SIZE(b);
    double stack[3 * SPECIAL_STACK_ELEMENTS];
    double *buffer = n <= SPECIAL_STACK_ELEMENTS ? stack : PyMem_Malloc(3 * (size_t)n * sizeof(double));
    if (buffer == NULL) return PyErr_NoMemory();
    PyArrayObject *out = special_like(b, type);
    if (out != NULL) {
        const int64_t sizes[4] = {n, 1, 1, 0};
        double *values = type == NPY_FLOAT64 ? PyArray_DATA(out) : buffer + 2 * n;
        ((pair_loop)loop)(special_widened(a, buffer), special_widened(b, buffer + n), values, sizes, 1);
        if (type != NPY_FLOAT64) {
            float *narrow = PyArray_DATA(out);
            for (npy_intp i = 0; i < n; i++) narrow[i] = (float)values[i];
        }
    }
    if (buffer != stack) PyMem_Free(buffer);
    return (PyObject *)out;
}

/* ``f(input, other)`` of two tensors in the common case: one shape, both ``special_operand``s of at
   most ``f->max_elements`` elements, of one float dtype (or, where ``f->promotes``, of two of
   which one is a float, cast to the promoted one; none then requires grad). The node recorded as
   ``pointwise._binary`` records it; where ``f`` records none (the Python op raises for a
   backward), no tensor requires grad. */
static PyObject *special_tensors(Function *f, PyObject *const *args, int *handled) {
    enum special_integers integers = f->promotes ? INTEGERS_KEPT : FLOATS_ONLY;
    PyArrayObject *x = special_operand(args[0], integers), *y = x == NULL ? NULL : special_operand(args[1], integers);
    PyObject *out = NULL;
    int type = y == NULL ? 0 : special_promoted(PyArray_TYPE(x), PyArray_TYPE(y), 0);
    int mixed = type && (PyArray_TYPE(x) != type || PyArray_TYPE(y) != type);
    if (type && (!mixed || f->promotes) && special_same_shape(x, y) && PyArray_SIZE(x) <= f->max_elements
            && f->loops[type == NPY_FLOAT64] != NULL) {
        int grad = any_requires_grad(args, 2);
        int settled = grad < 0 ? -1 : grad && (mixed || f->node_cls == Py_None) ? 0 : plain_and_settled();
        *handled = settled != 0;
        PyArrayObject *a = settled > 0 ? special_cast(x, type) : NULL, *b = a == NULL ? NULL : special_cast(y, type);
        if (b != NULL) {
            out = special_pair_as(f->loops[type == NPY_FLOAT64], a, b, type);
            out = out == NULL ? NULL : make(out);
            if (out != NULL && grad) {
                PyObject *node = record_node(f->node_cls, args[0], args[1], out);
                if (node != NULL && node != Py_None && function_fields(f, node, args, out) < 0) Py_CLEAR(node);
                out = with_node(out, node);
            }
        }
        Py_XDECREF(a);
        Py_XDECREF(b);
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
    PyArrayObject *x = special_operand(args[1], INTEGERS_AS_DEFAULT_FLOAT);
    if (x == NULL) {
        *handled = PyErr_Occurred() != NULL;
        return NULL;
    }
    int type = PyArray_TYPE(x), grad = requires_grad(args[1]);
    int settled = grad < 0 ? -1 : plain_and_settled();
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

/* The degrees of the tensor ``n`` (a ``special_operand``) as ``orthogonal_polynomials._whole_degrees``
   takes them: float64, truncated to whole numbers, -1 (no degree) where not finite or not within
   int64. A new array, NULL on error. */
static PyArrayObject *special_whole_degrees(PyArrayObject *n) {
    PyArrayObject *degrees = (PyArrayObject *)PyArray_CastToType(n, PyArray_DescrFromType(NPY_FLOAT64), 0);
    if (degrees != NULL) {
        double *d = PyArray_DATA(degrees);
        for (npy_intp i = 0, size = PyArray_SIZE(degrees); i < size; i++)
            d[i] = isfinite(d[i]) && fabs(d[i]) < 9223372036854775808.0 ? trunc(d[i]) : -1.0;
    }
    return degrees;
}

/* An orthogonal polynomial ``f(x, n)`` in the common case: a ``special_operand`` x (integers and
   bools kept) and a degree n, an int or a float (truncated to a whole number, -1, no degree, where
   it is not finite or not within int64, as ``orthogonal_polynomials._whole_degrees`` takes it) or
   a ``special_operand`` tensor of x's shape. The result's dtype is the promoted float dtype of x
   and a tensor n (x's, with a number), the default float dtype where neither is a float; the loop
   reads x in its float dtype (float64 for integers and bools). It records no node. */
static PyObject *special_polynomial(Function *f, PyObject *const *args, int *handled) {
    PyObject *n = args[1];
    double degree = 0.0;
    PyArrayObject *n_tensor = NULL;
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
    } else if ((n_tensor = special_operand(n, INTEGERS_KEPT)) == NULL) {
        return NULL;
    }
    PyArrayObject *x = special_operand(args[0], INTEGERS_KEPT);
    int integers = x == NULL ? 0 : default_float_type();
    int x_type = x == NULL ? 0 : special_is_float(PyArray_TYPE(x)) ? PyArray_TYPE(x) : NPY_FLOAT64;
    int out_type = x == NULL || (n_tensor != NULL && !special_same_shape(x, n_tensor)) ? 0
                   : special_promoted(PyArray_TYPE(x), n_tensor == NULL ? PyArray_TYPE(x) : PyArray_TYPE(n_tensor),
                                      integers);
    void *loop = out_type <= 0 ? NULL : x_type == out_type ? f->loops[out_type == NPY_FLOAT64]
                 : f->own_loops[x_type == NPY_FLOAT64];
    int settled = loop == NULL ? 0 : plain_and_settled();
    PyObject *out = NULL;
    *handled = integers < 0 || settled < 0 || (settled > 0 && loop != NULL);
    if (settled > 0) {
        PyArrayObject *xs = special_cast(x, x_type);
        PyArrayObject *degrees = n_tensor == NULL ? NULL : special_whole_degrees(n_tensor);
        PyArrayObject *values = xs == NULL || (n_tensor != NULL && degrees == NULL) ? NULL : special_like(x, out_type);
        if (values != NULL) {
            const int64_t sizes[4] = {PyArray_SIZE(x), 1, degrees != NULL, f->shifted};
            ((pair_loop)loop)(PyArray_DATA(xs), degrees == NULL ? &degree : PyArray_DATA(degrees), PyArray_DATA(values),
                              sizes, 1);
            out = make((PyObject *)values);
        }
        Py_XDECREF(xs);
        Py_XDECREF(degrees);
    }
    Py_XDECREF(x);
    Py_XDECREF(n_tensor);
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
/* A loop of three float64 arrays into a fourth: ``loop(a, b, c, out, n, threads)``. */
typedef void (*triple_loop)(const double *, const double *, const double *, double *, int64_t, int);

/* ``f(a, b, c)`` of three tensors in the common case (``_compiled_special``'s kind "special_three"): one float
   dtype and shape, each a ``special_operand``, none requiring grad. A new tensor, NULL on error, or
   ``*handled`` set to 0 where the case is not this one. */
static PyObject *special_three_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x[3] = {NULL, NULL, NULL}, *wide[3] = {NULL, NULL, NULL};
    PyObject *out = NULL;
    int taken = f->loops[0] != NULL;
    for (int i = 0; i < 3 && taken; i++) {
        x[i] = special_operand(args[i], FLOATS_ONLY);
        taken = x[i] != NULL && PyArray_TYPE(x[i]) == PyArray_TYPE(x[0]) && special_same_shape(x[0], x[i]);
    }
    int grad = taken ? any_requires_grad(args, 3) : 0;
    int settled = !taken || grad > 0 ? 0 : grad < 0 ? -1 : plain_and_settled();
    *handled = settled != 0;
    for (int i = 0; i < 3 && settled > 0; i++)
        if ((wide[i] = (PyArrayObject *)PyArray_FROMANY((PyObject *)x[i], NPY_FLOAT64, 0, 0, NPY_ARRAY_CARRAY)) == NULL)
            settled = -1;
    if (settled > 0) {
        PyArrayObject *values = special_like(x[0], NPY_FLOAT64);
        if (values != NULL)
            ((triple_loop)f->loops[0])(PyArray_DATA(wide[0]), PyArray_DATA(wide[1]), PyArray_DATA(wide[2]),
                                       PyArray_DATA(values), PyArray_SIZE(values), 1);
        out = special_narrowed(values, PyArray_TYPE(x[0]));
        out = out == NULL ? NULL : make(out);
    }
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(x[i]);
        Py_XDECREF(wide[i]);
    }
    return out;
}
'''
