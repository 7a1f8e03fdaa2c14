"""What every op module shares: wrapping arrays, recording history, type promotion for
operands that mix tensors and Python numbers, reducing broadcast gradients, and attaching
functions to ``Tensor`` as methods."""
import functools
import math
import numbers

import warnings

import numpy as np

from .. import _dtype
from .._backend import namespace_of
from .._backend.sparse_coo import SparseCOOArray
from .._backend.precision import HALF_PRECISION, narrowed, widened
from ._array_sums import sum_over
from .._dtype import _BY_NP, result_type_of, get_default_dtype
from .._tensor import Tensor, Size, _make, _make_view, _wrap_dim
from .._blocked_tensor import BlockedTensor
from ..autograd.grad_mode import state as grad_state
from ..autograd._compiled import recorder
from ..autograd.graph import Node, bump_version, grad_accumulator_of, plain_init, refresh_view_history
from ..autograd._dual import (
    before_write, forward as _forward, inplace_tangent, record_tangents as _record_tangents,
)
from ..autograd._dual import jvp_by_transposition

__all__ = [
    "Tensor", "Size", "Node", "grad_state", "make", "make_view", "namespace_of",
    "wrap_dim", "method", "sum_to", "broadcasts_to", "grad_like", "arrays_for", "float_array", "is_scalar",
    "check_tensor", "record", "check_inplace", "inplace_untracked", "finish_inplace", "normalize_dims",
    "np_dtype_of", "to_np_dtype", "apply_inplace", "any_requires_grad", "write_out", "accepts_out",
    "raw_arrays", "widened", "narrowed", "bump_version", "NotImplementedBackward",
    "record_not_differentiable", "ZeroGradient", "zero_gradient_node", "record_zero_gradient",
    "not_implemented", "with_out", "check_out", "check_value_fits", "take_view", "forward_mode",
    "out_dtype", "write_out_exact", "typeid_word",
    "complex_autograd", "complex_autograd_message", "conj_if_complex", "real_part_for",
]

forward_mode = _forward   # ``forward_mode.active``: a dual level is active (forward AD)

make = _make
make_view = _make_view
wrap_dim = _wrap_dim


def method(*names):
    """Attach the decorated function (or a property, called as ``method("T")(property(...))``)
    to Tensor under each of ``names``, or its own name when none is given: the one way modules
    outside ``_tensor.py`` add Tensor methods."""
    def attach(fn):
        for name in names or (fn.__name__,):
            setattr(Tensor, name, fn)
        return fn
    return attach


def is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, Tensor)


_warned = set()


def warn_once(message, stacklevel=3):
    """``message`` as a UserWarning the first time it is given in this process, as torch's TORCH_WARN_ONCE
    (later calls cost a set lookup, not the warnings machinery)."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def check_tensor(x, op, arg="input"):
    if x.__class__ is not Tensor and not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")


def record(node_cls, inputs, out, *more_outputs):
    """Record an op in the graph: if any of ``inputs`` requires grad (and grad mode is on),
    make ``out`` and each of ``more_outputs`` (None for one that has no gradient, such as
    indices) the outputs of a new ``node_cls`` over ``inputs``, in order, and return the node
    (to save tensors and arguments on); else return None. Every op's forward records itself
    through this call; where it is built, the compiled one (``autograd._compiled``) records
    one output."""
    if more_outputs:
        return _record_in_python(node_cls, inputs, out, *more_outputs)
    return _compiled_record(node_cls, inputs, out)


def recording_function():
    """What ``record`` calls for one output, ``f(node_cls, inputs, out)``: the compiled record,
    built at the first call, or Python's where it cannot be built."""
    global _compiled_record
    if _compiled_record is _build_record:
        _compiled_record = recorder(dict(
            Tensor=Tensor, grad_state=grad_state, forward_state=_forward, plain_init=plain_init,
            grad_accumulator_of=grad_accumulator_of, refresh_view_history=refresh_view_history,
            record_in_python=_record_in_python)) or _record_in_python
    return _compiled_record


def _build_record(node_cls, inputs, out):
    """The first record: build the compiled one (or fall back to Python's), then record."""
    return recording_function()(node_cls, inputs, out)


_compiled_record = _build_record


