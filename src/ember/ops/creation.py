"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and _like), arange,
linspace, logspace, eye."""
import builtins
import math
import numbers

import numpy as np

from .. import _dtype
from .._backend import backend_for
from .._device import CPU, to_device
from .._dtype import get_default_dtype, to_dtype
from ._common import Tensor, make, method

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "logspace", "eye", "scalar_tensor", "empty_strided"]


def _infer_np_dtype(arr, from_numpy):
    kind = arr.dtype.kind
    if from_numpy:
        _dtype.from_numpy_dtype(arr.dtype)  # TypeError for unsupported NumPy types
        return arr.dtype
    if kind == "f":
        return get_default_dtype().np
    if kind in "iu":
        return np.int64
    if kind == "b":
        return np.bool_
    if kind == "c":
        return get_default_dtype().to_complex().np
    if arr.dtype == _dtype.bfloat16.np:
        return arr.dtype
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _to_nested_arrays(data):
    """Lists that contain tensors: replace each by its host array."""
    if isinstance(data, Tensor):
        return data.detach().cpu()._data
    if isinstance(data, (list, tuple)):
        return [_to_nested_arrays(d) for d in data]
    return data


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


def _place(arr, device):
    device = to_device(device)
    if device.type == "cpu":
        return arr
    return backend_for(device).from_array(arr, device.index)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Constructs a tensor with no autograd history by copying ``data`` (a number, a nested
    sequence, a NumPy array or a tensor). Python floats become the default dtype, ints int64."""
    if isinstance(data, Tensor):
        arr = data.detach().cpu()._data if device is None or to_device(device).type == "cpu" else data._data
        arr = arr.copy()
        if device is None:
            device = data.device
    else:
        is_np = isinstance(data, (np.ndarray, np.generic))
        if not is_np and isinstance(data, (list, tuple)):
            data = _to_nested_arrays(data)
        if isinstance(data, str):
            raise TypeError(f"new(): invalid data type 'str'")
        try:
            arr = np.array(data)
        except ValueError:
            raise ValueError(_ragged_message(data)) from None
        if arr.dtype == object:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        target = _infer_np_dtype(arr, is_np)
        if arr.dtype != target:
            arr = arr.astype(target)
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
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _finish(arr, device, requires_grad):
    t = make(_place(arr, device) if device is not None else arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _np_dtype(dtype):
    return get_default_dtype().np if dtype is None else to_dtype(dtype).np


def _xp_for(device):
    if device is None:
        return np
    return backend_for(to_device(device)).xp


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor filled with 0 of the given size."""
    return _finish(_xp_for(device).zeros(_size(size, "zeros"), _np_dtype(dtype)), None, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor filled with 1 of the given size."""
    return _finish(_xp_for(device).ones(_size(size, "ones"), _np_dtype(dtype)), None, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """An uninitialised tensor of the given size."""
    return _finish(_xp_for(device).empty(_size(size, "empty"), _np_dtype(dtype)), None, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given size and strides (in elements)."""
    size = _size((size,), "empty_strided")
    np_dtype = _np_dtype(dtype)
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    buf = _xp_for(device).empty(extent, np_dtype)
    item = np.dtype(np_dtype).itemsize
    arr = np.lib.stride_tricks.as_strided(buf, size, tuple(st * item for st in stride))
    return _finish(arr, None, requires_grad)


def _fill_dtype(fill_value):
    if isinstance(fill_value, (bool, np.bool_)):
        return np.bool_
    if isinstance(fill_value, numbers.Integral):
        return np.int64
    if isinstance(fill_value, numbers.Complex) and not isinstance(fill_value, numbers.Real):
        return get_default_dtype().to_complex().np
    return get_default_dtype().np


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of the given size filled with ``fill_value`` (its dtype inferred from the value)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    np_dtype = _fill_dtype(fill_value) if dtype is None else to_dtype(dtype).np
    return _finish(_xp_for(device).full(_size((size,), "full"), fill_value, np_dtype), None, requires_grad)


def _like(input, dtype, device):
    np_dtype = input._data.dtype if dtype is None else to_dtype(dtype).np
    dev = input.device if device is None else to_device(device)
    return np_dtype, dev


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor of zeros with the size (and, unless given, dtype and device) of ``input``."""
    np_dtype, dev = _like(input, dtype, device)
    return _finish(_xp_for(dev).zeros(input._data.shape, np_dtype), None, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A tensor of ones with the size (and, unless given, dtype and device) of ``input``."""
    np_dtype, dev = _like(input, dtype, device)
    return _finish(_xp_for(dev).ones(input._data.shape, np_dtype), None, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialised tensor with the size (and, unless given, dtype and device) of ``input``."""
    np_dtype, dev = _like(input, dtype, device)
    return _finish(_xp_for(dev).empty(input._data.shape, np_dtype), None, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """A tensor filled with ``fill_value`` with the size (and, unless given, dtype and device) of
    ``input``."""
    np_dtype, dev = _like(input, dtype, device)
    return _finish(_xp_for(dev).full(input._data.shape, fill_value, np_dtype), None, requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` (inclusive) to ``end`` (exclusive) spaced by ``step``; int64 when
    all three are integers, else the default float dtype."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    all_int = builtins.all(isinstance(v, numbers.Integral) for v in (start, end, step))
    np_dtype = (np.int64 if all_int else get_default_dtype().np) if dtype is None else to_dtype(dtype).np
    n = math.ceil((end - start) / step)
    # computed in float64 / int64 then cast, as torch does
    arr = (np.arange(n, dtype=np.int64 if all_int else np.float64) * step + start).astype(np_dtype)
    return _finish(arr, device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive."""
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _np_dtype(dtype)
    if np.dtype(np_dtype).kind in "iu":
        arr = np.linspace(start, end, steps, dtype=np.float64)
        arr = np.trunc(arr).astype(np_dtype)
    else:
        # torch fills the first half from start and the second half from end (symmetric error)
        arr = np.empty(steps, dtype=np.float64)
        if steps == 1:
            arr[0] = start
        elif steps > 1:
            step = (end - start) / (steps - 1)
            half = steps // 2
            idx = np.arange(steps, dtype=np.float64)
            arr[:half] = start + step * idx[:half]
            arr[half:] = end - step * (steps - 1 - idx[half:])
        arr = arr.astype(np_dtype)
    return _finish(arr, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values evenly spaced on a log scale from base**start to base**end."""
    exps = linspace(start, end, steps, dtype=_dtype.float64)._data
    arr = np.power(base, exps).astype(_np_dtype(dtype))
    return _finish(arr, device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal and zeros elsewhere."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _finish(_xp_for(device).eye(n, m, dtype=_np_dtype(dtype)), None, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.array(s, dtype=_np_dtype(dtype)), device, requires_grad)


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
