"""OpInfo entries: indexing ops (index_select, gather, scatter*, index_add/copy/fill/put,
masked_*, take, take_along_dim, nonzero, argwhere) and their in-place forms."""
from .common import Arg, OpInfo, Sample

A = Arg

_INT_DTYPES = ("int64", "int32")
_FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")


def idx(values, dtype="int64"):
    """An index tensor with fixed values."""
    return A((), dtype=dtype, values=values, requires_grad=False)


def mask(values):
    return A((), dtype="bool", values=values, requires_grad=False)


_ROWS = [[0, 1], [2, 0], [1, 1]]          # repeated positions within rows 0..2 of dim 1
_PERM = [[0, 2], [3, 1], [1, 0]]          # distinct positions in each row: scatter is defined
_MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, True]]


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


def _inplace(name):
    """``name`` applied in place to a copy of the first argument (so leaves stay leaves)."""
    return lambda lib, x, *a, **k: getattr(x.clone(), name)(*a, **k)


# -- index_select, gather, take, take_along_dim ------------------------------------------------

_INDEX_SELECT = [
    Sample((A((3, 4)), 0, idx([2, 0, 2])), name="repeated"),
    Sample((A((3, 4), noncontig=True), 1, idx([3, 1])), name="noncontig"),
    Sample((A((3, 4), transposed=True), -1, idx([1, 1, 0], "int32")), name="int32"),
    Sample((A((2, 3, 2)), 1, idx(2)), name="0d_index"),
    Sample((A(()), 0, idx([0])), name="0d"),
    Sample((A((3, 4)), 0, idx([])), name="empty"),
]

_GATHER = [
    Sample((A((3, 4)), 1, idx(_ROWS)), name="repeated"),
    Sample((A((3, 4), transposed=True), 0, idx([[2, 0, 1, 2], [0, 0, 1, 1]])), name="dim0"),
    Sample((A((3, 4)), 1, idx([[3, 0, 0, 1, 2, 3], [1, 1, 1, 1, 1, 1]])), name="wider"),
    Sample((A((2, 3, 2), noncontig=True), -2, idx([[[2, 0]], [[1, 1]]], "int32")), name="int32"),
    Sample((A(()), 0, idx(0)), name="0d"),
    Sample((A(()), 0, idx([0, 0])), name="0d_self"),
    Sample((A((3, 4)), 1, idx([[], []])), name="empty"),
]

_TAKE = [
    Sample((A((3, 4)), idx([[0, 11], [-1, 5], [0, 0]])), name="repeated"),
    Sample((A((3, 4), transposed=True), idx([1, 2, 3])), name="transposed"),
    Sample((A(()), idx([0, -1])), name="0d"),
    Sample((A((3, 4)), idx(7)), name="0d_index"),
    Sample((A((3, 4)), idx([])), name="empty"),
]

_TAKE_ALONG = [
    Sample((A((3, 4)), idx(_ROWS), 1), name="dim"),
    Sample((A((3, 4)), idx([[0, 3]]), 1), name="bcast_index"),
    Sample((A((1, 4)), idx([[0], [3], [-1]]), 1), name="bcast_input_negative"),
    Sample((A((3, 4), noncontig=True), idx([[2, 0, 1, 1]]), -2), name="noncontig"),
    Sample((A((3, 4)), idx([[0, 11], [5, 5]])), name="flat"),
    Sample((A(()), idx(0)), name="0d"),
]

