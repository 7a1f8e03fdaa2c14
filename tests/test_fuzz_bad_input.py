"""Bad-input fuzzing against torch (issue 18): every op in the op table (tests/op_db/) called with
malformed arguments, ember checked against torch.

Each example starts from one of the op's valid samples and applies one mutation:
a tensor argument's dtype changed; its shape changed (a dim dropped, added, made 0 or
mismatched, or the tensor made 0-d); an int argument (a dim, size or index) or a value of an
index tensor made out of range or negative; NaN or inf put into a float tensor or a float
argument; a tensor argument passed as a strided, transposed or expanded (overlapping) view;
``out=`` given with a wrong shape, dtype or layout, where the op's entry passes keywords on; or
the op run in place (``x.op_(...)``) on a leaf that requires grad, on a view of one, on an
expanded tensor or on a plain one, where torch has that method.

The same inputs are built in both libraries from the same NumPy values, and torch runs first:

- if torch raises, ember raises an exception of the standard class torch's is (torch's own
  classes, such as ``torch._C._LinAlgError``, map to the builtin they derive from), not
  NotImplementedError unless torch's is, not one of NumPy's, with a message; and every ember
  tensor involved (inputs, their bases, ``out``) is unchanged, ``.grad`` included;
- if torch succeeds, ember does too, with torch's results (values, shapes and dtypes, NaN
  equal to NaN), and every tensor involved holds what torch's holds afterwards;
- nothing crashes the interpreter (pytest-xdist reports a worker that dies).

``EMBER_FUZZ_EXAMPLES`` sets the examples per op (5 by default, as the suite runs them;
``make fuzz`` runs 200). Examples are derandomized (the same every run) unless
``EMBER_FUZZ_RANDOM=1``. Known exceptions are listed, with reasons, in ``EXCLUDED``.
"""
import dataclasses
import inspect
import os
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

import ember
from op_db import OPS, Arg
from op_db.cases import outputs
from op_db.common import make_array
from test_ops import _compare

EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "5"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    derandomize=os.environ.get("EMBER_FUZZ_RANDOM") != "1",
                    suppress_health_check=list(HealthCheck), print_blob=True,
                    # no shrinking: a failing example is reported as found (already small)
                    phases=(Phase.explicit, Phase.reuse, Phase.generate))

# Exceptions, with the reason for each: the one place where fuzzing is narrowed. Keys:
#   ("*", "complex grad")          where the dtype mutation makes a tensor complex, no input
#                                  requires grad
#   ("*", "overlapping write")     where torch writes into an expanded tensor (in place or out=)
#                                  without raising, nothing is compared (ember may refuse with
#                                  torch's overlap RuntimeError)
#   (op, "unchecked", mutation[, argument])
#                                  that mutation's result (of that argument, a position or a
#                                  keyword) is not compared with torch's (ember still runs: it must
#                                  not crash or hang, may raise only a builtin or ember exception,
#                                  and changes nothing when it raises)
#   (op, "either", mutation)       where torch raises IndexError or RuntimeError, ember may raise
#                                  either (torch's choice depends on its kernel's path)
#   (op, "ties", i)                output i (indices) is compared by shape and dtype only when an
#                                  input holds equal values: torch leaves their order unspecified
#   (op, "xfail", mutation)        a known ember failure, too large to fix here: that mutation is
#                                  run for the op by test_known_failure, xfail(strict=True)
_LAPACK_NONFINITE = ("torch's result for inf/NaN input is whatever its LAPACK (MKL) does: NaN "
                     "factors, a LinAlgError or an internal assert, depending on where the inf lands; "
                     "ember runs NumPy's (OpenBLAS)")
_NO_OUT = "ember's function has no out= argument (TypeError where torch writes into out)"
_UNSORTED = ("searchsorted needs sorted boundaries; torch's binary search (by <, which NaN fails) "
             "gives unspecified positions for unsorted ones or NaN")