def _record_in_python(node_cls, inputs, out, *more_outputs):
    """``record``'s steps in Python."""
    if not grad_state.grad_enabled:
        if _forward.active:   # forward mode: tangents propagate under no_grad too
            return _record_tangents(node_cls, inputs, (out,) + more_outputs, None)
        return None
    for t in inputs:
        if t is not None and t._requires_grad:
            break
    else:
        if _forward.active:
            return _record_tangents(node_cls, inputs, (out,) + more_outputs, None)
        return None
    if more_outputs:
        return _record_outputs(node_cls, inputs, (out,) + more_outputs)
    if out is None:
        node = node_cls(inputs)
    else:
        if out.__class__ is not BlockedTensor and out._data.dtype in _NO_AUTOGRAD:
            _refuse_autograd(out, node_cls)
        node = node_cls(inputs)
        if out.grad_fn is not None:   # an in-place op recorded again over its input
            out._output_nr = 0
        out._requires_grad = True
        out.grad_fn = node
    if _forward.active:
        return _record_tangents(node_cls, inputs, (out,), node)
    return node


def _record_outputs(node_cls, inputs, outputs):
    for out in outputs:
        if out is not None and out._data.dtype in _NO_AUTOGRAD:
            _refuse_autograd(out, node_cls)
    node = node_cls(inputs)
    for output_nr, out in enumerate(outputs):
        if out is not None:
            out._requires_grad = True
            out.grad_fn = node
            out._output_nr = output_nr
    if _forward.active:
        return _record_tangents(node_cls, inputs, outputs, node)
    return node


# Results autograd stops at: integer and bool (torch's error) and complex, which only the
# nodes marked ``complex_autograd`` (their formulas hold for complex numbers) may produce.
_NO_AUTOGRAD = frozenset(np.dtype(name) for name in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "complex64", "complex128"))


def complex_autograd(node_cls):
    """Mark ``node_cls`` (a class decorator) as one whose backward is right for complex
    tensors, with torch's convention (a real loss's gradient with respect to ``z`` is
    dL/dRe(z) + i dL/dIm(z)): ``record`` lets it produce complex results."""
    node_cls.complex_autograd = True
    return node_cls


def _refuse_autograd(out, node_cls):
    if out._data.dtype.kind == "c":
        if node_cls.__dict__.get("complex_autograd"):
            return
        raise NotImplementedError(complex_autograd_message(node_cls.__name__))
    # a differentiable op with an integer or bool result: torch refuses it
    raise RuntimeError(f"Autograd not support dtype: {_type_word(out._data.dtype)}")


def complex_autograd_message(node_name):
    """The error for autograd through a node (named torch's way) not marked complex_autograd."""
    op = node_name[:-9] if node_name.endswith("Backward0") else node_name
    return (f"ember does not support autograd through {op} for complex tensors yet (its backward "
            "formula is written for real numbers and would give wrong gradients)")


class NotImplementedBackward(Node):
    """torch's node (named ``NotImplemented``) for an op it does not differentiate: backward
    through it raises RuntimeError with the node's ``message``."""
    __slots__ = ()

    def backward(self, *grads):
        raise RuntimeError(self.message)


NotImplementedBackward.__name__ = NotImplementedBackward.__qualname__ = "NotImplemented"


def record_not_differentiable(inputs, out, message):
    """Record on ``out`` (when autograd records) that backward through it raises ``message``."""
    node = record(NotImplementedBackward, inputs, out)
    if node is not None:
        node.message = message
    return out


class ZeroGradient(Node):
    """A node whose inputs get zero gradients, as torch defines them for sampling (not
    reparameterised) and for in-place comparisons. Subclasses carry torch's node names."""
    __slots__ = ()

    def backward(self, grad):
        return tuple(None if fn is None else _zeros(grad, shape, dtype)
                     for (fn, _), (shape, dtype) in zip(self.next_functions, self.metas))

    def jvp(self, *tangents):   # a zero tangent
        return None


def zero_gradient_node(name):
    """A ``ZeroGradient`` node class named ``name`` (e.g. torch's ``NormalBackward0``)."""
    return type(name, (ZeroGradient,), {"__slots__": ()})


def record_zero_gradient(node_cls, inputs, out):
    node = record(node_cls, inputs, out)
    if node is not None:
        node.metas = [None if t is None else (t._data.shape, t._data.dtype) for t in inputs]
    return out


