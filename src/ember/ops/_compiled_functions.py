"""Functions of one or two tensors whose forward on a float array is one of ember's compiled
loops or a NumPy ufunc, compiled for their common case. Of one tensor: ``sigmoid``, ``erf``,
``erfc``, ``erfinv`` and ``ember.special``'s Bessel, Airy and normal-distribution functions,
``entr`` and ``sinc`` (on loops), and ``exp``, ``log``, ``sqrt``, ``sin``, ``tanh``, ``abs`` and
the other ops that ``unary._ufunc`` declares (on ufuncs). Of two tensors: ``maximum``,
``minimum``, ``fmax``, ``fmin``, ``atan2``, ``hypot``, ``copysign``, ``nextafter``,
``logaddexp`` and ``logaddexp2`` (on ufuncs), ``xlogy`` and ``special.xlog1py`` (on loops).

On a small tensor such an op is mostly Python: its frame, its checks, the kernel choice and the
call of the loop or the ufunc cost several times the work itself. Each of these ops registers
here (``register``) and calls the entry it is given first. Once ``_compiled_methods`` has built
its extension, the entry is a C function that takes the common case: ordinary tensors on the CPU
holding small float32 arrays (or float64, where the loop has one), two of one dtype, with no
``__torch_function__`` dispatch or forward-mode AD; for a loop, C-contiguous arrays (two of one
shape) and no forced kernel library (``choice.settled``); for a ufunc, a first array below the
size from which the op takes a loop instead. It runs what the op's Python path runs for those
arrays (the same loop or ufunc, so the same bits), makes the result tensor and, where autograd
records, records the op's node (with a binary node's shapes and dtypes) and saves what the
Python op saves. Every other case, and every case until the extension is built (or where it
cannot be), runs the op's Python path, which also raises every error.
"""
import sys
import threading

__all__ = ["register", "build", "python_functions", "SOURCE"]

# what a node may save, in the order it saves them (the bits of ``saves`` in the C source)
_SAVED = ("self", "other", "result")
_KINDS = ("unary", "binary", "cat", "stack")   # (``enum function_kind`` in the C source)

_lock = threading.Lock()
_functions = []
_state = {"built": False, "module": None}


class _Function:
    """A registered op: its entry and what its compiled function is made from (``register``)."""
    __slots__ = ("entry", "python_op", "node_cls", "saves", "kind", "addresses", "ufunc", "max_elements")

    def __init__(self, entry, python_op, node_cls, saves, kind, addresses, ufunc, max_elements):
        self.entry, self.python_op, self.node_cls, self.saves = entry, python_op, node_cls, saves
        self.kind, self.addresses, self.ufunc, self.max_elements = kind, addresses, ufunc, max_elements


def register(python_op, node_cls, saves=(), *, kind="unary", addresses=None, ufunc=None, max_elements=None):
    """The entry (a one-element list) an op's function calls first with its arguments: its
    tensor (``kind`` "unary"), its two tensors ("binary"), or its list of tensors and its dim
    ("cat" and "stack", which join them as ``cat`` and ``stack`` do, on any dtype; the other
    arguments then do not apply). At first it is a function that builds the compiled functions
    (``_compiled_methods.install``), then the compiled function, or ``python_op`` where it cannot
    be built. ``node_cls`` is the node the op records (None: the compiled function leaves
    tensors that require grad to ``python_op``); ``saves`` names what its node saves, in order,
    of "self", "other" and "result". The op's forward on a float32 or float64 array is a
    compiled loop, whose addresses for each dtype ``addresses()`` gives (None where there is
    none), or the NumPy ``ufunc`` below ``max_elements`` elements of float32 (where the op takes
    a loop from there)."""
    entry = [None]

    def first_use(*inputs):
        from . import _compiled_methods
        _compiled_methods.install()
        function = entry[0]
        return (python_op if function is first_use else function)(*inputs)

    entry[0] = first_use
    if kind not in _KINDS:
        raise ValueError(f"a compiled function's kind is one of {_KINDS}, not {kind!r}")
    function = _Function(entry, python_op, node_cls, saves, kind, addresses, ufunc, max_elements)
    with _lock:
        _functions.append(function)
        if _state["built"]:
            _arm(function, _state["module"])
    return entry