OPS = [
    OpInfo("index_select", lambda lib, x, d, i: lib.index_select(x, d, i), _INDEX_SELECT),
    OpInfo("index_select_int", lambda lib, x, d, i: x.index_select(d, i), _INDEX_SELECT[:2],
           dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("gather", lambda lib, x, d, i: lib.gather(x, d, i), _GATHER, dtypes=_FLOAT_DTYPES),
    OpInfo("gather_int", lambda lib, x, d, i: x.gather(d, i), _GATHER[:3],
           dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("take", lambda lib, x, i: lib.take(x, i), _TAKE, dtypes=_FLOAT_DTYPES),
    OpInfo("take_int", _method("take"), _TAKE[:2], dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("take_along_dim", lambda lib, x, i, *d: lib.take_along_dim(x, i, *d), _TAKE_ALONG),
    OpInfo("take_along_dim_int", _method("take_along_dim"), _TAKE_ALONG[:2], dtypes=_INT_DTYPES,
           grad=False),
]


# -- scatter, scatter_add, scatter_reduce --------------------------------------------------------

_SCATTER = [
    Sample((A((3, 4)), 1, idx(_PERM), A((3, 2))), name="src"),
    Sample((A((3, 4), transposed=True), 0, idx([[2, 0, 1, 1], [0, 2, 0, 2]]), A((2, 4))), name="dim0"),
    Sample((A((2, 3, 2)), -1, idx([[[1], [0], [1]]], "int32"), A((1, 3, 1), noncontig=True)),
           name="int32"),
    Sample((A(()), 0, idx(0), A(())), name="0d"),
    Sample((A((3, 4)), 1, idx([[], []]), A((2, 0))), name="empty"),
]

_SCATTER_VALUE = [
    Sample((A((3, 4)), 1, idx(_ROWS), 2.5), name="value"),
    Sample((A((3, 4)), 0, idx([[2, 0, 1]])), {"value": -1.0}, name="value_kw"),
]

_SCATTER_ADD = [
    Sample((A((3, 4)), 1, idx(_ROWS), A((3, 2))), name="repeated"),
    Sample((A((3, 4), noncontig=True), 0, idx([[2, 2, 2, 0], [2, 1, 2, 0]]), A((2, 4), transposed=True)),
           name="dim0"),
    Sample((A((2, 3, 2)), 1, idx([[[0, 0], [0, 0], [2, 2]]], "int32"), A((1, 3, 2))), name="int32"),
    Sample((A(()), 0, idx([0, 0]), A((2,))), name="0d"),
]

# torch's gradient fails when src is larger than index; the forward is defined
_SRC_LARGER = [Sample((A((3, 4)), 1, idx([[0], [3], [1]]), A((3, 3))), name="src_larger")]

_REDUCE_VALUES = [
    Sample((A((3, 4)), 1, idx(_ROWS), A((3, 2))), name="repeated"),
    Sample((A((3, 4), transposed=True), 0, idx([[2, 2, 2, 0], [2, 1, 2, 0], [0, 1, 1, 1]]),
            A((3, 4))), name="dim0"),
    Sample((A((3,)), 0, idx([0, 0, 2, 0]), A((4,), noncontig=True)), name="1d"),
]


def _scatter_reduce_samples():
    samples = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            for s in _REDUCE_VALUES:
                samples.append(Sample(s.args + (reduce,), {"include_self": include_self},
                                      name=f"{reduce}_{'self' if include_self else 'noself'}_{s.name}"))
    return samples


OPS += [
    OpInfo("scatter", lambda lib, x, *a, **k: lib.scatter(x, *a, **k), _SCATTER + _SCATTER_VALUE),
    OpInfo("scatter_method", _method("scatter"), _SCATTER[:1] + _SCATTER_VALUE[:1]),
    OpInfo("scatter_", _inplace("scatter_"), _SCATTER[:3] + _SCATTER_VALUE),
    OpInfo("scatter_int", _method("scatter"), _SCATTER[:2] + _SCATTER_VALUE[:1],
           dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("scatter_src_larger", lambda lib, *a: lib.scatter(*a), _SRC_LARGER, grad=False),
    OpInfo("scatter_reduce_arg", lambda lib, x, *a, **k: lib.scatter(x, *a, **k), [
        Sample(s.args, {"reduce": r}, name=f"{r}_{s.name}")
        for r in ("add", "multiply") for s in _SCATTER_ADD[:2] + _SCATTER_VALUE[:1]],
        dtypes=("float32", "float64", "int64"), grad=False),
    OpInfo("scatter_add", lambda lib, *a: lib.scatter_add(*a), _SCATTER_ADD, dtypes=_FLOAT_DTYPES),
    OpInfo("scatter_add_", _inplace("scatter_add_"), _SCATTER_ADD[:3]),
    OpInfo("scatter_add_int", _method("scatter_add"), _SCATTER_ADD[:2], dtypes=_INT_DTYPES,
           grad=False),
    OpInfo("scatter_add_src_larger", lambda lib, *a: lib.scatter_add(*a), _SRC_LARGER, grad=False),
    OpInfo("scatter_reduce", lambda lib, x, *a, **k: lib.scatter_reduce(x, *a, **k),
           _scatter_reduce_samples(), dtypes=_FLOAT_DTYPES),
    OpInfo("scatter_reduce_", _inplace("scatter_reduce_"),
           [s for s in _scatter_reduce_samples() if s.name.endswith("repeated")]),
    OpInfo("scatter_reduce_int", _method("scatter_reduce"),
           [s for s in _scatter_reduce_samples() if s.name.endswith("repeated")],
           dtypes=_INT_DTYPES, grad=False),
]


# -- index_add, index_copy, index_fill, index_put ---------------------------------------------------

_INDEX_ADD = [
    Sample((A((3, 4)), 0, idx([0, 2, 0]), A((3, 4))), name="repeated"),
    Sample((A((3, 4), noncontig=True), 1, idx([1, 1], "int32"), A((3, 2), transposed=True)),
           {"alpha": 2.5}, name="alpha"),
    Sample((A((2, 3, 2)), -2, idx(2), A((2, 1, 2))), name="0d_index"),
    Sample((A(()), 0, idx([0]), A(())), name="0d"),
    Sample((A((3, 4)), 0, idx([]), A((0, 4))), name="empty"),
]

_INDEX_COPY = [
    Sample((A((3, 4)), 0, idx([2, 0]), A((2, 4))), name="dim0"),
    Sample((A((3, 4), transposed=True), -1, idx([3, 0, 1]), A((3, 3), noncontig=True)), name="dim1"),
    Sample((A((3,)), 0, idx([1]), A(())), name="0d_source"),
    Sample((A(()), 0, idx([0]), A(())), name="0d"),
]

_INDEX_FILL = [
    Sample((A((3, 4)), 1, idx([0, 2, -4]), -1.5), name="scalar"),
    # torch's gradient for the value fails on negative indices: none here
    Sample((A((3, 4), noncontig=True), 0, idx([1, 2, 1]), A(())), name="tensor_value"),
    Sample((A((2, 3, 2)), 2, idx(1), 3), name="0d_index"),
    Sample((A(()), 0, idx([0]), A(())), name="0d"),
]


def _index_put(lib, x, *a, **k):
    *indices, values = a
    return lib.index_put(x, tuple(indices), values, **k)


def _index_put_(lib, x, *a, **k):
    *indices, values = a
    return x.clone().index_put_(tuple(indices), values, **k)


_INDEX_PUT = [
    Sample((A((3, 4)), idx([2, 0]), A((4,))), name="rows"),
    Sample((A((3, 4)), idx([0, 0, 2]), idx([1, 1, 3]), A((3,))), {"accumulate": True},
           name="accumulate"),
    Sample((A((3, 4), transposed=True), idx([[0], [2]]), idx([1, 3], "int32"), A(())),
           name="bcast_int32"),
    Sample((A((3, 4)), mask([True, False, True]), A((2, 1))), {"accumulate": True}, name="mask"),
    Sample((A((3, 4)), mask(_MASK), A(())), name="full_mask"),
    Sample((A((3, 4)), idx([1, 1, 1]), A((4,))), {"accumulate": True}, name="repeated"),
]

OPS += [
    OpInfo("index_add", lambda lib, x, *a, **k: lib.index_add(x, *a, **k), _INDEX_ADD, dtypes=_FLOAT_DTYPES),
    OpInfo("index_add_", _inplace("index_add_"), _INDEX_ADD[:3]),
    OpInfo("index_add_int", _method("index_add"), _INDEX_ADD[:2], dtypes=_INT_DTYPES, grad=False),
    OpInfo("index_copy", lambda lib, *a: lib.index_copy(*a), _INDEX_COPY),
    OpInfo("index_copy_", _inplace("index_copy_"), _INDEX_COPY[:3]),
    OpInfo("index_copy_int", _method("index_copy"), _INDEX_COPY[:2], dtypes=_INT_DTYPES + ("bool",),
           grad=False),
    OpInfo("index_fill", lambda lib, *a: lib.index_fill(*a), _INDEX_FILL),
    OpInfo("index_fill_", _inplace("index_fill_"), _INDEX_FILL[:3]),
    OpInfo("index_fill_int", _method("index_fill"), _INDEX_FILL[:1] + _INDEX_FILL[2:3],
           dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("index_put", _index_put, _INDEX_PUT, dtypes=_FLOAT_DTYPES),
    OpInfo("index_put_", _index_put_, _INDEX_PUT),
    OpInfo("index_put_int", _index_put, _INDEX_PUT[:2], dtypes=_INT_DTYPES, grad=False),
]


# -- masked_fill, masked_select, masked_scatter ------------------------------------------------------

_MASKED_FILL = [
    Sample((A((3, 4)), mask(_MASK), 1.5), name="scalar"),
    Sample((A((3, 4), noncontig=True), mask([True, False, False, True]), A(())), name="tensor_value"),
    Sample((A((4,)), mask(_MASK), -2.0), name="bcast_input"),
    Sample((A((3, 1), transposed=True), mask(_MASK), A(())), name="bcast_both"),
    Sample((A(()), mask(True), 3), name="0d"),
    Sample((A((0, 4)), mask([True, False, True, False]), 1.0), name="empty"),
]

_MASKED_SELECT = [
    Sample((A((3, 4)), mask(_MASK)), name="same"),
    Sample((A((3, 4), transposed=True), mask([False, True, True, False])), name="bcast_mask"),
    Sample((A((4,), noncontig=True), mask(_MASK)), name="bcast_input"),
    Sample((A(()), mask(True)), name="0d"),
    Sample((A((3, 4)), mask(False)), name="none"),
]

_MASKED_SCATTER = [
    Sample((A((3, 4)), mask(_MASK), A((12,))), name="flat_source"),
    Sample((A((3, 4), transposed=True), mask([True, False, True, True]), A((3, 5))), name="bcast_mask"),
    Sample((A((4,)), mask(_MASK), A((2, 4), noncontig=True)), name="bcast_input"),
    Sample((A(()), mask(True), A((2,))), name="0d"),
]

OPS += [
    OpInfo("masked_fill", lambda lib, *a: lib.masked_fill(*a), _MASKED_FILL, dtypes=_FLOAT_DTYPES),
    OpInfo("masked_fill_", _inplace("masked_fill_"), _MASKED_FILL[:2] + _MASKED_FILL[4:]),
    OpInfo("masked_fill_int", _method("masked_fill"), _MASKED_FILL[:1] + _MASKED_FILL[4:5],
           dtypes=_INT_DTYPES + ("bool", "uint8"), grad=False),
    OpInfo("masked_select", lambda lib, *a: lib.masked_select(*a), _MASKED_SELECT),
    OpInfo("masked_select_int", _method("masked_select"), _MASKED_SELECT[:2],
           dtypes=_INT_DTYPES + ("bool",), grad=False),
    OpInfo("masked_scatter", lambda lib, *a: lib.masked_scatter(*a), _MASKED_SCATTER),
    OpInfo("masked_scatter_", _inplace("masked_scatter_"), _MASKED_SCATTER[:2]),
    OpInfo("masked_scatter_int", _method("masked_scatter"), _MASKED_SCATTER[:2],
           dtypes=_INT_DTYPES, grad=False),
]


# -- nonzero, argwhere --------------------------------------------------------------------------------

_NONZERO = [
    Sample((A((3, 4), values=[[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.5, 0.0]]),),
           name="2d"),
    Sample((A((2, 3, 2), -1, 2, integer=True),), name="3d"),
    Sample((A((), values=1.0),), name="0d"),
    Sample((A((), values=0.0),), name="0d_zero"),
    Sample((A((0, 3)),), name="empty"),
]

_ALL_DTYPES = ("float32", "float64", "int64", "int32", "bool")

OPS += [
    OpInfo("nonzero", lambda lib, x: lib.nonzero(x), _NONZERO, dtypes=_ALL_DTYPES, grad=False),
    OpInfo("nonzero_tuple", lambda lib, x: x.nonzero(as_tuple=True), _NONZERO, dtypes=_ALL_DTYPES,
           grad=False),
    OpInfo("argwhere", lambda lib, x: lib.argwhere(x), _NONZERO, dtypes=_ALL_DTYPES, grad=False),
]