def zeros_like_gradient(grad):
    """Zeros of ``grad``'s shape and dtype, a tensor or an array as ``grad`` is: the gradient
    of a piecewise-constant op (torch's ``zeros_like(grad)``; ``grad * 0`` would give NaN where
    ``grad`` is NaN or infinite)."""
    data = grad._data if isinstance(grad, Tensor) else grad
    if data.__class__ is SparseCOOArray:
        zeros = data * 0   # (the sparse layout has no zeros_like; its values are all kept)
    else:
        zeros = namespace_of(data).zeros_like(data)
    return make(zeros) if isinstance(grad, Tensor) else zeros


def _zeros(like, shape, dtype):
    return make(namespace_of(like._data).zeros(shape, dtype=dtype))


def to_np_dtype(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype).np


def np_dtype_of(dtype):
    return _dtype.to_dtype(dtype).np


# ----------------------------------------------------------------------------------------
# Promotion of mixed operands

def arrays_for(a, b):
    """The two operands as arrays of torch's common dtype (a is a Tensor; b a Tensor or a
    Python number). Returns (a_array, b_array_or_scalar); a number comes back as a Python or
    NumPy scalar, never a host array, so that it mixes with any backend's arrays (CuPy refuses
    NumPy arrays)."""
    ad = a._data
    bcls = b.__class__
    if bcls is Tensor or (bcls is not float and bcls is not int and isinstance(b, Tensor)):
        bd = b._data
        if ad.dtype == bd.dtype:
            return ad, bd
        common = result_type_of(a, b).np
        return ad.astype(common, copy=False), bd.astype(common, copy=False)
    if bcls is not float and bcls is not int and not is_scalar(b):
        raise TypeError(f"unsupported operand type: {type(b).__name__}")
    kind = ad.dtype.kind
    if bcls is float:
        if kind in "fc":
            return ad, b
        if ad.dtype == _dtype.bfloat16.np:  # NumPy would compute bfloat16 * float in float32
            return ad, ad.dtype.type(b)
    elif bcls is int:
        if kind in "fcV" or ad.dtype == _dtype.bfloat16.np:
            return ad, b
        if kind in "iu":
            low, high = _range_of(ad.dtype)
            if low <= b <= high:
                return ad, b
            return ad, np.array(b).astype(ad.dtype)[()]  # wraps around, as torch does
    common = result_type_of(a, b).np
    return ad.astype(common, copy=False), common.type(b)


_HALF_PRECISION = HALF_PRECISION


def float_array(data):
    """Integer and bool arrays become the default float dtype (what torch's float ops do)."""
    if data.dtype.kind in "biu":
        return data.astype(get_default_dtype().np)
    return data


# ----------------------------------------------------------------------------------------
# Gradients

# Float dtypes whose arithmetic NumPy does exactly as ember's ops do it (``arrays_for`` hands
# their arrays and Python numbers to the ufunc unchanged).
_RAW_DTYPES = frozenset(np.dtype(name) for name in ("float16", "float32", "float64"))


def raw_arrays(grad, *tensors):
    """For a node's ``backward_arrays``: ``grad``'s array and those of ``tensors`` (None stays
    None) when all share one float dtype whose arithmetic with arrays of that dtype and Python
    numbers is exactly what ember's ops compute. Else None (the node's ``backward`` runs)."""
    gd = grad._data
    dtype = gd.dtype
    if dtype not in _RAW_DTYPES:
        return None
    arrays = [gd]
    for t in tensors:
        if t is None:
            arrays.append(None)
            continue
        data = t._data
        if data.dtype != dtype:
            return None
        arrays.append(data)
    return arrays


def broadcasts_to(have, shape):
    """Whether a shape ``have`` broadcasts to ``shape`` unchanged (each of its trailing dims 1 or
    ``shape``'s), without NumPy's ``broadcast_shapes``."""
    return have == shape or len(have) <= len(shape) and all(
        h == 1 or h == s for h, s in zip(reversed(have), reversed(shape)))


