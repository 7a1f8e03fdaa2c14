"""Sums of arrays along axes, as ember's ``sum`` computes them: the array's own ``sum`` method,
or, for the shapes where NumPy's reduction loops are slow, a compiled loop (float32 arrays
summed over their leading axes) or ``einsum`` (tall, narrow float64 arrays summed over their
leading axes; short rows summed over their trailing axes). Used by the ``sum`` op
and by the backward passes that sum a gradient down to an operand's shape."""
import math

import numpy as np

from .._backend import openmp_kernels


def array_sum(data, **kwargs):
    """``data.sum(...)``: the array's own method, which skips NumPy's Python-level ``np.sum``
    wrapper (most of the time of a small sum) and exists on every backend's arrays; for a NumPy
    array summed over axes, ``sum_over``."""
    axis = kwargs.get("axis")
    if (axis is None or type(data) is not np.ndarray or kwargs.get("dtype") is not None
            or not kwargs.keys() <= _SUM_OVER_KEYWORDS):
        return data.sum(**kwargs)
    return sum_over(data, axis, kwargs.get("keepdims", False))


_SUM_OVER_KEYWORDS = frozenset(("axis", "keepdims", "dtype"))   # (dtype None: the array's own)


def sum_over(data, axis, keepdims):
    """The sum of the NumPy array ``data`` over ``axis`` (an int or a tuple of ints): the
    reduction the array's ``sum`` method calls (without its Python layer), or a sum over the
    leading axes of a tall, narrow array by ``einsum`` or the column loop, or over the trailing axes
    (a float32 array's on the row loop, one with short rows by ``einsum``)."""
    if data.size >= COLUMN_SUM_MIN_ROWS and data.ndim > 1:
        ndim = data.ndim
        if type(axis) is int:
            axes = [axis % ndim]
        else:
            axes = [axis[0] % ndim] if len(axis) == 1 else sorted({a % ndim for a in axis})
        if axes[0] == 0 and data.dtype == _FLOAT32 and data.size >= COLUMN_LOOP_MIN_ELEMENTS:
            by_loop = _leading_axes_on_loop(data, axes, keepdims)
            if by_loop is not None:
                return by_loop
        # (only leading axes can take the column sums, only others the row sums)
        if ((data.shape[0] >= COLUMN_SUM_MIN_ROWS or len(axes) > 1 if axes[0] == 0
             else data.size >= ROW_SUM_MIN_ELEMENTS)
                and data.dtype in _EINSUM_SUM_DTYPES and data.flags.c_contiguous):
            by_einsum = (_leading_axes_sum if axes[0] == 0 else _trailing_axes_sum)(data, axes, keepdims)
            if by_einsum is not None:
                return by_einsum
    return np.add.reduce(data, axis, None, None, keepdims)


_EINSUM_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_FLOAT32 = np.dtype(np.float32)

# A row-major float32 array of this many elements or more, at least ``COLUMN_LOOP_MIN_ROWS``
# rows of it, summed over its leading axes: the compiled loop keeps each column's running sum
# in a register down the rows (NumPy's order of additions: the same bits), where NumPy's
# reduction loads and stores the sums row by row (benchmarks.ops, ``sum`` over a dim)
COLUMN_LOOP_MIN_ELEMENTS = 1 << 12
COLUMN_LOOP_MIN_ROWS = 32


def _leading_axes_on_loop(data, axes, keepdims):
    """The sum of a row-major float32 array over its first k axes (``axes``, sorted; k < ndim)
    by ``openmp_kernels.column_sums``; None where that does not apply."""
    k = len(axes)
    if k >= data.ndim or axes[-1] != k - 1 or not data.flags.c_contiguous:   # (the first k, sorted)
        return None
    shape = data.shape
    rows = shape[0] if k == 1 else math.prod(shape[:k])
    if rows < COLUMN_LOOP_MIN_ROWS:
        return None
    out = openmp_kernels.column_sums(data if data.ndim == 2 else data.reshape(rows, -1))
    if out is None:
        return None
    kept = data.shape[k:]
    return out.reshape((1,) * k + kept if keepdims else kept)


