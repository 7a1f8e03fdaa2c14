"""``make_tensor``: a tensor of random values in a dtype's default range, as torch.testing's."""
import collections.abc
import math
import warnings

from .. import _dtype
from ..ops.creation import empty
from ..ops.random import randint

_INTEGRAL = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)
_FLOATING = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)
_COMPLEX = (_dtype.complex64, _dtype.complex128)
_COMPLEX_PARTS = {_dtype.complex64: _dtype.float32, _dtype.complex128: _dtype.float64}


def _bounds(low, high, dtype, *, lowest_inclusive, highest_exclusive, default_low, default_high):
    """``low`` and ``high`` checked, defaulted and clamped to what ``dtype`` can hold."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn(
            "Passing `low==high` to `ember.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `ember.full(...)` instead.",
            FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype is _dtype.bool or dtype in _INTEGRAL:
        # randint's high is exclusive: both bounds round up
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(shape, dtype, device, low, high):
    result = empty(shape, dtype=dtype, device=device)
    if high - low >= _dtype.finfo(dtype).max:  # the span itself would overflow
        return result.uniform_(low / 2, high / 2).mul_(2)
    return result.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``.

    Defaults as torch's: ``[0, 2)`` for bool, ``[-9, 10)`` for integers (clamped to the dtype,
    so ``[0, 10)`` for uint8), ``[-9, 9)`` for floating and complex dtypes (real and imaginary
    parts). Bounds outside the dtype's finite range are clamped to it. ``noncontiguous`` gives a
    strided view (tensors of two elements or more), ``exclude_zero`` replaces zeros with 1 or
    the dtype's ``tiny``."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and (dtype is _dtype.bool or dtype in _INTEGRAL):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # twice as long in the last dim, then every other element from the second
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is _dtype.bool:
        low, high = _bounds(low, high, dtype, lowest_inclusive=0, highest_exclusive=2,
                            default_low=0, default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = _dtype.iinfo(dtype)
        # randint cannot draw int64's largest value
        top = info.max + (1 if dtype is not _dtype.int64 else 0)
        low, high = _bounds(low, high, dtype, lowest_inclusive=info.min, highest_exclusive=top,
                            default_low=-9, default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = _dtype.finfo(dtype)
        low, high = _bounds(low, high, dtype, lowest_inclusive=info.min,
                            highest_exclusive=info.max, default_low=-9, default_high=9)
        if dtype in _COMPLEX:
            part = _COMPLEX_PARTS[dtype]
            real = _uniform(shape, part, device, low, high).to(dtype)
            result = real + _uniform(shape, part, device, low, high).to(dtype) * 1j
        else:
            result = _uniform(shape, dtype, device, low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by ember.testing.make_tensor().")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype is _dtype.bool or dtype in _INTEGRAL else \
            _dtype.finfo(dtype).tiny
    if dtype in _FLOATING + _COMPLEX:
        result.requires_grad = requires_grad
    return result
