"""Plain tests for sorting, scans and shape/composition ops: what the op table cannot see
(node names, named tuples, views sharing memory, warnings, and torch's errors)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _pair(values, **kw):
    return ember.tensor(values, **kw), torch.tensor(values, **kw)


def _same_error(fn, *args, **kwargs):
    """Both libraries raise the same exception type with the same message."""
    with pytest.raises(Exception) as expected:
        fn(torch, *[a[1] if isinstance(a, tuple) else a for a in args], **kwargs)
    with pytest.raises(expected.type) as got:
        fn(ember, *[a[0] if isinstance(a, tuple) else a for a in args], **kwargs)
    assert str(got.value).replace("ember", "torch") == str(expected.value)


X = [[1.0, 3.0, 3.0, 2.0, 1.0, 5.0], [2.0, 2.0, 7.0, 7.0, 0.0, 1.0]]


@pytest.mark.parametrize("call, name", [
    (lambda lib, x: lib.sort(x, 1).values, "SortBackward0"),
    (lambda lib, x: lib.topk(x, 2).values, "TopkBackward0"),
    (lambda lib, x: lib.kthvalue(x, 2).values, "KthvalueBackward0"),
    (lambda lib, x: lib.median(x), "MedianBackward0"),
    (lambda lib, x: lib.median(x, 1).values, "MedianBackward1"),
    (lambda lib, x: lib.nanmedian(x), "NanmedianBackward0"),
    (lambda lib, x: lib.nanmedian(x, 1).values, "NanmedianBackward1"),
    (lambda lib, x: lib.mode(x, 1).values, "ModeBackward0"),
    (lambda lib, x: lib.cummax(x, 1).values, "CummaxBackward0"),
    (lambda lib, x: lib.cummin(x, 1).values, "CumminBackward0"),
    (lambda lib, x: lib.logcumsumexp(x, 1), "LogcumsumexpBackward0"),
    (lambda lib, x: lib.aminmax(x).max, "AminmaxBackward0"),
    (lambda lib, x: lib.rot90(x), "Rot90Backward0"),
    (lambda lib, x: lib.diag_embed(x), "DiagEmbedBackward0"),
    (lambda lib, x: lib.diag(x[0]), "DiagEmbedBackward0"),
    (lambda lib, x: lib.trace(x), "TraceBackward0"),
    (lambda lib, x: lib.block_diag(x, x), "BlockDiagBackward0"),
    (lambda lib, x: lib.as_strided(x, (2, 2), (1, 2)), "AsStridedBackward0"),
    (lambda lib, x: lib.select_scatter(x, x[0], 0, 1), "SelectScatterBackward0"),
    (lambda lib, x: lib.slice_scatter(x, x[:, :2], 1, 0, 2), "SliceScatterBackward0"),
    (lambda lib, x: lib.diagonal_scatter(x, x[0, :2]), "DiagonalScatterBackward0"),
    (lambda lib, x: lib.cross(x[:, :3], x[:, 3:], dim=1), "LinalgCrossBackward0"),
    (lambda lib, x: lib.tensor_split(x, 2, 1)[0], "SliceBackward0"),
    (lambda lib, x: lib.broadcast_to(x, (3, 2, 6)), "ExpandBackward0"),
])
def test_node_names(call, name):
    e, t = _pair(X, requires_grad=True)
    assert call(torch, t).grad_fn.name() == name
    assert type(call(ember, e).grad_fn).__name__ == name


def test_named_tuples():
    e = ember.tensor(X)
    assert type(ember.sort(e)).__name__ == "sort" and ember.sort(e).indices.dtype == ember.int64
    assert ember.topk(e, 1)._fields == ("values", "indices")
    assert ember.aminmax(e)._fields == ("min", "max")
    assert type(ember.cummin(e, 0)).__name__ == "cummin"


def test_stable_sort_keeps_order_of_equal_elements():
    e, t = _pair(X)
    for descending in (False, True):
        got = ember.sort(e, stable=True, descending=descending).indices
        want = torch.sort(t, stable=True, descending=descending).indices
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_median_and_mode_tie_rules():
    e, t = _pair([[1.0, float("nan"), 3.0, float("nan"), 0.0]])
    assert ember.median(e, 1).indices.tolist() == torch.median(t, 1).indices.tolist() == [1]
    assert ember.nanmedian(e, 1).indices.tolist() == torch.nanmedian(t, 1).indices.tolist()
    e, t = _pair(X)
    assert ember.mode(e, 1).indices.tolist() == torch.mode(t, 1).indices.tolist()


def test_quantile_all_nan_row_for_nanquantile():
    nan = float("nan")
    e, t = _pair([[nan, nan], [1.0, 2.0]])
    np.testing.assert_allclose(ember.nanquantile(e, 0.5, dim=1).numpy(),
                               torch.nanquantile(t, 0.5, dim=1).numpy(), equal_nan=True)


def test_views_share_memory():
    x = ember.arange(12.0).reshape(3, 4)
    parts = ember.tensor_split(x, 2, 1)
    parts[0][0, 0] = 100.0
    assert x[0, 0].item() == 100.0
    s = ember.as_strided(x, (2, 2), (1, 4), 1)
    s[0, 0] = -1.0
    assert x[0, 1].item() == -1.0
    assert s.stride() == (1, 4) and s.storage_offset() == 1
    assert ember.broadcast_to(x[0], (2, 4)).stride() == (0, 1)


def test_as_strided_default_offset_is_the_inputs():
    e, t = _pair([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert ember.as_strided(e[1:], (2, 2), (1, 1)).tolist() == torch.as_strided(t[1:], (2, 2), (1, 1)).tolist()


def test_as_strided_overlapping_gradient_accumulates():
    e, t = _pair([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    ember.as_strided(e, (3, 2), (1, 1)).sum().backward()
    torch.as_strided(t, (3, 2), (1, 1)).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()


def test_broadcast_shapes_and_tril_indices():
    assert ember.broadcast_shapes((2, 1), (3,), ()) == torch.broadcast_shapes((2, 1), (3,), ())
    assert isinstance(ember.broadcast_shapes((2, 1)), ember.Size)
    for fn in ("tril_indices", "triu_indices"):
        for args in ((3, 4, 1), (4, 3, -1), (0, 0)):
            assert getattr(ember, fn)(*args).tolist() == getattr(torch, fn)(*args).tolist()


def test_warnings():
    from ember.ops import _common
    a = ember.ones(2)
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(a, a)
    _common._warned.clear()   # (cross's deprecation is given once per process, as torch's)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        ember.ones(3, 3).cross(ember.ones(3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.ones(3, 3).cross(ember.ones(3, 3))


def test_searchsorted_scalar_and_int32():
    e, t = _pair([0, 1, 1, 2])
    assert ember.searchsorted(e, 1, right=True).item() == torch.searchsorted(t, 1, right=True).item()
    assert ember.bucketize(e, e, out_int32=True).dtype == ember.int32


F = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
I = [1, 1, 3]


@pytest.mark.parametrize("fn, args, kwargs", [
    (lambda lib, x, **k: lib.quantile(x.long(), 0.5), (_pair(F),), {}),
    (lambda lib, x, **k: lib.quantile(x, 1.5), (_pair(F),), {}),
    (lambda lib, x, **k: lib.quantile(x, lib.tensor([0.5], dtype=lib.float64)), (_pair(F),), {}),
    (lambda lib, x, **k: lib.quantile(x, 0.5, interpolation="foo"), (_pair(F),), {}),
    (lambda lib, x: lib.topk(x, 4), (_pair(F),), {}),
    (lambda lib, x: lib.kthvalue(x, 4), (_pair(F),), {}),
    (lambda lib, x: lib.mode(x[:, :0], 1), (_pair(F),), {}),
    (lambda lib, x: lib.diff(x[0, 0]), (_pair(F),), {}),
    (lambda lib, x: lib.rot90(x, 1, [0]), (_pair(F),), {}),
    (lambda lib, x: lib.rot90(x, 1, [1, 1]), (_pair(F),), {}),
    (lambda lib, x: lib.rot90(x[0]), (_pair(F),), {}),
    (lambda lib, x: lib.hsplit(x, 2), (_pair(F),), {}),
    (lambda lib, x: lib.vsplit(x[0], 2), (_pair(F),), {}),
    (lambda lib, x: lib.dsplit(x, 2), (_pair(F),), {}),
    (lambda lib, x: lib.tensor_split(x, 0), (_pair(F),), {}),
    (lambda lib, x: lib.tensor_split(x[0, 0], 2), (_pair(F),), {}),
    (lambda lib, x: lib.broadcast_to(x, (3, 3)), (_pair(F),), {}),
    (lambda lib, x: lib.trace(x[0]), (_pair(F),), {}),
    (lambda lib, x: lib.diag(x.reshape(1, 2, 3)), (_pair(F),), {}),
    (lambda lib, x: lib.cross(x, x, dim=0), (_pair(F),), {}),
    (lambda lib, x: lib.as_strided(x, (5, 5), (1, 1)), (_pair(F),), {}),
    (lambda lib, x: lib.select_scatter(x, x, 0, 0), (_pair(F),), {}),
    (lambda lib, x: lib.slice_scatter(x, x, 1, 0, 2), (_pair(F),), {}),
    (lambda lib, x: lib.combinations(x), (_pair(F),), {}),
    (lambda lib, x: lib.cartesian_prod(x), (_pair(F),), {}),
    (lambda lib, x: lib.block_diag(x.reshape(1, 2, 3)), (_pair(F),), {}),
    (lambda lib, x: lib.meshgrid(x[0], x[0], indexing="foo"), (_pair(F),), {}),
    (lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 2]), dim=1), (_pair(F),), {}),
    (lambda lib, x: lib.repeat_interleave(x, 2, output_size=3), (_pair(F),), {}),
    (lambda lib, x: lib.histc(x.long()), (_pair(F),), {}),
    (lambda lib, x: lib.bincount(x), (_pair(F),), {}),
    (lambda lib, i: lib.bincount(-i), (_pair(I),), {}),
    (lambda lib, i: lib.searchsorted(i.reshape(1, 3), i), (_pair(I),), {}),
    (lambda lib, i: lib.searchsorted(i, i, side="left", right=True), (_pair(I),), {}),
    (lambda lib, i: lib.bucketize(i, i.reshape(1, 3)), (_pair(I),), {}),
])
def test_errors_match_torch(fn, args, kwargs):
    _same_error(fn, *args, **kwargs)


def test_failed_ops_leave_inputs_unchanged():
    x = ember.tensor(F)
    before = x.tolist()
    with pytest.raises(RuntimeError):
        ember.select_scatter(x, ember.zeros(5), 0, 0)
    assert x.tolist() == before


def _small_cases(op, shape):
    """The argument lists of ``op`` on a tensor of ``shape`` (its forms along each dim)."""
    cases = [()] if op in ("median", "nanmedian") and 0 not in shape else []
    for dim in range(len(shape)):
        if shape[dim] == 0:
            continue
        if op == "kthvalue":
            cases.append((min(dim + 2, shape[dim]), dim))
        else:
            cases += [(dim,), (dim, True)]
    return cases


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
@pytest.mark.parametrize("op", ["kthvalue", "median", "nanmedian", "mode"])
def test_small_rows_pick_what_the_array_path_picks(op, dtype, monkeypatch):
    """Rows of a few elements, full of ties, NaNs and signed zeros, sorted in Python: each value
    (to the bit) and index is the one the NumPy path picks, and torch's value."""
    from ember import _dtype
    from ember.ops import sort
    rng = np.random.default_rng(5)
    np_dtype = getattr(_dtype, dtype).np
    for shape in [(7,), (5, 9), (4, 6, 2), (0, 3)]:
        for _ in range(4):
            data = rng.integers(-3, 3, shape).astype(np_dtype)
            if dtype != "int64":
                data[rng.random(shape) < 0.2] = np.nan
                data[rng.random(shape) < 0.2] = -0.0
            for args in _small_cases(op, shape):
                small = getattr(ember, op)(ember.tensor(data), *args)
                with monkeypatch.context() as m:
                    m.setattr(sort, "SMALL_ROWS_MAX_ELEMENTS", -1)
                    large = getattr(ember, op)(ember.tensor(data), *args)
                for s, g in zip(small if args else [small], large if args else [large]):
                    s, g = s.numpy(), g.numpy()
                    assert s.dtype == g.dtype and s.shape == g.shape
                    if not args:   # (the median of all elements: NumPy's partition picks either zero)
                        s, g = s + 0, g + 0
                    np.testing.assert_array_equal(s.view(f"u{s.itemsize}"), g.view(f"u{g.itemsize}"))
                # (torch's mode sorts NaNs with std::sort's undefined order: no value to compare)
                if dtype != "bfloat16" and not (op == "mode" and np.isnan(data.astype(float)).any()):
                    expected = getattr(torch, op)(torch.tensor(data), *args)
                    np.testing.assert_array_equal((small[0] if args else small).numpy(),
                                                  (expected[0] if args else expected).numpy())