def build(module):
    """Fill every registered entry with its compiled function from the extension ``module``
    (None where it could not be built: the Python ops)."""
    with _lock:
        _state["built"], _state["module"] = True, module
        for function in _functions:
            _arm(function, module)


def python_functions():
    """``[(entry, python_op)]`` for each registered op: what puts the Python ops back (tests run
    both paths)."""
    with _lock:
        return [(function.entry, function.python_op) for function in _functions]


def _arm(function, module):
    """Fill the entry of ``function``: at once for an op on a ufunc; for one on loops, at its
    first call (which loads its loops: an op never called loads none)."""
    entry = function.entry
    if module is None or function.addresses is None:
        _fill(function, module)
        return

    def first_call(*inputs):
        with _lock:
            if entry[0] is first_call:
                _fill(function, module)
        return entry[0](*inputs)
    entry[0] = first_call


def _fill(function, module):
    compiled = function.python_op
    if module is not None:
        float32, float64 = function.addresses() if function.addresses is not None else (None, None)
        if function.ufunc is not None or float32 or float64 or function.kind in ("cat", "stack"):
            saves = sum(1 << _SAVED.index(name) for name in function.saves)
            compiled = module.add_function(function.python_op, function.node_cls, function.ufunc, float32 or 0,
                                           float64 or 0, function.max_elements or sys.maxsize,
                                           _KINDS.index(function.kind), saves)
    function.entry[0] = compiled


