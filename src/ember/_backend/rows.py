"""Writing into arrays at repeated or scattered indices without NumPy's slow forms.

``add_rows_at``: ``numpy.add.at(out, index, rows)`` for an integer index along the first axis
(the backward of an embedding lookup, of ``x[index]`` and ``index_add``), without ``add.at``'s
cost per element: the indices are sorted stably into runs of one index; the k-th rows of all
runs are added at once (a few fancy-indexed adds of distinct rows), in the order ``add.at`` adds
them, and, when some run is long, the runs are summed by ``add.reduceat``: all of them for
narrow rows, only the long ones where the runs times the row width is large (NumPy's
``reduceat`` has a cost per run and column, ``add.at`` a larger one per element).

``ufunc_at`` and ``take_at``: scatter's ``ufunc.at`` and gather's indexing for a key of one
integer array per dimension, through one flat index (``ufunc.at`` and ``take`` take a 1-d index
many times faster than a tuple of arrays). On CuPy, whose ``at`` has add, subtract, maximum and
minimum only (the last two not for float16 or 8/16-bit integers), the others run on a host copy.

``nonzero_positions`` and ``masked_values``: a boolean mask's positions and the values it
selects, through the flat positions of its true elements (NumPy's ``nonzero`` of an array of two
or more dimensions, and its boolean indexing, take several times longer on irregular masks).
"""
import numpy as np

from . import cpu, namespace_of, openmp_kernels, to_device_of
from .choice import KernelChoice

__all__ = ["add_rows_at", "ufunc_at", "take_at", "nonzero_positions", "masked_values",
           "MAX_RUN_BY_POSITION"]

# Longest run of one index added position by position; longer runs (a padding token repeated
# over a batch) are summed by ``add.reduceat``.
MAX_RUN_BY_POSITION = 4
# When some run is long and the runs times the row's width is at most this, every run is
# summed by one ``add.reduceat`` (fewer calls); past it, only the long runs are.
REDUCEAT_ALL_MAX_CELLS = 32768
# From this many indexed elements on, scatter's and gather's keys become one flat index (below,
# computing it costs more calls than it saves).
FLAT_INDEX_MIN_ELEMENTS = 1024
# Up to this many rows, or this many elements added, one ``add.at`` call: the sorting costs
# more calls than it saves (``add.at``'s cost grows with the elements, the sorting's far less;
# BENCHMARKS.md, "Rows added at an index").
ADD_AT_MAX_ROWS = 16
ADD_AT_MAX_ELEMENTS = 4096


def _loop_add_rows_at(out, index, rows):
    """``add_rows_at`` by the OpenMP loop of ``index_add`` (float32 rows, in ``add.at``'s
    order), or None where it does not take the case."""
    if type(index) is not np.ndarray or index.dtype.kind not in "iu":
        return None
    index = np.ascontiguousarray(index.reshape(-1), np.int64)
    return openmp_kernels.index_add_float32(out, index, rows, 0)


