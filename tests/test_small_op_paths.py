"""The short paths ops take for their common cases, pinned to torch on the cases beside them:
``x[int]`` and ``x[slice]`` without the general key walk, ``x[index_tensor]``, ``expand``'s
directly made view, ``cat`` and ``stack`` in one pass, ``clamp`` as NumPy's clip from
``CLIP_MIN_ELEMENTS``, ``sigmoid`` as ``1 / (1 + exp(-x))``, ``reshape`` of strided tensors
without a failed view, ``movedim`` of one dim as a permutation built directly; and from the
other side, the paths larger inputs take: masks through their flat positions, triangles through
bit masks, reciprocal as a division. Values, gradients, node names, strides and writability
where torch defines them."""
import numpy as np
import pytest
import torch

import ember
from ember.ops import ternary


def _pair(data, requires_grad=True):
    return (ember.tensor(data, requires_grad=requires_grad),
            torch.tensor(data, requires_grad=requires_grad))


def _check(e_out, t_out, e_leaf, t_leaf, atol=1e-6):
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=atol, rtol=1e-6)
    assert e_out.shape == tuple(t_out.shape)
    if t_out.grad_fn is not None:
        assert type(e_out.grad_fn).__name__ == t_out.grad_fn.name()
        seed = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(np.float32)
        e_out.backward(ember.tensor(seed))
        t_out.backward(torch.tensor(seed))
        np.testing.assert_allclose(e_leaf.grad.numpy(), t_leaf.grad.numpy(), atol=atol, rtol=1e-6)


@pytest.mark.parametrize("key", [0, -1, 2, slice(None), slice(1, None), slice(None, 2),
                                 slice(-2, 3), slice(5, 1)])
@pytest.mark.parametrize("shape", [(4,), (4, 3), (4, 3, 2)])
def test_getitem_int_and_slice(key, shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    (e, t) = _pair(data)
    e_out, t_out = e[key] * 1, t[key] * 1  # through a node, so the view's node is seen
    view_e, view_t = e[key], t[key]
    assert type(view_e.grad_fn).__name__ == view_t.grad_fn.name()
    assert view_e.stride() == view_t.stride() and view_e._base is e
    _check(e_out, t_out, e, t)


@pytest.mark.parametrize("key", [4, -5])
def test_getitem_int_out_of_range_raises_torchs_error(key):
    e, t = _pair(np.zeros((4, 2), np.float32), requires_grad=False)
    with pytest.raises(IndexError) as torch_error:
        t[key]
    with pytest.raises(IndexError) as ember_error:
        e[key]
    assert str(ember_error.value) == str(torch_error.value)


def test_getitem_on_a_0d_tensor_takes_the_general_path():
    e, t = _pair(np.float32(3.0), requires_grad=False)
    with pytest.raises(IndexError):
        t[0]
    with pytest.raises(IndexError):
        e[0]
    assert e[...].item() == t[...].item()


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("index", [[2, 0, 2], [[1, 3], [0, 0]], [-1]])
def test_getitem_with_one_index_tensor(index, index_dtype):
    data = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    e, t = _pair(data)
    idx = np.array(index, dtype=index_dtype)
    _check(e[ember.tensor(idx)], t[torch.tensor(idx)], e, t)


def test_getitem_with_a_mask_tensor_still_masks():
    data = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    e, t = _pair(data)
    _check(e[e.detach() > 0], t[t.detach() > 0], e, t)


@pytest.mark.parametrize("shape,target", [
    ((4,), (3, 4)), ((1, 4), (3, 4)), ((3, 1), (3, 5)), ((1,), (2, 1)), ((2, 1, 3), (4, 2, 5, 3)),
    ((3,), (1, 3)), ((2, 3), (2, 3)), ((1, 3), (0, 3)), ((3, 1), (3, -1))])
def test_expand(shape, target):
    data = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    e, t = _pair(data)
    view_e, view_t = e.expand(*target), t.expand(*target)
    assert view_e.stride() == view_t.stride()
    _check(view_e * 1, view_t * 1, e, t)


@pytest.mark.parametrize("shape,target,writable", [
    ((1, 3), (1, 3), True), ((3,), (1, 3), True), ((1, 3), (0, 3), True),
    ((1, 3), (2, 3), False), ((3,), (2, 3), False)])
def test_expand_writes_where_torch_does(shape, target, writable):
    e, t = _pair(np.zeros(shape, np.float32), requires_grad=False)
    if writable:
        e.expand(*target).add_(1)
        t.expand(*target).add_(1)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    else:
        with pytest.raises(RuntimeError) as torch_error:
            t.expand(*target).add_(1)
        with pytest.raises(RuntimeError) as ember_error:
            e.expand(*target).add_(1)
        assert str(ember_error.value) == str(torch_error.value)


def test_expand_of_a_strided_tensor_takes_numpys_broadcast():
    data = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    e, t = _pair(data)
    view_e, view_t = e.t()[:, :1].expand(4, 5), t.t()[:, :1].expand(4, 5)
    assert view_e.stride() == view_t.stride()
    _check(view_e * 1, view_t * 1, e, t)


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "float64"),
                                    ("int64", "float32"), ("int32", "int64")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack_with_mixed_dtypes(dtypes, dim):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((2, 3)).astype(dt) * 10 for dt in dtypes]
    e_parts = [ember.tensor(a) for a in arrays]
    t_parts = [torch.tensor(a) for a in arrays]
    for name in ("cat", "stack"):
        e_out, t_out = getattr(ember, name)(e_parts, dim), getattr(torch, name)(t_parts, dim)
        assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
        np.testing.assert_array_equal(e_out.numpy(), t_out.numpy())


