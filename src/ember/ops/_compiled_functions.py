"""Ops whose forward on a small tensor is one call (a NumPy ufunc, its reduction, one of ember's
compiled loops, NumPy's matmul, concatenation or argmax), compiled for their common case. Of one tensor:
``sigmoid``, ``erf``, ``erfc``, ``erfinv``, ``lgamma``, ``digamma`` and ``ember.special``'s Bessel, Airy and
normal-distribution functions, ``entr`` and ``sinc`` (on loops), and ``exp``, ``log``, ``sqrt``,
``sin``, ``tanh``, ``abs`` and the other ops that ``unary._ufunc`` declares (on ufuncs). Of two
tensors: ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``atan2``, ``hypot``, ``copysign``,
``nextafter``, ``logaddexp`` and ``logaddexp2`` (on ufuncs), ``xlogy`` and ``special.xlog1py``
(on loops); small matrix products ``mm``, ``bmm`` and ``matmul`` of two matrices (NumPy's
matmul; matmul's of two float16 or bfloat16 tensors in float32, cast back); ``where`` of a bool
condition and two float tensors (or a tensor and a number). Of a
list of tensors: ``cat`` and ``stack``. Reductions over dims: ``sum``, ``mean``,
``amax``, ``amin``, ``var`` and ``std`` (with Bessel's correction); and ``max`` and ``min``
along a dim. ``ember.special``'s functions of two arguments on its loops: ``_compiled_special``;
``pdist``: ``_compiled_distances``; Vandermonde matrices: ``_compiled_vander``;
``isin``: ``_compiled_membership``; ``round``: ``_compiled_rounding``;
``prelu``: ``_compiled_activations``; ``histc``: ``_compiled_histograms``;
``diag`` and ``diag_embed``: ``_compiled_diagonals``; ``prod``: ``_compiled_prod``.

On a small tensor such an op is mostly Python: its frame, its checks, the kernel choice and the
call of the loop or the ufunc cost several times the work itself. Each of these ops registers
here (``register``) and calls the entry it is given first. Once ``_compiled_methods`` has built
its extension, the entry is a C function that takes the common case: ordinary tensors on the CPU
holding small float32 arrays (or float64, where the loop has one; any dtype for cat and stack,
integers too for max and min), two or more of one dtype, with no ``__torch_function__``
dispatch or forward-mode AD; for a loop, C-contiguous arrays (two of one shape) and no forced
kernel library (``choice.settled``); for a ufunc, a first array below the size from which the op
takes a loop instead. It runs what the op's Python path runs for those arrays (the same loop,
ufunc or NumPy function, so the same bits), makes the result tensor and, where autograd records,
records the op's node with the fields and saved tensors the Python op gives it. Every other
case, and every case until the extension is built (or where it cannot be), runs the op's Python
path, which also raises every error.
"""
import sys
import threading
import typing

from .._backend import cblas
from .._dtype import bfloat16
from . import (_compiled_addc, _compiled_clamp, _compiled_layouts, _compiled_products, _compiled_scans,
               _compiled_scatters, _compiled_selects, _compiled_softmax, _compiled_sorts, _compiled_special,
               _compiled_factorizations, _compiled_distances, _compiled_vander, _compiled_membership,
               _compiled_rounding, _compiled_activations, _compiled_histograms, _compiled_diagonals,
               _compiled_prod, _compiled_decompositions, _compiled_splits)

__all__ = ["register", "Reduction", "build", "python_functions", "SOURCE"]

# what a node may save, in the order it saves them (the bits of ``saves`` in the C source)
_SAVED = ("self", "other", "result")
# the kinds of function (``enum function_kind`` in the C source)
_KINDS = ("unary", "binary", "cat", "stack", "reduce", "extremes", "matmul", "where", "gather", "scatter",
          "index_select", "take", "slices", "cumulative",
          "masked_fill", "operator", "power", "cross", "special", "addc", "scan", "sort", "topk", "median",
          "kthvalue", "triangle", "flip", "mode", "clamp",
          "scatter_reduce", "logit", "hardshrink", "nan_to_num", "heaviside", "lerp", "frexp", "add_product",
          "softmax", "outer", "trace", "rank_one", "lu_factor", "qr", "lu_unpack",
          "ldl_factor", "triangular_solve", "cholesky", "pdist", "index_reduce", "vander", "isin", "round", "prelu",
          "histc", "diag_embed", "diag", "logcumsumexp", "special_three", "histogram",
          "cdist", "prod", "svd", "eigh", "split", "masked_scatter", "orgqr", "index_put", "kron")
# the kinds of ``_compiled_factorizations`` and ``_compiled_decompositions``: their specifics (a result type,
# flags, the loops' routines) as given, or made at the first call where a callable gives them
_FACTORIZATION_KINDS = ("lu_factor", "qr", "lu_unpack", "ldl_factor", "triangular_solve", "cholesky", "svd",
                        "eigh", "orgqr")
# the kinds whose C function does its work itself or with NumPy's C API (no ufunc or loop given)
_OWN_WORK_KINDS = ("cat", "stack", "extremes", "where", "gather", "scatter", "index_select", "take", "slices",
                   "cumulative", "masked_fill", "operator", "power", "cross", "addc", "scan", "sort", "topk", "median",
                   "kthvalue", "triangle", "flip", "mode", "clamp", "scatter_reduce", "logit", "hardshrink",
                   "nan_to_num", "heaviside", "lerp", "frexp", "outer", "trace", "index_reduce",
                   "vander", "isin", "round", "prelu", "histc", "diag_embed", "diag",
                   "logcumsumexp", "cdist", "prod", "split", "masked_scatter", "index_put", "kron")
# what a "slices" function writes at its index: index_add's, index_copy's or index_fill's
_SLICE_WRITES = ("add", "copy", "fill")
# what a reduction's node is given besides what it saves: (in_shape, in_dtype), (dims, keepdim),
# count, dof (the bits of ``fields`` in the C source)
_FIELDS = ("in", "dims", "count", "dof", "ord")
# a product's operands (``enum product_operands``): dot's, mm's, bmm's, mv's, matmul's
_PRODUCT_OPERANDS = ("vectors", "matrices", "batches", "matrix_vector", "matmul", "summed_batches")
# the integer tensors an op of two takes (``enum integers``): none, integers and bools, integers
# with no zero in the second (a division's), integers
_INTEGERS = (None, "any", "nonzero_divisor", "integers")
_MOMENTS = (None, "var", "std", "norm", "var_mean", "std_mean", "p_norm")   # (a reduction's ``moment`` in the C source)

_lock = threading.Lock()
_functions = []
_state = {"built": False, "module": None}


class _Function:
    """A registered op: its entry and what its compiled function is made from (``register``)."""
    __slots__ = ("entry", "python_op", "node_cls", "saves", "kind", "addresses", "ufunc", "max_elements",
                 "specifics")

    def __init__(self, entry, python_op, node_cls, saves, kind, addresses, ufunc, max_elements, specifics):
        self.entry, self.python_op, self.node_cls, self.saves = entry, python_op, node_cls, saves
        self.kind, self.addresses, self.ufunc, self.max_elements = kind, addresses, ufunc, max_elements
        self.specifics = specifics