def sum_to(grad, shape):
    """Sum ``grad`` down to ``shape`` (undo broadcasting), with ember ops so it is
    differentiable (on the arrays when grad mode is off and no tangents propagate)."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and gshape[i + lead] != 1)
    if not grad_state.grad_enabled and not _forward.active and grad._data.dtype in _SUMMED_AS_IS:
        data = grad._data
        if dims and data.__class__ is np.ndarray:
            data = sum_over(data, dims, True)
        elif dims:
            data = data.sum(axis=dims, keepdims=True)
        return make(data.reshape(shape) if lead else data)  # what the ops below compute
    out = grad.sum(dims, keepdim=True) if dims else grad
    if lead:
        out = out.reshape(shape)
    return out


# Dtypes whose sums NumPy computes as ember's ``sum`` does (half precision accumulates in
# float32 there).
_SUMMED_AS_IS = frozenset(np.dtype(name) for name in ("float32", "float64"))


def grad_like(grad, x):
    """``grad`` reduced to ``x``'s shape and cast to its dtype (a real ``x`` takes the real
    part of a complex gradient)."""
    if grad._data.shape != x._data.shape:
        grad = sum_to(grad, x._data.shape)
    if grad._data.dtype != x._data.dtype:
        grad = real_part_for(grad, x._data.dtype).to(x.dtype)
    return grad


def real_part_for(grad, np_dtype):
    """``grad``'s real part when it is complex and ``np_dtype`` is not: the gradient of a real
    input of an op with a complex result (torch's rule)."""
    if grad._data.dtype.kind == "c" and np_dtype.kind != "c":
        return grad.real
    return grad


def conj_if_complex(t):
    """``t.conj()`` for a complex tensor, ``t`` itself otherwise (a Python number: its
    conjugate)."""
    if isinstance(t, Tensor):
        return t.conj() if t._data.dtype.kind == "c" else t
    return t.conjugate() if isinstance(t, complex) else t


def normalize_dims(dim, ndim):
    """``dim`` (None, an int or a sequence of ints) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        dims = tuple(_wrap_dim(d, ndim) for d in dim)
        if not ndim:
            dims = (0,) * len(dims)  # a 0-d tensor's dims 0 and -1 are the same one
        if len(set(dims)) != len(dims):
            repeated = next(d for i, d in enumerate(dims) if d in dims[:i])
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
        return tuple(sorted(dims)) if ndim else ()
    dim = _wrap_dim(dim, ndim)
    return (dim,) if ndim else ()


# ----------------------------------------------------------------------------------------
# In-place ops

def is_writeable(data):
    """False for arrays ember must not write into: NumPy's read-only ones (expanded views,
    read-only buffers) and, on backends whose arrays are always writable (CuPy has no
    ``writeable`` flag), expanded views, where one element is several."""
    try:
        return data.flags.writeable
    except AttributeError:
        return not (data.size > 1 and 0 in data.strides)


def check_inplace(self):
    """Refuse an in-place op that autograd could not follow (on a leaf that requires grad, or
    on a view of one) or that would write one memory location twice (an expanded tensor)."""
    if not is_writeable(self._data):
        if 0 in self._data.strides:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")
        raise RuntimeError("cannot write into a tensor whose memory is read-only (it was made "
                           "from a read-only NumPy array); clone() it first")
    if self._requires_grad and grad_state.grad_enabled:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        base = self._base
        if base is not None and base.grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")


def finish_inplace(self, result):
    """Write ``result`` (computed out of place) into ``self`` and give ``self`` its history."""
    rd, sd = result._data, self._data
    if (rd.__class__ is np.ndarray and sd.__class__ is np.ndarray and rd.dtype == sd.dtype and rd.shape == sd.shape
            and result.grad_fn is None and not _forward.active):   # (the common case: the values written)
        sd[...] = rd
        bump_version(self)
        return self
    if rd.dtype != sd.dtype:
        if not _dtype.can_cast(_BY_NP[rd.dtype], _BY_NP[sd.dtype]):
            raise RuntimeError(f"result type {_type_word(rd.dtype)} can't be cast to the desired "
                               f"output type {_type_word(sd.dtype)}")
    if rd.shape != sd.shape:
        raise RuntimeError(f"output with shape {list(sd.shape)} doesn't match the broadcast shape "
                           f"{list(rd.shape)}")
    if _forward.active:
        before_write(self)
    namespace_of(sd).copyto(sd, rd, casting="unsafe")
    bump_version(self)
    if _forward.active:
        inplace_tangent(self, result)
    if result.grad_fn is not None:
        if self._base is not None:
            _rebase_view_history(self, result)
        else:
            self._requires_grad = True
            self.grad_fn = result.grad_fn
            self._output_nr = result._output_nr
    return self


def take_view(self, view):
    """An in-place metadata change (``t_``, ``squeeze_``, ...): ``self`` becomes ``view``, a view
    of it made (and recorded) by the out-of-place op, taking its shape, strides and history;
    like any in-place op it moves the version on (its views, and tensors saved with it, see
    the change). Returns ``self``."""
    self._data = view._data
    bump_version(self)
    if view.grad_fn is not None:
        self._requires_grad = True
        self.grad_fn = view.grad_fn
        self._output_nr = 0
    if self._base is not None:   # its own history is up to date, not stale
        self._view_version = self._version_counter[0]
    return self


class CopySlices(Node):
    """The history of a tensor after a write into part of it (torch's CopySlices):
    ``self[key] = value``, or an in-place op on one of its views. Inputs: (the tensor before
    the write, the values written). The old values get the gradient outside the written
    ``region``, the written values the gradient inside it, summed to their shape
    (``value_shape``) and cast back to their dtype (``value_dtype``)."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        g_old = g_written = None
        if self.next_functions[0][0] is not None:
            g_old = self.region.outside(grad)
        if self.next_functions[1][0] is not None:
            g_written = sum_to(self.region.take(grad), self.value_shape)
            if g_written._data.dtype != self.value_dtype:
                g_written = g_written.to(_BY_NP[self.value_dtype])
        return g_old, g_written

    def backward_arrays(self, grad):
        """``backward`` on the arrays, where the written values' gradient needs no sum to their
        shape nor cast to their dtype: the old values' gradient a copy of the gradient with the
        region zeroed, the written values' a copy of the region."""
        gd = grad._data
        if type(gd) is not np.ndarray or grad.__class__ is not Tensor:
            return None
        edges = self.next_functions
        region = self.region
        g_written = None
        if edges[1][0] is not None:
            written = region.take_array(gd)
            if written.shape != self.value_shape or written.dtype != self.value_dtype:
                return None
            g_written = make(np.array(written, order="C"))
        return (make(region.zeroed_array(gd)) if edges[0][0] is not None else None), g_written


class KeyRegion:
    """The part of a tensor a basic-indexing ``key`` selects."""

    def __init__(self, key):
        self.key = key

    def of(self, data):
        """The region of an array (a view)."""
        return data[self.key]

    def take(self, t):
        return t[self.key]

    def outside(self, t):
        """``t`` with the region zeroed."""
        xp = namespace_of(t._data)
        keep = xp.ones(t._data.shape, dtype=t._data.dtype)
        keep[self.key] = 0
        return t * make(keep)

    def take_array(self, data):
        """The region of a NumPy array (a view)."""
        return data[self.key]

    def zeroed_array(self, data):
        """A copy of a NumPy array with the region zeroed."""
        out = data.copy()
        out[self.key] = 0
        return out


class PositionsRegion:
    """The elements of a tensor at flat ``positions`` (in its own C order), read as an array of
    ``shape``; ``mask`` marks them in the tensor's shape."""

    def __init__(self, positions, mask, shape):
        self.positions, self.mask, self.shape = positions, mask, shape

    def take(self, t):
        return t.reshape(-1)[make(self.positions)].reshape(self.shape)

    def outside(self, t):
        return t.masked_fill(make(self.mask), 0)

    def take_array(self, data):
        """The region of a NumPy array, read out."""
        return data.reshape(-1)[self.positions].reshape(self.shape)

    def zeroed_array(self, data):
        """A row-major copy of a NumPy array with the region zeroed."""
        out = data.copy(order="C")
        out.reshape(-1)[self.positions] = 0
        return out


class AsStridedBackward0(Node):
    """The gradient of a strided view of a storage (``as_strided``, and a view's history
    re-derived from its base's after an in-place op on it): summed into the storage positions
    the view reads (positions read twice add up), then read back at the input's own positions
    (``in_positions``; None when the input is the storage itself, in order). ``as_strided``
    keeps the two layouts instead (``out_layout``, ``in_layout``: sizes, strides and offset, in
    elements), from which the positions are made when they are needed."""
    __slots__ = ()
    jvp = jvp_by_transposition
    out_layout = in_layout = None

    def backward(self, grad):
        from .subscript import index_put_zeros
        out_positions, in_positions = self._positions(namespace_of(grad._data))
        storage = index_put_zeros((self.storage_size,), (out_positions,), grad)
        if in_positions is None:
            return (storage.reshape(self.in_shape),)
        return (storage[make(in_positions)],)

    def _positions(self, xp):
        if self.out_layout is None:
            return self.out_positions, self.in_positions
        from .shape import _element_positions
        return _element_positions(xp, *self.out_layout), _element_positions(xp, *self.in_layout)

    def backward_arrays(self, grad):
        """The gradient written into zeros through the view's own layout (where the view's
        elements lie apart in the storage; else added at their positions, those read twice
        adding up), then read through the input's."""
        out_layout, in_layout = self.out_layout, self.in_layout
        data = grad._data
        if (out_layout is None or type(data) is not np.ndarray or min(in_layout[1], default=0) < 0
                or min(out_layout[1], default=0) < 0):
            return None
        storage = np.zeros(self.storage_size, data.dtype)
        if _elements_apart(out_layout[0], out_layout[1]):
            _strided(storage, out_layout)[...] = data
        else:
            from .shape import _element_positions
            np.add.at(storage, _element_positions(np, *out_layout).reshape(-1), data.reshape(-1))
        return (make(np.ascontiguousarray(_strided(storage, in_layout))),)


def _elements_apart(size, stride):
    """Whether a layout of ``size`` and ``stride`` (in elements, none negative) reads no
    position twice: each stride, smallest first, passes all the smaller ones reach."""
    reach = 0
    for step, count in sorted((st, n) for n, st in zip(size, stride) if n > 1):
        if step <= reach:
            return False
        reach += (count - 1) * step
    return True


def _strided(storage, layout):
    """The view of the 1-d array ``storage`` with ``layout`` (sizes, strides, offset in
    elements)."""
    size, stride, offset = layout
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], size, [st * item for st in stride])