_TIES = "the order torch returns equal elements' indices in is unspecified"
EXCLUDED = {
    ("*", "complex grad"): "ember has no autograd for complex tensors yet (NotImplementedError, where "
                           "torch computes complex gradients)",
    ("*", "overlapping write"): "torch's result depends on the order it writes the shared elements in",
    **{(name, "unchecked", "nonfinite"): _LAPACK_NONFINITE for name in (
        "linalg.inv", "inverse", "Tensor.inverse", "linalg.inv_ex", "linalg.det", "linalg.det_raw",
        "det", "Tensor.det", "linalg.slogdet", "slogdet", "logdet", "linalg.solve", "linalg.qr",
        "linalg.qr_r", "linalg.qr_complete_tall", "qr", "linalg.svd", "linalg.svd_full",
        "linalg.svdvals", "svd", "svd_no_uv", "linalg.pinv", "linalg.pinv_hermitian",
        "linalg.matrix_rank", "linalg.lstsq", "linalg.lstsq_outputs", "linalg.matrix_norm",
        "linalg.norm", "linalg.matrix_power", "linalg.cholesky", "cholesky", "linalg.cholesky_ex",
        "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu", "linalg.lu_U", "linalg.lu_L",
        "linalg.lu_solve", "linalg.solve_ex", "linalg.cond", "linalg.cond_through_inverse",
        "linalg.tensorinv", "linalg.tensorsolve", "lu", "lu_solve", "Tensor.lu_solve",
        "linalg.householder_product", "orgqr", "Tensor.orgqr")},
    ("linalg.cond", "unchecked", "layout"): "an expanded input repeats rows: the matrix is singular and "
                                            "its smallest singular value is rounding noise",
    **{(name, "unchecked", "nonfinite"): "torch computes var_mean's mean by Welford's updates: an "
       "infinity gives inf or NaN depending on where it sits (mean() gives inf)"
       for name in ("var_mean", "std_mean", "var_mean_only_mean", "std_mean_only_std")},
    **{(name, "unchecked", "layout"): "an expanded input repeats rows: the matrix is rank-deficient "
       "and the singular vectors (Q's columns) of its zero singular values are LAPACK's choice"
       for name in ("linalg.svd", "svd", "linalg.qr", "qr")},
    ("median_dim", "unchecked", "layout"): "torch's median(dim) misreads an expanded (stride-0) "
                                           "input: it returns garbage such as 5.6e-322",
    ("kron", "unchecked", "layout"): "torch's kron calls view() on a transposed operand and raises",
    **{("signbit", "unchecked", mutation): "NaN's sign bit is not a value: torch's conversion to "
       "bfloat16 sets it or not depending on its code path" for mutation in ("layout", "nonfinite")},
    ("take_along_dim", "unchecked", "layout"): "torch's take_along_dim without dim calls view() on a "
                                               "transposed operand and raises",
    ("combinations", "unchecked", "int"): "for a large r torch allocates an n^r grid: whether that "
                                          "fails depends on the machine's memory",
    ("addbmm", "unchecked", "inplace"): "torch's addbmm_ resizes a self that lacks the result's "
                                        "shape (a (2,) tensor becomes (2, 2))",
    **{(name, "unchecked", "out"): "out= holds the raw factors, whose signs are LAPACK's choice (the "
       "entry compares gauge-invariant forms of them)" for name in ("linalg.eigh", "linalg.svd", "svd")},
    **{(name, "unchecked", "shape"): "a changed shape can make the matrix singular (the entry builds "
       "a a^T + n I, n from the last dim): its last pivot is rounding noise, where LAPACKs differ"
       for name in ("cholesky", "linalg.cholesky", "linalg.cholesky_ex", "logdet")},
    ("linalg.ldl_factor", "unchecked", "shape"): "a trailing dimension of 1 makes the entry's "
        "a + a^T a column plus a row, of rank two at most: whether a pivot comes out exactly "
        "zero (and ldl_factor raises) is rounding, where LAPACKs differ",
    **{(name, "unchecked", "dtype"): "integer inputs are trigamma's poles: torch's reflection "
       "divides by sin(pi n) rounded (a large finite value), ember's gives inf"
       for name in ("special_polygamma_1", "special_polygamma_1_negative")},
    **{("special_" + name, "unchecked", "nonfinite"): "torch's vectorized polynomial kernels give a "
       "NaN x another element's value (or -1)" for name in (
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p")},
    **{("special_" + name, "unchecked", "int"): "a high degree: torch's float32 recurrence drifts "
       "by its rounding, ember's runs in float64" for name in (
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p")},
    ("mode", "unchecked", "nonfinite"): "torch's mode sorts with a comparison NaN breaks: its "
                                        "result with NaN is not the most frequent value",
    ("einsum", "unchecked", "nonfinite"): "inf and NaN meet in an order the contraction path "
                                          "decides (inf - inf or not)",
    ("linalg.multi_dot", "unchecked", "nonfinite"): "inf and NaN meet in an order the chain's "
                                                    "association decides",
    **{(name, "unchecked", "nonfinite", kw): "BLAS scales each product term by an infinite "
       "coefficient (inf * 0 = NaN where ember's scaled sum is inf)"
       for name in ("addmm", "addmv", "baddbmm", "addbmm") for kw in ("alpha", "beta")},
    ("searchsorted", "unchecked", "nonfinite"): _UNSORTED,
    ("searchsorted_sorter", "unchecked", "nonfinite"): _UNSORTED,
    ("searchsorted_ties", "unchecked", "index", 0): _UNSORTED,
    ("searchsorted_ties", "unchecked", "shape", 0): _UNSORTED,
    ("bucketize", "unchecked", "nonfinite", 1): _UNSORTED,
    ("bucketize", "unchecked", "index", 1): _UNSORTED,
    ("bucketize", "unchecked", "shape", 1): _UNSORTED,
    ("linalg.lstsq", "unchecked", "shape"): "torch.linalg.lstsq broadcasts B against A's batch "
                                            "irregularly (A (1,4,3), B (4,2) give a (4,3,2) solution)",
    ("linalg.lstsq_outputs", "unchecked", "shape"): "as linalg.lstsq",
    ("as_strided_of_view", "unchecked", "shape"):
        "ember's limitation: NumPy keeps no offset for an empty view (x[1:] of one row), so "
        "storage_offset() of it is 0 where torch's is the slice's start",
    **{(name, "either", mutation): "torch's index_add raises IndexError or RuntimeError for an "
       "index out of range depending on its kernel (the slices' memory layout)"
       for name in ("index_add", "index_add_", "index_add_int") for mutation in ("index", "shape")},
    **{(name, "ties", i): _TIES for name, i in (
        ("topk", 1), ("topk_method", 1), ("topk_int", 1), ("kthvalue", 1), ("median_dim", 1),
        ("nanmedian", 1), ("sort", 1), ("sort_method", 1), ("argsort", 0))},
}

DTYPES = ("int64", "int32", "uint8", "bool", "float16", "bfloat16", "float32", "float64", "complex64")
FLOATS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
NP_INT = {"int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8}


# -- the case: one sample, its tensors' plans and one mutation -------------------------------------

@dataclasses.dataclass
class Plan:
    """How one tensor argument is built: its values, dtype, layout and whether it requires grad."""
    array: np.ndarray
    dtype: str
    layout: str = "plain"          # plain, noncontig, transposed, expanded
    requires_grad: bool = False


@dataclasses.dataclass
class Case:
    sample_name: str
    args: list                     # Plans and plain values
    kwargs: dict
    mutation: str
    detail: str
    out: list = None               # Plans for out= (a list: one per output; None: no out=)
    out_single: bool = True        # pass out as one tensor (else a tuple)
    inplace: str = None            # the in-place method called on args[0]
    target: object = None          # the argument mutated: its position, or its keyword

    def __repr__(self):
        def show(a):
            if isinstance(a, Plan):
                return (f"<{a.dtype}{list(a.array.shape)} {a.layout}"
                        f"{' rg' if a.requires_grad else ''}>")
            return repr(a)
        call = ", ".join([show(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()])
        extra = ""
        if self.out is not None:
            outs = [show(p) for p in self.out]
            extra = f", out={outs[0] if self.out_single else tuple(outs)}"
        head = f"x.{self.inplace}(...)" if self.inplace else "op"
        return f"[{self.mutation}: {self.detail}] sample {self.sample_name!r}, {head}({call}{extra})"

    def _repr_pretty_(self, printer, cycle):   # how Hypothesis shows a failing example
        printer.text(repr(self))


def _is_float(dtype):
    return dtype in FLOATS


def _convert(arr, dtype):
    """``arr``'s values made fit for ``dtype`` (NumPy does the rounding, so both libraries get
    the same numbers)."""
    arr = np.asarray(arr)
    if dtype == "bool":
        return arr > 0 if arr.dtype.kind in "fc" else arr.astype(bool)
    if dtype in NP_INT:
        vals = np.round(arr.real) if arr.dtype.kind in "fc" else arr
        info = np.iinfo(NP_INT[dtype])   # clipped, so that sorted values stay sorted
        return np.clip(vals, info.min, info.max).astype(NP_INT[dtype])
    if dtype.startswith("complex"):
        return arr.astype(np.complex128) + 0.5j * np.cos(np.arange(arr.size)).reshape(arr.shape)
    return arr.astype(np.float64) if arr.dtype.kind != "c" else arr.real.astype(np.float64)


def _int_paths(value, path=()):
    """Paths to the ints (not bools) inside a plain argument (tuples, lists, slices)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [path]
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in _int_paths(v, path + (i,))]
    if isinstance(value, slice):
        return [p for i, v in enumerate((value.start, value.stop, value.step))
                for p in _int_paths(v, path + (i,))]
    return []


def _float_paths(value, path=()):
    if isinstance(value, float):
        return [path]
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in _float_paths(v, path + (i,))]
    return []


def _get(value, path):
    for i in path:
        value = (value.start, value.stop, value.step)[i] if isinstance(value, slice) else value[i]
    return value


def _replace(value, path, new):
    if not path:
        return new
    i, rest = path[0], path[1:]
    if isinstance(value, slice):
        parts = [value.start, value.stop, value.step]
        parts[i] = _replace(parts[i], rest, new)
        return slice(*parts)
    items = list(value)
    items[i] = _replace(items[i], rest, new)
    return type(value)(items) if isinstance(value, tuple) else items


def _accepts_kwargs(fn):
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())


def _inplace_method(op):
    name = op.name if op.name.endswith("_") else op.name + "_"
    return name if hasattr(torch.Tensor, name) else None


def _xfail(op, mutation):
    return (op.name, "xfail", mutation) in EXCLUDED


def _applicable(op, sample, plans, force=None):
    """The mutations that can be applied to this sample (all of them change something): only
    ``force`` when given, else all but the known failures."""
    tensors = [i for i, a in enumerate(plans) if isinstance(a, Plan)]
    kinds = []
    if tensors:
        kinds += ["dtype", "shape"]
    if any(_int_paths(a) for a in plans if not isinstance(a, Plan)) or \
            any(_int_paths(v) for v in sample.kwargs.values()):
        kinds.append("int")
    if any(isinstance(a, Plan) and a.dtype in NP_INT and a.array.size for a in plans):
        kinds.append("index")
    if any(isinstance(a, Plan) and _is_float(a.dtype) and a.array.size for a in plans) or \
            any(_float_paths(a) for a in plans if not isinstance(a, Plan)) or \
            any(_float_paths(v) for v in sample.kwargs.values()):
        kinds.append("nonfinite")
    if any(isinstance(a, Plan) and a.array.ndim for a in plans):
        kinds.append("layout")
    if _accepts_kwargs(op.fn):
        kinds.append("out")
    if plans and isinstance(plans[0], Plan) and _inplace_method(op):
        kinds.append("inplace")
    return [k for k in kinds if k == force] if force else [k for k in kinds if not _xfail(op, k)]


def _plans(sample, dtype):
    """The sample's plans with placeholder values (for what mutations apply to it)."""
    rng = np.random.default_rng(0)
    return [Plan(make_array(a, dtype, rng), a.dtype or dtype) if isinstance(a, Arg) else a
            for a in sample.args]


_CHOICES = {}


def _choices(op, force):
    """The (sample index, dtype) pairs some mutation applies to."""
    key = (op.name, id(op), force)
    if key not in _CHOICES:
        _CHOICES[key] = [(i, dtype) for i, s in enumerate(op.samples) for dtype in op.dtypes
                         if _applicable(op, s, _plans(s, dtype), force)]
    return _CHOICES[key]


@st.composite
def cases(draw, op, force=None):
    si, dtype = draw(st.sampled_from(_choices(op, force)))
    sample = op.samples[si]
    want_grad = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))

    plans = []
    for arg in sample.args:
        if not isinstance(arg, Arg):
            plans.append(arg)
            continue
        arr = make_array(arg, dtype, rng)
        dt = arg.dtype or dtype
        layout = "noncontig" if arg.noncontig and arr.ndim else (
            "transposed" if arg.transposed and arr.ndim >= 2 else "plain")
        rg = want_grad and arg.requires_grad and arg.dtype is None and _is_float(dt)
        plans.append(Plan(arr, dt, layout, rg))
    kwargs = dict(sample.kwargs)
    kinds = _applicable(op, sample, plans, force)
    if not kinds:   # every op table entry has at least one
        raise AssertionError(f"{op.name}: no mutation applies to sample {sample.name!r}")
    kind = draw(st.sampled_from(kinds))
    case = Case(sample.name or str(si), plans, kwargs, kind, "")
    tensors = [i for i, a in enumerate(plans) if isinstance(a, Plan)]
    ndim = max([plans[i].array.ndim for i in tensors], default=1)
    big = max([max(plans[i].array.shape, default=1) for i in tensors], default=1)

    if kind == "dtype":
        i = draw(st.sampled_from(tensors))
        p = plans[i]
        new = draw(st.sampled_from([d for d in DTYPES if d != p.dtype]))
        plans[i] = dataclasses.replace(p, array=_convert(p.array, new), dtype=new,
                                       requires_grad=p.requires_grad and _is_float(new))
        if new.startswith("complex") and ("*", "complex grad") in EXCLUDED:
            for q in plans:
                if isinstance(q, Plan):
                    q.requires_grad = False
        case.detail, case.target = f"arg {i} {p.dtype} -> {new}", i
    elif kind == "shape":
        i = draw(st.sampled_from(tensors))
        p = plans[i]
        shape = list(p.array.shape)
        how = draw(st.sampled_from(["drop", "add", "zero", "mismatch", "0d"] if shape else ["add"]))
        if how == "add":
            shape.insert(draw(st.integers(0, len(shape))), draw(st.integers(1, 3)))
        elif how == "0d":
            shape = []
        else:
            d = draw(st.integers(0, len(shape) - 1))
            if how == "drop":
                del shape[d]
            elif how == "zero":
                shape[d] = 0
            else:
                shape[d] = draw(st.sampled_from([n for n in (1, 2, 3, 4, 5) if n != shape[d]]))
        arg = sample.args[i]
        if p.array.dtype.kind in "iub" and arg.values is not None:  # an index or a mask
            lo, hi = (int(p.array.min()), int(p.array.max()) + 1) if p.array.size else (0, 2)
            arg = dataclasses.replace(arg, low=lo, high=hi, integer=True)
        arr = make_array(dataclasses.replace(arg, shape=tuple(shape), values=None), dtype, rng)
        if arr.dtype.kind != p.array.dtype.kind:
            arr = _convert(arr, p.dtype)
        plans[i] = dataclasses.replace(p, array=arr, layout="plain" if p.layout == "transposed" and
                                       len(shape) < 2 else p.layout)
        if not shape:
            plans[i].layout = "plain"
        case.detail, case.target = f"arg {i} shape {list(p.array.shape)} -> {shape} ({how})", i
    elif kind == "int":
        where = [("arg", j, path) for j, a in enumerate(plans) if not isinstance(a, Plan)
                 for path in _int_paths(a)]
        where += [("kw", k, path) for k, v in kwargs.items() for path in _int_paths(v)]
        place, key, path = draw(st.sampled_from(where))
        old = _get(plans[key] if place == "arg" else kwargs[key], path)
        values = sorted({-ndim - 2, -ndim - 1, -1, -2, -5, ndim, ndim + 1, big, big + 1, 5, 100, -100, 0}
                        - {old})
        new = draw(st.sampled_from(values))
        if place == "arg":
            plans[key] = _replace(plans[key], path, new)
        else:
            kwargs[key] = _replace(kwargs[key], path, new)
        case.detail, case.target = f"{place} {key}{list(path)}: {old} -> {new}", key
    elif kind == "index":
        i = draw(st.sampled_from([j for j in tensors if plans[j].dtype in NP_INT and plans[j].array.size]))
        p = plans[i]
        arr = p.array.copy()
        pos = draw(st.integers(0, arr.size - 1))
        values = [v for v in (big, big + 1, -big - 1, 100, -100, -1) if
                  np.iinfo(NP_INT[p.dtype]).min <= v <= np.iinfo(NP_INT[p.dtype]).max]
        new = draw(st.sampled_from(values))
        arr.reshape(-1)[pos] = new
        plans[i] = dataclasses.replace(p, array=arr)
        case.detail, case.target = f"arg {i} index value at {pos} -> {new}", i
    elif kind == "nonfinite":
        where = [("tensor", j, ()) for j in tensors if _is_float(plans[j].dtype) and plans[j].array.size]
        where += [("arg", j, path) for j, a in enumerate(plans) if not isinstance(a, Plan)
                  for path in _float_paths(a)]
        where += [("kw", k, path) for k, v in kwargs.items() for path in _float_paths(v)]
        place, key, path = draw(st.sampled_from(where))
        if place == "tensor":
            p = plans[key]
            arr = p.array.astype(np.complex128 if p.array.dtype.kind == "c" else np.float64)
            count = draw(st.integers(1, min(3, arr.size)))
            at = rng.choice(arr.size, size=count, replace=False)
            vals = [draw(st.sampled_from([np.nan, np.inf, -np.inf])) for _ in at]
            arr.reshape(-1)[at] = vals
            plans[key] = dataclasses.replace(p, array=arr)
            case.detail, case.target = f"arg {key} values at {list(at)} -> {vals}", key
        else:
            new = draw(st.sampled_from([float("nan"), float("inf"), -float("inf")]))
            if place == "arg":
                plans[key] = _replace(plans[key], path, new)
            else:
                kwargs[key] = _replace(kwargs[key], path, new)
            case.detail, case.target = f"{place} {key}{list(path)} -> {new}", key
    elif kind == "layout":
        i = draw(st.sampled_from([j for j in tensors if plans[j].array.ndim]))
        p = plans[i]
        options = ["noncontig", "expanded"] + (["transposed"] if p.array.ndim >= 2 else [])
        layout = draw(st.sampled_from([o for o in options if o != p.layout]))
        plans[i] = dataclasses.replace(p, layout=layout)
        case.detail, case.target = f"arg {i} {p.layout} -> {layout}", i
    elif kind == "out":
        for p in plans:   # out= refuses inputs that require grad: keep that out of the way
            if isinstance(p, Plan):
                p.requires_grad = False
        case.out = draw(_outs(op, sample, plans, kwargs, rng, right=force == "out"))
        case.out_single = len(case.out) == 1 or (force != "out" and draw(st.booleans()))
        case.detail = "out=" + ("one tensor" if case.out_single else "a tuple")
    elif kind == "inplace":
        case.inplace = _inplace_method(op)
        p = plans[0]
        where = ["plain"]
        if p.array.ndim:
            where.append("expanded")
        if _is_float(p.dtype):
            where.append("leaf")
            if p.array.ndim:
                where.append("view of leaf")
        target = "plain" if force == "inplace" else draw(st.sampled_from(where))
        layout = {"plain": "plain", "leaf": "plain", "expanded": "expanded"}.get(target)
        if layout is None:
            layout = draw(st.sampled_from(["noncontig", "expanded"] + (["transposed"] if p.array.ndim >= 2
                                                                       else [])))
        plans[0] = dataclasses.replace(p, layout=layout, requires_grad=target in ("leaf", "view of leaf"))
        case.detail = f"{case.inplace} on {target}"
    return case


@st.composite
def _outs(draw, op, sample, plans, kwargs, rng, right=False):
    """Plans for out=: torch's result's shape and dtype (from a run without out=), then one of
    them changed (unless ``right``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = outputs(_call(torch, op, _build(torch, plans, None)[0], kwargs, None, None))
        probe = [(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in probe if isinstance(t, torch.Tensor)]
    except Exception:
        probe = []
    probe = probe or [((3,), "float32")]
    outs = []
    for shape, dtype in probe:
        outs.append(Plan(np.full(shape, 7.0), dtype))
    k = draw(st.integers(0, len(outs) - 1))
    shape, dtype = probe[k]
    how = "right" if right else draw(st.sampled_from(["right", "shape", "dtype", "empty", "noncontig",
                                                      "expanded"]))
    if how == "shape":
        shape = draw(st.sampled_from([(1,), (2, 3), (5,), tuple(s + 1 for s in shape) or (2,)]))
    elif how == "empty":
        shape = (0,)
    elif how == "dtype":
        dtype = draw(st.sampled_from([d for d in DTYPES if d != dtype]))
    arr = _convert(rng.uniform(-3, 3, size=shape), dtype)
    layout = how if how in ("noncontig", "expanded") and len(shape) else "plain"
    outs[k] = Plan(arr, dtype, layout)
    return outs


# -- building and running in either library -------------------------------------------------------

def _tensor(lib, p):
    """``(base, tensor)`` for a plan: the tensor passed and the leaf it is a view of (itself
    when it is no view)."""
    dt = getattr(lib, p.dtype)
    arr = p.array
    if p.layout == "noncontig":
        big = np.stack([arr, np.zeros_like(arr)], axis=-1).reshape(arr.shape[:-1] + (2 * arr.shape[-1],))
        base = lib.tensor(big, dtype=dt, requires_grad=p.requires_grad)
        return base, base[..., ::2]
    if p.layout == "transposed":
        base = lib.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dt, requires_grad=p.requires_grad)
        return base, base.transpose(-1, -2)
    if p.layout == "expanded":
        base = lib.tensor(arr[:1], dtype=dt, requires_grad=p.requires_grad)
        return base, base.expand(*arr.shape)
    base = lib.tensor(arr, dtype=dt, requires_grad=p.requires_grad)
    return base, base


def _build(lib, plans, out_plans, out_single=True):
    """The arguments, the out= value and the tensors to watch: ``[(label, tensor)]``."""
    args, watched = [], []
    for i, p in enumerate(plans):
        if isinstance(p, Plan):
            base, x = _tensor(lib, p)
            watched.append((f"arg {i}", x))
            if base is not x:
                watched.append((f"base of arg {i}", base))
            args.append(x)
        else:
            args.append(p)
    out = None
    if out_plans is not None:
        outs = []
        for i, p in enumerate(out_plans):
            base, x = _tensor(lib, p)
            watched.append((f"out {i}", x))
            if base is not x:
                watched.append((f"base of out {i}", base))
            outs.append(x)
        out = outs[0] if out_single else tuple(outs)
    return args, out, watched


def _call(lib, op, args, kwargs, out, inplace):
    if inplace:   # dtype= by name, as the entries' own functions take it
        kwargs = {k: getattr(lib, v) if k == "dtype" and isinstance(v, str) else v for k, v in kwargs.items()}
        return getattr(args[0], inplace)(*args[1:], **kwargs)
    if out is not None:
        return op.fn(lib, *args, **kwargs, out=out)
    return op.fn(lib, *args, **kwargs)


def _run(lib, op, case):
    """``(watched tensors, their values before the call, the result, the exception)``."""
    args, out, watched = _build(lib, case.args, case.out, case.out_single)
    before = [_snapshot(t) for _, t in watched] if lib is ember else None
    result = exc = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = _call(lib, op, args, case.kwargs, out, case.inplace)
        except Exception as e:
            exc = e
    return args, out, watched, before, result, exc


def _snapshot(t):
    data = t.detach().cpu()
    data = np.array(data._data if isinstance(data, ember.Tensor) else data.numpy(), copy=True)
    grad = None if not t.is_leaf or t.grad is None else _snapshot(t.grad)[0]
    return data, str(t.dtype).split(".")[-1], grad


# -- the checks ----------------------------------------------------------------------------------

def _standard(cls):
    """The builtin exception class that ``cls`` is (torch._C._LinAlgError -> RuntimeError)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def _tolerances(op, tensors):
    names = {str(t.dtype).split(".")[-1] for t in tensors if isinstance(t, (torch.Tensor, ember.Tensor))}
    if names & {"float16", "bfloat16"}:
        return op.tolerances("float16")
    if names & {"float32", "complex64"} or not names <= {"float64", "complex128"}:
        return op.tolerances("float32")
    return op.tolerances("float64")


def _overlapping(t):
    """Whether some elements of torch tensor ``t`` share memory (an expanded tensor)."""
    return any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))


def _has_ties(case):
    """Whether some tensor argument holds equal values, in its dtype (float16 rounds values
    together) or by its layout (an expanded one repeats its first row)."""
    def values(p):
        stored = np.asarray(ember.tensor(p.array, dtype=getattr(ember, p.dtype))._data)
        return stored.astype(np.complex128 if stored.dtype.kind == "c" else np.float64)

    return any(isinstance(p, Plan) and (np.unique(values(p)).size < p.array.size or
                                        p.layout == "expanded" and p.array.ndim and p.array.shape[0] > 1)
               for p in case.args)


def _check_clean(eexc, detail):
    """ember's exception is one of the standard ones or ember's own, with a message."""
    assert type(eexc).__module__ == "builtins" or type(eexc).__module__.startswith("ember"), \
        f"ember's exception is not a builtin or ember's own: {detail}"
    assert str(eexc), f"ember's exception has no message: {detail}"


def _same_bits(now, before, message):
    """The same bytes (NaN payloads included; a value comparison of an ml_dtypes array may not
    know its NaN)."""
    if now.dtype.hasobject:
        np.testing.assert_array_equal(now, before, err_msg=message)
    else:
        np.testing.assert_array_equal(np.ascontiguousarray(now).view(np.uint8),
                                      np.ascontiguousarray(before).view(np.uint8), err_msg=message)


def _check_unchanged(ewatched, ebefore, detail):
    for (what, t), (data, dtype, grad) in zip(ewatched, ebefore):
        now, ndtype, ngrad = _snapshot(t)
        assert ndtype == dtype and now.shape == data.shape, f"{what} changed after the raise: {detail}"
        _same_bits(now, data, f"{what} changed after the raise: {detail}")
        assert (ngrad is None) == (grad is None), f"{what}.grad changed after the raise"
        if grad is not None:
            _same_bits(ngrad, grad, f"{what}.grad changed after the raise")


def _check(op, case):
    targs, tout, twatched, _, tres, texc = _run(torch, op, case)
    eargs, eout, ewatched, ebefore, eres, eexc = _run(ember, op, case)
    assert [w for w, _ in twatched] == [w for w, _ in ewatched]
    edetail = "" if eexc is None else f"ember raised {type(eexc).__name__}: {eexc}"
    if eexc is not None:
        _check_clean(eexc, edetail)

    unchecked = (EXCLUDED.get((op.name, "unchecked", case.mutation))
                 or EXCLUDED.get((op.name, "unchecked", case.mutation, case.target)))
    if texc is None and ("*", "overlapping write") in EXCLUDED:
        written = [targs[0]] if case.inplace else [t for w, t in twatched if w.startswith("out ")]
        if any(isinstance(t, torch.Tensor) and _overlapping(t) for t in written):
            unchecked = EXCLUDED["*", "overlapping write"]
            assert eexc is None or isinstance(eexc, RuntimeError), edetail
    if unchecked:
        note(f"not compared with torch: {unchecked}")
        if eexc is not None:
            if not isinstance(eexc, (TypeError, ValueError, IndexError, RuntimeError)):
                raise AssertionError(edetail) from eexc
            _check_unchanged(ewatched, ebefore, edetail)
        return

    if texc is not None:
        want = _standard(type(texc))
        assert eexc is not None, (f"torch raised {type(texc).__name__}: {texc}\n"
                                  f"ember returned {eres!r}")
        detail = f"torch raised {type(texc).__name__}: {texc}\n{edetail}"
        if (op.name, "either", case.mutation) in EXCLUDED and want in (IndexError, RuntimeError):
            want = (IndexError, RuntimeError)
        assert isinstance(eexc, want), detail
        assert want is NotImplementedError or not isinstance(eexc, NotImplementedError), detail
        _check_unchanged(ewatched, ebefore, detail)
        return
    if eexc is not None:
        raise AssertionError(f"torch returned, {edetail}") from eexc
    touts, eouts = outputs(tres), outputs(eres)
    atol, rtol = _tolerances(op, touts + [t for _, t in twatched])
    assert len(eouts) == len(touts), f"{len(eouts)} outputs, torch {len(touts)}"
    ties = _has_ties(case)
    for i, (e, t) in enumerate(zip(eouts, touts)):
        if ties and (op.name, "ties", i) in EXCLUDED:
            e, t = e[...] * 0, t[...] * 0  # shape and dtype only
        _compare(e, t, atol, rtol, f"{op.name} output {i}")
    if case.inplace:
        assert (eres is eargs[0]) == (tres is targs[0]), "in place: self returned or not as torch"
    if tout is not None:
        assert (eres is eout) == (tres is tout), "out=: out returned or not as torch"
    for (what, e), (_, t) in zip(ewatched, twatched):
        _compare(e.detach(), t.detach(), atol, rtol, f"{what} after the call")


def _by_id():
    """The op table by test id: the op's name (with a number after a repeated one)."""
    ops = {}
    for op in OPS:
        name, n = op.name, 1
        while name in ops:
            name, n = f"{op.name}-{n}", n + 1
        ops[name] = op
    return ops


BY_ID = _by_id()


@pytest.mark.parametrize("name", list(BY_ID))
@SETTINGS
@given(data=st.data())
def test_bad_input(name, data):
    op = BY_ID[name]
    case = data.draw(cases(op), label="case")
    note(repr(case))
    _check(op, case)


KNOWN = [(name, key[2], reason) for name, op in BY_ID.items() for key, reason in EXCLUDED.items()
         if key[0] == op.name and key[1] == "xfail"]


@pytest.mark.parametrize("name,mutation", [
    pytest.param(name, mutation, id=f"{name}-{mutation}", marks=pytest.mark.xfail(strict=True, reason=reason))
    for name, mutation, reason in KNOWN])
@SETTINGS
@given(data=st.data())
def test_known_failure(name, mutation, data):
    """The known failures in EXCLUDED still fail: a fix makes this test fail until its entry goes."""
    op = BY_ID[name]
    case = data.draw(cases(op, force=mutation), label="case")
    note(repr(case))
    _check(op, case)