def test_cat_skips_empty_1d_tensors_and_names_the_tensor_that_differs():
    e_parts = [ember.ones(2, 3), ember.zeros(0), ember.ones(2, 4), ember.ones(3, 3)]
    t_parts = [torch.ones(2, 3), torch.zeros(0), torch.ones(2, 4), torch.ones(3, 3)]
    with pytest.raises(RuntimeError) as torch_error:
        torch.cat(t_parts)
    with pytest.raises(RuntimeError) as ember_error:
        ember.cat(e_parts)
    assert str(ember_error.value) == str(torch_error.value)
    assert ember.cat([ember.zeros(0), ember.zeros(0)]).shape == (0,)


def test_cat_of_tensors_of_different_ranks_raises_torchs_error():
    """cat joins before it checks shapes; the checks (for torch's messages) run when NumPy
    refuses."""
    for shapes in ([(2, 3), (2, 3, 1)], [(2, 3), (2, 4)]):
        with pytest.raises(RuntimeError) as torch_error:
            torch.cat([torch.ones(s) for s in shapes])
        with pytest.raises(RuntimeError) as ember_error:
            ember.cat([ember.ones(s) for s in shapes])
        assert str(ember_error.value) == str(torch_error.value)


@pytest.mark.parametrize("bad", [-1, 5, -(2 ** 62)])
def test_int64_indices_out_of_range_raise_torchs_error(bad):
    """The one-pass bounds check (int64 indices read as unsigned) still refuses negative and
    too-large indices, naming the first, as torch does."""
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    index = np.array([[0, 1], [bad, 0], [1, 1]])
    with pytest.raises(RuntimeError) as torch_error:
        torch.gather(torch.tensor(x), 1, torch.tensor(index))
    with pytest.raises(RuntimeError) as ember_error:
        ember.gather(ember.tensor(x), 1, ember.tensor(index))
    assert str(ember_error.value) == str(torch_error.value)
    rows = np.array([0, bad])
    with pytest.raises(RuntimeError) as torch_error:
        torch.index_select(torch.tensor(x), 1, torch.tensor(rows))
    with pytest.raises(RuntimeError) as ember_error:
        ember.index_select(ember.tensor(x), 1, ember.tensor(rows))
    assert str(ember_error.value) == str(torch_error.value)


def test_cat_and_stack_gradients():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    (ea, ta), (eb, tb) = _pair(a), _pair(b)
    _check(ember.cat([ea, eb, ea], 1), torch.cat([ta, tb, ta], 1), ea, ta)
    (ea, ta), (eb, tb) = _pair(a), _pair(b)
    _check(ember.stack([ea, eb], 2), torch.stack([ta, tb], 2), eb, tb)


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30]