def _view_region(base, view):
    """For each element of ``view``, its position in ``base`` in base's own (C) order, and a
    boolean mask of base's shape marking the elements the view covers."""
    from .shape import _element_positions
    xp = namespace_of(base._data)
    view_pos = _element_positions(xp, view._data.shape, view.stride(), view.storage_offset())
    if base._data.flags.c_contiguous:   # (the common case: a position less the base's offset is its index)
        index = (view_pos - base.storage_offset()).reshape(-1)
        mask = xp.zeros(base._data.size, dtype=bool)
        mask[index] = True
        return index, mask.reshape(base._data.shape)
    base_pos = _element_positions(xp, base._data.shape, base.stride(), base.storage_offset())
    lo = int(base_pos.min()) if base_pos.size else 0
    size = (int(base_pos.max()) - lo + 1) if base_pos.size else 0
    logical = xp.full(size, -1, dtype=xp.int64)
    logical[(base_pos - lo).reshape(-1)] = xp.arange(base_pos.size, dtype=xp.int64)
    index = logical[(view_pos - lo).reshape(-1)]
    mask = xp.zeros(base._data.size, dtype=bool)
    mask[index] = True
    return index, mask.reshape(base._data.shape)


def _rebase_view_history(view, result):
    """After ``view`` took ``result``'s values in place: its base gets a CopySlices history and
    the view becomes a strided view of that new history, as torch rebases them."""
    base = view._base
    index, mask = _view_region(base, view)
    node = CopySlices((base, None if result.grad_fn.constant_result else result))
    node.region = PositionsRegion(index, mask, view._data.shape)
    node.value_shape, node.value_dtype = view._data.shape, result._data.dtype
    base._requires_grad = True
    base.grad_fn = node
    base._output_nr = 0
    _set_view_history(view, index)