def _numpy_add_rows_at(out, index, rows):
    xp = namespace_of(out)
    if (index.size <= ADD_AT_MAX_ROWS or rows.size <= ADD_AT_MAX_ELEMENTS
            or not hasattr(xp.add, "reduceat")):
        xp.add.at(out, index, rows)
        return out
    order = xp.argsort(index, kind="stable")
    ordered = index[order]
    new_run = xp.empty(ordered.shape, dtype=bool)
    new_run[0] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=new_run[1:])
    starts = xp.flatnonzero(new_run)
    lengths = xp.diff(starts, append=ordered.size)
    targets = ordered[starts]
    long = lengths > MAX_RUN_BY_POSITION
    if long.any():
        if long.all() or starts.size * (rows.size // max(rows.shape[0], 1)) <= REDUCEAT_ALL_MAX_CELLS:
            out[targets] += xp.add.reduceat(rows[order], starts, axis=0)
            return out
        _add_long_runs(out, rows, order, starts[long], lengths[long], targets[long])
        short = ~long
        starts, lengths, targets = starts[short], lengths[short], targets[short]
    position = 0
    longer = lengths > position
    while longer.any():
        out[targets[longer]] += rows[order[starts[longer] + position]]
        position += 1
        longer = lengths > position
    return out


# ``out[index[i]] += rows[i]`` for every i, repeated indices adding up: ``out`` (N, D), ``index``
# (M,) of integers in [0, N), ``rows`` (M, D). Returns ``out``.
add_rows_at = KernelChoice("add rows at", onednn=_loop_add_rows_at, numpy=_numpy_add_rows_at)


def _add_long_runs(out, rows, order, starts, lengths, targets):
    """The runs longer than ``MAX_RUN_BY_POSITION``, each summed by one ``add.reduceat`` over
    their rows alone (its cost grows with the number of runs times the row's width)."""
    xp = namespace_of(out)
    firsts = xp.cumsum(lengths) - lengths
    picked = xp.repeat(starts - firsts, lengths) + xp.arange(int(lengths.sum()))
    out[targets] += xp.add.reduceat(rows[order[picked]], firsts, axis=0)


def _flat_positions(target, key):
    """The flat positions in C-contiguous ``target`` that ``target[key]`` reads, for ``key``
    one in-range, non-negative integer array per dimension (broadcasting together, as scatter's
    and gather's keys are); None where the key or ``target`` is not of that kind."""
    if len(key) != target.ndim or target.ndim < 2:
        return None
    largest = 0
    for k in key:
        size = getattr(k, "size", None)
        if size is None:
            return None
        largest = max(largest, size)
    if largest < FLAT_INDEX_MIN_ELEMENTS or not target.flags.c_contiguous:
        return None
    xp = namespace_of(target)
    flat, stride = 0, 1
    for k, n in zip(reversed(key), reversed(target.shape)):
        flat = flat + k * stride if stride != 1 else k.astype(xp.intp, copy=False)
        stride *= n
    return xp.broadcast_to(flat, xp.broadcast_shapes(*(k.shape for k in key)))


# What CuPy's ``ufunc.at`` computes on the device (cupyx.scatter_add's and scatter_max's dtypes).
# Not float64 maximum and minimum: on an H200, scatter_reduce's float64 amax/amin gradients,
# which find the winners by equality with the results, came out NaN there (the cause is not
# established; NumPy's at on the host is exact).
DEVICE_AT_DTYPES = {"add": "iILQefd", "subtract": "iILQefd", "maximum": "iILQf", "minimum": "iILQf"}


def ufunc_at(name, target, key, values):
    """``xp.<name>.at(target, key, values)``; for a key of one integer array per dimension
    (scatter's), through one flat index: ``ufunc.at`` takes a 1-d index many times faster than
    a tuple of arrays."""
    xp = namespace_of(target)
    if xp is not np and target.dtype.char not in DEVICE_AT_DTYPES.get(name, ""):
        return _ufunc_at_on_host(name, target, key, values)
    if isinstance(values, int) or (isinstance(values, float) and target.dtype.kind in "fc"):
        values = xp.asarray(values, dtype=target.dtype)   # ufunc.at's fast loops take no casts
    positions = _flat_positions(target, key)
    if positions is None:
        getattr(xp, name).at(target, key, values)
    else:
        getattr(xp, name).at(target.reshape(-1), positions.reshape(-1),
                             xp.broadcast_to(values, positions.shape).reshape(-1))
    return target


def _ufunc_at_on_host(name, target, key, values):
    """``ufunc.at`` on host copies of a device array, its key and values; the result copied back."""
    host = cpu.from_array(target)
    key = tuple(map(_on_host, key)) if isinstance(key, tuple) else _on_host(key)
    getattr(np, name).at(host, key, _on_host(values))
    target[...] = to_device_of(host, target)
    return target


def _on_host(value):
    """An index or value for NumPy: device arrays copied to the host, anything else as it is."""
    if isinstance(value, (np.ndarray, np.generic, int, float, complex, slice)) or value is None or value is Ellipsis:
        return value
    return cpu.from_array(value)


def nonzero_positions(a):
    """``xp.nonzero(a)``: the indices of ``a``'s nonzero elements, one array per dimension."""
    if type(a) is not np.ndarray or a.size < FLAT_INDEX_MIN_ELEMENTS or not a.ndim:
        return namespace_of(a).nonzero(a)
    flat = np.flatnonzero(a if a.dtype == np.bool_ else a != 0)   # (NaN is nonzero)
    positions = []   # unravelled from the last dimension (NumPy's unravel_index takes longer)
    for size in reversed(a.shape[1:]):
        above = flat // size
        positions.append(flat - above * size)
        flat = above
    positions.append(flat)
    return tuple(reversed(positions))


def masked_values(data, mask):
    """``data[mask]`` for a boolean ``mask`` of ``data``'s shape: its selected values, in
    row-major order."""
    if (type(data) is np.ndarray and type(mask) is np.ndarray and data.size >= FLAT_INDEX_MIN_ELEMENTS
            and data.shape == mask.shape):
        return data.reshape(-1).take(np.flatnonzero(mask))
    return data[mask]


def take_at(data, key):
    """``data[key]`` for a key of one integer array per dimension (gather's), through one flat
    index where ``data`` is C-contiguous."""
    positions = _flat_positions(data, key)
    if positions is None:
        return data[key]
    return data.reshape(-1).take(positions)