def test_searchsorted_with_a_sorter_matches_torch_and_its_errors():
    """A sorter (1-d and n-d sequences, either side, int32 results): torch's indices; a sorter of another
    dtype or shape, or with an index out of range (negative too), torch's error and message."""
    rng = np.random.default_rng(5)
    for shape, values_shape in [((7,), (4,)), ((2, 5), (2, 3)), ((6,), (2, 3))]:
        seq = rng.standard_normal(shape)
        values = rng.standard_normal(values_shape)
        for right in (False, True):
            for out_int32 in (False, True):
                got = ember.searchsorted(ember.tensor(seq), ember.tensor(values), right=right, out_int32=out_int32,
                                         sorter=ember.tensor(seq).argsort())
                want = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right, out_int32=out_int32,
                                          sorter=torch.tensor(seq).argsort())
                assert got.dtype == getattr(ember, str(want.dtype).split(".")[-1])
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    s, v = _pair([3.0, 1.0, 2.0]), _pair([2.5])
    for sorter in ([1, 2, 3], [-2, -1, 0], [1, 2], [[1, 2, 0]]):
        _same_error(lambda lib, a, b, c: lib.searchsorted(a, b, sorter=c), s, v, _pair(sorter))
    int32_sorter = (ember.tensor([1, 2, 0], dtype=ember.int32), torch.tensor([1, 2, 0], dtype=torch.int32))
    _same_error(lambda lib, a, b, c: lib.searchsorted(a, b, sorter=c), s, v, int32_sorter)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "bool"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_mode_of_long_rows_from_sorted_values_is_the_stable_orders_run(dim, dtype):
    """mode past the small rows: each row's first longest run of equal values (NaNs each a run of their
    own), its value at the first position where it lies (a signed zero's sign from there), its index the
    last such position (a NaN's, the first NaN), as the runs of the stable argsort give them; torch's
    values where there is no NaN."""
    rng = np.random.default_rng(12)
    data = rng.integers(-3, 3, (40, 300, 7)).astype(dtype)
    if dtype.startswith("float"):
        data[rng.random(data.shape) < 0.1] = np.nan
        data[rng.random(data.shape) < 0.2] = -0.0
        data[0] = np.nan   # (rows of NaNs only, along dims 1 and 2)
    got = ember.mode(ember.tensor(data), dim)
    order = np.argsort(data, axis=dim, kind="stable")
    ordered = np.take_along_axis(data, order, axis=dim)
    rows, positions = np.moveaxis(ordered, dim, -1).reshape(-1, data.shape[dim]), np.moveaxis(order, dim, -1)
    positions = positions.reshape(rows.shape)
    values, indices = [], []
    for row, position in zip(rows, positions):
        runs, start = [], 0
        for end in range(1, len(row) + 1):
            if end == len(row) or not row[end] == row[start]:
                runs.append((end - start, start, end - 1))
                start = end
        longest = max(length for length, _, _ in runs)
        _, first, last = next(r for r in runs if r[0] == longest)
        values.append(row[first])
        indices.append(position[last])
    shape = data.shape[:dim] + data.shape[dim + 1:]
    want = np.array(values, dtype=data.dtype).reshape(np.moveaxis(data, dim, -1).shape[:-1])
    np.testing.assert_array_equal(got.values.numpy().view(f"u{data.itemsize}") if data.dtype.kind == "f"
                                  else got.values.numpy(),
                                  want.view(f"u{data.itemsize}") if data.dtype.kind == "f" else want)
    np.testing.assert_array_equal(got.indices.numpy(), np.array(indices).reshape(want.shape))
    assert got.values.shape == shape
    if not (dtype.startswith("float") or dtype == "bool"):
        np.testing.assert_array_equal(got.values.numpy(), torch.mode(torch.from_numpy(data), dim).values.numpy())