def _set_view_history(view, index):
    base = view._base
    node = AsStridedBackward0((base,))
    node.storage_size, node.in_shape, node.in_positions = base._data.size, base._data.shape, None
    node.out_positions = index.reshape(view._data.shape)
    view._requires_grad = True
    view.grad_fn = node
    view._output_nr = 0
    view._view_version = view._version_counter[0]
    return node


def derive_view_history(view):
    """Give ``view`` a history read from its base's current history; returns the node (None
    when the base no longer requires grad)."""
    base = view._base
    if not base._requires_grad:
        view._view_version = view._version_counter[0]
        return view.grad_fn
    return _set_view_history(view, _view_region(base, view)[0])


def _type_word(np_dtype):
    return _BY_NP[np_dtype]._cpp_name  # torch's C++ ScalarType name: Float, Long, UInt16, ...


# dtypes as torch's C++ typeid names them in its messages ("Expected out tensor to have dtype float")
_TYPEID = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
           "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
           "complex128": "c10::complex<double>"}


def typeid_word(np_dtype):
    return _TYPEID.get(np_dtype.name, np_dtype.name)


_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


@functools.cache
def _range_of(np_dtype):
    """The lowest and highest finite values of a real dtype (ints for integer dtypes)."""
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return int(info.min), int(info.max)
    lowest = float(_dtype.finfo(_BY_NP[np_dtype]).min)
    return lowest, -lowest