def register(python_op, node_cls, saves=(), *, kind="unary", addresses=None, ufunc=None, max_elements=None,
             specifics=None):
    """The entry (a one-element list) an op's function calls first with its arguments: its
    tensor (``kind`` "unary"), its two tensors ("binary"), its list of tensors and its dim
    ("cat" and "stack", which join them as ``cat`` and ``stack`` do, on any dtype; the other
    arguments then do not apply), its two operands ("matmul", on ``ufunc``, NumPy's matmul or
    dot, where the product of their sizes is below ``max_elements``; ``specifics`` which
    operands (one of ``_PRODUCT_OPERANDS``) and the module whose ``counter`` is the FLOP
    counter), its
    condition, input and other ("where": NumPy's where, for conditions of at most
    ``max_elements`` elements), its
    tensor, dim and keepdim ("reduce": ``ufunc.reduce`` over
    the dims, on a float32 or float64 tensor of at most ``max_elements`` elements, as
    ``specifics``, a ``Reduction``, describes), or its tensor, int dim and keepdim ("extremes":
    ``max`` or ``min`` along the dim, ``specifics`` being its result type and whether it is the
    max). At first it is a function that builds the compiled functions
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
    function = _Function(entry, python_op, node_cls, saves, kind, addresses, ufunc, max_elements, specifics)
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
        if function.ufunc is not None or float32 or float64 or function.kind in _OWN_WORK_KINDS:
            saves = _bits(_SAVED, function.saves)
            compiled = module.add_function(function.python_op, function.node_cls, function.ufunc, float32 or 0,
                                           float64 or 0, function.max_elements or sys.maxsize,
                                           _KINDS.index(function.kind), saves, _specifics(function))
    function.entry[0] = compiled



def _specifics(function):
    """What the C function of a kind takes besides the common fields: a reduction's nodes, fields
    and whether it divides (``Reduction``); the result type of a max or min along a dim and
    whether it is the max."""
    if function.kind == "slices":
        return (_SLICE_WRITES.index(function.specifics),)
    if function.kind == "unary":   # (whether it computes on integers and bools as the default float dtype)
        return (bool(function.specifics),)
    if function.kind == "binary":   # (which integer tensors it takes, on which ufunc; whether it is a float
        # op, and takes a number first)
        integers, int_ufunc, converts, number_first, int_numbers = function.specifics or (None,) * 2 + (False,) * 3
        return (_INTEGERS.index(integers), int_ufunc or function.ufunc, converts, number_first, int_numbers)
    if function.kind in ("addc", "scan", "triangle"):   # (whether it divides; multiplies; keeps the upper one)
        return (bool(function.specifics),)
    if function.kind in ("matmul", "add_product"):   # (and NumPy's CBLAS routines: vdot's real dot is dot's)
        operands, flop_hook = function.specifics
        return (_PRODUCT_OPERANDS.index(operands), flop_hook, bfloat16.np.num, *cblas.product_addresses())
    if function.kind == "operator":   # (the index of its method, in the order the methods are built)
        from ._compiled_methods import METHODS
        return ([name for names, *_ in METHODS for name in names].index(function.specifics),)
    if function.kind == "split":   # (its form)
        return (_compiled_splits.FORMS.index(function.specifics),)
    if function.kind == "special":   # (its form, and what the form takes: a callable gives it at the first call)
        form, taken = function.specifics
        return (_compiled_special.FORMS.index(form), taken() if callable(taken) else taken)
    if function.kind in _FACTORIZATION_KINDS or function.kind in ("histogram", "logit"):   # (made at the first call)
        return function.specifics() if callable(function.specifics) else function.specifics
    if function.kind == "reduce":
        r = function.specifics
        rows = (r.rows[0]() or 0, *r.rows[1:]) if r.rows else (0, 0, 0, 0, 0)
        return (r.whole_node, _bits(_FIELDS, r.whole_fields), _bits(_FIELDS, r.fields), int(r.divides),
                _MOMENTS.index(r.moment), int(r.without_nan), r.loop_min, int(r.any_size), *rows)
    return function.specifics


def _bits(names, given):
    return sum(1 << names.index(name) for name in given)


class Reduction(typing.NamedTuple):
    """What a reduction's compiled function records: ``whole_node`` (with ``whole_fields``)
    where no dim is given (None) and keepdim is False, else the registered node (with
    ``fields``); the fields, of "in" (``in_shape`` and ``in_dtype``), "dims" (``dims``, the
    sorted dims reduced, and ``keepdim``), "count" (the elements each result combines),
    "dof" (that count less the correction, the fourth argument, 1 by default) and "ord" (the norm's order,
    as a float). ``divides``: the result is the
    reduction divided by that count (a mean). ``moment`` "var" or "std": the variance (or its
    square root) with the correction given as a fourth argument (an int or a float; 1, Bessel's, by
    default), by ``reduce._var_data``'s steps; "var_mean" or
    "std_mean": that and the mean (``reduce._mean_data``'s), a pair; "norm": the 2-norm,
    by ``reduce._norm_data``'s (the reduction being ``np.add``'s); "p_norm": the norm of the order
    given as a fourth argument (a number, not 2), by ``reduce._norm_data``'s steps. ``without_nan``: the case
    is a C-contiguous tensor without NaN (nansum's, a plain sum there). ``loop_min``: from this many
    elements (past ``max_elements``), a C-contiguous float32 tensor reduced over every dim without keepdim
    runs on the float32 loop ``addresses()`` gives (``openmp_kernels.whole_reduction_addresses``), where
    the kernel choice is settled; ``any_size``: the Python op reduces on NumPy at every size up to
    ``max_elements`` (else the small arrays only). ``rows``: ``(address(), least, shortest, longest,
    threads_from)``: past ``max_elements``, a C-contiguous float32 tensor of at least ``least`` elements
    reduced over its last dims, rows of ``shortest`` to ``longest`` elements, runs on the row loop at ``address()``
    (``openmp_kernels.row_sums_address``, on its threads from ``threads_from`` elements), as
    ``_array_sums`` sums rows."""
    whole_node: object
    whole_fields: tuple = ()
    fields: tuple = ()
    divides: bool = False
    moment: str = None
    without_nan: bool = False
    loop_min: int = 0
    any_size: bool = False
    rows: tuple = None

# The C part, in ``_compiled_methods``' extension (it uses its helpers: ``array_of``, ``make``,
# ``plain_mode``, ``requires_grad``, ``record_node``, ``set_shape_and_dtype``, ``with_node``).
SOURCE = r'''
/* A function of one or two tensors (``_compiled_functions``) on NumPy's ufunc or on a compiled
   loop ``void loop(const T *x, T *out, int64_t n, int threads)`` (one tensor) or ``void loop(const
   T *x, const T *y, T *out, int64_t n, int threads)`` (two tensors of one shape); or ``cat`` or
   ``stack`` of a list of tensors along a dim. */
#include <fenv.h>
/* the floating-point exceptions on which NumPy warns or raises (as its settings say): the kinds that
   compute in C leave a case whose steps raise one to the Python op */
#define NUMPY_EXCEPTIONS (FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW | FE_UNDERFLOW)
typedef void (*unary_loop)(const void *, void *, int64_t, int);
typedef void (*binary_loop)(const void *, const void *, void *, int64_t, int);
enum saved { SAVES_SELF = 1, SAVES_OTHER = 2, SAVES_RESULT = 4 };
enum function_kind { UNARY_FUNCTION, BINARY_FUNCTION, CAT_FUNCTION, STACK_FUNCTION, REDUCE_FUNCTION,
                     EXTREMES_FUNCTION, MATMUL_FUNCTION, WHERE_FUNCTION, GATHER_FUNCTION, SCATTER_FUNCTION,
                     INDEX_SELECT_FUNCTION, TAKE_FUNCTION, SLICES_FUNCTION, CUMULATIVE_FUNCTION,
                     MASKED_FILL_FUNCTION, OPERATOR_FUNCTION, POWER_FUNCTION, CROSS_FUNCTION, SPECIAL_FUNCTION,
                     ADDC_FUNCTION, SCAN_FUNCTION, SORT_FUNCTION, TOPK_FUNCTION, MEDIAN_FUNCTION, KTHVALUE_FUNCTION,
                     TRIANGLE_FUNCTION, FLIP_FUNCTION, MODE_FUNCTION, CLAMP_FUNCTION, SCATTER_REDUCE_FUNCTION,
                     LOGIT_FUNCTION, HARDSHRINK_FUNCTION, NAN_TO_NUM_FUNCTION, HEAVISIDE_FUNCTION,
                     LERP_FUNCTION, FREXP_FUNCTION, ADD_PRODUCT_FUNCTION, SOFTMAX_FUNCTION,
                     OUTER_FUNCTION, TRACE_FUNCTION, RANK_ONE_FUNCTION, LU_FACTOR_FUNCTION, QR_FUNCTION,
                     LU_UNPACK_FUNCTION, LDL_FACTOR_FUNCTION, TRIANGULAR_SOLVE_FUNCTION, CHOLESKY_FUNCTION,
                     PDIST_FUNCTION, INDEX_REDUCE_FUNCTION, VANDER_FUNCTION, ISIN_FUNCTION,
                     ROUND_FUNCTION, PRELU_FUNCTION, HISTC_FUNCTION, DIAG_EMBED_FUNCTION, DIAG_FUNCTION,
                     LOGCUMSUMEXP_FUNCTION, SPECIAL_THREE_FUNCTION, HISTOGRAM_FUNCTION, CDIST_FUNCTION,
                     PROD_FUNCTION, SVD_FUNCTION, EIGH_FUNCTION, SPLIT_FUNCTION, MASKED_SCATTER_FUNCTION,
                     ORGQR_FUNCTION, INDEX_PUT_FUNCTION, KRON_FUNCTION };
enum slice_writes { ADD_SLICES, COPY_SLICES, FILL_SLICES };
/* a product's operands: two vectors (dot), matrices (mm), batches of matrices (bmm), a matrix and
   a vector (mv), or matmul's (two matrices, recording mm's node; where autograd does not record,
   a vector for either or both) */
enum product_operands { VECTORS, MATRICES, BATCHES, MATRIX_VECTOR, MATMUL_OPERANDS, SUMMED_BATCHES };
enum reduction_fields { IN_FIELDS = 1, DIMS_FIELDS = 2, COUNT_FIELD = 4, DOF_FIELD = 8, ORD_FIELD = 16 };
enum integers { NO_INTEGERS, INTEGERS_AND_BOOLS, NONZERO_DIVISOR, INTEGERS_ONLY };
enum moment { NO_MOMENT, VARIANCE, STANDARD_DEVIATION, EUCLIDEAN_NORM, VARIANCE_AND_MEAN, STD_AND_MEAN, P_NORM };
typedef struct {
    PyObject *python_op, *node_cls;   /* node_cls None: tensors that require grad go to the Python op */
    PyObject *ufunc;                  /* the NumPy ufunc the op is on float arrays (None: the loops) */
    void *loops[2];                   /* float32's and float64's, NULL where there is none */
    Py_ssize_t max_elements;          /* the most float32 elements taken here (a ufunc's op's loop takes more) */
    int kind, arity, saves;           /* saves: the ``enum saved`` bits, saved in that order */
    /* a reduction's: ``ufunc.reduce``, the node where no dim is given, each node's ``enum
       reduction_fields``, and whether the result is divided by the count (a mean) */
    PyObject *reduce, *whole_node;
    int whole_fields, fields, divides, moment;
    int without_nan;   /* (nansum's: the case holds no NaN) */
    /* (a reduction's: from this many float32 elements reduced over every dim without keepdim, the loop
       ``loops[0]`` (``openmp_kernels``' whole reductions, on ``loop_threads()`` threads; 0: none); whether
       the Python op reduces on NumPy at every size up to max_elements, past the small arrays) */
    Py_ssize_t loop_min;
    int any_size;
    /* (a reduction's: the loop summing float32 rows (of their squares, a 2-norm's; NULL: none), from how many
       elements, rows from and up to how long, on the threads from how many elements) */
    void *row_loop;
    Py_ssize_t row_min, row_shortest, row_max, row_threads_min;
    Py_ssize_t max_row, partition_ratio;   /* (a sort's: its longest row; topk's: the ratio it partitions from) */
    Py_ssize_t min_width;   /* (a softmax's: the narrowest rows taken in a tensor of more than max_elements) */
    PyObject *all_node;   /* (a median's node of all elements) */
    int ignores_nan;      /* (nanmedian's) */
    /* a product's: its operands' ``enum product_operands``, where the FLOP counter is found, and bfloat16's
       type number (matmul's operands of it or of float16 are multiplied in float32, as the Python op does) */
    int product_operands, bfloat16_type;
    PyObject *flop_hook;
    /* a scatter's: the node of a number scattered (node_cls: of a tensor), whether it adds; a
       "slices" function's ``enum slice_writes``; an index_put's: whether it writes into its input (index_put_'s);
       a scatter_reduce's: whether it is scatter's with a reduce (its names "add" and "multiply", recording
       nothing) */
    PyObject *number_node;
    int adds, writes, scatter_names;
    /* an operator's function's: the index of the operator's method (``methods_``) */
    int method;
    /* an op of one tensor's: whether it computes on integers and bools as the default float dtype; an op
       of two's: the ``enum integers`` of two tensors of one dtype it takes, on ``int_ufunc``, whether it
       is a float op (integers and bools taken as ``pointwise.float_arrays`` takes them), whether it takes
       a number first on its loop (``number_first_case``), and an int number second (``int_number_case``) */
    int converts, integers, number_first, int_numbers;
    PyObject *int_ufunc;
    /* a special function's: its ``enum special_form`` (an SVD's or eigh's: its ``enum decomposition_form``; a
       split's: its ``enum split_form``); a polynomial's flag (shifted); whether a function of two tensors takes
       two dtypes, promoted; polygamma's factors (a tuple of floats, by n) and digamma's and trigamma's loops
       (float32's, float64's), a polynomial's from float32 to float64 and from float64 to float32; a
       histogram's linspace loops (float32's, float64's) */
    int form, shifted, promotes;
    PyObject *factors;
    void *own_loops[4];
    /* a factorization's or triangular solve's (``_compiled_factorizations``): its result type; an LU or LDL
       factorization's: whether a zero pivot is an error (``lu_factor``'s, ``ldl_factor``'s); the CBLAS gemm
       of float32 and of float64 that the loops call (NULL: none), whether its sizes are int64 */
    PyObject *result_type;
    int checks_errors;
    void *gemms[2];
    long long ilp64;
    /* ``linalg.lu``'s: the factors unpacked into P, L and U, by the loops of float32 and float64 */
    int unpacks;
    void *unpack_loops[2];
    /* ``lu_unpack``'s (with ``result_type``): whether it unpacks L and U, and whether P */
    int unpacks_data, unpacks_pivots;
    /* an LDL factorization's (with ``result_type`` and ``checks_errors``): Bunch-Kaufman's alpha */
    double alpha;
    /* a triangular solve's (with ``gemms`` and ``ilp64``): its ``enum solve_form`` (a copy of A returned beside
       the solution, ``triangular_solve``'s in ``result_type``; ``cholesky_solve``'s second solve) */
    int solve_form;
    /* a Cholesky factorization's (with ``gemms`` and ``ilp64``): whether it gives the upper factor, and whether
       it returns ``info`` beside it (``cholesky_ex``'s, in ``result_type``) */
    int upper_factor, returns_info;
    /* a product's: the CBLAS gemv and dot of float32 and float64 (with ``gemms``: NULL where not found) */
    void *gemvs[2], *dots[2];
    /* a QR factorization's (with ``result_type`` and ``ilp64``): its ``enum qr_mode``, LAPACK's geqrf and
       orgqr of float32 and float64 (NULL where not found) */
    int qr_mode;
    void *geqrfs[2], *orgqrs[2];
    /* an SVD's or eigh's (with ``result_type``, ``form`` and ``ilp64``): the LAPACK routine's job (gesdd's
       jobz: 0 "N", 1 "S", 2 "A"; syevd's uplo: 1 "L", 0 "U"), the routine of float32 and float64 (NULL
       where not found) */
    int lapack_job;
    void *lapack_routines[2];
    /* logit's: the bits of the NaN NumPy's log gives a negative number, float32's, float64's */
    unsigned long long log_of_negative[2];
} Function;

#define MAX_FUNCTIONS 256
static Function functions_[MAX_FUNCTIONS];
static int n_functions;
static PyObject *choice_settled;   /* ``choice.settled``: no kernel library forced, the settings checked */
static PyObject *loop_threads;     /* ``openmp_kernels.thread_count``: the threads ``openmp_kernels``' loops run on */
/* ``loop_threads()``: the threads ``openmp_kernels``' loops run on; -1 on error. */
static long loop_thread_count(void) {
    PyObject *threads = PyObject_CallNoArgs(loop_threads);
    long n = threads == NULL ? -1 : PyLong_AsLong(threads);
    Py_XDECREF(threads);
    return n;
}
#define LOOP_SERIAL_MAX_ELEMENTS 256   /* (``vector_math.SERIAL_MAX_ELEMENTS``: up to this many, one thread) */
#define BINARY_LOOP_MIN_BYTES (1 << 20)   /* (``openmp_kernels.BINARY_MIN_BYTES``: pointwise's one-loop arithmetic) */
/* (``pointwise.INT64_DIVISION_MIN_ELEMENTS``: int64 floor division and remainder on openmp_kernels' loop) */
#define INT64_DIVISION_MIN_ELEMENTS (1 << 12)
static PyObject *record_outputs;   /* ``_common.record``: what records more than one output */
static PyObject *dtype_defaults, *s_dtype, *s_np;   /* ``_dtype._Defaults`` (``.dtype.np``: the default float) */
static PyObject *numpy_sqrt, *numpy_where;   /* (a standard deviation's last step; where's selection) */
static PyObject *numpy_absolute, *maximum_reduce, *minimum_reduce;   /* (a p-norm's) */
static PyObject *numpy_maximum, *numpy_minimum, *numpy_log, *numpy_frexp;   /* (clamp's, logit's, frexp's) */
static PyObject *numpy_square, *numpy_power, *s_exponent;   /* (pow's) */
static PyObject *numpy_add, *numpy_multiply;   /* (a product's input added, its coefficients) */
static PyObject *s_dtypes, *s_dim, *s_used, *s_sizes, *s_in_dtype, *s_dims, *s_keepdim, *s_count, *s_counter,
                *s_dof, *s_shapes, *s_src_shape, *s_source_shape, *s_alpha, *s_ord;

/* Whether any of the ``n`` tensors ``tensors`` requires grad: 0 or 1, -1 on error. */
static int any_requires_grad(PyObject *const *tensors, int n) {
    int grad = 0;
    for (int i = 0; i < n && grad >= 0; i++) {
        int r = requires_grad(tensors[i]);
        grad = r < 0 ? -1 : grad | r;
    }
    return grad;
}

/* Whether ``x`` is an integer case of ``f`` (``f->integers``). */
static int integral_case(Function *f, PyArrayObject *x) {
    return f->integers && (PyArray_ISINTEGER(x) || (f->integers == INTEGERS_AND_BOOLS && PyArray_ISBOOL(x)));
}

/* Whether the arrays of ``f``'s tensors are its case, before the modes are checked: small float32
   or float64 arrays of one dtype, C-contiguous and of one shape for a loop (set in ``*loop``). */
/* Whether ``f`` takes its arrays past the small arrays' size: an op of one tensor, or of two of one shape,
   row-major, under the size of ``pointwise``'s one-loop arithmetic, of at most ``max_elements`` elements of
   any dtype (its Python op takes its ufunc there, or its loop at any size on the loops' threads). */
static int takes_any_size(Function *f, PyArrayObject **arrays) {
    PyArrayObject *x = arrays[0], *y = arrays[1];
    if (PyArray_SIZE(x) > f->max_elements) return 0;
    if (f->kind == UNARY_FUNCTION) return 1;
    /* (a product with a vector: the Python op's is NumPy's at every size; its multiply-adds checked below) */
    if (f->kind == MATMUL_FUNCTION) return y != NULL && (PyArray_NDIM(x) == 1 || PyArray_NDIM(y) == 1);
    return f->kind == BINARY_FUNCTION && y != NULL && PyArray_NDIM(y) == PyArray_NDIM(x)
           && PyArray_CompareLists(PyArray_DIMS(y), PyArray_DIMS(x), PyArray_NDIM(x))
           && PyArray_IS_C_CONTIGUOUS(x) && PyArray_IS_C_CONTIGUOUS(y) && PyArray_NBYTES(x) < BINARY_LOOP_MIN_BYTES;
}

static int function_arrays(Function *f, PyArrayObject **arrays, void **loop) {
    PyArrayObject *x = arrays[0];
    int type = PyArray_TYPE(x);
    int integral = integral_case(f, x);
    if (type != NPY_FLOAT32 && type != NPY_FLOAT64 && !integral) return 0;
    for (int i = 0; i < f->arity; i++) {
        PyArrayObject *a = arrays[i];
        if (a == NULL || PyArray_TYPE(a) != type || !PyArray_ISNOTSWAPPED(a)
                || (PyArray_NBYTES(a) >= small_bytes && !takes_any_size(f, arrays)))
            return 0;
    }
    if (f->kind == MATMUL_FUNCTION) {   /* operands of the product's ranks whose sizes' product is small */
        PyArrayObject *y = arrays[1];
        int xd = PyArray_NDIM(x), yd = PyArray_NDIM(y), p = f->product_operands;
        int ranks = p == VECTORS ? xd == 1 && yd == 1
                    : p == MATRICES ? xd == 2 && yd == 2
                    : p == BATCHES ? xd == 3 && yd == 3 && PyArray_DIM(x, 0) == PyArray_DIM(y, 0)
                    : p == MATRIX_VECTOR ? xd == 2 && yd == 1
                    : xd >= 1 && xd <= 2 && yd >= 1 && yd <= 2;
        if (!ranks || PyArray_SIZE(x) == 0 || PyArray_SIZE(y) == 0) return 0;
        npy_intp k = PyArray_DIM(x, xd - 1);
        /* (the sizes' product: a product of matrices' multiply-adds times k, one with a vector's exactly, k
           times fewer) */
        double work = (double)PyArray_SIZE(x) * (double)PyArray_SIZE(y) / (xd == 1 || yd == 1 ? (double)k : 1.0);
        /* (k 1 between matrices: products._numpy_matmul multiplies) */
        return k == PyArray_DIM(y, yd == 1 ? 0 : yd - 2) && (k > 1 || xd == 1 || yd == 1)
               && work < (double)f->max_elements;
    }
    if (integral) {   /* (on ``int_ufunc``; a division's divisor without a zero, where the Python op raises) */
        if (f->integers == NONZERO_DIVISOR && type == NPY_INT64 && PyArray_SIZE(x) >= INT64_DIVISION_MIN_ELEMENTS)
            return 0;   /* (the Python op's loop) */
        npy_intp nonzero = f->integers == NONZERO_DIVISOR ? PyArray_CountNonzero(arrays[1]) : 0;
        if (nonzero < 0) PyErr_Clear();
        return f->integers != NONZERO_DIVISOR || nonzero == PyArray_SIZE(arrays[1]);
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
    if (f->arity == 2 && f->kind != MATMUL_FUNCTION   /* (a binary node's) */
            && (set_shape_and_dtype(node, s_self_shape, s_self_dtype, array_of(inputs[0])) < 0
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

/* ``f`` on its tensors ``inputs`` (their ``arrays``) in the common case, the result cast to ``narrowed``
   where given: a new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one
   (nothing done). */
static PyObject *float_function_case(Function *f, PyObject *const *inputs, PyArrayObject **arrays,
                                     PyArray_Descr *narrowed, int *handled);
/* A product by the CBLAS routine NumPy calls (``_compiled_products``), NULL with no error where it does not apply. */
static PyObject *blas_product(Function *f, PyArrayObject *x, PyArrayObject *y);

/* Whether a call may run a kernel choice's first kernel (a loop) here: the modes plain and the choice
   settled (``choice.settled``). 1 yes, 0 no, -1 on error. */
static int plain_and_settled(void) {
    int plain = plain_mode();
    if (plain <= 0) return plain;
    PyObject *settled = PyObject_CallNoArgs(choice_settled);
    int r = settled == NULL ? -1 : settled == Py_True;
    Py_XDECREF(settled);
    return r;
}

/* The default float dtype's type number where it is float32 or float64; 0 where it is another,
   -1 on error. */
static int default_float_type(void) {
    PyObject *dtype = PyObject_GetAttr(dtype_defaults, s_dtype);
    PyObject *descr = dtype == NULL ? NULL : PyObject_GetAttr(dtype, s_np);
    Py_XDECREF(dtype);
    if (descr == NULL) return -1;
    int type = PyArray_DescrCheck(descr) ? ((PyArray_Descr *)descr)->type_num : 0;
    Py_DECREF(descr);
    return type == NPY_FLOAT32 || type == NPY_FLOAT64 ? type : 0;
}

/* ``x`` (small integers or bools) as the default float dtype where that is float32 or float64: a
   new array; NULL with no error set where the default is another, NULL with an error on error. */
static PyArrayObject *as_default_float(PyArrayObject *x) {
    int type = default_float_type();
    return type <= 0 ? NULL : (PyArrayObject *)PyArray_CastToType(x, PyArray_DescrFromType(type), 0);
}

static PyArrayObject *broadcast_copy(PyArrayObject *a, const npy_intp *shape, int ndim);
static PyObject *view_of(PyArrayObject *a, int ndim, const npy_intp *shape, const npy_intp *strides, char *data,
                         int flags);
static int small_numbers(PyArrayObject *a);

/* The shape ``x`` and ``y`` broadcast to (into ``shape``): its number of dims, or -1 where they do not
   broadcast. */
static int broadcast_shape(PyArrayObject *x, PyArrayObject *y, npy_intp *shape) {
    int nd = PyArray_NDIM(x) > PyArray_NDIM(y) ? PyArray_NDIM(x) : PyArray_NDIM(y);
    for (int d = 0; d < nd; d++) {
        int i = d - (nd - PyArray_NDIM(x)), j = d - (nd - PyArray_NDIM(y));
        npy_intp m = i < 0 ? 1 : PyArray_DIM(x, i), n = j < 0 ? 1 : PyArray_DIM(y, j);
        if (m != n && m != 1 && n != 1) return -1;
        shape[d] = m == 1 ? n : m;
    }
    return nd;
}

/* Whether ``y`` repeats over ``x``'s leading dims as rows, as ``vector_math.binary`` takes it: its sizes after
   its leading 1s are ``x``'s last ones (none, as a 0-d ``y``'s, or a size 1's, is not a row). */
static int rows_of(PyArrayObject *x, PyArrayObject *y) {
    int first = 0;
    while (first < PyArray_NDIM(y) && PyArray_DIM(y, first) == 1) first++;
    int k = PyArray_NDIM(y) - first;
    return k > 0 && k <= PyArray_NDIM(x)
           && PyArray_CompareLists(PyArray_DIMS(x) + PyArray_NDIM(x) - k, PyArray_DIMS(y) + first, k);
}

/* A binary op's two tensors ``inputs`` where their arrays are not yet its case: a float op's
   (``f->converts``) integers and bools taken as ``pointwise.float_arrays`` takes them (as the other's float
   dtype, or both as the default float dtype), and, for an op on a loop, a second array of rows repeated
   over the first (``rows_of``: the Python op's loop takes them, not NumPy's passes) as a row-major copy of
   the first's shape; then ``float_function_case``. */
static PyObject *binary_operands_case(Function *f, PyObject *const *inputs, PyArrayObject **arrays, int *handled) {
    PyArrayObject *x = arrays[0], *y = arrays[1];
    int tx = PyArray_TYPE(x), ty = PyArray_TYPE(y);
    int fx = tx == NPY_FLOAT32 || tx == NPY_FLOAT64, fy = ty == NPY_FLOAT32 || ty == NPY_FLOAT64;
    int ix = PyArray_ISINTEGER(x) || PyArray_ISBOOL(x), iy = PyArray_ISINTEGER(y) || PyArray_ISBOOL(y);
    int type = fx && fy ? (tx == ty ? tx : 0) : f->converts && fx && iy ? tx : f->converts && ix && fy ? ty
               : f->converts && ix && iy ? default_float_type() : 0;
    npy_intp shape[NPY_MAXDIMS];
    int same = PyArray_NDIM(x) == PyArray_NDIM(y) && PyArray_CompareLists(PyArray_DIMS(x), PyArray_DIMS(y),
                                                                           PyArray_NDIM(x));
    int spreads = !same && f->ufunc == Py_None && rows_of(x, y);
    int nd = spreads ? broadcast_shape(x, y, shape) : 0;
    if (type <= 0 || nd < 0 || (tx == type && ty == type && !spreads) || !PyArray_ISNOTSWAPPED(x)
            || !PyArray_ISNOTSWAPPED(y) || PyArray_NBYTES(x) >= small_bytes || PyArray_NBYTES(y) >= small_bytes) {
        *handled = type < 0;
        return type < 0 ? NULL : float_function_case(f, inputs, arrays, NULL, handled);
    }
    PyArrayObject *taken[2] = {NULL, NULL};
    PyObject *out = NULL;
    for (int i = 0; i < 2; i++) {
        PyArrayObject *a = PyArray_TYPE(arrays[i]) == type ? (PyArrayObject *)Py_NewRef(arrays[i])
                           : (PyArrayObject *)PyArray_CastToType(arrays[i], PyArray_DescrFromType(type), 0);
        if (a != NULL && spreads && (PyArray_NDIM(a) != nd || !PyArray_CompareLists(PyArray_DIMS(a), shape, nd)))
            Py_SETREF(a, broadcast_copy(a, shape, nd));
        if ((taken[i] = a) == NULL) break;
    }
    if (taken[0] != NULL && taken[1] != NULL) out = float_function_case(f, inputs, taken, NULL, handled);
    else *handled = 1;
    Py_XDECREF(taken[0]);
    Py_XDECREF(taken[1]);
    return out;
}

/* ``f(number, tensor)`` of a binary op on a loop that takes a number first (``f->number_first``: remainder's
   and floor_divide's) in the common case: an int (at most 2^53 in magnitude) or a float, finite as float32,
   and a small C-contiguous float32 tensor with elements, none zero or NaN (where the Python op's NumPy
   passes may warn), that does not require grad: the number spread over the tensor's shape in float32 (the
   Python op's 0-d tensor of it) and the loop run on the two, as the Python op's ``_number_spread`` runs
   it. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *number_first_case(Function *f, PyObject *const *inputs, int *handled) {
    *handled = 0;
    PyObject *number = inputs[0];
    PyArrayObject *y = array_of(inputs[1]);
    double v = PyFloat_CheckExact(number) ? PyFloat_AS_DOUBLE(number) : PyLong_AsDouble(number);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if ((PyLong_CheckExact(number) && fabs(v) > 9007199254740992.0) || !isfinite((float)v) || y == NULL
            || PyArray_TYPE(y) != NPY_FLOAT32 || f->loops[0] == NULL || PyArray_SIZE(y) == 0
            || !PyArray_IS_C_CONTIGUOUS(y) || !PyArray_ISALIGNED(y) || !PyArray_ISNOTSWAPPED(y)
            || PyArray_NBYTES(y) >= small_bytes)
        return NULL;
    const float *ys = PyArray_DATA(y);
    npy_intp n = PyArray_SIZE(y);
    for (npy_intp i = 0; i < n; i++)
        if (ys[i] == 0 || ys[i] != ys[i]) return NULL;
    int grad = requires_grad(inputs[1]);
    int ready = grad < 0 ? -1 : grad ? 0 : plain_and_settled();
    if (ready <= 0) {
        *handled = ready < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *spread = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(y), PyArray_DIMS(y), NPY_FLOAT32);
    PyArrayObject *out = spread == NULL ? NULL
                         : (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(y), PyArray_DIMS(y), NPY_FLOAT32);
    if (out != NULL) {
        float *xs = PyArray_DATA(spread);
        for (npy_intp i = 0; i < n; i++) xs[i] = (float)v;
        ((binary_loop)f->loops[0])(xs, ys, PyArray_DATA(out), n, 1);
    }
    Py_XDECREF(spread);
    return out == NULL ? NULL : make((PyObject *)out);
}

/* ``f(tensor, int)`` of a binary op that takes an int number second (``f->int_numbers``: the bitwise ops', the
   divisions') in the common case: a small integer tensor (int8 to int64 or uint8) with dims and a Python int
   within its dtype's range (not 0, for a division), no ``__torch_function__`` dispatch or forward-mode AD (an
   integer tensor does not require grad): ``int_ufunc`` of the array and the int (NumPy keeps the array's dtype
   for a Python int, as torch's result type does). A new tensor, NULL on error, or ``*handled`` set to 0 where
   the case is not this one. */
static PyObject *int_number_case(Function *f, PyObject *const *inputs, int *handled) {
    *handled = 0;
    PyArrayObject *x = array_of(inputs[0]);
    if (!small_numbers(x) || PyArray_NDIM(x) == 0) return NULL;
    char kind = PyArray_DESCR(x)->kind;
    int bits = 8 * (int)PyArray_ITEMSIZE(x), overflow = 0;
    if (kind != 'i' && !(kind == 'u' && bits == 8)) return NULL;
    long long v = PyLong_AsLongLongAndOverflow(inputs[1], &overflow);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (overflow || (kind == 'u' && (v < 0 || v > 255))
            || (kind == 'i' && bits < 64 && (v < -(1LL << (bits - 1)) || v >= (1LL << (bits - 1))))
            || (v == 0 && f->integers == NONZERO_DIVISOR))   /* (a division by 0: the Python op raises) */
        return NULL;
    int plain = plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *operands[2] = {(PyObject *)x, inputs[1]};
    PyObject *data = PyObject_Vectorcall(f->int_ufunc, operands, 2, NULL);
    if (data == NULL) {   /* (the Python op raises torch's error) */
        PyErr_Clear();
        return NULL;
    }
    *handled = 1;
    return make(data);
}

/* ``matmul`` of two small tensors of one half-precision dtype (float16 or bfloat16) where nothing records:
   the product of their float32 forms, cast back, as ``linalg._product`` computes it. */
static PyObject *half_product_case(Function *f, PyObject *const *inputs, PyArrayObject **arrays, int *handled) {
    int grad = any_requires_grad(inputs, 2);
    if (grad != 0) {
        *handled = grad < 0;
        return NULL;
    }
    PyArrayObject *wide[2] = {NULL, NULL};
    for (int i = 0; i < 2 && !*handled; i++)
        if ((wide[i] = (PyArrayObject *)PyArray_CastToType(arrays[i], PyArray_DescrFromType(NPY_FLOAT32), 0)) == NULL)
            *handled = 1;
    PyObject *out = *handled ? NULL : float_function_case(f, inputs, wide, PyArray_DESCR(arrays[0]), handled);
    Py_XDECREF(wide[0]);
    Py_XDECREF(wide[1]);
    return out;
}

/* ``f`` on its tensors ``inputs`` in the common case, an op of one tensor that computes on
   integers and bools as the default float dtype (``f->converts``) taking them so converted, and
   matmul of half-precision tensors (``half_product_case``). */
static PyObject *function_case(Function *f, PyObject *const *inputs, int *handled) {
    *handled = 0;
    PyArrayObject *arrays[2] = {array_of(inputs[0]), f->arity == 2 ? array_of(inputs[1]) : NULL};
    PyArrayObject *x = arrays[0];
    if (f->kind == MATMUL_FUNCTION && f->product_operands == MATMUL_OPERANDS && x != NULL && arrays[1] != NULL
            && (PyArray_TYPE(x) == NPY_HALF || PyArray_TYPE(x) == f->bfloat16_type)
            && PyArray_TYPE(arrays[1]) == PyArray_TYPE(x) && PyArray_NBYTES(x) < small_bytes
            && PyArray_NBYTES(arrays[1]) < small_bytes)
        return half_product_case(f, inputs, arrays, handled);
    if (f->kind == BINARY_FUNCTION && x != NULL && arrays[1] != NULL && !integral_case(f, x))
        return binary_operands_case(f, inputs, arrays, handled);
    if (!f->converts || x == NULL || !(PyArray_ISINTEGER(x) || PyArray_ISBOOL(x)) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_NBYTES(x) >= small_bytes)
        return float_function_case(f, inputs, arrays, NULL, handled);
    PyArrayObject *converted = as_default_float(x);
    if (converted == NULL) {
        *handled = PyErr_Occurred() != NULL;
        return NULL;
    }
    arrays[0] = converted;
    PyObject *out = float_function_case(f, inputs, arrays, NULL, handled);
    Py_DECREF(converted);
    return out;
}

static PyObject *float_function_case(Function *f, PyObject *const *inputs, PyArrayObject **arrays,
                                     PyArray_Descr *narrowed, int *handled) {
    void *loop = NULL;
    if (arrays[0] == NULL || !function_arrays(f, arrays, &loop)) return NULL;
    int grad = any_requires_grad(inputs, f->arity);
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
    if (grad && f->kind == MATMUL_FUNCTION && f->product_operands == MATMUL_OPERANDS
            && (PyArray_NDIM(arrays[0]) == 1 || PyArray_NDIM(arrays[1]) == 1))
        return NULL;   /* (the Python op composes matmul of a vector from dot or mv, recording theirs) */
    if (f->kind == MATMUL_FUNCTION) {   /* (a FLOP counter counting: the Python op counts the product) */
        PyObject *counter = PyObject_GetAttr(f->flop_hook, s_counter);
        int counting = counter != Py_None;
        Py_XDECREF(counter);
        if (counter == NULL) *handled = 1;
        if (counter == NULL || counting) return NULL;
    }
    PyObject *data;
    PyArrayObject *x = arrays[0];
    if (loop != NULL) {
        PyArray_Descr *descr = PyArray_DESCR(x);
        Py_INCREF(descr);
        data = PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(x), PyArray_DIMS(x), NULL, NULL, 0, NULL);
        /* (on the loops' threads past the serial size, as ``vector_math`` runs them) */
        long threads = data != NULL && PyArray_SIZE(x) > LOOP_SERIAL_MAX_ELEMENTS && loop_threads != NULL
                       ? loop_thread_count() : 1;
        if (threads < 0) Py_CLEAR(data);
        if (data != NULL && f->arity == 1)
            ((unary_loop)loop)(PyArray_DATA(x), PyArray_DATA((PyArrayObject *)data), PyArray_SIZE(x), (int)threads);
        else if (data != NULL)
            ((binary_loop)loop)(PyArray_DATA(x), PyArray_DATA(arrays[1]), PyArray_DATA((PyArrayObject *)data),
                                PyArray_SIZE(x), (int)threads);
    } else {
        data = f->kind == MATMUL_FUNCTION ? blas_product(f, x, arrays[1]) : NULL;   /* (NumPy's routine, called here) */
        if (data == NULL && !PyErr_Occurred())
            data = PyObject_Vectorcall(integral_case(f, x) ? f->int_ufunc : f->ufunc, (PyObject **)arrays, f->arity,
                                       NULL);
        if (data == NULL && f->arity == 2) {   /* shapes that do not broadcast: the Python op raises torch's error */
            PyErr_Clear();
            return NULL;
        }
    }
    *handled = 1;
    if (data != NULL && narrowed != NULL) {   /* (a product of two vectors may be a NumPy scalar) */
        PyObject *array = PyArray_FROM_O(data);
        Py_INCREF(narrowed);
        Py_SETREF(data, array == NULL ? NULL : PyArray_CastToType((PyArrayObject *)array, narrowed, 0));
        Py_XDECREF(array);
    }
    if (data == NULL) return NULL;
    PyObject *out = make(data);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, inputs[0], f->arity == 2 ? inputs[1] : NULL, out);
    if (node != NULL && node != Py_None && function_fields(f, node, inputs, out) < 0) Py_CLEAR(node);
    return with_node(out, node);
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

/* Whether ``x`` is a dtype whose promotion with another such NumPy's gives torch's, but for integers with floats:
   bool, a signed integer, uint8 or float16, float32 or float64 (torch promotes no other unsigned integer with
   another dtype). */
static int promoted_as_torch(PyArray_Descr *x) {
    npy_intp size = PyDataType_ELSIZE(x);
    return PyDataType_ISNOTSWAPPED(x) && (x->kind == 'b' || x->kind == 'i' || (x->kind == 'u' && size == 1)
                                          || (x->kind == 'f' && size <= 8));
}

/* The dtype torch gives the join of ``n`` tensors' arrays of two or more dtypes (``promoted_as_torch``): the floats'
   promoted dtype where any is a float (integers and bools take it, where NumPy would widen it), else their promoted
   integer or bool dtype. A new reference, or NULL (no error set) for another dtype. */
static PyArray_Descr *joined_dtype(PyObject **items, Py_ssize_t n) {
    PyArray_Descr *all = NULL, *floats = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyArray_Descr *x = PyArray_DESCR(array_of(items[i]));
        PyArray_Descr **into = x->kind == 'f' ? &floats : &all;
        if (!promoted_as_torch(x)) break;
        Py_XSETREF(*into, *into == NULL ? (PyArray_Descr *)Py_NewRef(x) : PyArray_PromoteTypes(*into, x));
        if (*into == NULL) break;
        if (i == n - 1) {
            Py_XDECREF(floats == NULL ? NULL : all);
            return floats != NULL ? floats : all;
        }
    }
    PyErr_Clear();
    Py_XDECREF(all);
    Py_XDECREF(floats);
    return NULL;
}

/* ``cat(tensors, dim)`` or ``stack(tensors, dim)`` in the common case: a list or tuple of ordinary
   tensors on the CPU (of one shape for stack; none 0-d, and for cat none the 1-d empty tensor it
   skips) of one dtype or of dtypes ``joined_dtype`` promotes, an int dim in range, no
   ``__torch_function__`` dispatch or forward-mode AD: NumPy's concatenation (of the tensors, cast
   to the promoted dtype, viewed with the new dim for stack), the node recorded where autograd
   records. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one
   (nothing done). */
static PyObject *join_case(Function *f, PyObject *tensors, PyObject *at, int *handled) {
    *handled = 0;
    int stack = f->kind == STACK_FUNCTION;
    if (!(PyList_CheckExact(tensors) || PyTuple_CheckExact(tensors)) || !PyLong_CheckExact(at)) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
    PyObject **items = PySequence_Fast_ITEMS(tensors);
    if (n == 0) return NULL;
    PyArrayObject *first = NULL;
    int grad = 0, mixed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyArrayObject *a = Py_TYPE(items[i]) == TensorType ? array_of(items[i]) : NULL;
        if (a == NULL || PyArray_NDIM(a) == 0 || (PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == 0 && !stack))
            return NULL;
        if (first == NULL) {
            first = a;
        } else if (stack && (PyArray_NDIM(a) != PyArray_NDIM(first)
                             || !PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(first), PyArray_NDIM(a)))) {
            return NULL;
        } else {
            mixed |= !PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(first));
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
    npy_intp dim;
    if (!dim_arg(at, ndim, &dim)) return NULL;
    PyArray_Descr *joined = mixed ? joined_dtype(items, n) : NULL;
    if (mixed && joined == NULL) return NULL;
    int plain = plain_mode();
    PyObject *arrays = plain > 0 ? PyList_New(n) : NULL;
    if (arrays == NULL) {
        Py_XDECREF(joined);
        *handled = plain != 0;
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    PyArray_Dims shape = {dims, ndim};
    for (int d = 0, k = 0; stack && d < ndim; d++)   /* each tensor's shape with the new dim */
        dims[d] = d == dim ? 1 : PyArray_DIM(first, k++);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyArrayObject *a = array_of(items[i]);
        PyObject *cast = joined == NULL || PyArray_EquivTypes(PyArray_DESCR(a), joined) ? Py_NewRef(a)
                         : (Py_INCREF(joined), PyArray_CastToType(a, joined, 0));
        PyObject *item = cast == NULL || !stack ? cast : PyArray_Newshape((PyArrayObject *)cast, &shape, NPY_CORDER);
        if (stack) Py_XDECREF(cast);
        if (item == NULL) {
            Py_XDECREF(joined);
            Py_DECREF(arrays);
            *handled = 1;
            return NULL;
        }
        PyList_SET_ITEM(arrays, i, item);
    }
    Py_XDECREF(joined);
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
    return with_node(out, node);
}

/* A reduction's node fields (``enum reduction_fields``) and saved tensors, as the Python op sets them. */
static int reduction_fields(Function *f, PyObject *node, int fields, PyObject *t, PyObject *out, PyObject *dims,
                            int keepdim, Py_ssize_t count, PyObject *dof, double ord) {
    PyArrayObject *x = array_of(t);
    if ((fields & IN_FIELDS) && set_shape_and_dtype(node, s_in_shape, s_in_dtype, x) < 0) return -1;
    if ((fields & DIMS_FIELDS) && (PyObject_SetAttr(node, s_dims, dims) < 0
                                   || PyObject_SetAttr(node, s_keepdim, keepdim ? Py_True : Py_False) < 0))
        return -1;
    if (fields & COUNT_FIELD) {
        PyObject *n = PyLong_FromSsize_t(count);
        int status = n == NULL ? -1 : PyObject_SetAttr(node, s_count, n);
        Py_XDECREF(n);
        if (status < 0) return -1;
    }
    if ((fields & DOF_FIELD) && PyObject_SetAttr(node, s_dof, dof) < 0) return -1;
    if (fields & ORD_FIELD) {   /* (a norm's order) */
        PyObject *value = PyFloat_FromDouble(ord);
        int status = value == NULL ? -1 : PyObject_SetAttr(node, s_ord, value);
        Py_XDECREF(value);
        if (status < 0) return -1;
    }
    PyObject *inputs[1] = {t};
    return function_fields(f, node, inputs, out);
}

/* ``ufunc.reduce(a, axis, None, None, keepdim)``, divided by ``divisor`` where it is not 0: a new
   reference, NULL on error. */
static PyObject *reduced_over(Function *f, PyObject *a, PyObject *axis, int keepdim, Py_ssize_t divisor) {
    PyObject *call[5] = {a, axis, Py_None, Py_None, keepdim ? Py_True : Py_False};
    PyObject *data = PyObject_Vectorcall(f->reduce, call, 5, NULL);
    if (data != NULL && divisor) {
        PyObject *n = PyLong_FromSsize_t(divisor);
        Py_SETREF(data, n == NULL ? NULL : PyNumber_TrueDivide(data, n));
        Py_XDECREF(n);
    }
    return data;
}

/* The variance over ``axis`` of ``count`` elements each (its square root for a standard deviation), by
   ``reduce._var_data``'s steps: ``x`` less its mean, squared, summed, divided by ``dof`` (count less the
   correction, a Python number). A new reference, NULL on error. */
static PyObject *moment_of(Function *f, PyArrayObject *x, PyObject *axis, int keepdim, Py_ssize_t count,
                           PyObject *dof) {
    if (f->moment == EUCLIDEAN_NORM) {   /* ``reduce._norm_data``'s 2-norm: the root of the sum of squares */
        PyObject *squares = PyNumber_Multiply((PyObject *)x, (PyObject *)x);
        PyObject *sum = squares == NULL ? NULL : reduced_over(f, squares, axis, keepdim, 0);
        Py_XDECREF(squares);
        if (sum != NULL) Py_SETREF(sum, PyObject_CallOneArg(numpy_sqrt, sum));
        return sum;
    }
    PyObject *mean = reduced_over(f, (PyObject *)x, axis, 1, count);
    PyObject *centred = mean == NULL ? NULL : PyNumber_Subtract((PyObject *)x, mean);
    PyObject *squares = centred == NULL ? NULL : PyNumber_Multiply(centred, centred);
    PyObject *sum = squares == NULL ? NULL : reduced_over(f, squares, axis, keepdim, 0);
    PyObject *spread = sum == NULL ? NULL : PyNumber_TrueDivide(sum, dof);
    Py_XDECREF(sum);
    Py_XDECREF(mean);
    Py_XDECREF(centred);
    Py_XDECREF(squares);
    if (spread != NULL && (f->moment == STANDARD_DEVIATION || f->moment == STD_AND_MEAN))
        Py_SETREF(spread, PyObject_CallOneArg(numpy_sqrt, spread));
    return spread;
}

/* What a reduction over runs of contiguous elements computes in C (``enum run_result``): their sum (divided
   by the run's length for a mean), the root of their sum of squares (``reduce._norm_data``'s 2-norm), their
   variance (``reduce._var_data``'s steps: the mean, the centred squares, their sum over ``dof``) or its
   root, their greatest or least element (NaN where one is), or their sum with NaN taken as 0 (``nansum``'s). */
enum run_result { RUN_SUM, RUN_MEAN, RUN_NORM, RUN_VARIANCE, RUN_DEVIATION, RUN_MAX, RUN_MIN, RUN_NANSUM };
/* NumPy's sum of ``n`` contiguous elements (its pairwise summation, the identity 0 first), and
   ``enum run_result``'s result for each of ``runs`` runs of ``run`` elements (and the means, for the
   variance), each operation rounded to ``T`` as NumPy's passes round it; 1 where an extreme is a zero
   (NumPy's choice between signed zeros is not taken here), else 0. */
#define RUN_MOMENTS(T)                                                                                     \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static T pairwise_##T(const T *p, npy_intp n) {                                                        \
        if (n < 8) {                                                                                       \
            T sum = 0;                                                                                     \
            for (npy_intp i = 0; i < n; i++) sum += p[i];                                                  \
            return sum;                                                                                    \
        }                                                                                                  \
        if (n <= 128) {                                                                                    \
            T r[8];                                                                                        \
            for (int j = 0; j < 8; j++) r[j] = p[j];                                                       \
            npy_intp i = 8;                                                                                \
            for (; i < n - n % 8; i += 8)                                                                  \
                for (int j = 0; j < 8; j++) r[j] += p[i + j];                                              \
            T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                     \
            for (; i < n; i++) sum += p[i];                                                                \
            return sum;                                                                                    \
        }                                                                                                  \
        npy_intp half = n / 2;                                                                             \
        half -= half % 8;                                                                                  \
        return pairwise_##T(p, half) + pairwise_##T(p + half, n - half);                                   \
    }                                                                                                      \
    /* (the same sum of ``n`` elements ``stride`` bytes apart) */                                          \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static T strided_pairwise_##T(const char *p, npy_intp n, npy_intp stride) {                            \
        if (n < 8) {                                                                                       \
            T sum = 0;                                                                                     \
            for (npy_intp i = 0; i < n; i++) sum += *(const T *)(p + i * stride);                          \
            return sum;                                                                                    \
        }                                                                                                  \
        if (n <= 128) {                                                                                    \
            T r[8];                                                                                        \
            for (int j = 0; j < 8; j++) r[j] = *(const T *)(p + j * stride);                               \
            npy_intp i = 8;                                                                                \
            for (; i < n - n % 8; i += 8)                                                                  \
                for (int j = 0; j < 8; j++) r[j] += *(const T *)(p + (i + j) * stride);                    \
            T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                     \
            for (; i < n; i++) sum += *(const T *)(p + i * stride);                                        \
            return sum;                                                                                    \
        }                                                                                                  \
        npy_intp half = n / 2;                                                                             \
        half -= half % 8;                                                                                  \
        return strided_pairwise_##T(p, half, stride) + strided_pairwise_##T(p + half * stride, n - half, stride);  \
    }                                                                                                      \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static int run_results_##T(const T *x, npy_intp runs, npy_intp run, int what, T dof, T *squares, T *out,    \
                               T *means) {                                                                 \
        for (npy_intp r = 0; r < runs; r++, x += run) {                                                    \
            if (what == RUN_MAX || what == RUN_MIN) {                                                      \
                T extreme = x[0];                                                                          \
                for (npy_intp i = 1; i < run; i++)                                                         \
                    if ((what == RUN_MAX ? x[i] > extreme : x[i] < extreme) || x[i] != x[i]) extreme = x[i];  \
                if (extreme == 0) return 1;                                                                \
                out[r] = extreme;                                                                          \
                continue;                                                                                  \
            }                                                                                              \
            if (what == RUN_NANSUM) {                                                                      \
                for (npy_intp i = 0; i < run; i++) squares[i] = x[i] != x[i] ? (T)0 : x[i];                \
                out[r] = (T)0 + pairwise_##T(squares, run);                                                \
                continue;                                                                                  \
            }                                                                                              \
            T sum = (T)0 + pairwise_##T(x, run);                                                           \
            if (what == RUN_SUM || what == RUN_MEAN) {                                                     \
                out[r] = what == RUN_MEAN ? sum / (T)run : sum;                                            \
                continue;                                                                                  \
            }                                                                                              \
            T mean = sum / (T)run;                                                                         \
            for (npy_intp i = 0; i < run; i++) {                                                           \
                T centred = what == RUN_NORM ? x[i] : x[i] - mean;                                         \
                squares[i] = centred * centred;                                                            \
            }                                                                                              \
            T spread = (T)0 + pairwise_##T(squares, run);                                                  \
            if (what == RUN_VARIANCE || what == RUN_DEVIATION) spread = spread / dof;                      \
            out[r] = what == RUN_VARIANCE ? spread : (T)sqrt((double)spread);                              \
            if (means != NULL) means[r] = mean;                                                            \
        }                                                                                                  \
        return 0;                                                                                          \
    }
RUN_MOMENTS(float)
RUN_MOMENTS(double)

/* Whether the dims ``reduced`` of the C-contiguous aligned array ``x`` are its last ones: runs of contiguous
   elements (0 for another layout). */
static int in_runs(PyArrayObject *x, const char *reduced) {
    int ndim = PyArray_NDIM(x);
    for (int d = 0; d + 1 < ndim; d++)
        if (reduced[d] && !reduced[d + 1]) return 0;
    return PyArray_IS_C_CONTIGUOUS(x) && PyArray_ISALIGNED(x);
}

/* A sum or mean (a reduction on ``np.add``, or ``nansum``'s), greatest or least element (on ``np.maximum`` or
   ``np.minimum``: not where it is a zero), 2-norm, or variance or standard deviation with Bessel's correction
   (and the mean, for ``var_mean`` and ``std_mean``) of the C-contiguous float32 or float64 array ``x`` over
   dims ``reduced`` that are its last ones (runs of ``count`` elements), in C (``RUN_MOMENTS``):
   1 with new arrays in ``*spread`` (and ``*mean``), of the reduction's shape; 0 where that does not apply
   or a step raises a floating-point exception (NumPy's passes then run, and warn as NumPy's settings
   say); -1 on error. */
static int moments_in_runs(Function *f, PyArrayObject *x, const char *reduced, Py_ssize_t count, double dof,
                           int keepdim, PyObject **spread, PyObject **mean) {
    int ndim = PyArray_NDIM(x), nd = 0;
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++)
        if (!reduced[d] || keepdim) dims[nd++] = reduced[d] ? 1 : PyArray_DIM(x, d);
    int moment = f->moment, with_mean = moment == VARIANCE_AND_MEAN || moment == STD_AND_MEAN;
    int what = moment == VARIANCE || moment == VARIANCE_AND_MEAN ? RUN_VARIANCE
               : moment == STANDARD_DEVIATION || moment == STD_AND_MEAN ? RUN_DEVIATION
               : moment == EUCLIDEAN_NORM ? RUN_NORM
               : moment != NO_MOMENT ? -1
               : f->without_nan ? RUN_NANSUM
               : f->ufunc == numpy_add ? (f->divides ? RUN_MEAN : RUN_SUM)
               : f->ufunc == numpy_maximum ? RUN_MAX : f->ufunc == numpy_minimum ? RUN_MIN : -1;
    if (!in_runs(x, reduced) || what < 0) return 0;
    int type = PyArray_TYPE(x);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(nd, dims, type);
    PyArrayObject *means = with_mean ? (PyArrayObject *)PyArray_SimpleNew(nd, dims, type) : NULL;
    void *squares = PyMem_Malloc(what == RUN_SUM || what == RUN_MEAN || what == RUN_MAX || what == RUN_MIN ? 1
                                 : count * PyArray_ITEMSIZE(x));
    if (out == NULL || (with_mean && means == NULL) || squares == NULL) {
        Py_XDECREF(out);
        Py_XDECREF(means);
        PyMem_Free(squares);
        if (squares == NULL) PyErr_NoMemory();
        return -1;
    }
    npy_intp runs = PyArray_SIZE(x) / count;
    fenv_t outside;
    feholdexcept(&outside);
    int zero_extreme;
    if (type == NPY_FLOAT32)
        zero_extreme = run_results_float(PyArray_DATA(x), runs, count, what, (float)dof, squares,
                                         PyArray_DATA(out), means == NULL ? NULL : PyArray_DATA(means));
    else
        zero_extreme = run_results_double(PyArray_DATA(x), runs, count, what, dof, squares,
                                          PyArray_DATA(out), means == NULL ? NULL : PyArray_DATA(means));
    int raised = fetestexcept(NUMPY_EXCEPTIONS);
    fesetenv(&outside);
    PyMem_Free(squares);
    if (raised || zero_extreme) {
        Py_DECREF(out);
        Py_XDECREF(means);
        return 0;
    }
    *spread = (PyObject *)out;
    *mean = (PyObject *)means;
    return 1;
}

/* ``reduce._norm_data``'s p-norm of order ``p`` (not 2; ``order`` the float p) over ``axis`` of ``count``
   elements each: NumPy's steps on ``|x|`` (a sum, a max, a min, a count of nonzeros, or the p-th
   root of the sum of p-th powers). A new reference, NULL on error. */
static PyObject *p_norm_of(Function *f, PyArrayObject *x, PyObject *axis, int keepdim, Py_ssize_t count, double p,
                           PyObject *order) {
    PyObject *size = PyObject_CallOneArg(numpy_absolute, (PyObject *)x), *result = NULL;
    if (size == NULL) return NULL;
    PyObject *keep = keepdim ? Py_True : Py_False;
    if ((p != 0 && count == 1) || p == 1) {   /* (one element: |x|, as torch, whatever the order) */
        result = reduced_over(f, size, axis, keepdim, 0);
    } else if (p == INFINITY || p == -INFINITY) {
        PyObject *call[5] = {size, axis, Py_None, Py_None, keep};
        result = PyObject_Vectorcall(p > 0 ? maximum_reduce : minimum_reduce, call, 5, NULL);
    } else if (p == 0) {
        PyObject *nonzero = PyObject_RichCompare(size, zero, Py_NE);
        PyObject *call[5] = {nonzero, axis, (PyObject *)PyArray_DESCR(x), Py_None, keep};
        result = nonzero == NULL ? NULL : PyObject_Vectorcall(f->reduce, call, 5, NULL);
        Py_XDECREF(nonzero);
    } else {
        PyObject *powers = PyNumber_Power(size, order, Py_None);
        PyObject *sum = powers == NULL ? NULL : reduced_over(f, powers, axis, keepdim, 0);
        PyObject *root = sum == NULL ? NULL : PyFloat_FromDouble(1.0 / p);
        result = root == NULL ? NULL : PyNumber_Power(sum, root, Py_None);
        Py_XDECREF(powers);
        Py_XDECREF(sum);
        Py_XDECREF(root);
    }
    Py_DECREF(size);
    return result;
}

/* Whether the C-contiguous float32 or float64 array ``x`` holds neither a zero nor an infinity (0 for
   another layout): a negative order's powers and root raise no division by zero (the Python op
   silences it). */
static int without_zero_or_infinity(PyArrayObject *x) {
    if (!PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x)) return 0;
    npy_intp n = PyArray_SIZE(x);
    int found = 0;
    if (PyArray_TYPE(x) == NPY_FLOAT32)
        for (const float *v = PyArray_DATA(x); n > 0; n--, v++) found |= *v == 0 || isinf(*v);
    else
        for (const double *v = PyArray_DATA(x); n > 0; n--, v++) found |= *v == 0 || isinf(*v);
    return !found;
}

/* Whether the C-contiguous float32 or float64 array ``x`` holds no NaN (0 for another layout). */
static int without_nan(PyArrayObject *x) {
    if (!PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x)) return 0;
    npy_intp n = PyArray_SIZE(x);
    int nan = 0;
    if (PyArray_TYPE(x) == NPY_FLOAT32)
        for (const float *v = PyArray_DATA(x); n > 0; n--, v++) nan |= *v != *v;
    else
        for (const double *v = PyArray_DATA(x); n > 0; n--, v++) nan |= *v != *v;
    return !nan;
}

/* The reduction of all of the C-contiguous float32 array ``x`` (``count`` elements) on ``f``'s whole-reduction
   loop, as ``reduce``'s Python ops take it (``openmp_kernels.whole_reduction``): a new 0-d float32 array in
   ``*data``, divided by the count (a mean) or its square root taken (a 2-norm, of the sum of squares). 1 when
   computed, -1 on error. */
typedef void (*whole_reduction_loop)(void **, const int64_t *, const double *, int);
static int whole_on_loop(Function *f, PyArrayObject *x, Py_ssize_t count, PyObject **data) {
    long n_threads = loop_thread_count();
    if (n_threads < 0) return -1;
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(0, NULL, NPY_FLOAT32);
    if (out == NULL) return -1;
    void *arrays[2] = {PyArray_DATA(x), PyArray_DATA(out)};
    int64_t sizes[1] = {PyArray_SIZE(x)};
    ((whole_reduction_loop)f->loops[0])(arrays, sizes, NULL, (int)n_threads);
    float *value = PyArray_DATA(out);
    if (f->divides) *value = *value / (float)count;
    if (f->moment == EUCLIDEAN_NORM) *value = sqrtf(*value);
    *data = (PyObject *)out;
    return 1;
}

/* The reduction of the runs of ``count`` contiguous elements of the C-contiguous float32 array ``x`` (its last
   dims, ``reduced``) on ``f``'s row loop, as ``_array_sums`` sums rows (``openmp_kernels.row_sums``): a new
   float32 array of the reduction's shape in ``*data``, divided by the count (a mean) or its square root taken
   (a 2-norm, of the sums of squares). 1 when computed, -1 on error. */
static int rows_on_loop(Function *f, PyArrayObject *x, const char *reduced, Py_ssize_t count, int keepdim,
                        PyObject **data) {
    long n_threads = PyArray_SIZE(x) >= f->row_threads_min ? loop_thread_count() : 1;
    if (n_threads < 0) return -1;
    int ndim = PyArray_NDIM(x), nd = 0;
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++)
        if (!reduced[d] || keepdim) dims[nd++] = reduced[d] ? 1 : PyArray_DIM(x, d);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(nd, dims, NPY_FLOAT32);
    if (out == NULL) return -1;
    void *arrays[2] = {PyArray_DATA(x), PyArray_DATA(out)};
    const int64_t sizes[2] = {PyArray_SIZE(x) / count, count};
    ((whole_reduction_loop)f->row_loop)(arrays, sizes, NULL, (int)n_threads);
    float *value = PyArray_DATA(out);
    for (npy_intp r = 0; r < sizes[0]; r++) {
        if (f->divides) value[r] = value[r] / (float)count;
        if (f->moment == EUCLIDEAN_NORM) value[r] = sqrtf(value[r]);
    }
    *data = (PyObject *)out;
    return 1;
}

/* A reduction ``op(input, dim=None, keepdim=False)`` in the common case: an ordinary tensor on the
   CPU holding a float32 or float64 array of 1 to ``max_elements`` elements and one or more dims,
   a dim that is None, an int or a list or tuple of distinct ints (none or empty: every dim), a
   bool keepdim, no ``__torch_function__`` dispatch or forward-mode AD: ``ufunc.reduce`` over the
   dims (divided by the count for a mean), the node recorded where autograd records. A new
   tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one (nothing done). */
static PyObject *reduce_case(Function *f, PyObject *const *args, Py_ssize_t nargs, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *dim = nargs > 1 ? args[1] : Py_None, *keep = nargs > 2 ? args[2] : Py_False;
    /* (a p-norm's order: its fourth argument, an int or a float other than 2) */
    PyObject *order = f->moment == P_NORM && nargs == 4 ? args[3] : NULL;
    double p = 2.0;
    if (f->moment == P_NORM) {
        if (order == NULL || !(PyFloat_CheckExact(order) || PyLong_CheckExact(order))) return NULL;
        p = PyFloat_AsDouble(order);
        if (p == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (p == 2 || isnan(p)) return NULL;
    } else if (nargs > 3 && !(f->moment == VARIANCE || f->moment == STANDARD_DEVIATION
                              || f->moment == VARIANCE_AND_MEAN || f->moment == STD_AND_MEAN)) {
        return NULL;
    }
    /* (a moment's correction: its fourth argument, an int or a float; 1 by default) */
    PyObject *correction = f->moment != P_NORM && nargs == 4 ? args[3] : NULL;
    if (correction != NULL && !PyLong_CheckExact(correction) && !PyFloat_CheckExact(correction)) return NULL;
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_SIZE(x) == 0 || PyArray_NDIM(x) == 0 || (keep != Py_True && keep != Py_False))
        return NULL;
    /* (past what NumPy's reduction takes here: only the whole-reduction loop, once the dims are known) */
    int small = PyArray_NBYTES(x) < small_bytes, past = (!small && !f->any_size) || PyArray_SIZE(x) > f->max_elements;
    if (past && (f->loop_min == 0 || PyArray_SIZE(x) < f->loop_min)) return NULL;
    int ndim = PyArray_NDIM(x), keepdim = keep == Py_True;
    char reduced[NPY_MAXDIMS] = {0};
    Py_ssize_t given = 0;
    if (dim != Py_None && !PyLong_CheckExact(dim)) {
        if (!PyTuple_CheckExact(dim) && !PyList_CheckExact(dim)) return NULL;
        given = PySequence_Fast_GET_SIZE(dim);
    }
    for (Py_ssize_t i = 0; i < (PyLong_CheckExact(dim) ? 1 : given); i++) {
        PyObject *item = PyLong_CheckExact(dim) ? dim : PySequence_Fast_GET_ITEM(dim, i);
        if (!PyLong_CheckExact(item)) return NULL;
        long d = PyLong_AsLong(item);
        if (d == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (d < -ndim || d >= ndim || reduced[d < 0 ? d + ndim : d]) return NULL;   /* (the Python op's errors) */
        reduced[d < 0 ? d + ndim : d] = 1;
    }
    int all = dim == Py_None || (!PyLong_CheckExact(dim) && given == 0);
    int n_reduced = 0;
    Py_ssize_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (all) reduced[d] = 1;
        if (reduced[d]) {
            n_reduced++;
            count *= PyArray_DIM(x, d);
        }
    }
    int on_loop = past && n_reduced == ndim && !keepdim && PyArray_TYPE(x) == NPY_FLOAT32
                  && PyArray_IS_C_CONTIGUOUS(x) && PyArray_ISALIGNED(x) && loop_threads != NULL;
    /* (float32 rows, as ``_array_sums`` sums them: the row loop) */
    int on_rows = past && !on_loop && f->row_loop != NULL && PyArray_TYPE(x) == NPY_FLOAT32 && n_reduced < ndim
                  && count >= f->row_shortest && count <= f->row_max && PyArray_SIZE(x) >= f->row_min
                  && in_runs(x, reduced) && loop_threads != NULL;
    if (past && !on_loop && !on_rows) return NULL;
    /* a moment's degrees of freedom (``count - correction``); none, or not finite: the Python op (it warns) */
    int moment = f->moment == VARIANCE || f->moment == STANDARD_DEVIATION || f->moment == VARIANCE_AND_MEAN
                 || f->moment == STD_AND_MEAN;
    double dof_value = (double)count - 1;
    if (moment && correction != NULL) {
        double c = PyFloat_AsDouble(correction);
        if (c == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        dof_value = (double)count - c;
    }
    if (moment && (!(dof_value > 0) || !isfinite(dof_value))) return NULL;
    if ((f->moment == EUCLIDEAN_NORM || f->moment == P_NORM) && count < 2) return NULL;   /* (the Python op's case) */
    /* (nansum of NaN: over runs or on the loop here, else on the Python op) */
    if (f->without_nan && !on_loop && !(small && in_runs(x, reduced)) && !without_nan(x)) return NULL;
    if (f->moment == P_NORM && p < 0 && p != -INFINITY && !without_zero_or_infinity(x)) return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : on_loop ? plain_and_settled() : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    PyObject *dims = PyTuple_New(n_reduced), *axis = NULL;
    for (int d = 0, k = 0; dims != NULL && d < ndim; d++) {
        PyObject *number = reduced[d] ? PyLong_FromLong(d) : NULL;
        if (reduced[d] && number == NULL) Py_CLEAR(dims);
        else if (reduced[d]) PyTuple_SET_ITEM(dims, k++, number);
    }
    *handled = 1;
    /* (the degrees of freedom as the Python op has them: an int, or a float for a float correction) */
    PyObject *dof = NULL;
    if (dims != NULL && moment) {
        PyObject *n = PyLong_FromSsize_t(count);
        dof = n == NULL ? NULL : correction == NULL ? PyLong_FromSsize_t(count - 1) : PyNumber_Subtract(n, correction);
        Py_XDECREF(n);
        if (dof == NULL) Py_CLEAR(dims);
    }
    if (dims == NULL) return NULL;
    /* NumPy's axis as the Python op gives it: None for every dim, an int for one */
    axis = n_reduced == ndim ? Py_NewRef(Py_None) : n_reduced == 1 ? Py_NewRef(PyTuple_GET_ITEM(dims, 0))
                                                                    : Py_NewRef(dims);
    PyObject *data = NULL, *mean_data = NULL;
    /* (a large array's runs: NumPy's vectorized passes, not the runs' loops) */
    int computed = on_loop ? whole_on_loop(f, x, count, &data)
                   : on_rows ? rows_on_loop(f, x, reduced, count, keepdim, &data)
                   : small ? moments_in_runs(f, x, reduced, count, dof_value, keepdim, &data, &mean_data) : 0;
    if (computed < 0 || (!computed && f->without_nan && !without_nan(x))) {   /* (a floating-point exception) */
        Py_DECREF(axis);
        Py_DECREF(dims);
        Py_XDECREF(dof);
        return computed < 0 ? NULL : PyObject_Vectorcall(f->python_op, args, nargs, NULL);
    }
    if (!computed) {
        PyObject *order_float = f->moment == P_NORM ? PyFloat_FromDouble(p) : NULL;   /* (``float(p)``, as Python's) */
        data = f->moment == P_NORM ? (order_float == NULL ? NULL
                                      : p_norm_of(f, x, axis, keepdim, count, p, order_float))
               : f->moment != NO_MOMENT ? moment_of(f, x, axis, keepdim, count, dof)
               : reduced_over(f, (PyObject *)x, axis, keepdim, f->divides ? count : 0);
        Py_XDECREF(order_float);
    }
    int with_mean = f->moment == VARIANCE_AND_MEAN || f->moment == STD_AND_MEAN;
    /* (var_mean's and std_mean's mean: ``reduce._mean_data``'s) */
    if (!computed && data != NULL && with_mean) mean_data = reduced_over(f, (PyObject *)x, axis, keepdim, count);
    Py_DECREF(axis);
    PyObject *out = NULL, *mean = NULL;
    if (data != NULL && (!with_mean || mean_data != NULL)) {
        out = make(data);   /* (each takes its array over) */
        data = NULL;
        if (with_mean && out == NULL) {
            Py_CLEAR(mean_data);
        } else if (with_mean) {
            mean = make(mean_data);
            mean_data = NULL;
            if (mean == NULL) Py_CLEAR(out);
        }
    }
    Py_XDECREF(data);
    Py_XDECREF(mean_data);
    if (out == NULL || !grad) {
        Py_DECREF(dims);
        Py_XDECREF(dof);
        if (out == NULL || !with_mean) return out;
        PyObject *pair = PyTuple_Pack(2, out, mean);
        Py_DECREF(out);
        Py_DECREF(mean);
        return pair;
    }
    int whole = dim == Py_None && !keepdim;
    PyObject *inputs = PyTuple_Pack(1, t);
    PyObject *call[4] = {whole ? f->whole_node : f->node_cls, inputs, out, mean};
    PyObject *node = inputs == NULL ? NULL : PyObject_Vectorcall(with_mean ? record_outputs : record, call,
                                                                 with_mean ? 4 : 3, NULL);
    Py_XDECREF(inputs);
    if (node != NULL && node != Py_None
            && reduction_fields(f, node, whole ? f->whole_fields : f->fields, t, out, dims, keepdim, count, dof, p) < 0)
        Py_CLEAR(node);
    Py_DECREF(dims);
    Py_XDECREF(dof);
    if (!with_mean) return with_node(out, node);
    PyObject *pair = node == NULL ? NULL : PyTuple_Pack(2, out, mean);
    Py_XDECREF(node);
    Py_DECREF(out);
    Py_DECREF(mean);
    return pair;
}

/* A max or min along a dim's, or a running one's, ``(values, indices)`` as ``f``'s result type
   (``f->whole_node``), the node of ``t`` (holding ``x``) recorded where ``grad`` with the fields
   the Python ops set (``reduce._extreme_along``'s, ``sort._selected``'s): the indices saved,
   ``in_shape``, ``dim`` and ``keepdim``. Takes the references to both tensors; NULL on error. */
static PyObject *selected_pair(Function *f, PyObject *t, PyArrayObject *x, PyObject *value_t, PyObject *index_t,
                               npy_intp dim, int keepdim, int grad) {
    int status = 0;
    if (grad) {
        PyObject *node = record_node(f->node_cls, t, NULL, value_t);
        status = node == NULL ? -1 : 0;
        if (node != NULL && node != Py_None) {
            PyObject *shape = PyObject_GetAttrString((PyObject *)x, "shape"), *at_dim = PyLong_FromSsize_t(dim);
            PyObject *r = shape == NULL || at_dim == NULL || PyObject_SetAttr(node, s_in_shape, shape) < 0
                          || PyObject_SetAttr(node, s_dim, at_dim) < 0
                          || PyObject_SetAttr(node, s_keepdim, keepdim ? Py_True : Py_False) < 0
                          ? NULL : PyObject_CallMethodObjArgs(node, s_save, index_t, NULL);
            status = r == NULL ? -1 : 0;
            Py_XDECREF(r);
            Py_XDECREF(shape);
            Py_XDECREF(at_dim);
        }
        Py_XDECREF(node);
    }
    PyObject *pair[2] = {value_t, index_t};
    PyObject *result = status < 0 ? NULL : PyObject_Vectorcall(f->whole_node, pair, 2, NULL);
    Py_DECREF(value_t);
    Py_DECREF(index_t);
    return result;
}

/* ``selected_pair`` of the new arrays ``values`` and ``indices`` (taken over) made tensors; NULL on
   error. */
static PyObject *selected_arrays(Function *f, PyObject *t, PyArrayObject *x, PyArrayObject *values,
                                 PyArrayObject *indices, npy_intp dim, int keepdim, int grad) {
    PyObject *value_t = make((PyObject *)values), *index_t = value_t == NULL ? NULL : make((PyObject *)indices);
    if (index_t == NULL) {
        if (value_t == NULL) Py_DECREF(indices);
        Py_XDECREF(value_t);
        return NULL;
    }
    return selected_pair(f, t, x, value_t, index_t, dim, keepdim, grad);
}

/* ``max(input, dim, keepdim)`` or ``min(...)`` in the common case: an ordinary tensor on the CPU
   holding a small integer or float array with elements and dims, an int dim in range, a bool
   keepdim, no ``__torch_function__`` dispatch or forward-mode AD: the index of the first extreme
   (or NaN) along the dim, NumPy's ``argmax`` or ``argmin``, and the element there, as
   ``reduce._extreme_along`` takes them; the node recorded where autograd records; the result
   type's ``(values, indices)``. NULL on error, or ``*handled`` set to 0 where the case is not
   this one (nothing done). */
static PyObject *extremes_case(Function *f, PyObject *const *args, Py_ssize_t nargs, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *keep = nargs > 2 ? args[2] : Py_False;
    PyArrayObject *x = Py_TYPE(t) == TensorType ? array_of(t) : NULL;
    if (x == NULL || nargs < 2 || nargs > 3 || !PyLong_CheckExact(args[1]) || (keep != Py_True && keep != Py_False))
        return NULL;
    char kind = PyArray_DESCR(x)->kind;
    int ndim = PyArray_NDIM(x), keepdim = keep == Py_True;
    if ((kind != 'f' && kind != 'i' && kind != 'u') || !PyArray_ISNBO(PyArray_DESCR(x)->byteorder)
            || !PyArray_ISALIGNED(x) || ndim == 0 || PyArray_SIZE(x) == 0 || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    npy_intp dim;
    if (!dim_arg(args[1], ndim, &dim)) return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    /* the indices, of the shape without ``dim`` (with it as 1 for keepdim) */
    PyArrayObject *taken = (PyArrayObject *)(f->divides ? PyArray_ArgMax(x, (int)dim, NULL)
                                                          : PyArray_ArgMin(x, (int)dim, NULL));
    if (taken != NULL && !PyArray_IS_C_CONTIGUOUS(taken)) Py_SETREF(taken, PyArray_GETCONTIGUOUS(taken));
    if (taken == NULL) return NULL;
    npy_intp shape[NPY_MAXDIMS];
    for (int d = 0; d < ndim; d++) shape[d] = d == dim ? 1 : PyArray_DIM(x, d);
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *chosen = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, shape, NULL, NULL, 0,
                                                                  NULL);
    if (chosen == NULL) {
        Py_DECREF(taken);
        return NULL;
    }
    /* each chosen element copied from the input, in C order over the kept shape */
    npy_intp at[NPY_MAXDIMS] = {0}, n = PyArray_SIZE(chosen), itemsize = PyArray_ITEMSIZE(x);
    const npy_intp *index = (const npy_intp *)PyArray_DATA(taken);   /* (C-contiguous: ArgMax's own) */
    char *to = PyArray_DATA(chosen);
    for (npy_intp i = 0; i < n; i++, to += itemsize) {
        const char *from = PyArray_BYTES(x) + index[i] * PyArray_STRIDE(x, (int)dim);
        for (int d = 0; d < ndim; d++) from += at[d] * PyArray_STRIDE(x, d);
        memcpy(to, from, itemsize);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++at[d] < shape[d]) break;
            at[d] = 0;
        }
    }
    PyObject *values = (PyObject *)chosen, *indices = (PyObject *)taken;
    if (keepdim) {   /* (NumPy's argmax keeps no dim: the indices get it back) */
        PyArray_Dims kept = {shape, ndim};
        Py_SETREF(indices, PyArray_Newshape(taken, &kept, NPY_CORDER));
    } else {
        PyArray_Dims reduced = {PyArray_DIMS(taken), PyArray_NDIM(taken)};
        Py_SETREF(values, values == NULL ? NULL : PyArray_Newshape(chosen, &reduced, NPY_CORDER));
    }
    PyObject *value_t = values == NULL ? NULL : make(values), *index_t = NULL;
    if (value_t == NULL || indices == NULL) {
        Py_XDECREF(value_t);
        Py_XDECREF(indices);
        return NULL;
    }
    if (PyArray_TYPE((PyArrayObject *)indices) != NPY_INT64)   /* (intp is int64 where ember runs) */
        Py_SETREF(indices, PyArray_Cast((PyArrayObject *)indices, NPY_INT64));
    index_t = indices == NULL ? NULL : make(indices);
    if (index_t == NULL) {
        Py_DECREF(value_t);
        return NULL;
    }
    return selected_pair(f, t, x, value_t, index_t, dim, keepdim, grad);
}

/* ``where``'s operand: a float tensor's array of ``type`` (or of the first such where ``*type``
   is -1; set there) under the size limit, or a Python float or int (within float32's range, where a float32
   tensor is given: torch's overflow error otherwise). 0 where it is neither. */
static int where_operand(PyObject *o, int *type) {
    if (Py_TYPE(o) != TensorType) {
        if (!PyFloat_CheckExact(o) && !PyLong_CheckExact(o)) return 0;
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return !isfinite(v) || fabs(v) <= FLT_MAX || *type != NPY_FLOAT32;
    }
    PyArrayObject *a = array_of(o);
    if (a == NULL || PyArray_NBYTES(a) >= small_bytes || !PyArray_ISNOTSWAPPED(a)) return 0;
    if (*type == -1) *type = PyArray_TYPE(a);
    return PyArray_TYPE(a) == *type && (*type == NPY_FLOAT32 || *type == NPY_FLOAT64);
}

/* ``where(condition, input, other)`` in the common case: a bool condition tensor of at most
   ``max_elements`` elements, input and other float tensors of one dtype or one of them a Python
   number, no ``__torch_function__`` dispatch or forward-mode AD: NumPy's ``where`` (the Python
   op's, below its size for selecting bits), the node recorded as ``ternary.where`` records it.
   A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *where_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *condition = args[0], *input = args[1], *other = args[2];
    PyArrayObject *c = Py_TYPE(condition) == TensorType ? array_of(condition) : NULL;
    int type = -1;
    if (c == NULL || PyArray_TYPE(c) != NPY_BOOL || PyArray_SIZE(c) > f->max_elements
            || !where_operand(input, &type) || !where_operand(other, &type) || type == -1
            || !where_operand(input, &type))   /* (again: a number first, checked against the tensor's type) */
        return NULL;
    int a_tensor = Py_TYPE(input) == TensorType, b_tensor = Py_TYPE(other) == TensorType;
    int a_grad = a_tensor ? requires_grad(input) : 0, b_grad = b_tensor ? requires_grad(other) : 0;
    int plain = a_grad < 0 || b_grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    /* (a Python number as a 0-d array of the tensors' dtype, which NumPy's where takes sooner: the same bits) */
    PyArray_Descr *descr = PyArray_DESCR(array_of(a_tensor ? input : other));
    PyObject *number = a_tensor && b_tensor ? NULL : number_array(a_tensor ? other : input, descr);
    PyObject *call[3] = {(PyObject *)c, a_tensor ? (PyObject *)array_of(input) : number != NULL ? number : input,
                         b_tensor ? (PyObject *)array_of(other) : number != NULL ? number : other};
    PyObject *data = PyObject_Vectorcall(numpy_where, call, 3, NULL);
    Py_XDECREF(number);
    /* (shapes that do not broadcast, a result of another dtype: the Python op's error or cast) */
    if (data == NULL || !PyArray_Check(data) || PyArray_TYPE((PyArrayObject *)data) != type) {
        Py_XDECREF(data);
        PyErr_Clear();
        return NULL;
    }
    *handled = 1;
    PyObject *out = make(data);
    if (out == NULL || (!a_grad && !b_grad)) return out;
    PyObject *inputs = PyTuple_Pack(3, condition, a_tensor ? input : Py_None, b_tensor ? other : Py_None);
    PyObject *record_args[3] = {f->node_cls, inputs, out};
    PyObject *node = inputs == NULL ? NULL : PyObject_Vectorcall(record, record_args, 3, NULL);
    Py_XDECREF(inputs);
    if (node != NULL && node != Py_None) {
        PyObject *shapes = PyTuple_New(2), *dtypes = PyTuple_New(2);
        int status = shapes == NULL || dtypes == NULL ? -1 : 0;
        PyObject *operands[2] = {a_tensor ? input : NULL, b_tensor ? other : NULL};
        for (int i = 0; i < 2 && status == 0; i++) {
            PyArrayObject *array = operands[i] != NULL ? array_of(operands[i]) : NULL;
            PyObject *shape = array != NULL ? PyObject_GetAttrString((PyObject *)array, "shape") : Py_NewRef(Py_None);
            if (shape == NULL) status = -1;
            else PyTuple_SET_ITEM(shapes, i, shape);
            if (dtypes != NULL) PyTuple_SET_ITEM(dtypes, i, Py_NewRef(array != NULL ? (PyObject *)PyArray_DESCR(array)
                                                                                    : Py_None));
        }
        PyObject *r = status < 0 || PyObject_SetAttr(node, s_shapes, shapes) < 0
                      || PyObject_SetAttr(node, s_dtypes, dtypes) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, condition, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(shapes);
        Py_XDECREF(dtypes);
    }
    return with_node(out, node);
}

/* The next position after ``at`` in C order over ``shape``. */
static void advance(npy_intp *at, const npy_intp *shape, int ndim) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (++at[d] < shape[d]) return;
        at[d] = 0;
    }
}

/* The byte offset of the element at position ``at`` in ``a``, but along ``skip``. */
static npy_intp offset_of(PyArrayObject *a, const npy_intp *at, int skip) {
    npy_intp offset = 0;
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (d != skip) offset += at[d] * PyArray_STRIDE(a, d);
    return offset;
}

/* Whether ``a`` (NULL: no) is a small array of numbers (not complex) with elements, as the index
   ops' C functions take. */
static int numbers(PyArrayObject *a) {
    if (a == NULL) return 0;
    char kind = PyArray_DESCR(a)->kind;
    return (kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b') && PyArray_ISNOTSWAPPED(a)
           && PyArray_ISALIGNED(a) && PyArray_SIZE(a) > 0;
}

static int small_numbers(PyArrayObject *a) {
    return numbers(a) && PyArray_NBYTES(a) < small_bytes;
}

/* Whether an array of ``type`` takes the index ops' additions (``add_element``). */
static int adds_type(int type) {
    return type == NPY_FLOAT32 || type == NPY_FLOAT64 || type == NPY_INT64 || type == NPY_INT32;
}

/* ``*to += *from`` of one element of ``type`` (``adds_type``): in float32 or float64, or in int64 or
   int32 wrapping around, as NumPy's ``add.at`` adds. */
static void add_element(int type, char *to, const char *from) {
    if (type == NPY_FLOAT32) *(float *)to += *(const float *)from;
    else if (type == NPY_FLOAT64) *(double *)to += *(const double *)from;
    else if (type == NPY_INT64) *(npy_int64 *)to = (npy_int64)((npy_uint64)*(npy_int64 *)to
                                                              + (npy_uint64)*(const npy_int64 *)from);
    else *(npy_int32 *)to = (npy_int32)((npy_uint32)*(npy_int32 *)to + (npy_uint32)*(const npy_int32 *)from);
}

/* Whether ``i`` (NULL: no) is a small int64 array with elements. */
static int small_indices(PyArrayObject *i) {
    return i != NULL && PyArray_TYPE(i) == NPY_INT64 && PyArray_ISNOTSWAPPED(i) && PyArray_ISALIGNED(i)
           && PyArray_SIZE(i) > 0 && PyArray_NBYTES(i) < small_bytes;
}

/* Whether every element of ``i`` is within [low, high). */
static int indices_within(PyArrayObject *i, npy_int64 low, npy_int64 high) {
    npy_intp at[NPY_MAXDIMS] = {0};
    for (npy_intp n = PyArray_SIZE(i); n > 0; n--, advance(at, PyArray_DIMS(i), PyArray_NDIM(i))) {
        npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(i) + offset_of(i, at, -1));
        if (k < low || k >= high) return 0;
    }
    return 1;
}

/* The dim (0 or more) of ``gather(input, dim, index)`` and of ``scatter(input, dim, index, ...)``
   where theirs are the common case (``x`` and ``idx`` set): an input of numbers (not complex)
   with dims and elements, an int dim, an int64 index of its number of dims, no larger than it in
   the other dims, every index within its size along ``dim``, the index under the size limit. -1
   where they are not (the Python op raises the errors). */
static long picks_dim(PyObject *const *args, PyArrayObject **x, PyArrayObject **idx) {
    PyObject *t = args[0], *index = args[2];
    if (Py_TYPE(t) != TensorType || Py_TYPE(index) != TensorType || !PyLong_CheckExact(args[1])) return -1;
    PyArrayObject *a = array_of(t), *i = array_of(index);
    int ndim = a == NULL ? 0 : PyArray_NDIM(a);
    /* (an input of any size: the Python ops pick by the index's size) */
    if (!numbers(a) || ndim == 0 || !small_indices(i) || PyArray_NDIM(i) != ndim) return -1;
    npy_intp dim;
    if (!dim_arg(args[1], ndim, &dim)) return -1;
    for (int d = 0; d < ndim; d++)
        if (d != dim && PyArray_DIM(i, d) > PyArray_DIM(a, d)) return -1;
    if (!indices_within(i, 0, PyArray_DIM(a, (int)dim))) return -1;
    *x = a;
    *idx = i;
    return dim;
}

/* ``node``'s fields as the index ops set them: ``index`` saved, ``dim`` and, where ``shaped`` is
   given, the attribute ``shape_name`` (``in_shape``, ``src_shape`` or ``source_shape``): that
   array's shape. 0, or -1 on error. */
static int picks_fields(PyObject *node, PyObject *index, long dim, PyArrayObject *shaped, PyObject *shape_name) {
    PyObject *shape = shaped == NULL ? Py_NewRef(Py_None) : PyObject_GetAttrString((PyObject *)shaped, "shape");
    PyObject *at_dim = PyLong_FromLong(dim);
    PyObject *r = shape == NULL || at_dim == NULL || PyObject_SetAttr(node, s_dim, at_dim) < 0
                  || (shaped != NULL && PyObject_SetAttr(node, shape_name, shape) < 0)
                  ? NULL : PyObject_CallMethodObjArgs(node, s_save, index, NULL);
    Py_XDECREF(r);
    Py_XDECREF(shape);
    Py_XDECREF(at_dim);
    return r == NULL ? -1 : 0;
}

/* ``gather(input, dim, index)`` in the common case (``picks_dim``), no ``__torch_function__``
   dispatch or forward-mode AD: each picked element copied, the node recorded as ``index.gather``
   records it. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this
   one. */
static PyObject *gather_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x, *idx;
    long dim = picks_dim(args, &x, &idx);
    if (dim < 0) return NULL;
    int grad = requires_grad(args[0]), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    int ndim = PyArray_NDIM(x);
    PyArrayObject *picked = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(idx), NULL,
                                                                  NULL, 0, NULL);
    if (picked == NULL) return NULL;
    /* at each position of the index (C order): the input's element at the index along ``dim`` */
    npy_intp itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0};
    char *to = PyArray_DATA(picked);
    for (npy_intp n = PyArray_SIZE(idx); n > 0; n--, to += itemsize, advance(at, PyArray_DIMS(idx), ndim)) {
        npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + offset_of(idx, at, -1));
        memcpy(to, PyArray_BYTES(x) + k * PyArray_STRIDE(x, (int)dim) + offset_of(x, at, (int)dim), itemsize);
    }
    PyObject *out = make((PyObject *)picked);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, args[0], NULL, out);
    if (node != NULL && node != Py_None && picks_fields(node, args[2], dim, x, s_in_shape) < 0) Py_CLEAR(node);
    return with_node(out, node);
}

/* A Python number as one element of an array of ``type`` that holds it: a float or an int for
   float32 or float64, an int or a float (truncated) within the range of int64 or int32 for those.
   1 with the element's bytes in ``element`` (8 of them: the Python ops' cast of the number), or 0
   where it is not such a number. */
static int number_element(PyObject *o, int type, char *element) {
    if (type == NPY_INT64 || type == NPY_INT32) {
        long long whole;
        if (PyFloat_CheckExact(o)) {   /* (within the range, NaN not: else torch's overflow error) */
            double v = PyFloat_AS_DOUBLE(o);
            if (!(type == NPY_INT64 ? v >= -9223372036854775808.0 && v < 9223372036854775808.0
                                    : v >= -2147483648.0 && v <= 2147483647.0))
                return 0;
            whole = (long long)v;
        } else {
            if (!PyLong_CheckExact(o)) return 0;
            int overflow;
            whole = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow || (whole == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return 0;
            }
        }
        if (type == NPY_INT32 && (whole < INT32_MIN || whole > INT32_MAX)) return 0;   /* (torch's overflow error) */
        npy_int64 wide = whole;
        npy_int32 narrow = (npy_int32)whole;
        memcpy(element, type == NPY_INT64 ? (const void *)&wide : (const void *)&narrow, type == NPY_INT64 ? 8 : 4);
        return 1;
    }
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || !(PyFloat_CheckExact(o) || PyLong_CheckExact(o))) return 0;
    double value = PyFloat_AsDouble(o);
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (type == NPY_FLOAT32 && isfinite(value) && fabs(value) > FLT_MAX) return 0;   /* (torch's overflow error) */
    float single = (float)value;
    memcpy(element, type == NPY_FLOAT32 ? (const void *)&single : (const void *)&value, type == NPY_FLOAT32 ? 4 : 8);
    return 1;
}

/* ``scatter(input, dim, index, src)`` (``src`` a tensor of the input's dtype, no smaller than the
   index, or a Python number the input's dtype holds, ``number_element``) or
   ``scatter_add(input, dim, index, src)`` (``src`` a tensor of the input's dtype, ``adds_type``) in the
   common case (``picks_dim``), no ``__torch_function__`` dispatch or forward-mode AD: a copy of
   the input with each element of ``src`` written (or added) at its index along ``dim``, in the
   order of the index's elements (NumPy's assignment and ``add.at``, the Python op's), the node
   recorded as ``index.scatter`` or ``index.scatter_add`` records it. A new tensor, NULL on
   error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *scatter_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyArrayObject *x, *idx, *source = NULL;
    long dim = picks_dim(args, &x, &idx);
    if (dim < 0) return NULL;
    PyObject *src = args[3];
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x), number = Py_TYPE(src) != TensorType;
    char written[8];
    if (number) {
        if (f->adds || !number_element(src, type, written)) return NULL;
    } else {
        source = array_of(src);
        if (source == NULL || PyArray_TYPE(source) != type || !PyArray_ISNOTSWAPPED(source)
                || !PyArray_ISALIGNED(source) || PyArray_NDIM(source) != ndim   /* (any size: the index's part read) */
                || (f->adds && !adds_type(type)))
            return NULL;
        for (int d = 0; d < ndim; d++)
            if (PyArray_DIM(idx, d) > PyArray_DIM(source, d)) return NULL;
    }
    int grad = requires_grad(args[0]);
    if (grad >= 0 && !number) {
        int r = requires_grad(src);
        grad = r < 0 ? -1 : grad | r;
    }
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    if (copy == NULL) return NULL;
    npy_intp itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0};
    for (npy_intp n = PyArray_SIZE(idx); n > 0; n--, advance(at, PyArray_DIMS(idx), ndim)) {
        npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + offset_of(idx, at, -1));
        char *to = PyArray_BYTES(copy) + k * PyArray_STRIDE(copy, (int)dim) + offset_of(copy, at, (int)dim);
        const char *from = number ? written : PyArray_BYTES(source) + offset_of(source, at, -1);
        if (!f->adds) memcpy(to, from, itemsize);
        else add_element(type, to, from);
    }
    PyObject *out = make((PyObject *)copy);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(number ? f->number_node : f->node_cls, args[0], number ? NULL : src, out);
    if (node != NULL && node != Py_None && picks_fields(node, args[2], dim, source, s_src_shape) < 0)
        Py_CLEAR(node);
    return with_node(out, node);
}

/* ``index_select(input, dim, index)`` (a 1-d int64 index, an int dim) or ``take(input, index)``
   in the common case: a small input of numbers (not complex) with dims (``take``: any) and
   elements, a small int64 index with elements, each within the input along ``dim`` (``take``: of
   its elements, from the end where negative), no ``__torch_function__`` dispatch or
   forward-mode AD: each picked element copied, the node recorded as the Python op records it. A
   new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *select_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    int takes = f->kind == TAKE_FUNCTION;
    PyObject *t = args[0], *index = args[takes ? 1 : 2];
    if (Py_TYPE(t) != TensorType || Py_TYPE(index) != TensorType || (!takes && !PyLong_CheckExact(args[1])))
        return NULL;
    PyArrayObject *x = array_of(t), *idx = array_of(index);
    if (!small_numbers(x) || !small_indices(idx) || (!takes && (PyArray_NDIM(x) == 0 || PyArray_NDIM(idx) != 1)))
        return NULL;
    int ndim = PyArray_NDIM(x);
    npy_intp dim = 0;
    if (!takes && !dim_arg(args[1], ndim, &dim)) return NULL;
    npy_intp size = takes ? PyArray_SIZE(x) : PyArray_DIM(x, (int)dim);
    if (!indices_within(idx, takes ? -size : 0, size)) return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    npy_intp shape[NPY_MAXDIMS];
    int out_ndim = takes ? PyArray_NDIM(idx) : ndim;
    for (int d = 0; d < out_ndim; d++)
        shape[d] = takes ? PyArray_DIM(idx, d) : d == dim ? PyArray_DIM(idx, 0) : PyArray_DIM(x, d);
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *picked = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, out_ndim, shape, NULL, NULL, 0,
                                                                  NULL);
    if (picked == NULL) return NULL;
    npy_intp itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0}, from_at[NPY_MAXDIMS];
    char *to = PyArray_DATA(picked);
    for (npy_intp n = PyArray_SIZE(picked); n > 0; n--, to += itemsize, advance(at, shape, out_ndim)) {
        const char *from = PyArray_BYTES(x);
        if (takes) {   /* the element at flat position k (C order) of the input */
            npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + offset_of(idx, at, -1));
            if (k < 0) k += size;
            for (int d = ndim - 1; d >= 0; d--) {
                from_at[d] = k % PyArray_DIM(x, d);
                k /= PyArray_DIM(x, d);
            }
            from += offset_of(x, from_at, -1);
        } else {
            npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + at[dim] * PyArray_STRIDE(idx, 0));
            from += k * PyArray_STRIDE(x, (int)dim) + offset_of(x, at, (int)dim);
        }
        memcpy(to, from, itemsize);
    }
    PyObject *out = make((PyObject *)picked);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        int status = takes ? 0 : picks_fields(node, index, dim, x, s_in_shape);
        if (takes) {
            PyObject *in_shape = PyObject_GetAttrString((PyObject *)x, "shape");
            PyObject *r = in_shape == NULL || PyObject_SetAttr(node, s_in_shape, in_shape) < 0 ? NULL
                          : PyObject_CallMethodObjArgs(node, s_save, index, NULL);
            status = r == NULL ? -1 : 0;
            Py_XDECREF(r);
            Py_XDECREF(in_shape);
        }
        if (status < 0) Py_CLEAR(node);
    }
    return with_node(out, node);
}

/* ``index_add(input, dim, index, source)`` (``adds_type``), ``index_copy(...)`` or
   ``index_fill(input, dim, index, value)`` (``value`` a Python number the input's dtype holds,
   ``number_element``), as ``f->writes`` says, in the common case: a small input of numbers (not complex)
   with dims and elements, an int dim, a 1-d int64 index with elements, each within the input
   along ``dim`` (index_fill's from the end where negative), a source of the input's dtype and
   shape but along ``dim``, where it is the index's size; no ``__torch_function__`` dispatch or
   forward-mode AD: a copy of the input with the slices of ``source`` added or copied (or
   ``value`` written) at the index along ``dim``, in the index's order (the Python op's), the
   node recorded as the Python op records it. A new tensor, NULL on error, or ``*handled`` set
   to 0 where the case is not this one. */
static PyObject *slices_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *index = args[2], *src = args[3];
    int fills = f->writes == FILL_SLICES;
    if (Py_TYPE(t) != TensorType || Py_TYPE(index) != TensorType || !PyLong_CheckExact(args[1])
            || (!fills && Py_TYPE(src) != TensorType))
        return NULL;
    PyArrayObject *x = array_of(t), *idx = array_of(index), *source = fills ? NULL : array_of(src);
    if (!small_numbers(x) || PyArray_NDIM(x) == 0 || !small_indices(idx) || PyArray_NDIM(idx) != 1) return NULL;
    int type = PyArray_TYPE(x), ndim = PyArray_NDIM(x);
    npy_intp dim;
    if (!dim_arg(args[1], ndim, &dim)) return NULL;
    char written[8];
    if (fills) {
        if (!number_element(src, type, written)) return NULL;
    } else {
        if (source == NULL || PyArray_TYPE(source) != type || !PyArray_ISNOTSWAPPED(source)
                || !PyArray_ISALIGNED(source) || PyArray_NDIM(source) != ndim || PyArray_NBYTES(source) >= small_bytes
                || (f->writes == ADD_SLICES && !adds_type(type)))
            return NULL;
        for (int d = 0; d < ndim; d++)
            if (PyArray_DIM(source, d) != (d == dim ? PyArray_SIZE(idx) : PyArray_DIM(x, d))) return NULL;
    }
    npy_intp size = PyArray_DIM(x, (int)dim);
    if (!indices_within(idx, fills ? -size : 0, size)) return NULL;
    int grad = requires_grad(t);
    if (grad >= 0 && !fills) {
        int r = requires_grad(src);
        grad = r < 0 ? -1 : grad | r;
    }
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    if (copy == NULL) return NULL;
    /* each element of the slices written (the source's shape, or the copy's with the index's size
       along ``dim``), in C order */
    npy_intp shape[NPY_MAXDIMS], itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0}, n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d] = d == dim ? PyArray_SIZE(idx) : PyArray_DIM(x, d);
    for (; n > 0; n--, advance(at, shape, ndim)) {
        npy_int64 k = *(const npy_int64 *)(PyArray_BYTES(idx) + at[dim] * PyArray_STRIDE(idx, 0));
        if (k < 0) k += size;
        char *to = PyArray_BYTES(copy) + k * PyArray_STRIDE(copy, (int)dim) + offset_of(copy, at, (int)dim);
        const char *from = fills ? written : PyArray_BYTES(source) + offset_of(source, at, -1);
        if (f->writes != ADD_SLICES) memcpy(to, from, itemsize);
        else add_element(type, to, from);
    }
    PyObject *out = make((PyObject *)copy);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, fills ? NULL : src, out);
    if (node != NULL && node != Py_None
            && (picks_fields(node, index, dim, source, s_source_shape) < 0
                || (f->writes == ADD_SLICES && PyObject_SetAttr(node, s_alpha, one) < 0)))
        Py_CLEAR(node);
    return with_node(out, node);
}

/* Each row of ``cummax`` (``is_max``) or ``cummin`` of C type ``T``: ``n`` elements ``inner``
   apart from ``x`` into ``values`` and ``indices`` (laid out as ``x``): NumPy's running maximum or
   minimum (``maximum.accumulate``'s: on a tie the later value taken, a NaN once met kept) and
   the last position where the element equals the running value or is NaN, as
   ``sort._numpy_running_extreme`` finds them. */
#define RUNNING_EXTREME(T, ISNAN)                                                                          \
    static void running_##T(const T *x, T *values, npy_int64 *indices, npy_intp n, npy_intp inner,         \
                            int is_max) {                                                                   \
        T run = x[0];                                                                                       \
        npy_int64 at = 0;                                                                                   \
        for (npy_intp p = 0; p < n; p++) {                                                                  \
            T v = x[p * inner];                                                                             \
            if (!(is_max ? run > v : run < v) && !ISNAN(run)) run = v;                                      \
            if (v == run || ISNAN(v)) at = p;                                                               \
            values[p * inner] = run;                                                                        \
            indices[p * inner] = at;                                                                        \
        }                                                                                                   \
    }
#define NEVER_NAN(v) 0
RUNNING_EXTREME(float, isnan)
RUNNING_EXTREME(double, isnan)
RUNNING_EXTREME(npy_int64, NEVER_NAN)
RUNNING_EXTREME(npy_int32, NEVER_NAN)

/* ``cummax(input, dim)`` or ``cummin(...)`` in the common case: a small C-contiguous float32,
   float64, int64 or int32 input with dims and elements, an int dim, no ``__torch_function__``
   dispatch or forward-mode AD: the running extremes and their indices along the dim, the node
   recorded as ``sort._cumulative_extreme`` records it, the result type's ``(values, indices)``.
   NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *cumulative_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0];
    if (Py_TYPE(t) != TensorType || !PyLong_CheckExact(args[1])) return NULL;
    PyArrayObject *x = array_of(t);
    int type = x == NULL ? -1 : PyArray_TYPE(x);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64 && type != NPY_INT64 && type != NPY_INT32) || !small_numbers(x)
            || PyArray_NDIM(x) == 0 || !PyArray_IS_C_CONTIGUOUS(x))
        return NULL;
    int ndim = PyArray_NDIM(x);
    npy_intp dim;
    if (!dim_arg(args[1], ndim, &dim)) return NULL;
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *values = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, PyArray_DIMS(x), NULL,
                                                                  NULL, 0, NULL);
    PyArrayObject *indices = (PyArrayObject *)PyArray_SimpleNew(ndim, PyArray_DIMS(x), NPY_INT64);
    if (values == NULL || indices == NULL) {
        Py_XDECREF(values);
        Py_XDECREF(indices);
        return NULL;
    }
    npy_intp n = PyArray_DIM(x, (int)dim), inner = 1, outer = 1;
    for (int d = 0; d < ndim; d++) {
        if (d < dim) outer *= PyArray_DIM(x, d);
        if (d > dim) inner *= PyArray_DIM(x, d);
    }
    npy_int64 *at = PyArray_DATA(indices);
    for (npy_intp o = 0; o < outer; o++) {
        for (npy_intp i = 0; i < inner; i++) {
            npy_intp start = o * n * inner + i;
            if (type == NPY_FLOAT32)
                running_float((const float *)PyArray_DATA(x) + start, (float *)PyArray_DATA(values) + start,
                              at + start, n, inner, f->divides);
            else if (type == NPY_FLOAT64)
                running_double((const double *)PyArray_DATA(x) + start, (double *)PyArray_DATA(values) + start,
                               at + start, n, inner, f->divides);
            else if (type == NPY_INT64)
                running_npy_int64((const npy_int64 *)PyArray_DATA(x) + start,
                                  (npy_int64 *)PyArray_DATA(values) + start, at + start, n, inner, f->divides);
            else
                running_npy_int32((const npy_int32 *)PyArray_DATA(x) + start,
                                  (npy_int32 *)PyArray_DATA(values) + start, at + start, n, inner, f->divides);
        }
    }
    return selected_arrays(f, t, x, values, indices, dim, 1, grad);
}

/* ``masked_fill(input, mask, value)`` in the common case: a small C-contiguous input with elements,
   a C-contiguous bool mask of its number of dims, each of the mask's dims its size or 1, a Python
   number the input's dtype holds (``number_element``); no ``__torch_function__`` dispatch or
   forward-mode AD: a copy of the input with ``value`` where the mask (broadcast) holds, the bits
   NumPy's ``where`` selects (the Python op's), the node recorded as ``index.masked_fill``
   records it. A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this
   one. */
static PyObject *masked_fill_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *mask = args[1];
    if (Py_TYPE(t) != TensorType || Py_TYPE(mask) != TensorType) return NULL;
    PyArrayObject *x = array_of(t), *m = array_of(mask);
    char written[8];
    if (!small_numbers(x) || !PyArray_IS_C_CONTIGUOUS(x) || !number_element(args[2], PyArray_TYPE(x), written)
            || m == NULL || PyArray_TYPE(m) != NPY_BOOL || !PyArray_IS_C_CONTIGUOUS(m)
            || PyArray_NDIM(m) != PyArray_NDIM(x))
        return NULL;
    int ndim = PyArray_NDIM(x);
    npy_intp mask_strides[NPY_MAXDIMS];   /* (in elements: 0 along a dim the mask broadcasts) */
    for (int d = ndim - 1, step = 1; d >= 0; d--) {
        npy_intp size = PyArray_DIM(m, d);
        if (size != PyArray_DIM(x, d) && size != 1) return NULL;
        mask_strides[d] = size == 1 ? 0 : step;
        step *= (int)size;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
    if (copy == NULL) return NULL;
    const npy_bool *holds = PyArray_DATA(m);
    npy_intp itemsize = PyArray_ITEMSIZE(x), at[NPY_MAXDIMS] = {0};
    char *to = PyArray_DATA(copy);
    for (npy_intp n = PyArray_SIZE(x); n > 0; n--, to += itemsize, advance(at, PyArray_DIMS(x), ndim)) {
        npy_intp k = 0;
        for (int d = 0; d < ndim; d++) k += at[d] * mask_strides[d];
        if (holds[k]) memcpy(to, written, itemsize);
    }
    PyObject *out = make((PyObject *)copy);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)x, "shape");
        PyObject *r = shape == NULL || PyObject_SetAttr(node, s_in_shape, shape) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, mask, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(shape);
    }
    return with_node(out, node);
}

/* ``pow(input, exponent)`` of two small tensors of one float dtype where nothing records: NumPy's power of
   their arrays (broadcast), as ``pointwise._pow_arrays`` computes it. A new tensor, NULL on error, or
   ``*handled`` set to 0 where the case is not this one (shapes that do not broadcast: the Python op's error). */
static PyObject *power_of_tensors(PyObject *const *args, int *handled) {
    PyArrayObject *x = array_of(args[0]), *y = array_of(args[1]);
    if (x == NULL || y == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64)
            || PyArray_TYPE(y) != PyArray_TYPE(x) || !PyArray_ISNOTSWAPPED(x) || !PyArray_ISNOTSWAPPED(y)
            || PyArray_NBYTES(x) >= small_bytes || PyArray_NBYTES(y) >= small_bytes)
        return NULL;
    int grad = any_requires_grad(args, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0 || grad) {
        *handled = plain < 0 || grad < 0;
        return NULL;
    }
    PyObject *operands[2] = {(PyObject *)x, (PyObject *)y};
    PyObject *data = PyObject_Vectorcall(numpy_power, operands, 2, NULL);
    if (data == NULL) {
        PyErr_Clear();
        return NULL;
    }
    *handled = 1;
    return make(data);
}

/* ``pow(input, exponent)`` in the common case: a small float32 or float64 tensor and a Python
   float or int exponent, no ``__torch_function__`` dispatch or forward-mode AD: as
   ``pointwise._pow_arrays`` computes it (2: NumPy's square; 3: ``x * x * x``; -2: ``1 / (x * x)``;
   -0.5: ``1 / sqrt(x)``; else NumPy's power), the node recorded as ``pointwise.pow`` records it.
   A new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one. */
static PyObject *power_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *e = args[1];
    if (Py_TYPE(t) == TensorType && Py_TYPE(e) == TensorType) return power_of_tensors(args, handled);
    if (Py_TYPE(t) != TensorType || !(PyFloat_CheckExact(e) || PyLong_CheckExact(e))) return NULL;
    PyArrayObject *x = array_of(t);
    if (x == NULL || (PyArray_TYPE(x) != NPY_FLOAT32 && PyArray_TYPE(x) != NPY_FLOAT64) || !PyArray_ISNOTSWAPPED(x)
            || PyArray_NBYTES(x) >= small_bytes)
        return NULL;
    double p = PyFloat_AsDouble(e);
    if (p == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    int grad = requires_grad(t), plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyObject *a = (PyObject *)x, *data, *part = NULL;
    if (p == 2) {
        data = PyObject_CallOneArg(numpy_square, a);
    } else if (p == 3 || p == -2) {
        part = PyNumber_Multiply(a, a);
        data = part == NULL ? NULL : p == 3 ? PyNumber_Multiply(part, a) : PyNumber_TrueDivide(one, part);
    } else if (p == -0.5) {
        part = PyObject_CallOneArg(numpy_sqrt, a);
        data = part == NULL ? NULL : PyNumber_TrueDivide(one, part);
    } else {
        PyObject *operands[2] = {a, e};
        data = PyObject_Vectorcall(numpy_power, operands, 2, NULL);
    }
    Py_XDECREF(part);
    PyObject *out = data == NULL ? NULL : make(data);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, NULL, out);
    if (node != NULL && node != Py_None) {
        PyObject *r = PyObject_SetAttr(node, s_exponent, e) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, t, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
    }
    return with_node(out, node);
}

/* The cross products of the 3-vectors ``inner`` elements apart in ``a`` and ``b`` (``outer`` of
   them in each of ``inner`` columns) into ``out``, laid out as they are: each component a
   product less a product, as ``matrix_decompositions._cross_arrays`` computes it (no fused
   multiply-add). */
#define CROSS_PRODUCTS(T)                                                                                  \
    __attribute__((optimize("fp-contract=off")))                                                          \
    static void cross_##T(const T *a, const T *b, T *out, npy_intp outer, npy_intp inner) {                \
        for (npy_intp o = 0; o < outer; o++) {                                                             \
            for (npy_intp i = 0; i < inner; i++) {                                                         \
                npy_intp at = o * 3 * inner + i;                                                           \
                for (int k = 0; k < 3; k++) {                                                              \
                    npy_intp p = at + ((k + 1) % 3) * inner, q = at + ((k + 2) % 3) * inner;               \
                    T first = a[p] * b[q], second = a[q] * b[p];                                           \
                    out[at + k * inner] = first - second;                                                  \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
    }
CROSS_PRODUCTS(float)
CROSS_PRODUCTS(double)

/* A row-major copy of ``a`` broadcast to the ``ndim`` sizes ``shape`` (``a``'s last sizes each equal to
   theirs or 1): a new array, NULL on error. */
/* A view of ``a``'s memory from ``data`` with ``ndim`` sizes ``shape`` and ``strides`` (``flags``:
   NPY_ARRAY_WRITEABLE or 0), its base ``a``: a new array, NULL on error. */
static PyObject *view_of(PyArrayObject *a, int ndim, const npy_intp *shape, const npy_intp *strides, char *data,
                         int flags) {
    PyArray_Descr *descr = PyArray_DESCR(a);
    Py_INCREF(descr);
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, (npy_intp *)shape, (npy_intp *)strides, data,
                                          flags, NULL);
    if (view == NULL) return NULL;
    Py_INCREF(a);
    if (PyArray_SetBaseObject((PyArrayObject *)view, (PyObject *)a) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

static PyArrayObject *broadcast_copy(PyArrayObject *a, const npy_intp *shape, int ndim) {
    npy_intp strides[NPY_MAXDIMS];
    int lead = ndim - PyArray_NDIM(a);
    for (int d = 0; d < ndim; d++)
        strides[d] = d >= lead && PyArray_DIM(a, d - lead) == shape[d] ? PyArray_STRIDE(a, d - lead) : 0;
    PyObject *view = view_of(a, ndim, shape, strides, PyArray_BYTES(a), 0);
    if (view == NULL) return NULL;
    PyObject *copy = PyArray_NewCopy((PyArrayObject *)view, NPY_CORDER);
    Py_DECREF(view);
    return (PyArrayObject *)copy;
}

/* ``linalg.cross(input, other, dim)`` in the common case: two small C-contiguous float32 or float64
   tensors of one dtype and rank whose shapes broadcast (row-major copies of them broadcast where
   they differ), an int dim along which both have 3 elements, no ``__torch_function__`` dispatch or
   forward-mode AD: the cross products (each component computed as NumPy computes it on the
   broadcast operands), the node recorded as ``matrix_decompositions.linalg_cross`` records it. A
   new tensor, NULL on error, or ``*handled`` set to 0 where the case is not this one (the Python op
   raises the errors). */
static PyObject *cross_case(Function *f, PyObject *const *args, int *handled) {
    *handled = 0;
    PyObject *t = args[0], *u = args[1];
    if (Py_TYPE(t) != TensorType || Py_TYPE(u) != TensorType || !PyLong_CheckExact(args[2])) return NULL;
    PyArrayObject *a = array_of(t), *b = array_of(u);
    if (a == NULL || b == NULL) return NULL;
    int type = PyArray_TYPE(a), ndim = PyArray_NDIM(a);
    if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || PyArray_TYPE(b) != type || !PyArray_ISNOTSWAPPED(a)
            || !PyArray_ISNOTSWAPPED(b) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_IS_C_CONTIGUOUS(b)
            || !PyArray_ISALIGNED(a) || !PyArray_ISALIGNED(b) || ndim == 0 || PyArray_NDIM(b) != ndim
            || PyArray_NBYTES(a) >= small_bytes || PyArray_NBYTES(b) >= small_bytes)
        return NULL;
    npy_intp dim, shape[NPY_MAXDIMS], size = 1;
    int same = 1;
    for (int d = 0; d < ndim; d++) {
        npy_intp m = PyArray_DIM(a, d), n = PyArray_DIM(b, d);
        if (m != n && m != 1 && n != 1) return NULL;
        shape[d] = m == 1 ? n : m;
        size *= shape[d];
        same &= m == n;
    }
    if (!dim_arg(args[2], ndim, &dim)) return NULL;
    if (PyArray_DIM(a, (int)dim) != 3 || PyArray_DIM(b, (int)dim) != 3 || size * PyArray_ITEMSIZE(a) >= small_bytes)
        return NULL;
    PyObject *pair[2] = {t, u};
    int grad = any_requires_grad(pair, 2);
    int plain = grad < 0 ? -1 : plain_mode();
    if (plain <= 0) {
        *handled = plain < 0;
        return NULL;
    }
    *handled = 1;
    PyArrayObject *spread_a = same ? (PyArrayObject *)Py_NewRef(a) : broadcast_copy(a, shape, ndim);
    PyArrayObject *spread_b = spread_a == NULL ? NULL : same ? (PyArrayObject *)Py_NewRef(b)
                                                             : broadcast_copy(b, shape, ndim);
    PyArray_Descr *descr = PyArray_DESCR(a);
    Py_INCREF(descr);
    PyArrayObject *products = spread_b == NULL ? NULL : (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, descr, ndim, shape, NULL, NULL, 0, NULL);
    if (spread_b == NULL) Py_DECREF(descr);
    if (products != NULL) {
        npy_intp outer = 1, inner = 1;
        for (int d = 0; d < ndim; d++) {
            if (d < dim) outer *= shape[d];
            if (d > dim) inner *= shape[d];
        }
        if (type == NPY_FLOAT32)
            cross_float(PyArray_DATA(spread_a), PyArray_DATA(spread_b), PyArray_DATA(products), outer, inner);
        else
            cross_double(PyArray_DATA(spread_a), PyArray_DATA(spread_b), PyArray_DATA(products), outer, inner);
    }
    Py_XDECREF(spread_a);
    Py_XDECREF(spread_b);
    if (products == NULL) return NULL;
    PyObject *out = make((PyObject *)products);
    if (out == NULL || !grad) return out;
    PyObject *node = record_node(f->node_cls, t, u, out);
    if (node != NULL && node != Py_None) {
        PyObject *at_dim = PyLong_FromLong(dim - ndim);   /* (negative, as the Python op keeps it) */
        PyObject *r = at_dim == NULL || PyObject_SetAttr(node, s_dim, at_dim) < 0 ? NULL
                      : PyObject_CallMethodObjArgs(node, s_save, t, u, NULL);
        if (r == NULL) Py_CLEAR(node);
        Py_XDECREF(r);
        Py_XDECREF(at_dim);
    }
    return with_node(out, node);
}

SPECIAL_SOURCE
ADDC_SOURCE
SCAN_SOURCE
SORTS_SOURCE
LAYOUTS_SOURCE
CLAMP_SOURCE
SCATTERS_SOURCE
SELECTS_SOURCE
PRODUCTS_SOURCE
SOFTMAX_SOURCE
FACTORIZATIONS_SOURCE
DECOMPOSITIONS_SOURCE
SPLITS_SOURCE
DISTANCES_SOURCE
VANDER_SOURCE
MEMBERSHIP_SOURCE
ROUNDING_SOURCE
ACTIVATIONS_SOURCE
HISTOGRAMS_SOURCE
DIAGONALS_SOURCE
PROD_SOURCE
/* each kind's number of positional arguments, in ``enum function_kind``'s order (the reductions'
   vary) */
static const Py_ssize_t kind_arguments[] = {1, 2, 2, 2, 0, 0, 2, 3, 3, 4, 3, 2, 4, 2, 3, 2, 2, 3, 2, 4, 2, 3, 5, 3, 4,
                                            2, 2, 3, 3, 6, 2, 2, 4, 2, 3, 1, 5, 2, 2, 1, 5, 1, 1, 2, 1, 5, 1, 2, 6, 3,
                                            3, 2, 2, 4, 4, 2, 2, 3, 2, 4, 3, 1, 1, 3, 3, 2, 4, 2};
typedef char one_count_for_each_kind[sizeof(kind_arguments) / sizeof(kind_arguments[0])
                                     == KRON_FUNCTION + 1
                                     ? 1 : -1];

static PyObject *function_call(PyObject *index, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) {
    Function *f = &functions_[PyLong_AsLong(index)];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int joins = f->kind == CAT_FUNCTION || f->kind == STACK_FUNCTION;
    int reduces = f->kind == REDUCE_FUNCTION || f->kind == EXTREMES_FUNCTION;
    /* (the arguments: a reduction's tensor, dim and keepdim, the last two optional) */
    if (kwnames == NULL && (reduces ? nargs >= 1 && nargs <= 4 : nargs == kind_arguments[f->kind])) {
        int handled = 0;
        PyObject *out = NULL;
        if (f->kind == WHERE_FUNCTION)
            out = where_case(f, args, &handled);
        else if (f->kind == GATHER_FUNCTION)
            out = gather_case(f, args, &handled);
        else if (f->kind == SCATTER_FUNCTION)
            out = scatter_case(f, args, &handled);
        else if (f->kind == INDEX_SELECT_FUNCTION || f->kind == TAKE_FUNCTION)
            out = select_case(f, args, &handled);
        else if (f->kind == SLICES_FUNCTION)
            out = slices_case(f, args, &handled);
        else if (f->kind == CUMULATIVE_FUNCTION)
            out = cumulative_case(f, args, &handled);
        else if (f->kind == MASKED_FILL_FUNCTION)
            out = masked_fill_case(f, args, &handled);
        else if (f->kind == OPERATOR_FUNCTION && Py_TYPE(args[0]) == TensorType)
            out = common_case(&methods_[f->method], args[0], args[1], &handled);
        else if (f->kind == POWER_FUNCTION)
            out = power_case(f, args, &handled);
        else if (f->kind == CROSS_FUNCTION)
            out = cross_case(f, args, &handled);
        else if (f->kind == SPECIAL_FUNCTION)
            out = special_case(f, args, &handled);
        else if (f->kind == ADDC_FUNCTION)
            out = addc_case(f, args, &handled);
        else if (f->kind == SCAN_FUNCTION)
            out = scan_case(f, args, &handled);
        else if (f->kind == SORT_FUNCTION || f->kind == TOPK_FUNCTION)
            out = sort_case(f, args, &handled);
        else if (f->kind == MEDIAN_FUNCTION || f->kind == KTHVALUE_FUNCTION || f->kind == MODE_FUNCTION)
            out = pick_case(f, args, &handled);
        else if (f->kind == TRIANGLE_FUNCTION)
            out = triangle_case(f, args, &handled);
        else if (f->kind == CLAMP_FUNCTION)
            out = clamp_case(f, args, &handled);
        else if (f->kind == SCATTER_REDUCE_FUNCTION)
            out = scatter_reduce_case(f, args, &handled);
        else if (f->kind == LOGIT_FUNCTION)
            out = logit_case(f, args, &handled);
        else if (f->kind == HARDSHRINK_FUNCTION || f->kind == NAN_TO_NUM_FUNCTION || f->kind == HEAVISIDE_FUNCTION)
            out = select_values_case(f, args, &handled);
        else if (f->kind == LERP_FUNCTION)
            out = lerp_case(f, args, &handled);
        else if (f->kind == FREXP_FUNCTION)
            out = frexp_case(f, args, &handled);
        else if (f->kind == FLIP_FUNCTION)
            out = flip_case(f, args, &handled);
        else if (f->kind == ADD_PRODUCT_FUNCTION)
            out = add_product_case(f, args, &handled);
        else if (f->kind == SOFTMAX_FUNCTION)
            out = softmax_case(f, args, &handled);
        else if (f->kind == OUTER_FUNCTION)
            out = outer_case(f, args, &handled);
        else if (f->kind == TRACE_FUNCTION)
            out = trace_case(f, args, &handled);
        else if (f->kind == RANK_ONE_FUNCTION)
            out = rank_one_case(f, args, &handled);
        else if (f->kind == PDIST_FUNCTION)
            out = pdist_case(f, args, &handled);
        else if (f->kind == INDEX_REDUCE_FUNCTION)
            out = index_reduce_case(f, args, &handled);
        else if (f->kind == VANDER_FUNCTION)
            out = vander_case(f, args, &handled);
        else if (f->kind == ISIN_FUNCTION)
            out = isin_case(f, args, &handled);
        else if (f->kind == ROUND_FUNCTION)
            out = round_case(f, args, &handled);
        else if (f->kind == PRELU_FUNCTION)
            out = prelu_case(f, args, &handled);
        else if (f->kind == HISTC_FUNCTION)
            out = histc_case(f, args, &handled);
        else if (f->kind == DIAG_EMBED_FUNCTION)
            out = diag_embed_case(f, args, &handled);
        else if (f->kind == DIAG_FUNCTION)
            out = diag_case(f, args, &handled);
        else if (f->kind == LOGCUMSUMEXP_FUNCTION)
            out = logcumsumexp_case(f, args, &handled);
        else if (f->kind == SPECIAL_THREE_FUNCTION)
            out = special_three_case(f, args, &handled);
        else if (f->kind == HISTOGRAM_FUNCTION)
            out = histogram_case(f, args, &handled);
        else if (f->kind == CDIST_FUNCTION)
            out = cdist_case(f, args, &handled);
        else if (f->kind == PROD_FUNCTION)
            out = prod_case(f, args, &handled);
        else if (f->kind == LU_FACTOR_FUNCTION)
            out = lu_factor_case(f, args, &handled);
        else if (f->kind == QR_FUNCTION)
            out = qr_case(f, args, &handled);
        else if (f->kind == LU_UNPACK_FUNCTION)
            out = lu_unpack_case(f, args, &handled);
        else if (f->kind == LDL_FACTOR_FUNCTION)
            out = ldl_factor_case(f, args, &handled);
        else if (f->kind == TRIANGULAR_SOLVE_FUNCTION)
            out = triangular_solve_case(f, args, &handled);
        else if (f->kind == CHOLESKY_FUNCTION)
            out = cholesky_case(f, args, &handled);
        else if (f->kind == SVD_FUNCTION)
            out = svd_case(f, args, &handled);
        else if (f->kind == EIGH_FUNCTION)
            out = eigh_case(f, args, &handled);
        else if (f->kind == SPLIT_FUNCTION)
            out = split_case(f, args, &handled);
        else if (f->kind == MASKED_SCATTER_FUNCTION)
            out = masked_scatter_case(f, args, &handled);
        else if (f->kind == ORGQR_FUNCTION)
            out = orgqr_case(f, args, &handled);
        else if (f->kind == INDEX_PUT_FUNCTION)
            out = index_put_case(f, args, &handled);
        else if (f->kind == KRON_FUNCTION)
            out = kron_case(f, args, &handled);
        else if (f->kind == EXTREMES_FUNCTION)
            out = extremes_case(f, args, nargs, &handled);
        else if (reduces)
            out = reduce_case(f, args, nargs, &handled);
        else if (joins)
            out = join_case(f, args[0], args[1], &handled);
        else if (Py_TYPE(args[0]) == TensorType && (nargs == 1 || Py_TYPE(args[1]) == TensorType))
            out = function_case(f, args, &handled);
        else if (f->kind == BINARY_FUNCTION && f->number_first && Py_TYPE(args[1]) == TensorType
                 && (PyFloat_CheckExact(args[0]) || PyLong_CheckExact(args[0])))
            out = number_first_case(f, args, &handled);
        else if (f->kind == BINARY_FUNCTION && f->int_numbers && Py_TYPE(args[0]) == TensorType
                 && PyLong_CheckExact(args[1]))
            out = int_number_case(f, args, &handled);
        if (handled) return out;
    }
    return PyObject_Vectorcall(f->python_op, args, nargs, kwnames);   /* every other case */
}

static PyMethodDef function_definition = {
    "compiled_function", (PyCFunction)(void (*)(void))function_call, METH_FASTCALL | METH_KEYWORDS,
    "An op of one or two tensors on its ufunc or compiled loop in the common case, else its Python op."};

/* add_function(python_op, node_cls, ufunc, float32_address, float64_address, max_elements, kind, saves,
   specifics): the op's compiled function (of one or two tensors: on ``ufunc`` where it is not
   None, else on the loops, an address 0 where the loop has no such dtype; a reduction's on
   ``ufunc.reduce``, its specifics ``(whole_node, whole_fields, fields, divides)``; a max or min
   along a dim's ``(result_type, is_max)``). */
static PyObject *add_function(PyObject *self, PyObject *args) {
    Function f;
    unsigned long long float32, float64;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the methods are not configured");
        return NULL;
    }
    PyObject *specifics;
    if (!PyArg_ParseTuple(args, "OOOKKniiO", &f.python_op, &f.node_cls, &f.ufunc, &float32, &float64,
                          &f.max_elements, &f.kind, &f.saves, &specifics))
        return NULL;
    f.whole_node = f.flop_hook = f.number_node = f.factors = f.int_ufunc = f.result_type = Py_None;
    f.checks_errors = f.qr_mode = f.unpacks = f.unpacks_data = f.unpacks_pivots = f.lapack_job = 0;
    f.alpha = 0;
    f.solve_form = f.upper_factor = f.returns_info = 0;
    f.ilp64 = 0;
    for (int i = 0; i < 2; i++)
        f.gemvs[i] = f.dots[i] = f.geqrfs[i] = f.orgqrs[i] = f.unpack_loops[i] = f.lapack_routines[i] = NULL;
    f.whole_fields = f.fields = f.divides = f.moment = f.product_operands = 0;
    f.adds = f.writes = f.scatter_names = f.method = f.converts = f.integers = f.form = f.shifted = f.promotes = 0;
    f.without_nan = f.number_first = f.int_numbers = f.any_size = 0;
    f.loop_min = f.row_min = f.row_shortest = f.row_max = f.row_threads_min = 0;
    f.row_loop = NULL;
    f.max_row = f.partition_ratio = f.ignores_nan = f.min_width = 0;
    f.all_node = Py_None;
    for (int i = 0; i < 4; i++) f.own_loops[i] = NULL;
    if (f.kind < UNARY_FUNCTION || f.kind > KRON_FUNCTION) {
        PyErr_SetString(PyExc_ValueError, "no such kind of compiled function");
        return NULL;
    }
    unsigned long long row_loop = 0;
    if (f.kind == REDUCE_FUNCTION && !PyArg_ParseTuple(specifics, "OiiiipnpKnnnn", &f.whole_node, &f.whole_fields,
                                                       &f.fields, &f.divides, &f.moment, &f.without_nan, &f.loop_min,
                                                       &f.any_size, &row_loop, &f.row_min, &f.row_shortest,
                                                       &f.row_max, &f.row_threads_min))
        return NULL;
    f.row_loop = (void *)(uintptr_t)row_loop;
    /* (a max or min along a dim, or a running one: its result type in whole_node, whether it is the
       max in divides) */
    if ((f.kind == EXTREMES_FUNCTION || f.kind == CUMULATIVE_FUNCTION)
            && !PyArg_ParseTuple(specifics, "Op", &f.whole_node, &f.divides))
        return NULL;
    unsigned long long blas[6] = {0, 0, 0, 0, 0, 0};
    if ((f.kind == MATMUL_FUNCTION || f.kind == ADD_PRODUCT_FUNCTION)
            && !PyArg_ParseTuple(specifics, "iOiKKKKKKL", &f.product_operands, &f.flop_hook, &f.bfloat16_type,
                                 &blas[0], &blas[1], &blas[2], &blas[3], &blas[4], &blas[5], &f.ilp64))
        return NULL;
    if (f.kind == SCATTER_FUNCTION && !PyArg_ParseTuple(specifics, "Op", &f.number_node, &f.adds)) return NULL;
    if (f.kind == SCATTER_REDUCE_FUNCTION && (f.scatter_names = PyObject_IsTrue(specifics)) < 0) return NULL;
    if (f.kind == VANDER_FUNCTION && (f.divides = PyObject_IsTrue(specifics)) < 0) return NULL;   /* (linalg's) */
    if (f.kind == PROD_FUNCTION && !PyArg_ParseTuple(specifics, "O", &f.whole_node)) return NULL;   /* (all's node) */
    if (f.kind == SPLIT_FUNCTION && !PyArg_ParseTuple(specifics, "i", &f.form)) return NULL;   /* (its form) */
    if (f.kind == INDEX_PUT_FUNCTION && !PyArg_ParseTuple(specifics, "pp", &f.writes, &f.form))   /* (in place; */
        return NULL;                                                                             /* put's) */
    unsigned long long linspaces[2] = {0, 0};   /* (a histogram's: its result type, linspace's loops) */
    if (f.kind == HISTOGRAM_FUNCTION && !PyArg_ParseTuple(specifics, "OKK", &f.result_type, &linspaces[0],
                                                          &linspaces[1]))
        return NULL;
    for (int i = 0; i < 2 && f.kind == HISTOGRAM_FUNCTION; i++) f.own_loops[i] = (void *)(uintptr_t)linspaces[i];
    if (f.kind == RANK_ONE_FUNCTION && !PyArg_ParseTuple(specifics, "O", &f.flop_hook)) return NULL;
    unsigned long long gemm32 = 0, gemm64 = 0;
    unsigned long long unpack32 = 0, unpack64 = 0;
    if (f.kind == LU_FACTOR_FUNCTION && !PyArg_ParseTuple(specifics, "OpKKLpKK", &f.result_type, &f.checks_errors,
                                                          &gemm32, &gemm64, &f.ilp64, &f.unpacks, &unpack32,
                                                          &unpack64))
        return NULL;
    f.unpack_loops[0] = (void *)(uintptr_t)unpack32;
    f.unpack_loops[1] = (void *)(uintptr_t)unpack64;
    if (f.kind == TRIANGULAR_SOLVE_FUNCTION && !PyArg_ParseTuple(specifics, "OiKKL", &f.result_type, &f.solve_form,
                                                                 &gemm32, &gemm64, &f.ilp64))
        return NULL;
    if (f.kind == CHOLESKY_FUNCTION && !PyArg_ParseTuple(specifics, "OppKKL", &f.result_type, &f.upper_factor,
                                                         &f.returns_info, &gemm32, &gemm64, &f.ilp64))
        return NULL;
    f.gemms[0] = (void *)(uintptr_t)gemm32;
    f.gemms[1] = (void *)(uintptr_t)gemm64;
    unsigned long long qr_routines[4] = {0, 0, 0, 0};   /* geqrf's and orgqr's, float32's then float64's */
    if (f.kind == QR_FUNCTION && !PyArg_ParseTuple(specifics, "OiKKKKL", &f.result_type, &f.qr_mode, &qr_routines[0],
                                                   &qr_routines[1], &qr_routines[2], &qr_routines[3], &f.ilp64))
        return NULL;
    if (f.kind == LU_UNPACK_FUNCTION && !PyArg_ParseTuple(specifics, "Opp", &f.result_type, &f.unpacks_data,
                                                          &f.unpacks_pivots))
        return NULL;
    if (f.kind == LDL_FACTOR_FUNCTION && !PyArg_ParseTuple(specifics, "Opd", &f.result_type, &f.checks_errors,
                                                           &f.alpha))
        return NULL;
    for (int i = 0; i < 2; i++) {
        f.geqrfs[i] = (void *)(uintptr_t)qr_routines[i];
        f.orgqrs[i] = (void *)(uintptr_t)qr_routines[2 + i];
    }
    /* (an SVD's gesdd, eigh's syevd or orgqr's, float32's, float64's) */
    unsigned long long lapack_routines[2] = {0, 0};
    if ((f.kind == SVD_FUNCTION || f.kind == EIGH_FUNCTION)
            && !PyArg_ParseTuple(specifics, "OiiKKL", &f.result_type, &f.form, &f.lapack_job, &lapack_routines[0],
                                 &lapack_routines[1], &f.ilp64))
        return NULL;
    if (f.kind == ORGQR_FUNCTION && !PyArg_ParseTuple(specifics, "KKL", &lapack_routines[0], &lapack_routines[1],
                                                      &f.ilp64))
        return NULL;
    for (int i = 0; i < 2; i++) f.lapack_routines[i] = (void *)(uintptr_t)lapack_routines[i];
    if (f.kind == MATMUL_FUNCTION || f.kind == ADD_PRODUCT_FUNCTION) {
        for (int i = 0; i < 2; i++) {
            f.gemms[i] = (void *)(uintptr_t)blas[i];
            f.gemvs[i] = (void *)(uintptr_t)blas[2 + i];
            f.dots[i] = (void *)(uintptr_t)blas[4 + i];
        }
    }
    if (f.kind == CLAMP_FUNCTION && !PyArg_ParseTuple(specifics, "O", &f.number_node)) return NULL;   /* (of numbers) */
    f.log_of_negative[0] = f.log_of_negative[1] = 0;
    if (f.kind == LOGIT_FUNCTION
            && !PyArg_ParseTuple(specifics, "KK", &f.log_of_negative[0], &f.log_of_negative[1]))
        return NULL;
    if (f.kind == FREXP_FUNCTION && !PyArg_ParseTuple(specifics, "O", &f.whole_node)) return NULL;   /* (result type) */
    /* (whether log_softmax's, the narrowest rows taken in a tensor of more than max_elements) */
    if (f.kind == SOFTMAX_FUNCTION && !PyArg_ParseTuple(specifics, "pn", &f.divides, &f.min_width)) return NULL;
    if (f.kind == SLICES_FUNCTION && !PyArg_ParseTuple(specifics, "i", &f.writes)) return NULL;
    /* (a sort's result type, longest row and topk's partition ratio) */
    if ((f.kind == SORT_FUNCTION || f.kind == TOPK_FUNCTION)
            && (!PyArg_ParseTuple(specifics, "Onn", &f.whole_node, &f.max_row, &f.partition_ratio)
                || f.max_row < 0 || f.max_row > SORTED_ROW_LIMIT || f.partition_ratio < 1)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a sort's rows are of 0 to 64 elements");
        return NULL;
    }
    /* (a median's or kthvalue's result type, its node of all elements and whether it ignores NaN) */
    if ((f.kind == MEDIAN_FUNCTION || f.kind == KTHVALUE_FUNCTION || f.kind == MODE_FUNCTION)
            && !PyArg_ParseTuple(specifics, "OOp", &f.whole_node, &f.all_node, &f.ignores_nan))
        return NULL;
    /* (whether addcdiv's divides, whether cumprod's multiplies, whether triu's keeps the upper triangle) */
    if ((f.kind == ADDC_FUNCTION || f.kind == SCAN_FUNCTION || f.kind == TRIANGLE_FUNCTION)
            && !PyArg_ParseTuple(specifics, "p", &f.divides))
        return NULL;
    if (f.kind == UNARY_FUNCTION && !PyArg_ParseTuple(specifics, "p", &f.converts)) return NULL;
    if (f.kind == BINARY_FUNCTION && !PyArg_ParseTuple(specifics, "iOppp", &f.integers, &f.int_ufunc, &f.converts,
                                                        &f.number_first, &f.int_numbers))
        return NULL;
    if (f.integers < NO_INTEGERS || f.integers > INTEGERS_ONLY || (f.integers && f.int_ufunc == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "integers are taken on a ufunc");
        return NULL;
    }
    if (f.kind == SPECIAL_FUNCTION) {   /* (form, taken): a polynomial's shifted, polygamma's (factors, loops) */
        PyObject *taken;
        unsigned long long own[4] = {0, 0, 0, 0};
        if (!PyArg_ParseTuple(specifics, "iO", &f.form, &taken)) return NULL;
        if (f.form == TENSORS_FORM && (f.promotes = PyObject_IsTrue(taken)) < 0) return NULL;
        if (f.form == POLYNOMIAL_FORM && !PyArg_ParseTuple(taken, "p(KK)", &f.shifted, &own[0], &own[1])) return NULL;
        if (f.form == POLYGAMMA_FORM && !PyArg_ParseTuple(taken, "O!(KKKK)", &PyTuple_Type, &f.factors, &own[0],
                                                          &own[1], &own[2], &own[3]))
            return NULL;
        for (Py_ssize_t i = 0; f.form == POLYGAMMA_FORM && i < PyTuple_GET_SIZE(f.factors); i++)
            if (!PyFloat_CheckExact(PyTuple_GET_ITEM(f.factors, i))) {
                PyErr_SetString(PyExc_TypeError, "polygamma's factors are floats");
                return NULL;
            }
        if (f.form < TENSORS_FORM || f.form > POLYNOMIAL_FORM) {
            PyErr_SetString(PyExc_ValueError, "no such form of special function");
            return NULL;
        }
        for (int i = 0; i < 4; i++) f.own_loops[i] = (void *)(uintptr_t)own[i];
    }
    if (f.kind == OPERATOR_FUNCTION && (!PyArg_ParseTuple(specifics, "i", &f.method) || f.method < 0
                                        || f.method >= n_methods)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "no such operator");
        return NULL;
    }
    if ((f.kind == MATMUL_FUNCTION || f.kind == ADD_PRODUCT_FUNCTION)
            && (f.product_operands < VECTORS || f.product_operands > SUMMED_BATCHES)) {
        PyErr_SetString(PyExc_ValueError, "no such operands of a product");
        return NULL;
    }
    f.arity = f.kind == BINARY_FUNCTION || f.kind == MATMUL_FUNCTION || (f.kind == SPECIAL_FUNCTION
                                                                       && f.form == TENSORS_FORM) ? 2 : 1;
    f.reduce = f.kind == REDUCE_FUNCTION ? PyObject_GetAttrString(f.ufunc, "reduce") : Py_NewRef(Py_None);
    if (f.reduce == NULL) return NULL;
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
    Py_INCREF(f.whole_node);
    Py_INCREF(f.flop_hook);
    Py_INCREF(f.number_node);
    Py_INCREF(f.factors);
    Py_INCREF(f.int_ufunc);
    Py_INCREF(f.all_node);
    Py_INCREF(f.result_type);
    functions_[n_functions++] = f;
    return function;
}

/* configure_functions(settled, defaults, record_outputs, threads): ``choice.settled``, ``_dtype._Defaults``,
   ``_common.record`` (which records more than one output) and ``openmp_kernels.thread_count``. */
static PyObject *configure_functions(PyObject *self, PyObject *args) {
    PyObject *settled, *defaults, *outputs_record, *threads;
    if (!PyArg_ParseTuple(args, "OOOO", &settled, &defaults, &outputs_record, &threads)) return NULL;
    Py_INCREF(threads);
    Py_XSETREF(loop_threads, threads);
    Py_INCREF(outputs_record);
    Py_XSETREF(record_outputs, outputs_record);
    const char *names[] = {"dtypes", "dim", "used", "sizes", "in_dtype", "dims", "keepdim", "count", "counter", "dof",
                           "shapes", "src_shape", "source_shape", "alpha", "dtype", "np", "ord", "exponent"};
    PyObject **interned[] = {&s_dtypes, &s_dim, &s_used, &s_sizes, &s_in_dtype, &s_dims, &s_keepdim, &s_count,
                             &s_counter, &s_dof, &s_shapes, &s_src_shape, &s_source_shape, &s_alpha, &s_dtype, &s_np,
                             &s_ord, &s_exponent};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (*interned[i] == NULL && (*interned[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
    if (numpy_sqrt == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        numpy_sqrt = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "sqrt");
        numpy_absolute = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "absolute");
        numpy_maximum = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "maximum");
        numpy_log = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "log");
        numpy_frexp = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "frexp");
        numpy_minimum = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "minimum");
        maximum_reduce = numpy_maximum == NULL ? NULL : PyObject_GetAttrString(numpy_maximum, "reduce");
        minimum_reduce = numpy_minimum == NULL ? NULL : PyObject_GetAttrString(numpy_minimum, "reduce");
        if (numpy_absolute == NULL || maximum_reduce == NULL || minimum_reduce == NULL || numpy_log == NULL
                || numpy_frexp == NULL)
            return NULL;
        numpy_where = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "where");
        numpy_square = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "square");
        numpy_power = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "power");
        numpy_add = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "add");
        numpy_multiply = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "multiply");
        Py_XDECREF(numpy);
        if (numpy_sqrt == NULL || numpy_where == NULL || numpy_square == NULL || numpy_power == NULL
                || numpy_add == NULL || numpy_multiply == NULL)
            return NULL;
    }
    Py_INCREF(settled);
    Py_XSETREF(choice_settled, settled);
    Py_INCREF(defaults);
    Py_XSETREF(dtype_defaults, defaults);
    Py_RETURN_NONE;
}
'''
# the C of each kind's module, in place of its line in ``SOURCE``
for _name, _module in (("SPECIAL", _compiled_special), ("ADDC", _compiled_addc), ("SCAN", _compiled_scans),
                       ("SORTS", _compiled_sorts), ("LAYOUTS", _compiled_layouts), ("CLAMP", _compiled_clamp),
                       ("SCATTERS", _compiled_scatters), ("SELECTS", _compiled_selects),
                       ("PRODUCTS", _compiled_products), ("SOFTMAX", _compiled_softmax),
                       ("FACTORIZATIONS", _compiled_factorizations), ("DISTANCES", _compiled_distances),
                       ("VANDER", _compiled_vander), ("MEMBERSHIP", _compiled_membership),
                       ("ROUNDING", _compiled_rounding), ("ACTIVATIONS", _compiled_activations),
                       ("HISTOGRAMS", _compiled_histograms), ("DIAGONALS", _compiled_diagonals),
                       ("PROD", _compiled_prod), ("DECOMPOSITIONS", _compiled_decompositions),
                       ("SPLITS", _compiled_splits)):
    SOURCE = SOURCE.replace(f"{_name}_SOURCE\n", _module.SOURCE)
del _name, _module
