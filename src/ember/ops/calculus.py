"""Numerical integration and differentiation of sampled functions: ``trapezoid`` (``trapz``),
``cumulative_trapezoid`` and ``gradient``, composed of other ember ops as torch composes them,
so that their gradients come from the parts."""
import numbers

import numpy as np

from .._backend import vector_math
from .._tensor import Tensor
from .. import _dtype
from ._common import check_tensor, forward_mode, grad_state, make, wrap_dim

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid", "gradient"]


def _zeros_without(y, dim):
    from .creation import zeros
    shape = list(y.shape)
    del shape[dim]
    dtype = y.dtype if y.is_floating_point() else None
    return zeros(shape, dtype=dtype, device=y.device)


def _spacing_of(x, y, dim, op):
    """The differences between neighbouring sample points ``x`` along ``dim`` of ``y``."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.view(shape)
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)


def _check_bool(op, *tensors):
    if any(t.dtype == _dtype.bool for t in tensors):
        what = "`x` or `y`" if len(tensors) > 1 else "`y`"
        raise RuntimeError(f"{op}: received a bool input for {what}, but bool is not supported")


def _check_dx(op, dx):
    if isinstance(dx, (bool, complex)) or not isinstance(dx, numbers.Real):
        raise RuntimeError(f"{op}: Currently, we only support dx as a real number.")


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _on_arrays(*tensors):
    """Whether the steps may run on the arrays of ``tensors`` (NumPy arrays of one dtype, float32 or float64,
    where nothing records): NumPy's ufuncs on them are the ops' steps, and give their bits."""
    first = tensors[0]._data
    return (not forward_mode.active and first.__class__ is np.ndarray and first.dtype in _FLOATS
            and all(t.__class__ is Tensor and t._data.__class__ is np.ndarray and t._data.dtype == first.dtype
                    and not (grad_state.grad_enabled and t._requires_grad) for t in tensors))


def _spaced_as_samples(x, y, n):
    """Whether ``x`` holds one point for each of the ``n`` samples along the dim (one dim) or one for each
    element of ``y`` (its shape): the cases ``_spacing_array`` takes."""
    return x._data.shape == (n,) or x._data.shape == y._data.shape


def _spacing_array(x, y, dim):
    """``_spacing_of`` on the arrays (``x`` of one dim, one point for each sample, or of ``y``'s dims)."""
    data = x._data
    if data.ndim == 1:
        data = data.reshape(tuple(data.shape[0] if d == dim else 1 for d in range(y._data.ndim)))
    n = data.shape[dim]
    return _narrowed(data, dim, 1, n) - _narrowed(data, dim, 0, n - 1)


def _narrowed(data, dim, start, stop):
    return data[(slice(None),) * dim + (slice(start, stop),)]


def _areas_in_passes(y, dim, spacing):
    """The trapezoids' areas, spacing times the sum of neighbouring samples halved, in NumPy's passes (each
    into the first's result)."""
    n = y.shape[dim]
    areas = np.add(_narrowed(y, dim, 1, n), _narrowed(y, dim, 0, n - 1))
    np.multiply(spacing, areas, out=areas)
    return np.true_divide(areas, 2.0, out=areas)


def _areas_in_one_loop(y, dim, spacing):
    """``_areas_in_passes`` of float32 samples along their last dim in vector_math's one loop over the rows
    (None where it declines)."""
    if dim != y.ndim - 1 or not y.flags.c_contiguous:
        return None
    n = y.shape[dim]
    rows = y.reshape(-1, n)
    spacing = spacing.reshape(-1, n - 1) if spacing.shape == y.shape[:-1] + (n - 1,) else spacing.reshape(1, -1)
    out = vector_math.ternary_row_views("trapezoid", spacing, rows[:, 1:], rows[:, :-1])
    return None if out is None else out.reshape(y.shape[:-1] + (n - 1,))


_areas = vector_math.when_large("trapezoid", _areas_in_one_loop, _areas_in_passes)


def _neighbours(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(1, n), max(n - 1, 0))


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Computes the trapezoidal rule along ``dim``: the integral of the function sampled at
    ``y``, at points ``x`` (a tensor) or spaced ``dx`` apart (1 when neither is given)."""
    check_tensor(y, "trapezoid", "y")
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx "
                        "cannot both be given")
    dim = wrap_dim(dim, y.dim())
    if isinstance(x, Tensor):
        if y.shape[dim] == 0:
            return _zeros_without(y, dim)
        _check_bool("trapezoid", y, x)
        n = y._data.shape[dim]
        if _on_arrays(y, x) and _spaced_as_samples(x, y, n):   # (the steps below on the arrays, the sum the op's)
            return make(_areas(y._data, dim, _spacing_array(x, y, dim))).sum(dim)
        left, right = _neighbours(y, dim)
        return ((_spacing_of(x, y, dim, "trapezoid") * (right + left)) / 2.0).sum(dim)
    dx = 1 if dx is None and x is None else (x if dx is None else dx)
    if y.shape[dim] == 0:
        return _zeros_without(y, dim)
    _check_bool("trapezoid", y)
    _check_dx("trapezoid", dx)
    if _on_arrays(y):   # (the steps below on the arrays, the sum the op's)
        data = y._data
        ends = (data[(slice(None),) * dim + (0,)] + data[(slice(None),) * dim + (-1,)]) * 0.5
        return make(np.asarray((y.sum(dim)._data - ends) * float(dx)))   # (NumPy gives a 0-d result as a scalar)
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * float(dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of ``trapezoid`` (``dx`` is 1 when neither ``x`` nor ``dx`` is given)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulatively computes the trapezoidal rule along ``dim``: element i is the integral of
    the sampled function from the first sample to sample i + 1."""
    check_tensor(y, "cumulative_trapezoid", "y")
    dim = wrap_dim(dim, y.dim())
    n = y._data.shape[dim] if y._data.ndim else 0
    if isinstance(x, Tensor):
        _check_bool("cumulative_trapezoid", y, x)
        if n and _on_arrays(y, x) and _spaced_as_samples(x, y, n):
            data = y._data   # (the steps below on the arrays, the running sum the op's)
            sums = _narrowed(data, dim, 0, n - 1) + _narrowed(data, dim, 1, n)
            return make(_spacing_array(x, y, dim) / 2.0 * sums).cumsum(dim)
        left, right = _neighbours(y, dim)
        spacing = _spacing_of(x, y, dim, "cumulative_trapezoid")
        return (spacing / 2.0 * (left + right)).cumsum(dim)
    dx = 1 if dx is None and x is None else (x if dx is None else dx)
    _check_bool("cumulative_trapezoid", y)
    _check_dx("cumulative_trapezoid", dx)
    if n and _on_arrays(y):   # (the steps below on the arrays, the running sum the op's)
        data = y._data
        return make(float(dx) / 2.0 * (_narrowed(data, dim, 0, n - 1) + _narrowed(data, dim, 1, n))).cumsum(dim)
    left, right = _neighbours(y, dim)
    return (float(dx) / 2.0 * (left + right)).cumsum(dim)


# ----------------------------------------------------------------------------------------
# gradient

def _slice(t, dim, start, stop=None):
    n = t.shape[dim]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return t.narrow(dim, start, stop - start)


def _along_uniform(f, d, h, edge_order):
    center = (_slice(f, d, 2) - _slice(f, d, 0, -2)) / h
    if edge_order == 1:
        prepend = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h
        append = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / h
    else:
        prepend = (-1.5 * _slice(f, d, 0, 1) + 2 * _slice(f, d, 1, 2) - 0.5 * _slice(f, d, 2, 3)) / h
        append = (0.5 * _slice(f, d, -3, -2) - 2 * _slice(f, d, -2, -1) + 1.5 * _slice(f, d, -1)) / h
    return center / 2, prepend, append


def _part_of(data, d):
    """``part(start, stop=None)``: the array ``data`` sliced along ``d`` as ``_slice`` slices a tensor."""
    n = data.shape[d]

    def part(start, stop=None):
        start = start + n if start < 0 else start
        stop = n if stop is None else (stop + n if stop < 0 else stop)
        return data[(slice(None),) * d + (slice(start, stop),)]
    return part


def _along_uniform_arrays(data, d, h, edge_order):
    """``_along_uniform``'s steps on the array ``data`` (float32 or float64; ``h`` a Python number), joined
    along ``d`` as ``cat`` joins them."""
    part = _part_of(data, d)
    center = (part(2) - part(0, -2)) / h
    if edge_order == 1:
        prepend = (part(1, 2) - part(0, 1)) / h
        append = (part(-1) - part(-2, -1)) / h
    else:
        prepend = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / h
        append = (part(-3, -2) * 0.5 - part(-2, -1) * 2 + part(-1) * 1.5) / h
    return np.concatenate((prepend, center / 2, append), axis=d)


def _along_coordinates(f, d, coords, edge_order):
    if coords.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, "
                           f"but got an element with {coords.dim()} dimensions!")
    shape = [1] * f.dim()
    shape[d] = -1
    ax_dx = coords.diff(1, 0)
    dx1, dx2 = ax_dx[:-1], ax_dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(f, d, 0, -2) + b * _slice(f, d, 1, -1) + c * _slice(f, d, 2)
    if edge_order == 1:
        prepend = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / ax_dx[0]
        append = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / ax_dx[-1]
    else:
        h0, h1 = ax_dx[0], ax_dx[1]
        prepend = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _slice(f, d, 0, 1)
                   + (h0 + h1) / (h0 * h1) * _slice(f, d, 1, 2)
                   + (-h0) / (h1 * (h0 + h1)) * _slice(f, d, 2, 3))
        hl, hp = ax_dx[-1], ax_dx[-2]
        append = (hl / (hp * (hl + hp)) * _slice(f, d, -3, -2)
                  - (hl + hp) / (hl * hp) * _slice(f, d, -2, -1)
                  + (2 * hl + hp) / (hl * (hl + hp)) * _slice(f, d, -1))
    return center, prepend, append


