"""Functions of one tensor whose forward on a float array is one of ember's compiled loops or a
NumPy ufunc, compiled for their common case: ``sigmoid``, ``erf``, ``erfc``, ``erfinv`` and
``ember.special``'s Bessel, Airy and normal-distribution functions, ``entr`` and ``sinc`` (on
loops), and ``exp``, ``log``, ``sqrt``, ``sin``, ``tanh``, ``abs`` and the other ops that
``unary._ufunc`` declares (on ufuncs).

On a small tensor such an op is mostly Python: its frame, its checks, the kernel choice and the
call of the loop or the ufunc cost several times the work itself. Each of these ops registers
here (``register``) and calls the entry it is given first. Once ``_compiled_methods`` has built
its extension, the entry is a C function that takes the common case: an ordinary tensor on the
CPU holding a small float32 array (or float64, where the loop has one), with no
``__torch_function__`` dispatch or forward-mode AD; for a loop, a C-contiguous array and no
forced kernel library (``choice.settled``); for a ufunc, an array below the size from which the
op takes a loop instead. It runs what the op's Python path runs for that array (the same loop or
ufunc, so the same bits), makes the result tensor and, where autograd records, records the op's
node and saves what the Python op saves. Every other case, and every case until the extension is
built (or where it cannot be), runs the op's Python path, which also raises every error.
"""
import sys
import threading

__all__ = ["register", "build", "python_functions", "SOURCE"]

_lock = threading.Lock()
_entries = []   # (entry, python_op, node_cls, saves_self, saves_result, addresses, ufunc, max_elements)
_state = {"built": False, "module": None}


def register(python_op, node_cls, saves_self, saves_result, addresses=None, ufunc=None, max_elements=None):
    """The entry (a one-element list) an op's function calls first with its tensor: at first a
    function that builds the compiled functions (``_compiled_methods.install``), then the
    compiled function, or ``python_op`` where it cannot be built. ``node_cls`` is the node the
    op records (None: the compiled function leaves tensors that require grad to ``python_op``);
    ``saves_self`` and ``saves_result`` say what its node saves. The op's forward on a float32
    or float64 array is a compiled loop, whose addresses for each dtype ``addresses()`` gives
    (None where there is none), or the NumPy ``ufunc`` below ``max_elements`` elements (where
    the op takes a loop from there)."""
    entry = [None]

    def first_use(input):
        from . import _compiled_methods
        _compiled_methods.install()
        function = entry[0]
        return (python_op if function is first_use else function)(input)

    entry[0] = first_use
    record = (entry, python_op, node_cls, saves_self, saves_result, addresses, ufunc, max_elements)
    with _lock:
        _entries.append(record)
        if _state["built"]:
            _arm(record, _state["module"])
    return entry


def build(module):
    """Fill every registered entry with its compiled function from the extension ``module``
    (None where it could not be built: the Python ops)."""
    with _lock:
        _state["built"], _state["module"] = True, module
        for record in _entries:
            _arm(record, module)


def python_functions():
    """``[(entry, python_op)]`` for each registered op: what puts the Python ops back (tests run
    both paths)."""
    with _lock:
        return [(entry, python_op) for entry, python_op, *_ in _entries]


def _arm(record, module):
    """Fill the entry of ``record``: at once for an op on a ufunc; for one on loops, at its first
    call (which loads its loops: an op never called loads none)."""
    entry = record[0]
    if module is None or record[5] is None:
        _fill(record, module)
        return

    def first_call(input):
        with _lock:
            if entry[0] is first_call:
                _fill(record, module)
        return entry[0](input)
    entry[0] = first_call


def _fill(record, module):
    entry, python_op, node_cls, saves_self, saves_result, addresses, ufunc, max_elements = record
    function = python_op
    if module is not None:
        float32, float64 = addresses() if addresses is not None else (None, None)
        if ufunc is not None or float32 or float64:
            function = module.add_unary_loop(python_op, node_cls, ufunc, float32 or 0, float64 or 0,
                                             max_elements or sys.maxsize, int(saves_self), int(saves_result))
    entry[0] = function


