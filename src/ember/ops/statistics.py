"""Statistics of tensors: ``isin``, ``cov``, ``corrcoef``, ``histogram`` and ``histogramdd``.

``cov`` and ``corrcoef`` are composed of other ember ops (as torch composes them), so their
gradients come from the parts; the histograms and ``isin`` have no gradient.
"""
import builtins
import math
import warnings

import numpy as np

from .. import _dtype, return_types
from .._backend import openmp_kernels
from . import _compiled_functions
from .._tensor import Tensor
from .creation import _linspace_float
from ._common import (
    _type_word, check_tensor, is_scalar, make, method, namespace_of, record_not_differentiable,
    with_out, write_out,
)

_INT64 = np.dtype("int64")
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
        "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
        "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>"}

__all__ = ["isin", "cov", "corrcoef", "histogram", "histogramdd"]


# ----------------------------------------------------------------------------------------
# isin

def _membership_array(x, xp):
    return x._data if isinstance(x, Tensor) else xp.asarray(x)


@with_out(exact=False, op="isin")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Tests if each element of ``elements`` is in ``test_elements``. Returns a boolean tensor
    of the same shape as ``elements`` that is True for elements in ``test_elements`` and False
    otherwise (the reverse with ``invert=True``)."""
    if assume_unique:
        return _python_isin(elements, test_elements, invert, assume_unique)
    return _isin_entry[0](elements, test_elements, invert)


def _python_isin(elements, test_elements, invert, assume_unique=False):
    """``isin`` in every case its compiled function (``_compiled_membership``) leaves to Python."""
    if elements.__class__ is Tensor and test_elements.__class__ is Tensor:   # (the common case: two tensors)
        a, b = elements._data, test_elements._data
        xp = namespace_of(a)
    else:
        if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
            raise TypeError("isin() received an invalid combination of arguments - got "
                            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected "
                            "one of its arguments to be a Tensor")
        for x, name in ((elements, "elements"), (test_elements, "test_elements")):
            if not isinstance(x, Tensor) and not is_scalar(x):
                raise TypeError(f"isin(): argument '{name}' must be Tensor or Number, "
                                f"not {type(x).__name__}")
        like = elements if isinstance(elements, Tensor) else test_elements
        xp = namespace_of(like._data)
        a, b = _membership_array(elements, xp), _membership_array(test_elements, xp)
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    if a.size * b.size <= ISIN_PAIRWISE_MAX:   # every pair compared: one pass, no sorting
        equal = a[..., None] == b.reshape(-1)
        # (NumPy's: the ufunc's reduction, without the method's Python wrapper)
        found = np.logical_or.reduce(equal, axis=-1) if xp is np else equal.any(axis=-1)
        return make(~found if invert else found)
    found = xp.isin(a, b, assume_unique=assume_unique, invert=invert)
    return make(xp.asarray(found, dtype=bool))


# Up to this many (element, test element) pairs ``isin`` compares every pair in one pass;
# numpy.isin's Python around its own small case costs several times more
ISIN_PAIRWISE_MAX = 1 << 16

_isin_entry = _compiled_functions.register(_python_isin, None, kind="isin", max_elements=ISIN_PAIRWISE_MAX)


# ----------------------------------------------------------------------------------------
# cov, corrcoef

def _check_weights(weights, name, num_obs, xp):
    if weights.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {weights.dim()} dimensions")
    if weights.numel() != num_obs:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {weights.numel()} != {num_obs}")


@method()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Estimates the covariance matrix of the variables given by ``input``, whose rows are
    the variables and whose columns are the observations; ``correction`` is the difference
    between the sample size and the degrees of freedom (1: Bessel's correction), ``fweights``
    integer frequency weights and ``aweights`` observation weights."""
    check_tensor(input, "cov")
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    num_obs = x.shape[1]
    xp = namespace_of(input._data)
    weights = None
    if fweights is not None:
        _check_weights(fweights, "fweights", num_obs, xp)
        if fweights.is_floating_point() or fweights.dtype == _dtype.bool:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                               f"with {_type_word(fweights._data.dtype)} dtype")
        if num_obs and bool((fweights._data < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        weights = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", num_obs, xp)
        if not aweights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_type_word(aweights._data.dtype)} dtype")
        if num_obs and bool((aweights._data < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        weights = aweights if weights is None else weights * aweights
    if x.dtype == _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    if not x.is_floating_point():
        x = x.to(_dtype.get_default_dtype())
    if weights is None:
        average = x.mean(1)
        weight_sum = num_obs
        norm_factor = weight_sum - correction
    else:
        weight_sum = weights.sum()
        average = (x * weights).sum(1) / weight_sum
        if correction != 0 and aweights is not None:
            norm_factor = weight_sum - correction * (weights * aweights).sum() / weight_sum
        else:
            norm_factor = weight_sum - correction
    if float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                      "the number of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0 if isinstance(norm_factor, Tensor) else 0
    centred = x - average.unsqueeze(1)
    weighted = centred if weights is None else centred * weights
    return (centred.mm(weighted.t()) / norm_factor).squeeze()


@method()
def corrcoef(input):
    """Estimates the Pearson product-moment correlation coefficient matrix of the variables
    given by ``input``, whose rows are the variables and whose columns are the observations;
    the values are clipped to [-1, 1]."""
    check_tensor(input, "corrcoef")
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    return c.clip(-1, 1)


# ----------------------------------------------------------------------------------------
# histogram, histogramdd

def _check_histogram_input(input, op, weight, bins):
    check_tensor(input, op)
    for i, b in enumerate(bins):
        if isinstance(b, Tensor) and b.dtype != input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               f"same dtype, but got input with dtype {_CPP[input._data.dtype.name]} "
                               f"and bins for dimension {i} with dtype {_CPP[b._data.dtype.name]}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_type_word(input._data.dtype)}'")
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError(f"torch.{op}: if weight tensor is provided, it should have the same "
                               "dtype as the input tensor")


def _edges_between(xp, low, high, bins, dtype):
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"range of [{low}, {high}] is not finite")
    if low > high:
        raise ValueError("max must be larger than min")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return xp.asarray(_linspace_float(low, high, bins + 1, dtype))   # torch's edges (linspace's)


def _data_range(points, range, dims):
    if range is not None:
        if len(range) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should "
                               f"have {2 * dims} elements, but got {len(range)}")
        return [(float(range[2 * i]), float(range[2 * i + 1])) for i in builtins.range(dims)]
    if points.shape[0] == 0:
        return [(0.0, 0.0)] * dims
    if points.__class__ is np.ndarray:   # (the ufuncs' reductions, without the methods' wrappers, along rows
        columns = np.ascontiguousarray(points.T)   # of the columns: NumPy's down an (n, 2) array's are slow)
        lows, highs = np.minimum.reduce(columns, axis=1).tolist(), np.maximum.reduce(columns, axis=1).tolist()
        return list(zip(lows, highs))
    return [(float(points[:, i].min()), float(points[:, i].max())) for i in builtins.range(dims)]