# The C part, in ``_compiled_methods``' extension (it uses its helpers: ``array_of``, ``make``,
# ``plain_mode``, ``requires_grad``, ``record_node``, ``set_shape_and_dtype``).
SOURCE = r'''
/* A function of one or two tensors (``_compiled_functions``) on NumPy's ufunc or on a compiled
   loop ``void loop(const T *x, T *out, int64_t n, int threads)`` (one tensor) or ``void loop(const
   T *x, const T *y, T *out, int64_t n, int threads)`` (two tensors of one shape); or ``cat`` or
   ``stack`` of a list of tensors along a dim. */
typedef void (*unary_loop)(const void *, void *, int64_t, int);
typedef void (*binary_loop)(const void *, const void *, void *, int64_t, int);
enum saved { SAVES_SELF = 1, SAVES_OTHER = 2, SAVES_RESULT = 4 };
enum function_kind { UNARY_FUNCTION, BINARY_FUNCTION, CAT_FUNCTION, STACK_FUNCTION };
typedef struct {
    PyObject *python_op, *node_cls;   /* node_cls None: tensors that require grad go to the Python op */
    PyObject *ufunc;                  /* the NumPy ufunc the op is on float arrays (None: the loops) */
    void *loops[2];                   /* float32's and float64's, NULL where there is none */
    Py_ssize_t max_elements;          /* the most float32 elements taken here (a ufunc's op's loop takes more) */
    int kind, arity, saves;           /* saves: the ``enum saved`` bits, saved in that order */
} Function;

#define MAX_FUNCTIONS 80
static Function functions_[MAX_FUNCTIONS];
static int n_functions;
static PyObject *choice_settled;   /* ``choice.settled``: no kernel library forced, the settings checked */
static PyObject *s_dtypes, *s_dim, *s_used, *s_sizes;

/* Whether the arrays of ``f``'s tensors are its case, before the modes are checked: small float32
   or float64 arrays of one dtype, C-contiguous and of one shape for a loop (set in ``*loop``). */
static int function_arrays(Function *f, PyArrayObject **arrays, void **loop) {
    PyArrayObject *x = arrays[0];
    int type = PyArray_TYPE(x);
    if (type != NPY_FLOAT32 && type != NPY_FLOAT64) return 0;
    for (int i = 0; i < f->arity; i++) {
        PyArrayObject *a = arrays[i];
        if (a == NULL || PyArray_TYPE(a) != type || !PyArray_ISNOTSWAPPED(a) || PyArray_NBYTES(a) >= small_bytes)
            return 0;
    }
    if (f->ufunc != Py_None) return type == NPY_FLOAT64 || PyArray_SIZE(x) <= f->max_elements;
    *loop = f->loops[type == NPY_FLOAT64];
    if (*loop == NULL || PyArray_SIZE(x) == 0) return 0;
    for (int i = 0; i < f->arity; i++) {
        PyArrayObject *a = arrays[i];
        if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || (i > 0 && (PyArray_NDIM(a) != PyArray_NDIM(x)
                || !PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(x), PyArray_NDIM(x)))))
            return 0;
    }
    return 1;
}

/* ``node``'s fields and saved tensors, as the Python op sets them: for two tensors, each one's
   shape and dtype (a binary node's); then ``node.save(...)`` of what ``f`` saves. 0, or -1 on error. */
static int function_fields(Function *f, PyObject *node, PyObject *const *inputs, PyObject *out) {
    if (f->arity == 2 && (set_shape_and_dtype(node, s_self_shape, s_self_dtype, array_of(inputs[0])) < 0
                          || set_shape_and_dtype(node, s_other_shape, s_other_dtype, array_of(inputs[1])) < 0))
        return -1;
    if (!f->saves) return 0;
    PyObject *saved[3], *candidates[3] = {inputs[0], f->arity == 2 ? inputs[1] : NULL, out};
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        if (f->saves & (1 << i)) saved[n++] = candidates[i];
    PyObject *save = PyObject_GetAttr(node, s_save);
    PyObject *r = save == NULL ? NULL : PyObject_Vectorcall(save, saved, n, NULL);
    Py_XDECREF(save);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* ``f`` on its tensors ``inputs`` in the common case: a new tensor, NULL on error, or ``*handled``
   set to 0 where the case is not this one (nothing done). */
static PyObject *function_case(Function *f, PyObject *const *inputs, int *handled) {
    *handled = 0;
    PyArrayObject *arrays[2] = {array_of(inputs[0]), f->arity == 2 ? array_of(inputs[1]) : NULL};
    void *loop = NULL;
    if (arrays[0] == NULL || !function_arrays(f, arrays, &loop)) return NULL;
    int grad = 0;
    for (int i = 0; i < f->arity && grad >= 0; i++) {
        int r = requires_grad(inputs[i]);
        grad = r < 0 ? -1 : grad | r;
    }
    int plain = grad < 0 ? -1 : plain_mode();
    /* (a ufunc's op runs it below its loop's size whatever the kernel choice) */
    PyObject *settled = plain > 0 ? (loop != NULL ? PyObject_CallNoArgs(choice_settled) : Py_NewRef(Py_True)) : NULL;
    if (grad < 0 || plain < 0 || (plain > 0 && settled == NULL)) {
        *handled = 1;
        return NULL;
    }
    int is_settled = settled == Py_True;
    Py_XDECREF(settled);
    if (!plain || !is_settled || (grad && f->node_cls == Py_None)) return NULL;
    PyObject *data;
    PyArrayObject *x = arrays[0];
    if (loop != NULL) {
        PyArray_Descr *descr = PyArray_DESCR(x);
        Py_INCREF(descr);
        data = PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(x), PyArray_DIMS(x), NULL, NULL, 0, NULL);
        if (data != NULL && f->arity == 1)
            ((unary_loop)loop)(PyArray_DATA(x), PyArray_DATA((PyArrayObject *)data), PyArray_SIZE(x), 1);
        else if (data != NULL)
            ((binary_loop)loop)(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA((PyArrayObject *)data),
                                PyArray_SIZE(x), 1);
    } else {
        data = PyObject_Vectorcall(f->ufunc, (PyObject **)arrays, f->arity, NULL);
        if (data == NULL && f->arity == 2) {   /* shapes that do not broadcast: the Python op raises torch's error */
            PyErr_Clear();
            return NULL;
        }
    }
    *handled = 1;
    if (data == NULL) return NULL;
    PyObject *out = make(data);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, inputs[0], f->arity == 2 ? inputs[1] : NULL, out);
    if (node != NULL && node != Py_None && function_fields(f, node, inputs, out) < 0) Py_CLEAR(node);
    if (node == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

/* ``node``'s fields, as ``shape.cat`` and ``shape.stack`` set them: each input's dtype and the dim;
   for cat, that every input is used and each one's size along the dim. 0, or -1 on error. */
static int join_fields(Function *f, PyObject *node, PyObject *const *items, Py_ssize_t n, long dim) {
    int cat = f->kind == CAT_FUNCTION;
    PyObject *dtypes = PyList_New(n), *used = cat ? PyList_New(n) : NULL, *sizes = cat ? PyList_New(n) : NULL;
    PyObject *at = PyLong_FromLong(dim);
    int status = dtypes == NULL || at == NULL || (cat && (used == NULL || sizes == NULL)) ? -1 : 0;
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyArrayObject *a = array_of(items[i]);
        PyList_SET_ITEM(dtypes, i, Py_NewRef((PyObject *)PyArray_DESCR(a)));
        if (!cat) continue;
        PyList_SET_ITEM(used, i, Py_NewRef(Py_True));
        PyObject *size = PyLong_FromSsize_t(PyArray_DIM(a, dim));
        if (size == NULL) status = -1;
        else PyList_SET_ITEM(sizes, i, size);
    }
    if (status == 0 && (PyObject_SetAttr(node, s_dtypes, dtypes) < 0 || PyObject_SetAttr(node, s_dim, at) < 0
                        || (cat && (PyObject_SetAttr(node, s_used, used) < 0
                                    || PyObject_SetAttr(node, s_sizes, sizes) < 0))))
        status = -1;
    Py_XDECREF(dtypes);
    Py_XDECREF(used);
    Py_XDECREF(sizes);
    Py_XDECREF(at);
    return status;
}

/* ``cat(tensors, dim)`` or ``stack(tensors, dim)`` in the common case: a list or tuple of ordinary
   tensors on the CPU of one dtype (of one shape for stack; none 0-d, and for cat none the 1-d
   empty tensor it skips), an int dim in range, no ``__torch_function__`` dispatch or
   forward-mode AD: NumPy's concatenation (of the tensors viewed with the new dim, for stack), the
   node recorded where autograd records. A new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one (nothing done). */
static PyObject *join_case(Function *f, PyObject *tensors, PyObject *dim_arg, int *handled) {
    *handled = 0;
    int stack = f->kind == STACK_FUNCTION;
    if (!(PyList_CheckExact(tensors) || PyTuple_CheckExact(tensors)) || !PyLong_CheckExact(dim_arg)) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
    PyObject **items = PySequence_Fast_ITEMS(tensors);
    if (n == 0) return NULL;
    PyArrayObject *first = NULL;
    int grad = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyArrayObject *a = Py_TYPE(items[i]) == TensorType ? array_of(items[i]) : NULL;
        if (a == NULL || PyArray_NDIM(a) == 0 || (PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == 0 && !stack))
            return NULL;
        if (first == NULL) {
            first = a;
        } else if (!PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(first))
                   || (stack && (PyArray_NDIM(a) != PyArray_NDIM(first)
                                 || !PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(first), PyArray_NDIM(a))))) {
            return NULL;
        }
        int r = requires_grad(items[i]);
        if (r < 0) {
            *handled = 1;
            return NULL;
        }
        grad |= r;
    }
    int ndim = PyArray_NDIM(first) + stack;
    if (ndim > NPY_MAXDIMS) return NULL;
    long dim = PyLong_AsLong(dim_arg);
    if (dim == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (dim < -ndim || dim >= ndim) return NULL;
    if (dim < 0) dim += ndim;
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *arrays = PyList_New(n);
    if (arrays == NULL) {
        *handled = 1;
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    PyArray_Dims shape = {dims, ndim};
    for (int d = 0, k = 0; stack && d < ndim; d++)   /* each tensor's shape with the new dim */
        dims[d] = d == dim ? 1 : PyArray_DIM(first, k++);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = (PyObject *)array_of(items[i]);
        PyObject *item = stack ? PyArray_Newshape((PyArrayObject *)a, &shape, NPY_CORDER) : Py_NewRef(a);
        if (item == NULL) {
            Py_DECREF(arrays);
            *handled = 1;
            return NULL;
        }
        PyList_SET_ITEM(arrays, i, item);
    }
    PyObject *data = PyArray_Concatenate(arrays, (int)dim);
    Py_DECREF(arrays);
    if (data == NULL && !stack && PyErr_ExceptionMatches(PyExc_ValueError)) {   /* sizes that differ: */
        PyErr_Clear();   /* the Python op raises torch's error */
        return NULL;
    }
    *handled = 1;
    PyObject *out = data == NULL ? NULL : make(data);
    if (out == NULL || !grad) return out;
    PyObject *inputs = PySequence_Tuple(tensors);
    PyObject *args[3] = {f->node_cls, inputs, out};
    PyObject *node = inputs == NULL ? NULL : PyObject_Vectorcall(record, args, 3, NULL);
    Py_XDECREF(inputs);
    if (node != NULL && node != Py_None && join_fields(f, node, items, n, dim) < 0) Py_CLEAR(node);
    if (node == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

static PyObject *function_call(PyObject *index, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) {
    Function *f = &functions_[PyLong_AsLong(index)];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int joins = f->kind == CAT_FUNCTION || f->kind == STACK_FUNCTION;
    if (nargs == (joins ? 2 : f->arity) && kwnames == NULL) {
        int handled = 0;
        PyObject *out = NULL;
        if (joins)
            out = join_case(f, args[0], args[1], &handled);
        else if (Py_TYPE(args[0]) == TensorType && (nargs == 1 || Py_TYPE(args[1]) == TensorType))
            out = function_case(f, args, &handled);
        if (handled) return out;
    }
    return PyObject_Vectorcall(f->python_op, args, nargs, kwnames);   /* every other case */
}

static PyMethodDef function_definition = {
    "compiled_function", (PyCFunction)(void (*)(void))function_call, METH_FASTCALL | METH_KEYWORDS,
    "An op of one or two tensors on its ufunc or compiled loop in the common case, else its Python op."};

/* add_function(python_op, node_cls, ufunc, float32_address, float64_address, max_elements, kind, saves):
   the op's compiled function (of one or two tensors: on ``ufunc`` where it is not None, else on
   the loops, an address 0 where the loop has no such dtype). */
static PyObject *add_function(PyObject *self, PyObject *args) {
    Function f;
    unsigned long long float32, float64;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the methods are not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOKKnii", &f.python_op, &f.node_cls, &f.ufunc, &float32, &float64, &f.max_elements,
                          &f.kind, &f.saves))
        return NULL;
    if (f.kind < UNARY_FUNCTION || f.kind > STACK_FUNCTION) {
        PyErr_SetString(PyExc_ValueError, "no such kind of compiled function");
        return NULL;
    }
    f.arity = f.kind == BINARY_FUNCTION ? 2 : 1;
    if (n_functions == MAX_FUNCTIONS) {
        PyErr_SetString(PyExc_RuntimeError, "too many compiled functions");
        return NULL;
    }
    f.loops[0] = (void *)(uintptr_t)float32;
    f.loops[1] = (void *)(uintptr_t)float64;
    PyObject *index = PyLong_FromLong(n_functions);
    PyObject *function = index == NULL ? NULL : PyCFunction_NewEx(&function_definition, index, NULL);
    Py_XDECREF(index);
    if (function == NULL) return NULL;
    Py_INCREF(f.python_op);
    Py_INCREF(f.node_cls);
    Py_INCREF(f.ufunc);
    functions_[n_functions++] = f;
    return function;
}

/* configure_functions(settled): ``choice.settled``. */
static PyObject *configure_functions(PyObject *self, PyObject *settled) {
    const char *names[] = {"dtypes", "dim", "used", "sizes"};
    PyObject **interned[] = {&s_dtypes, &s_dim, &s_used, &s_sizes};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (*interned[i] == NULL && (*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    Py_INCREF(settled);
    Py_XSETREF(choice_settled, settled);
    Py_RETURN_NONE;
}
'''
