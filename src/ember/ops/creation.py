"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and _like), arange,
linspace, logspace, eye."""
import builtins
import itertools
import math
import numbers
import operator

import numpy as np

from .. import _dtype
from .. import _memory_format as _mf
from .._backend import backend_for, openmp_kernels
from .._device import _default as _default_device, CPU, default_device, to_device
from .._dtype import get_default_dtype, to_dtype
from ._common import accepts_out, grad_state, inplace_untracked, Tensor, make, method, record
from .._torch_function import override_or_raise

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "logspace", "eye", "scalar_tensor", "empty_strided"]


_PYTHON_SCALARS = frozenset((int, float, bool, complex))


def _scan_leaves(data, found):
    """Walk a nested sequence: add each leaf's type (or dtype, for arrays, NumPy scalars and
    tensors) to ``found``; return the data with tensors replaced by their host arrays."""
    kinds = set(map(type, data))
    if kinds <= _PYTHON_SCALARS:
        found.update(kinds)
        return data
    out = []
    for d in data:
        if isinstance(d, (list, tuple)):
            out.append(_scan_leaves(d, found))
            continue
        if isinstance(d, Tensor):
            d = d.detach().cpu()._data
        if isinstance(d, (np.ndarray, np.generic)):
            found.add(d.dtype)
        else:
            found.add(type(d))
        out.append(d)
    return out


def _leaf_dtype(kind):
    """The ember dtype torch gives a leaf of this Python type or NumPy dtype."""
    if kind is bool:
        return _dtype.bool
    if kind is float:
        return get_default_dtype()
    if kind is complex:
        return get_default_dtype().to_complex()
    if isinstance(kind, type) and issubclass(kind, numbers.Integral):
        return _dtype.int64
    if isinstance(kind, np.dtype):
        return _dtype.from_numpy_dtype(kind)
    if kind is str:
        raise TypeError("new(): invalid data type 'str'")
    raise RuntimeError(f"Could not infer dtype of {kind.__name__}")


def _inferred_dtype(found):
    """torch's rule: the promotion of every leaf's dtype (empty data: the default dtype)."""
    result = None
    for kind in found:
        d = _leaf_dtype(kind)
        result = d if result is None else _dtype.promote_types(result, d)
    return get_default_dtype() if result is None else result


def _array_from_sequence(data, np_dtype):
    try:
        return np.array(data, dtype=np_dtype)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    except ValueError:
        raise ValueError(_ragged_message(data)) from None


def _ragged_message(data):
    def walk(d, dim):
        if isinstance(d, (list, tuple)) and d and isinstance(d[0], (list, tuple)):
            n = len(d[0])
            for x in d:
                if not isinstance(x, (list, tuple)):
                    return f"expected sequence of length {n} at dim {dim + 1} (got {type(x).__name__})"
                if len(x) != n:
                    return f"expected sequence of length {n} at dim {dim + 1} (got {len(x)})"
            for x in d:
                m = walk(x, dim + 1)
                if m:
                    return m
        return None
    return walk(data, 0) or "could not build a tensor from the given data"


def _host_array(data, dtype=None):
    """``data`` (anything but a tensor) as a NumPy array of ``dtype``, or else of torch's
    inferred dtype: NumPy arrays and scalars keep theirs; Python floats give the default
    dtype, ints int64, and a sequence the promotion of its elements' dtypes. Python numbers
    are converted straight to ``dtype`` (never through the default dtype)."""
    if isinstance(data, (np.ndarray, np.generic)):
        _dtype.from_numpy_dtype(data.dtype)
        return np.array(data)
    found = set()
    if isinstance(data, (list, tuple)):
        data = _scan_leaves(data, found)
    else:
        found.add(type(data))
    inferred = _inferred_dtype(found)
    return _array_from_sequence(data, inferred.np if dtype is None else to_dtype(dtype).np)


def _place(arr, device):
    device = to_device(device)
    if device.type == "cpu":
        return arr
    return backend_for(device).from_array(arr, device.index)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Constructs a tensor with no autograd history by copying ``data`` (a number, a nested
    sequence, a NumPy array or a tensor). Python floats become the default dtype, ints int64,
    bools bool; NumPy arrays and scalars keep their dtype; a sequence takes the promotion of
    its elements' dtypes."""
    if device is None:
        device = _default_device.device
    if isinstance(data, Tensor):
        arr = data.detach().cpu()._data if device is None or to_device(device).type == "cpu" else data._data
        arr = arr.copy()
        if device is None:
            device = data.device
    else:
        arr = _host_array(data, dtype)
    if dtype is not None:
        arr = arr.astype(to_dtype(dtype).np, copy=False)
    t = make(_place(np.ascontiguousarray(arr) if arr.ndim else arr, device or CPU))
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None):
    """Converts ``data`` into a tensor, sharing memory with a NumPy array or tensor where the
    dtype and device already match."""
    if isinstance(data, Tensor):
        out = data
        if dtype is not None or device is not None:
            out = out.to(dtype=dtype, device=device)
        return out
    if isinstance(data, np.ndarray) and (device is None or to_device(device).type == "cpu"):
        if dtype is None or to_dtype(dtype).np == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Converts ``obj`` to a tensor, sharing memory when possible unless ``copy=True``."""
    if copy:
        out = tensor(obj, dtype=dtype, device=device)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(ndarray):
    """A tensor sharing memory with the NumPy array (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    return make(ndarray)


def _size(size, op):
    """The size arguments ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` as a tuple, with torch's
    errors for non-integers and negative sizes."""
    if not size:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    if all(s.__class__ is int and s >= 0 for s in size):   # the common case, without the checks below
        return tuple(size)
    elif len(size) == 1 and not _is_int(size[0]):
        raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor):
            s = s.item()
        if not _is_int(s):
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                            f"error \"type must be tuple of ints,but got {type(s).__name__}\"")
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _is_int(s):
    return (isinstance(s, numbers.Integral) and not isinstance(s, bool)) or \
        (isinstance(s, Tensor) and s._data.ndim == 0 and s._data.dtype.kind in "iu")