def _histogramdd_data(op, input, bins, range, weight, density):
    bins = [bins] if isinstance(bins, Tensor) else bins
    _check_histogram_input(input, op, weight, bins if isinstance(bins, (list, tuple)) else ())
    xp = namespace_of(input._data)
    data = input._data
    dims = data.shape[-1] if data.ndim else 1
    if input.dim() < 2 and op == "histogramdd":
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    points = data.reshape(-1, dims)
    if isinstance(bins, Tensor):
        bins = [bins]
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for each "
                           f"dimension, but got {len(bins)}")
    given_edges = all(isinstance(b, Tensor) for b in bins)
    if not given_edges and range is None and data.dtype.itemsize < 4:
        # torch finds half-precision data's own range with a kernel it lacks for them
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_type_word(data.dtype)}'")
    if given_edges:
        edges = []
        for b in bins:
            if b.dim() != 1:
                raise RuntimeError(f"torch.{op}: bins tensor should have one dimension, but got "
                                   f"{b.dim()} dimensions in the bins tensor")
            if b.numel() < 1:
                raise RuntimeError(f"torch.{op}: bins tensor should have at least 1 element, but "
                                   "got 0 elements")
            edges.append(b._data)
    else:
        for i, b in enumerate(bins):
            if int(b) <= 0:
                raise RuntimeError(f"torch.{op}(): bins must be > 0, but got {b} for dimension {i}")
        edges = [_edges_between(xp, low, high, int(b), data.dtype)
                 for (low, high), b in zip(_data_range(points, range, dims), bins)]
    w = None if weight is None else weight._data.reshape(-1)
    search = "binary" if given_edges else "local"
    return _count(xp, points, edges, w, density, search), edges


def _bins_of(xp, x, edges, search):
    """Each value's bin as torch's kernel finds it: for equal-width bins (``local``),
    interpolation between the outer edges followed by a search of the neighbouring edges;
    for given edges (``binary``), a binary search; values on the last edge go to the last
    bin; -1 for values outside."""
    last = edges.shape[0] - 1
    if search == "binary":
        pos = xp.searchsorted(edges, x, side="right") - 1
    else:
        with np.errstate(all="ignore"):   # (infinities: outside, whatever their guess)
            scaled = (x - edges[0]) * x.dtype.type(last) / (edges[-1] - edges[0])
            guess = xp.nan_to_num(scaled, nan=-1).astype(_INT64)
        low = xp.clip(guess - 1, 0, last)
        pos = low - 1
        for step in range(3):
            at = xp.minimum(low + step, last)
            pos = pos + ((low + step <= xp.minimum(guess + 1, last)) & (edges[at] <= x))
    pos = xp.where(pos == last, last - 1, pos)
    return xp.where((x >= edges[0]) & (x <= edges[-1]), pos, -1)