def _along_coordinates_arrays(data, d, coords, edge_order):
    """``_along_coordinates``' steps on the array ``data`` and the 1-d array ``coords`` of its dtype (float32
    or float64) with one coordinate per sample along ``d``, joined along ``d`` as ``cat`` joins them."""
    part = _part_of(data, d)
    shape = [1] * data.ndim
    shape[d] = -1
    ax_dx = coords[1:] - coords[:-1]
    dx1, dx2 = ax_dx[:-1], ax_dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * part(0, -2) + b * part(1, -1) + c * part(2)
    if edge_order == 1:
        prepend = (part(1, 2) - part(0, 1)) / ax_dx[0]
        append = (part(-1) - part(-2, -1)) / ax_dx[-1]
    else:
        h0, h1 = ax_dx[0], ax_dx[1]
        prepend = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * part(0, 1) + (h0 + h1) / (h0 * h1) * part(1, 2)
                   + (-h0) / (h1 * (h0 + h1)) * part(2, 3))
        hl, hp = ax_dx[-1], ax_dx[-2]
        append = (hl / (hp * (hl + hp)) * part(-3, -2) - (hl + hp) / (hl * hp) * part(-2, -1)
                  + (2 * hl + hp) / (hl * (hl + hp)) * part(-1))
    return np.concatenate((prepend, center, append), axis=d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the gradient of a function sampled at ``input`` along each of ``dim`` (all
    dimensions by default) with second-order accurate central differences in the interior and
    first- or second-order (``edge_order``) one-sided differences at the boundaries. ``spacing``
    is a scalar or one per dimension (the distance between samples) or one 1-D tensor of
    coordinates per dimension. Returns one tensor per dimension."""
    from .. import _dtype
    from .shape import cat
    check_tensor(input, "gradient")
    if input.dtype == _dtype.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    spacings = None
    if isinstance(spacing, (list, tuple)):
        spacings = list(spacing)
        if dim is None and len(spacings) != input.dim():
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a "
                               f"list of length equal to 'self.dim() = {input.dim()}', since dim "
                               f"argument was not given, but got a list of length {len(spacings)}")
        if dim is not None and len(spacings) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's "
                               "spacing and dim arguments to have the same length, but got a "
                               f"spacing argument of length {len(spacings)} and a dim argument of "
                               f"length {len(dims)}.")
    else:
        spacings = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [wrap_dim(d, input.dim()) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    for d in wrapped:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    results = []
    on_arrays = _on_arrays(input)
    for d, h in zip(wrapped, spacings):
        if on_arrays and h.__class__ in (int, float):   # (the steps on the array: the ops' bits)
            results.append(make(_along_uniform_arrays(input._data, d, h, edge_order)))
            continue
        if (on_arrays and h.__class__ is Tensor and _on_arrays(input, h) and h._data.ndim == 1
                and h._data.shape[0] == input._data.shape[d]):
            results.append(make(_along_coordinates_arrays(input._data, d, h._data, edge_order)))
            continue
        if isinstance(h, Tensor):
            parts = _along_coordinates(input, d, h, edge_order)
        else:
            parts = _along_uniform(input, d, h, edge_order)
        center, prepend, append = parts
        results.append(cat([prepend, center, append], d))
    return tuple(results)