def check_value_fits(value, np_dtype):
    """torch's check (c10's checked_convert) that the number ``value`` (or a one-element
    tensor's) can be written into a tensor of ``np_dtype``: an integer one takes no NaN or
    infinity and nothing out of its range (an unsigned one also takes negative integers down
    to minus its maximum, which wrap around); a float one takes infinities and NaN but no
    finite number beyond its range. Bool and complex ones take anything."""
    if value.__class__ is not float and value.__class__ is not int:   # (a Python float or int: the range alone)
        if isinstance(value, Tensor):
            value = value._data.reshape(-1)[0].item() if value._data.size == 1 else None
        if isinstance(value, complex) and np_dtype.kind != "c":
            if value.imag != 0:   # a complex value converts to a real dtype only without imaginary part
                name = _BY_NP[np_dtype].name
                raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(name, name)} without "
                                   "overflow")
            value = value.real
        if isinstance(value, (bool, complex)) or not isinstance(value, numbers.Real):
            return
    name = _BY_NP[np_dtype].name
    if name not in _C_TYPES:
        return
    lowest, highest = _range_of(np_dtype)
    if np_dtype.kind in "iu":
        if value.__class__ is int or (value.__class__ is not float and isinstance(value, numbers.Integral)):
            value = int(value)
            fits = lowest <= value <= highest or (np_dtype.kind == "u" and 0 < -value <= highest)
        else:
            value = float(value)
            fits = not math.isnan(value) and lowest <= value <= highest
    else:
        value = float(value)
        fits = math.isinf(value) or math.isnan(value) or lowest <= value <= highest
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[name]} without overflow")


def not_implemented(kernel, np_dtype):
    """torch's error for a dtype its CPU kernel ``kernel`` has no loop for."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(np_dtype)}'")


def any_requires_grad(args):
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def inplace_untracked(self):
    """Whether an in-place op on ``self`` with no tensor arguments records nothing (no gradient,
    no tangent), so that it may write ``self``'s array directly (after ``check_inplace``)."""
    return not _forward.active and not (grad_state.grad_enabled and self._requires_grad)


# ``_compiled_methods``' write_inplace (set where the compiled methods are built): ``apply_inplace``'s steps
# where nothing records, in C
inplace_writer = [None]


def apply_inplace(self, op, *args, **kwargs):
    """``self.op_(*args)`` from the out-of-place ``op``: when autograd records, ``op`` runs on a
    clone of ``self`` (so the values it saves are not the ones overwritten) and ``self`` takes
    the result's history; otherwise the result is just written into ``self``."""
    write = inplace_writer[0]
    if write is not None and not kwargs:
        written = write(self, op, args, finish_inplace)
        if written is not NotImplemented:
            return written
    check_inplace(self)
    if not (_forward.active or (grad_state.grad_enabled and (self._requires_grad or any_requires_grad(args) or (
            kwargs and any_requires_grad(kwargs.values()))))):   # (nothing recorded: the common case)
        return finish_inplace(self, op(self, *args, **kwargs))
    if _forward.active and not grad_state.grad_enabled:   # the op's tangent rule reads self first
        return finish_inplace(self, op(self.clone(), *args, **kwargs))
    if grad_state.grad_enabled and (self._requires_grad or any_requires_grad(args)
                                    or any_requires_grad(kwargs.values())):
        if self._data.dtype.kind in "biu":   # an integer tensor takes the values, no history
            from ..autograd.grad_mode import no_grad
            with no_grad():
                return finish_inplace(self, op(self, *args, **kwargs))
        return finish_inplace(self, op(self.clone(), *args, **kwargs))
    return finish_inplace(self, op(self, *args, **kwargs))