# The C part, in ``_compiled_methods``' extension (it uses its helpers: ``array_of``, ``make``,
# ``plain_mode``, ``requires_grad``, ``record_one``).
SOURCE = r'''
/* A function of one tensor that runs a compiled loop ``void loop(const T *x, T *out, int64_t n,
   int threads)`` (``_compiled_functions``). */
typedef void (*unary_loop)(const void *, void *, int64_t, int);
typedef struct {
    PyObject *python_op, *node_cls;   /* node_cls None: tensors that require grad go to the Python op */
    PyObject *ufunc;                  /* the NumPy ufunc the op is on float arrays (None: the loops) */
    unary_loop loops[2];              /* float32's and float64's, NULL where there is none */
    Py_ssize_t max_elements;          /* the most elements taken here (a ufunc's op's loop takes more) */
    int saves_self, saves_result;
} UnaryLoop;

#define MAX_UNARY_LOOPS 64
static UnaryLoop unary_loops[MAX_UNARY_LOOPS];
static int n_unary_loops;
static PyObject *choice_settled;   /* ``choice.settled``: no kernel library forced, the settings checked */

/* The op on tensor ``t`` in the common case: a new tensor, NULL on error, or ``*handled`` set to 0
   where the case is not this one (nothing done). */
static PyObject *unary_loop_case(UnaryLoop *u, PyObject *t, int *handled) {
    *handled = 0;
    PyArrayObject *a = array_of(t);
    int on_loop = u->ufunc == Py_None;
    if (a == NULL || PyArray_NBYTES(a) >= small_bytes || PyArray_SIZE(a) == 0 || PyArray_SIZE(a) > u->max_elements
            || (on_loop && (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a))))
        return NULL;
    int type = PyArray_TYPE(a);
    unary_loop loop = type == NPY_FLOAT32 ? u->loops[0] : type == NPY_FLOAT64 ? u->loops[1] : NULL;
    if (on_loop ? loop == NULL : type != NPY_FLOAT32 && type != NPY_FLOAT64) return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    /* (a ufunc's op runs it below its loop's size whatever the kernel choice) */
    PyObject *settled = plain > 0 ? (on_loop ? PyObject_CallNoArgs(choice_settled) : Py_NewRef(Py_True)) : NULL;
    if (grad < 0 || plain < 0 || (plain > 0 && settled == NULL)) {
        *handled = 1;
        return NULL;
    }
    int is_settled = settled == Py_True;
    Py_XDECREF(settled);
    if (!plain || !is_settled || (grad && u->node_cls == Py_None)) return NULL;
    PyObject *data;
    if (on_loop) {
        PyArray_Descr *descr = PyArray_DESCR(a);
        Py_INCREF(descr);
        data = PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(a), PyArray_DIMS(a), NULL, NULL, 0, NULL);
        if (data != NULL) loop(PyArray_DATA(a), PyArray_DATA((PyArrayObject *)data), PyArray_SIZE(a), 1);
    } else {
        PyObject *array = (PyObject *)a;
        data = PyObject_Vectorcall(u->ufunc, &array, 1, NULL);
    }
    *handled = 1;
    if (data == NULL) return NULL;
    PyObject *out = make(data);
    if (out == NULL || !grad) return out;
    PyObject *node = record_one(u->node_cls, t, out);
    if (node != NULL && node != Py_None && (u->saves_self || u->saves_result)) {
        PyObject *r = u->saves_self && u->saves_result ? PyObject_CallMethodObjArgs(node, s_save, t, out, NULL)
                      : PyObject_CallMethodObjArgs(node, s_save, u->saves_self ? t : out, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    if (node == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(node);
    return out;
}

static PyObject *unary_loop_call(PyObject *index, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) {
    UnaryLoop *u = &unary_loops[PyLong_AsLong(index)];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == 1 && kwnames == NULL && Py_TYPE(args[0]) == TensorType) {
        int handled = 0;
        PyObject *out = unary_loop_case(u, args[0], &handled);
        if (handled) return out;
    }
    return PyObject_Vectorcall(u->python_op, args, nargs, kwnames);   /* every other case */
}

static PyMethodDef unary_loop_definition = {
    "unary_loop", (PyCFunction)(void (*)(void))unary_loop_call, METH_FASTCALL | METH_KEYWORDS,
    "An op of one tensor on its compiled loop in the common case, else its Python op."};

/* add_unary_loop(python_op, node_cls, ufunc, float32_address, float64_address, max_elements, saves_self,
   saves_result): the op's compiled function (on ``ufunc`` where it is not None, else on the loops;
   an address 0 where the loop has no such dtype). */
static PyObject *add_unary_loop(PyObject *self, PyObject *args) {
    UnaryLoop u;
    unsigned long long float32, float64;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the methods are not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOKKnii", &u.python_op, &u.node_cls, &u.ufunc, &float32, &float64, &u.max_elements,
                          &u.saves_self, &u.saves_result))
        return NULL;
    if (n_unary_loops == MAX_UNARY_LOOPS) {
        PyErr_SetString(PyExc_RuntimeError, "too many compiled functions");
        return NULL;
    }
    u.loops[0] = (unary_loop)(uintptr_t)float32;
    u.loops[1] = (unary_loop)(uintptr_t)float64;
    PyObject *index = PyLong_FromLong(n_unary_loops);
    PyObject *function = index == NULL ? NULL : PyCFunction_NewEx(&unary_loop_definition, index, NULL);
    Py_XDECREF(index);
    if (function == NULL) return NULL;
    Py_INCREF(u.python_op);
    Py_INCREF(u.node_cls);
    Py_INCREF(u.ufunc);
    unary_loops[n_unary_loops++] = u;
    return function;
}

/* configure_functions(settled): ``choice.settled``. */
static PyObject *configure_functions(PyObject *self, PyObject *settled) {
    Py_INCREF(settled);
    Py_XSETREF(choice_settled, settled);
    Py_RETURN_NONE;
}
'''