def _count(xp, points, edges, weight, density, search):
    shape = tuple(e.shape[0] - 1 for e in edges)
    size = math.prod(shape)
    flat = openmp_kernels.histogram_bins(points, edges, search == "local")   # (-1 outside)
    if flat is not None and flat.__class__ is np.ndarray and not density:
        # (the points outside counted in a first bin, dropped: no mask to build and apply)
        hist = np.bincount(flat + 1, weights=weight, minlength=size + 1)[1:]
        return hist.astype(points.dtype).reshape(shape)
    if flat is not None:
        kept = flat >= 0
    else:
        flat = xp.zeros(points.shape[0], dtype=_INT64)
        outside = xp.zeros(points.shape[0], dtype=bool)
        for d, e in enumerate(edges):
            pos = _bins_of(xp, points[:, d], e, search)
            outside |= pos < 0
            flat = flat * shape[d] + xp.maximum(pos, 0)
        kept = ~outside
    w = None if weight is None else weight[kept]
    hist = xp.bincount(flat[kept], weights=w, minlength=size).astype(points.dtype).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            widths = (e[1:] - e[:-1]).reshape((-1,) + (1,) * (len(edges) - d - 1))
            hist = hist / widths
    return hist.astype(points.dtype)


@method()
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Computes a histogram of the values in ``input``: ``bins`` is a number of equal-width
    bins (over ``range``, the data's minimum and maximum by default) or a 1-D tensor of bin
    edges. Returns the histogram and the bin edges."""
    if range is None and weight is None and density is False and out is None:
        return _histogram_entry[0](input, bins)
    return _python_histogram(input, bins, range=range, weight=weight, density=density, out=out)


def _python_histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """``histogram`` in every case its compiled function (``_compiled_histograms``) leaves to Python."""
    if isinstance(bins, Tensor) and range is not None:
        raise TypeError("histogram() received an invalid combination of arguments: range is not "
                        "accepted with a tensor of bins")
    check_tensor(input, "histogram")
    flat = input.reshape(-1, 1)
    flat_weight = None if weight is None else weight.reshape(-1)
    if weight is not None and weight.shape != input.shape:
        raise RuntimeError("torch.histogram: if weight tensor is provided it should have the same "
                           "shape as the input tensor excluding its innermost dimension, but got "
                           f"input with shape {tuple(input.shape)} and weight with shape "
                           f"{tuple(weight.shape)}")
    hist, edges = _histogramdd_data("histogram", flat, [bins] if isinstance(bins, Tensor) else bins,
                                    range, flat_weight, density)
    result = return_types.histogram(make(hist), make(edges[0].copy()))
    record_not_differentiable((input,), result[0], "the derivative for 'histogram' is not implemented.")
    return write_out(result, out, op="histogram")


def _histogram_specifics():
    bins_loops, linspace_loops = openmp_kernels.histogram_addresses()
    return return_types.histogram, linspace_loops[0] or 0, linspace_loops[1] or 0


_histogram_entry = _compiled_functions.register(_python_histogram, None, kind="histogram",
                                                addresses=lambda: openmp_kernels.histogram_addresses()[0],
                                                specifics=_histogram_specifics)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False, out=None):
    """Computes a multi-dimensional histogram of the values in ``input`` (its innermost
    dimension indexes the coordinates of each point): ``bins`` is a number of bins for all
    dimensions, one number per dimension, or one 1-D tensor of bin edges per dimension. Returns
    the histogram and the bin edges of each dimension."""
    result_type = return_types.histogramdd
    check_tensor(input, "histogramdd")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same "
                           "shape as the input tensor excluding its innermost dimension, but got "
                           f"input with shape {tuple(input.shape)} and weight with shape "
                           f"{tuple(weight.shape)}")
    hist, edges = _histogramdd_data("histogramdd", input, bins, range, weight, density)
    result = result_type(make(hist), tuple(make(e.copy()) for e in edges))
    if out is not None:
        write_out(result[0], out[0], op="histogramdd")
        for edge, out_edge in zip(result[1], out[1]):
            write_out(edge, out_edge, op="histogramdd")
        return result_type(out[0], tuple(out[1]))
    return result