# ----------------------------------------------------------------------------------------
# out= arguments

def check_out(result, out, exact=False, op=None):
    """Refuse, as torch does, an ``out=`` tensor ``result`` cannot be written into: not a
    tensor, autograd involved, a dtype ``result``'s does not cast to (or, ``exact``, any other
    dtype: torch's linalg and sorting ops), or an expanded tensor of the result's shape."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op + '(): ' if op else ''}argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_state.grad_enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError("functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    rd, od = result._data, out._data
    if exact and rd.dtype != od.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {typeid_word(rd.dtype)}, but got "
                           f"{typeid_word(od.dtype)} instead")
    if rd.dtype != od.dtype and not _dtype.can_cast(_BY_NP[rd.dtype], _BY_NP[od.dtype]):
        raise RuntimeError(f"result type {_type_word(rd.dtype)} can't be cast to the desired output "
                           f"type {_type_word(od.dtype)}")
    if od.shape == rd.shape:
        check_inplace(out)   # an expanded out would be written more than once per element


def _copy_out(result, out):
    rd, od = result._data, out._data
    xp = namespace_of(od)
    if od.shape != rd.shape:
        if od.size:
            import warnings
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(od.shape)}, "
                f"which does not match the required output shape {list(rd.shape)}. This behavior is "
                "deprecated, and in a future PyTorch release outputs will not be resized unless they "
                "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
                "to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
        out._data = od = xp.empty(rd.shape, dtype=od.dtype)
    xp.copyto(od, rd, casting="unsafe")
    bump_version(out)
    return out


def write_out(result, out, exact=False, op=None):
    """Copy ``result`` into the ``out=`` tensor (resizing it, with torch's warning, when it has
    elements and the wrong shape) and return ``out``; ``result`` when ``out`` is None. For an
    op with several outputs, ``result`` and ``out`` are tuples (all are checked before any is
    written). See ``check_out`` for what is refused."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"{op + '(): ' if op else ''}argument 'out' must be tuple of Tensors, not "
                            f"{type(out).__name__}")
        if len(out) != len(result):
            raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
        for r, o in zip(result, out):
            check_out(r, o, exact, op)
        outs = [_copy_out(r, o) for r, o in zip(result, out)]
        return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)
    check_out(result, out, exact, op)
    return _copy_out(result, out)


def out_dtype(out):
    """The NumPy dtype of an ``out=`` argument (None when it is not a tensor: ``write_out``
    then refuses it with torch's TypeError)."""
    return out._data.dtype if isinstance(out, Tensor) else None


def write_out_exact(result, out, op, message):
    """``write_out`` for an op whose ``out=`` must have ``result``'s dtype, refused with
    torch's wording for that op: ``message`` is formatted with ``want`` and ``got`` (the
    dtypes' ScalarType names, Float), ``want_c`` and ``got_c`` (their C++ names, float) and
    ``op``. For several outputs, ``result`` and ``out`` are tuples and ``message`` one per output."""
    if isinstance(result, tuple):
        if isinstance(out, (tuple, list)) and len(out) == len(result):
            for r, o, m in zip(result, out, message):
                _check_exact_dtype(r, o, m, op)
    else:
        _check_exact_dtype(result, out, message, op)
    return write_out(result, out, True, op)


def _check_exact_dtype(result, out, message, op):
    od = out_dtype(out)
    rd = result._data.dtype
    if od is not None and od != rd:
        raise RuntimeError(message.format(op=op, want=_type_word(rd), got=_type_word(od),
                                          want_c=typeid_word(rd), got_c=typeid_word(od)))


def with_out(exact=True, op=None):
    """Give the decorated function torch's ``out=`` keyword (see ``write_out``); ``exact``:
    ``out`` must have the result's dtype, as torch's linalg and sorting ops require. The
    function without the keyword stays as ``__wrapped__``, for Tensor methods (torch's take
    no out=)."""
    import functools

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, out=None, **kwargs):
            result = fn(*args, **kwargs)
            return result if out is None else write_out(result, out, exact, op or fn.__name__)
        return wrapper
    return decorate


def accepts_out(fn):
    """Give ``fn`` torch's ``out=`` keyword: the result is written into ``out``."""
    import functools

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else write_out(result, out)
    return with_out