@pytest.mark.parametrize("size", [ternary.CLIP_MIN_ELEMENTS - 1, ternary.CLIP_MIN_ELEMENTS, 4099])
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (-0.5, None), (None, 0.5), (0.5, -0.5),
                                    (0, 1), (float("nan"), 1.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clamp_on_both_sides_of_the_clip_threshold(size, bounds, dtype):
    data = np.random.default_rng(8).standard_normal(size).astype(dtype)
    data[:len(SPECIAL)] = SPECIAL
    e, t = _pair(data)
    lo, hi = bounds
    _check(ember.clamp(e, lo, hi), torch.clamp(t, lo, hi), e, t, atol=0)
    e2, t2 = _pair(data, requires_grad=False)
    e2.clamp_(lo, hi)
    t2.clamp_(lo, hi)
    np.testing.assert_array_equal(e2.numpy(), t2.numpy())


@pytest.mark.parametrize("size", [ternary.CLIP_MIN_ELEMENTS - 1, ternary.CLIP_MIN_ELEMENTS])
@pytest.mark.parametrize("bounds", [(-2, 3), (5, 3), (None, 7), (-3, None), (-300, 300), (0, 250),
                                    (-5, 10), (2 ** 40, None)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_integer_clamp_on_both_sides_of_the_clip_threshold(size, bounds, dtype):
    """Integer clamps take NumPy's clip from the threshold; a number bound the dtype cannot
    hold raises torch's overflow error, out of place and in place, and changes nothing."""
    data = np.random.default_rng(9).integers(0 if dtype == "uint8" else -100, 100, size).astype(dtype)
    results = []
    for lib in (torch, ember):
        out_of_place = in_place = None
        t = lib.tensor(data)
        try:
            out_of_place = lib.clamp(t, *bounds).numpy()
        except RuntimeError as error:
            out_of_place = str(error)
        try:
            t.clamp_(*bounds)
            in_place = t.numpy()
        except RuntimeError as error:
            in_place = str(error)
            np.testing.assert_array_equal(t.numpy(), data)
        results.append((out_of_place, in_place))
    for want, got in zip(*results):
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


@pytest.mark.parametrize("size", [1, 16, 5000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sigmoid_as_torch_computes_it(size, dtype):
    data = np.linspace(-120, 120, size).astype(np.float32)
    data[:3] = [np.nan, np.inf, -np.inf][:size] if size >= 3 else data[:3]
    e = ember.tensor(data).to(getattr(ember, dtype)).requires_grad_()
    t = torch.tensor(data).to(getattr(torch, dtype)).requires_grad_()
    e_out, t_out = ember.sigmoid(e), torch.sigmoid(t)
    assert e_out.dtype == getattr(ember, dtype)
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 1e-3, "bfloat16": 1e-2}[dtype]
    np.testing.assert_allclose(e_out.detach().float().numpy(), t_out.detach().float().numpy(),
                               rtol=tol, atol=tol)
    e_out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(e.grad.float().numpy(), t.grad.float().numpy(), rtol=tol, atol=tol)


def test_sigmoid_of_a_0d_tensor():
    e, t = _pair(np.float32(-1.5))
    _check(ember.sigmoid(e), torch.sigmoid(t), e, t)


def test_sigmoid_raises_no_overflow_warning(recwarn):
    ember.sigmoid(ember.tensor([-1000.0, 1000.0]))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("index", [[0, 2, 0, -1, 3, 0], [[1, 1], [-4, 0]], [2] * 40 + [0, 1],
                                   [2] * 10 + [0, 1, 3, 1] + [0] * 7 + [-1] * 6, [1] * 6 + [0] * 5 * 4])
@pytest.mark.parametrize("row_shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("sorted_runs", [False, True])
def test_getitem_gradient_adds_repeated_rows(index, row_shape, sorted_runs, monkeypatch):
    """``x[index]``'s backward adds rows as ``add_rows_at`` does (one ``add.at`` for few
    elements; else sorted into runs, added position by position, the runs longer than
    ``MAX_RUN_BY_POSITION`` by ``reduceat``), negative indices wrapped."""
    if sorted_runs:
        from ember._backend import rows
        monkeypatch.setattr(rows, "ADD_AT_MAX_ELEMENTS", 0)
    data = np.random.default_rng(9).standard_normal((4,) + row_shape).astype(np.float32)
    e, t = _pair(data)
    idx = np.array(index)
    _check(e[ember.tensor(idx)], t[torch.tensor(idx)], e, t, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("repeats", [1, 3, 20])
def test_index_add_along_each_dim(dim, repeats):
    rng = np.random.default_rng(10)
    data = rng.standard_normal((3, 4, 5)).astype(np.float32)
    size = data.shape[dim]
    index = np.concatenate([rng.integers(0, size, 6), np.full(repeats, size - 1)])
    src_shape = list(data.shape)
    src_shape[dim] = index.size
    source = rng.standard_normal(src_shape).astype(np.float32)
    (e, t), (es, ts) = _pair(data), _pair(source)
    e_out = e.index_add(dim, ember.tensor(index), es, alpha=0.5)
    t_out = t.index_add(dim, torch.tensor(index), ts, alpha=0.5)
    assert e_out.is_contiguous()
    np.testing.assert_array_equal(e.detach().numpy(), data)  # the input is left alone
    _check(e_out, t_out, es, ts, atol=1e-5)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_topk_by_partition(largest, dim, dtype):
    """k small against the row: the partition path, values, indices and gradients as torch's
    (distinct values, one NaN per row where the dtype has NaN)."""
    rng = np.random.default_rng(11)
    data = rng.permutation(20 * 12).reshape(20, 12).astype(np.float64) - 120  # exact in bfloat16
    if dtype != "int64":
        data = data / 4
        data[np.arange(12) % 20, np.arange(12)] = np.nan
    k = 3
    e = ember.tensor(data).to(getattr(ember, dtype))
    t = torch.tensor(data).to(getattr(torch, dtype))
    if dtype != "int64":
        e.requires_grad_()
        t.requires_grad_()
    e_values, e_indices = ember.topk(e, k, dim, largest)
    t_values, t_indices = torch.topk(t, k, dim, largest)
    np.testing.assert_array_equal(e_indices.numpy(), t_indices.numpy())
    np.testing.assert_array_equal(e_values.detach().float().numpy(), t_values.detach().float().numpy())
    if dtype != "int64":
        e_values.sum().backward()
        t_values.sum().backward()
        np.testing.assert_array_equal(e.grad.float().numpy(), t.grad.float().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8"])
def test_sign_of_special_values_as_torch(dtype):
    data = np.array(SPECIAL + [-3.0, 2.5, 7.0], dtype=np.float64)
    if dtype.startswith("int"):
        data = np.array([-5, 0, 3, -1, 1])
    e = ember.tensor(data).to(getattr(ember, dtype))
    t = torch.tensor(data).to(getattr(torch, dtype))
    e_out, t_out = ember.sign(e), torch.sign(t)
    assert e_out.dtype == getattr(ember, dtype)
    expected = t_out.float().numpy()
    np.testing.assert_array_equal(e_out.float().numpy(), expected)
    np.testing.assert_array_equal(np.signbit(e_out.float().numpy()), np.signbit(expected))


SPECIAL_VALUES = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -2.0, -2.5, 1e-30, 1e-8, 0.5, 1.0, 2.0,
                  3.5, 10.0, 30.0, 171.0, 172.0, 1e30, -1e-8, -0.5, 5.5, -10.3, 40.0, -40.0]


@pytest.mark.parametrize("name", ["lgamma", "erf", "erfc"])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
def test_special_functions_element_by_element_on_small_arrays(name, dtype, rtol):
    """Up to ``SCALAR_PATH_MAX_ELEMENTS`` elements go through Python's math module; more through
    the vectorised formulas: both against torch on the same values, poles and infinities."""
    from ember._backend import special
    small = np.array(SPECIAL_VALUES, dtype=dtype)
    assert small.size <= special.SCALAR_PATH_MAX_ELEMENTS
    large = np.tile(small, special.SCALAR_PATH_MAX_ELEMENTS // small.size + 1)
    for data in (small, large):
        got = getattr(ember, name)(ember.tensor(data)).numpy()
        expected = getattr(torch, name)(torch.tensor(data)).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("make_input,shape", [
    (lambda lib, x: x.t(), (20,)),                      # needs a copy
    (lambda lib, x: x.t()[None][0], (2, 2, 5)),         # a copy, from a view of a view
    (lambda lib, x: x[:, ::2], (2, 2, 3)),              # a copy of every other column
    (lambda lib, x: x[:, 1:3], (2, 2, 2)),              # a view of strided memory
    (lambda lib, x: x[None].transpose(0, 1)[1:], (3, 5)),  # a view (only size-1 dims moved)
])
def test_reshape_of_a_strided_tensor_is_a_view_where_torch_gives_one(make_input, shape):
    data = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    (e, t) = _pair(data)
    e_in, t_in = make_input(ember, e), make_input(torch, t)
    e_out, t_out = e_in.reshape(shape), t_in.reshape(shape)
    assert type(e_out.grad_fn).__name__ == t_out.grad_fn.name()
    assert (e_out._base is None) == (t_out._base is None)
    assert e_out.is_contiguous() == t_out.is_contiguous()
    with ember.no_grad(), torch.no_grad():   # a view writes through, a copy does not
        e_out[(0,) * len(shape)] = t_out[(0,) * len(shape)] = 100.0
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    _check(e_in.reshape(shape) * 2, t_in.reshape(shape) * 2, e, t)


# sizes on both sides of the flat-position and bit-mask paths' thresholds (rows of 31)
LARGE_PATH_SHAPES = [(20, 31), (40, 31), (3, 700, 31)]


def _masked_data(shape):
    data = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    data.reshape(-1)[:4] = [np.nan, 0.0, -0.0, np.inf]
    return data


@pytest.mark.parametrize("shape", LARGE_PATH_SHAPES)
def test_masks_by_flat_positions_match_torch(shape):
    """x[mask], masked_select, nonzero (of numbers and of masks, as a tuple too), argwhere,
    masked_fill and masked_fill_ from the sizes where they take the mask's flat positions or
    the bitwise select."""
    data = _masked_data(shape)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(data)
        mask = t > 0.3
        filled = t.clone()
        filled.masked_fill_(mask, -7.0)
        results.append([t[mask], lib.masked_select(t, mask), lib.nonzero(t), lib.argwhere(mask),
                        *lib.nonzero(mask, as_tuple=True), lib.masked_fill(t, mask, 2.5), filled])
    for want, got in zip(*results):
        assert got.dtype == getattr(ember, str(want.dtype).split(".")[-1])
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("shape", LARGE_PATH_SHAPES)
@pytest.mark.parametrize("diagonal", [-2, 0, 3])
def test_triangles_by_bit_masks_match_torch(shape, diagonal):
    data = _masked_data(shape)
    for op in ("tril", "triu"):
        e, t = _pair(data)
        _check(getattr(ember, op)(e, diagonal), getattr(torch, op)(t, diagonal), e, t, atol=0)
        e2, t2 = _pair(data, requires_grad=False)
        getattr(e2, op + "_")(diagonal)
        getattr(t2, op + "_")(diagonal)
        np.testing.assert_array_equal(e2.numpy(), t2.numpy())


@pytest.mark.parametrize("shape", LARGE_PATH_SHAPES)
def test_reciprocal_as_a_division_matches_torch(shape):
    data = _masked_data(shape)
    e, t = _pair(data)
    _check(ember.reciprocal(e), torch.reciprocal(t), e, t, atol=0)


@pytest.mark.parametrize("source", range(-3, 3))
@pytest.mark.parametrize("destination", range(-3, 3))
def test_movedim_of_one_dim_matches_torch(source, destination):
    """``movedim`` with two ints builds the permutation directly; values, strides, gradient."""
    data = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    (e, t) = _pair(data)
    e_out, t_out = e.movedim(source, destination), t.movedim(source, destination)
    assert e_out.stride() == t_out.stride()
    _check(e_out, t_out, e, t)


@pytest.mark.parametrize("source,destination", [(3, 0), (0, -4)])
def test_movedim_of_one_dim_refuses_what_torch_refuses(source, destination):
    data = np.zeros((2, 3, 4), np.float32)
    outcomes = []
    for lib in (ember, torch):
        try:
            outcomes.append(("ok", tuple(lib.movedim(lib.tensor(data), source, destination).shape)))
        except (IndexError, RuntimeError, TypeError) as error:
            outcomes.append((type(error).__name__, str(error)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("invert", [False, True])
def test_isin_compares_pairs_as_torch_and_as_numpy_isin(invert, monkeypatch):
    """Up to ``ISIN_PAIRWISE_MAX`` pairs every pair is compared at once; above it numpy.isin
    runs: torch's answer both ways, NaN in nothing, integers against floats, scalars and an
    empty set."""
    from ember.ops import statistics
    cases = [(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 2.0]], np.float32), np.array([np.nan, 2.0, 3.0], np.float32)),
             (np.arange(6).reshape(2, 3), np.array([1.0, 4.5, 5.0])),
             (np.array(3.0), np.array([1.0, 3.0])), (np.arange(4.0), np.zeros(0))]
    for limit in (statistics.ISIN_PAIRWISE_MAX, 0):
        monkeypatch.setattr(statistics, "ISIN_PAIRWISE_MAX", limit)
        for a, b in cases:
            want = torch.isin(torch.from_numpy(a), torch.from_numpy(b), invert=invert).numpy()
            got = ember.isin(ember.tensor(a), ember.tensor(b), invert=invert).numpy()
            assert got.dtype == np.bool_ and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("limit", [0, 1 << 30])
def test_kron_both_ways_matches_torch(limit, monkeypatch):
    """kron merges the last dims first (repeat_interleave, repeat) for large results and takes
    the plain broadcast product below ``KRON_ROWS_MIN_ELEMENTS``: torch's values and gradients
    either way, for operands of different ranks."""
    from ember.ops import shape
    monkeypatch.setattr(shape, "KRON_ROWS_MIN_ELEMENTS", limit)
    rng = np.random.default_rng(31)
    for sa, sb in [((3, 4), (2, 5)), ((2, 3, 2), (4, 3)), ((5,), (2, 3))]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        results = []
        for lib in (torch, ember):
            x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            out = lib.kron(x, y)
            (out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))).sum().backward()
            results.append([t.detach().numpy() for t in (out, x.grad, y.grad)])
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