# NumPy's sum over a leading axis steps through the rows one at a time: with rows narrower than
# this and at least ``COLUMN_SUM_MIN_ROWS`` of them, ``einsum`` sums the columns in fewer passes
# (the same sequential sums: the same bits), also when the last axis, of at most
# ``COLUMN_SUM_MAX_LAST`` elements (too few for NumPy's pairwise sums to matter), is summed too
# (then in another order: within rounding of NumPy's)
COLUMN_SUM_MAX_WIDTH = 255
COLUMN_SUM_MIN_ROWS = 256
COLUMN_SUM_MAX_LAST = 16


# NumPy's sum over the last axis takes a reduction loop per row; ``einsum`` sums rows of up to
# this many elements in fewer passes, with independent SIMD accumulators, within rounding of
# NumPy's pairwise sums (for longer rows its error grows with the length, and NumPy's does not),
# from ``ROW_SUM_MIN_ELEMENTS`` elements in all (benchmarks.ops, ``sum_method``). float32 rows of any
# length take ``openmp_kernels.row_sums`` (longer rows by chunks of this many, added in float64).
ROW_SUM_MAX_LENGTH = 1024
ROW_SUM_MIN_ELEMENTS = 2048


def _trailing_axes_sum(data, axes, keepdims, squares=False):
    """The sum of a row-major float32/float64 array over its last k axes (``axes``, sorted;
    k < ndim): a float32 array's by ``openmp_kernels.row_sums`` (in SIMD lanes, as ``einsum`` adds them),
    else, rows of at most ``ROW_SUM_MAX_LENGTH`` elements, by ``einsum``; None where that does not apply.
    ``squares``: the sum of the squares (float32 only)."""
    ndim, k = data.ndim, len(axes)
    if not 0 < k < ndim or axes[0] != ndim - k:   # (sorted and distinct: the last k)
        return None
    shape = data.shape
    length = shape[-1] if k == 1 else math.prod(shape[ndim - k:])
    if not length:
        return None
    rows = data.reshape(-1, length)
    out = openmp_kernels.row_sums(rows, squares) if data.dtype == _FLOAT32 else None
    if out is None:
        if squares or length > ROW_SUM_MAX_LENGTH:
            return None
        out = np.einsum("ij->i", rows)
    kept = shape[:ndim - k]
    return out.reshape(kept + (1,) * k if keepdims else kept)


def sum_of_squares_over(data, axis, keepdims):
    """The sum of the squares of a row-major float32 NumPy array's elements over its last axes (``axis``,
    an int or a tuple of ints) where ``sum_over`` sums its rows on the loop (``openmp_kernels.row_sums``);
    None elsewhere."""
    if (type(data) is not np.ndarray or data.dtype != _FLOAT32 or data.ndim < 2 or data.size < ROW_SUM_MIN_ELEMENTS
            or axis is None or not data.flags.c_contiguous):
        return None
    ndim = data.ndim
    axes = [axis % ndim] if type(axis) is int else sorted({a % ndim for a in axis})
    return _trailing_axes_sum(data, axes, keepdims, squares=True)


def _leading_axes_sum(data, axes, keepdims):
    """The sum of a row-major float32/float64 array over its first k axes (k < ndim), and
    perhaps its short last axis too (``axes``, sorted), as column sums by ``einsum``; None
    where that does not apply."""
    ndim = data.ndim
    last = len(axes) > 1 and axes[-1] == ndim - 1
    leading = axes[:-1] if last else axes
    k = len(leading)
    if (not k or leading[-1] != k - 1 or k + last >= ndim   # (sorted and distinct: the first k)
            or (last and data.shape[-1] > COLUMN_SUM_MAX_LAST)):
        return None
    rows, width = math.prod(data.shape[:k]), math.prod(data.shape[k:])
    if rows < COLUMN_SUM_MIN_ROWS or not 0 < width <= COLUMN_SUM_MAX_WIDTH:
        return None
    if last:
        out = np.einsum("ijk->j", data.reshape(rows, width // data.shape[-1], data.shape[-1]))
        kept = data.shape[k:-1]
    else:
        out = np.einsum("ij->j", data.reshape(rows, width))
        kept = data.shape[k:]
    if keepdims:
        return out.reshape((1,) * k + kept + (1,) * last)
    return out.reshape(kept)