def _finish(arr, device, requires_grad):
    t = make(_place(arr, device) if device is not None else arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _np_dtype(dtype):
    return get_default_dtype().np if dtype is None else to_dtype(dtype).np


def _xp_for(device):
    if device is None:
        device = _default_device.device
        if device is None:
            return np
    return backend_for(to_device(device)).xp


@accepts_out
def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor filled with 0 of the given size."""
    try:
        shape = _size(size, "zeros")
    except RuntimeError:
        raise RuntimeError("zeros: Dimension size must be non-negative.") from None
    return _finish(_xp_for(device).zeros(shape, _np_dtype(dtype)), None, requires_grad)


@accepts_out
def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor filled with 1 of the given size."""
    return _finish(_xp_for(device).ones(_size(size, "ones"), _np_dtype(dtype)), None, requires_grad)


@accepts_out
def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """An uninitialised tensor of the given size."""
    return _finish(_xp_for(device).empty(_size(size, "empty"), _np_dtype(dtype)), None, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given size and strides (in elements)."""
    size = _size((size,), "empty_strided")
    np_dtype = _np_dtype(dtype)
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    xp = _xp_for(device)
    buf = xp.empty(extent, np_dtype)
    item = np.dtype(np_dtype).itemsize
    arr = xp.lib.stride_tricks.as_strided(buf, size, tuple(st * item for st in stride))
    return _finish(arr, None, requires_grad)


def _fill_dtype(fill_value):
    if isinstance(fill_value, (bool, np.bool_)):
        return np.bool_
    if isinstance(fill_value, numbers.Integral):
        return np.int64
    if isinstance(fill_value, numbers.Complex) and not isinstance(fill_value, numbers.Real):
        return get_default_dtype().to_complex().np
    return get_default_dtype().np


@accepts_out
def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of the given size filled with ``fill_value`` (its dtype inferred from the value)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    np_dtype = _fill_dtype(fill_value) if dtype is None else to_dtype(dtype).np
    return _finish(_xp_for(device).full(_size((size,), "full"), fill_value, np_dtype), None, requires_grad)


def _like(input, dtype, device):
    np_dtype = input._data.dtype if dtype is None else to_dtype(dtype).np
    dev = input.device if device is None else to_device(device)
    return np_dtype, dev


def _empty_like(input, np_dtype, dev, memory_format):
    """An uninitialized array shaped as ``input`` in ``memory_format`` (the default,
    ``preserve_format``, keeps a channels-last input's format)."""
    data = input._data
    fmt = _mf.suggest(data) if memory_format in (None, _mf.preserve_format) else memory_format
    if fmt.rank is not None:
        _mf.check_rank(data, fmt)
    return _mf.empty_as(_xp_for(dev), data.shape, np_dtype, fmt)


def _filled_like(input, value, dtype, device, requires_grad, memory_format):
    np_dtype, dev = _like(input, dtype, device)
    out = _empty_like(input, np_dtype, dev, memory_format)
    out[...] = value
    return _finish(out, None, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor of zeros with the size (and, unless given, dtype and device) of ``input``."""
    try:
        return _filled_like(input, 0, dtype, device, requires_grad, memory_format)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(zeros_like, error, input, dtype=dtype, layout=layout, device=device,
                                 requires_grad=requires_grad, memory_format=memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor of ones with the size (and, unless given, dtype and device) of ``input``."""
    try:
        return _filled_like(input, 1, dtype, device, requires_grad, memory_format)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(ones_like, error, input, dtype=dtype, layout=layout, device=device,
                                 requires_grad=requires_grad, memory_format=memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialised tensor with the size (and, unless given, dtype and device) of ``input``."""
    np_dtype, dev = _like(input, dtype, device)
    return _finish(_empty_like(input, np_dtype, dev, memory_format), None, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """A tensor filled with ``fill_value`` with the size (and, unless given, dtype and device) of
    ``input``."""
    return _filled_like(input, fill_value, dtype, device, requires_grad, memory_format)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


@accepts_out
def arange(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` (inclusive) to ``end`` (exclusive) spaced by ``step``; int64 when
    all three are integers, else the default float dtype. The length is
    ``ceil((end - start) / step)`` and the values are torch's to the last bit."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    all_int = builtins.all(isinstance(v, numbers.Integral) for v in (start, end, step))
    np_dtype = np.dtype((np.int64 if all_int else get_default_dtype().np) if dtype is None
                        else to_dtype(dtype).np)
    _check_arange_bounds(start, end, step)
    if np_dtype.kind == "b":
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if np_dtype.kind in "iu":
        arr = _arange_int(start, end, step, np_dtype)
    else:
        arr = _arange_float(float(start), float(step), math.ceil((end - start) / step), np_dtype)
    return _finish(arr, default_device(device), requires_grad)


def _check_arange_bounds(start, end, step):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {float(start):g} -> {float(end):g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _arange_int(start, end, step, np_dtype):
    """Integer ranges: torch truncates start and step to integers (and, for int64, end too
    before counting)."""
    istart, iend, istep = int(start), int(end), int(step)
    if np_dtype == np.int64:
        if istep == 0:
            raise ValueError("step must be nonzero")
        sign = (istep > 0) - (istep < 0)
        n = builtins.max(_trunc_div(iend - istart + istep - sign, istep), 0)
    else:
        n = math.ceil((end - start) / step)
    return (np.arange(n, dtype=np.int64) * istep + istart).astype(np_dtype)


def _trunc_div(a, b):
    """Integer division rounding toward zero (C's)."""
    q = builtins.abs(a) // builtins.abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# -- torch's range kernels, bit for bit ------------------------------------------------------
# torch's CPU kernels compute ``start + step * i`` with a fused multiply-add, and arange writes
# 32-byte vectors (pairs of them) from a base value, then a scalar tail. NumPy has no fma: a
# double fma is emulated with error-free products and sums (Dekker/Knuth), correctly rounded
# but for rare double-rounding ties.

_F64 = np.float64
_VEC_BYTES = 32


def _two_product(a, b):
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    al = a - ah
    bh = b * split
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a, b, c):
    """a * b + c in float64, rounded once."""
    a, b, c = np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64)
    p, e = _two_product(a, b)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _fma(a, b, c, np_dtype):
    """a * b + c rounded once to ``np_dtype`` (float32: the product is exact in float64)."""
    if np.dtype(np_dtype) == _F64:
        return _fma64(a, b, c)
    return (np.asarray(a, _F64) * np.asarray(b, _F64) + np.asarray(c, _F64)).astype(np_dtype)


def _arange_float(start, step, n, np_dtype):
    """torch's arange kernel: accumulate in float64 (float32 for half types), vectors of
    32 bytes processed in pairs, each lane ``base + k * step``; the tail element by element."""
    acc = _F64 if np_dtype.itemsize >= 4 else np.dtype(np.float32)
    idx = np.arange(n, dtype=_F64)
    out = _fma(step, idx, start, acc).astype(_F64)
    vec = _VEC_BYTES // np_dtype.itemsize
    n_vec = n // (2 * vec) * (2 * vec)
    with np.errstate(over="ignore"):  # out of the dtype's range: inf, as in torch
        if n_vec:
            lane = idx[:n_vec] % vec
            base = _fma(step, idx[:n_vec] - lane, start, acc).astype(np_dtype).astype(_F64)
            out[:n_vec] = _fma(lane, step, base, acc)
        return out.astype(np_dtype)


def _linspace_float(start, end, steps, np_dtype):
    """torch's linspace: step in the output dtype; the first half ``start + step * i``, the
    second ``end - step * (steps - 1 - i)`` (half types round after every operation)."""
    start, end = np_dtype.type(start), np_dtype.type(end)
    if steps == 1:
        return np.full(1, start, np_dtype)
    looped = openmp_kernels.linspace(start, end, steps, np_dtype)   # (float32, float64: these steps in C)
    if looped is not None:
        return looped
    step = (end - start) / np_dtype.type(steps - 1)
    idx = np.arange(steps, dtype=_F64)
    back = steps - 1 - idx
    if np_dtype.itemsize < 4:
        i, b = idx.astype(np_dtype), back.astype(np_dtype)
        return np.where(idx < steps // 2, start + step * i, end - step * b).astype(np_dtype)
    return np.where(idx < steps // 2, _fma(step, idx, start, np_dtype),
                    _fma(-step, back, end, np_dtype)).astype(np_dtype)


def _linspace_int(start, end, steps, np_dtype):
    """Integer linspace: start and end truncated, a float64 step, values truncated."""
    start, end = int(start), int(end)
    if steps == 1:
        return np.full(1, start, np_dtype)
    step = float(end - start) / (steps - 1)
    idx = np.arange(steps, dtype=_F64)
    vals = np.where(idx < steps // 2, _fma64(step, idx, start), _fma64(-step, steps - 1 - idx, end))
    return np.trunc(vals).astype(np_dtype)


def _logspace_real(start, end, steps, base, np_dtype):
    """torch's logspace: start and end in the output dtype, a float64 step, exponents counted
    from both ends as in linspace (no fma here), C's ``pow`` in float64 (``math.pow``: NumPy's vectorised
    power may differ in the last bit)."""
    if steps == 1:
        return np.array([_pow(base, float(start))]).astype(np_dtype)
    start = np_dtype.type(int(start) if np_dtype.kind in "iu" else start)
    end = np_dtype.type(int(end) if np_dtype.kind in "iu" else end)
    step = float(end - start) / (steps - 1)
    idx = np.arange(steps, dtype=_F64)
    exps = np.where(idx < steps // 2, float(start) + step * idx, float(end) - step * (steps - 1 - idx))
    values = np.fromiter(map(_pow, itertools.repeat(base, steps), exps.tolist()), _F64, steps)
    with np.errstate(over="ignore", invalid="ignore"):
        if np_dtype.itemsize < 4:  # torch rounds through float32
            values = values.astype(np.float32)
        return values.astype(np_dtype)


def _pow(base, exp):
    try:
        return math.pow(base, exp)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


@accepts_out
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive (torch's values: the
    first half counted up from start, the second half down from end)."""
    start, end = _num(start), _num(end)
    if not isinstance(steps, numbers.Integral) or isinstance(steps, bool):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = np.dtype(_np_dtype(dtype))
    if np_dtype.kind in "biu":
        arr = _linspace_int(start, end, steps, np_dtype)
    elif np_dtype.kind == "c":
        arr = np.linspace(start, end, steps).astype(np_dtype)
    else:
        arr = _linspace_float(start, end, steps, np_dtype)
    return _finish(arr, default_device(device), requires_grad)


@accepts_out
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values evenly spaced on a log scale from base**start to base**end."""
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = np.dtype(_np_dtype(dtype))
    if np_dtype.kind == "c":
        arr = np.logspace(start, end, steps, base=base).astype(np_dtype)
    else:
        arr = _logspace_real(start, end, steps, float(base), np_dtype)
    return _finish(arr, default_device(device), requires_grad)


@accepts_out
def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal and zeros elsewhere."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    xp = _xp_for(device)
    if xp is not np:
        return _finish(xp.eye(n, m, dtype=_np_dtype(dtype)), None, requires_grad)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    data = np.zeros((n, m), _np_dtype(dtype))
    data.reshape(-1)[:min(n, m) * (m + 1):m + 1] = 1   # (the diagonal: numpy.eye's steps without its call)
    return _finish(data, None, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.array(s, dtype=_np_dtype(dtype)), default_device(device), requires_grad)


@method()
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@method()
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@method()
def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@method()
def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@method()
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


@method()
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      pin_memory=False):
    """Returns a tensor of ``size`` and ``stride`` filled with uninitialized data; by default
    of this tensor's dtype and device."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def fill(input, value):
    """Returns a tensor of ``input``'s shape, dtype and device filled with ``value`` (a number
    or a 0-d tensor): the out-of-place ``fill_``."""
    if not isinstance(input, Tensor):
        return input.clone().fill_(value)   # (the method's error)
    data = input._data
    if (value.__class__ in (float, int) and data.__class__ is np.ndarray and data.dtype in _FLOAT_DTYPES
            and data.flags.c_contiguous):   # (the common case: what empty_like and fill_ do, without their steps)
        filled = np.empty(data.shape, data.dtype)
        filled[...] = value
        out = make(filled)
    else:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            out = empty_like(input).fill_(value)
    tensor_value = isinstance(value, Tensor)
    if inplace_untracked(input) and not (tensor_value and value._requires_grad and grad_state.grad_enabled):
        return out
    from .subscript import FillBackward0, FillBackward1   # (a zero gradient for input: torch's result requires grad)
    node = record(FillBackward1 if tensor_value else FillBackward0, (input, value) if tensor_value else (input,), out)
    if node is not None and tensor_value:
        node.value_dtype = value._data.dtype
    return out


_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


__all__.append("fill")
