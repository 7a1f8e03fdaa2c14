"""The paths ops take at sizes the op table's small cases do not reach, pinned to torch:
blocked triangular substitution and the triangle's inverse in one substitution
(``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``), ``cdist``'s matrix-product
path for p = 2 and ``pdist``'s row-by-row distances, scatter's and gather's flat indices
(``ufunc.at`` and ``take`` on one flat index), ``nansum`` without NaNs as a plain sum,
``logaddexp`` by whole-array passes, a product of all elements in blocks, float32 fmod,
remainder and floor division in float64 passes, in-place triangles and diagonals, cummax and
cummin, hardshrink's and prelu's single nodes, infinity predicates of large strided tensors, a row
repeated over a large tensor's rows and slices along the last dimension in one loop, float32 sums
over leading dims on the column loop. Values,
gradients and node names."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def _pair(data, requires_grad=True):
    return (ember.tensor(data, requires_grad=requires_grad),
            torch.tensor(data, requires_grad=requires_grad))


def _close(e, t, tol):
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    np.testing.assert_allclose(e.detach().numpy(), t, rtol=tol, atol=tol * max(1.0, np.abs(t).max()))


def _backward_both(e_out, t_out):
    seed = RNG.standard_normal(tuple(t_out.shape)).astype(t_out.detach().numpy().dtype)
    e_out.backward(ember.tensor(seed))
    t_out.backward(torch.tensor(seed))


def _cholesky_factor(n, batch, dtype, upper):
    a = RNG.standard_normal(batch + (n, n))
    factor = np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)
    return np.ascontiguousarray(np.swapaxes(factor, -1, -2)) if upper else factor


SIZES = [(70, ()), (33, (2,)), (100, (3,))]   # several blocks of the substitution, batches


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("n,batch", SIZES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_and_solve(n, batch, upper, dtype, tol):
    e_l, t_l = _pair(_cholesky_factor(n, batch, dtype, upper))
    e_b, t_b = _pair(RNG.standard_normal(batch + (n, 5)).astype(dtype))
    e_out, t_out = ember.cholesky_inverse(e_l, upper=upper), torch.cholesky_inverse(t_l, upper=upper)
    _close(e_out, t_out, tol)
    _backward_both(e_out, t_out)
    _close(e_l.grad, t_l.grad, tol * 10)
    e_out, t_out = ember.cholesky_solve(e_b, e_l, upper=upper), torch.cholesky_solve(t_b, t_l, upper=upper)
    _close(e_out, t_out, tol)
    _backward_both(e_out, t_out)
    _close(e_b.grad, t_b.grad, tol)


@pytest.mark.parametrize("n,batch", SIZES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_triangular_solve(n, batch, upper, transpose, unitriangular):
    factor = _cholesky_factor(n, batch, np.float64, upper)
    factor /= np.abs(np.diagonal(factor, axis1=-2, axis2=-1)).max()   # unit diagonal stays stable
    e_a, t_a = _pair(factor)
    e_b, t_b = _pair(RNG.standard_normal(batch + (n, 3)))
    kw = dict(upper=upper, transpose=transpose, unitriangular=unitriangular)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_out, t_out = ember.triangular_solve(e_b, e_a, **kw)[0], torch.triangular_solve(t_b, t_a, **kw)[0]
    _close(e_out, t_out, 1e-8)
    _backward_both(e_out, t_out)
    _close(e_a.grad, t_a.grad, 1e-7)
    _close(e_b.grad, t_b.grad, 1e-8)


def test_cholesky_inverse_of_a_non_finite_factor_reaches_only_the_columns_that_read_it():
    factor = _cholesky_factor(4, (), np.float64, False)
    factor[3, 1] = np.inf
    expected = torch.cholesky_inverse(torch.tensor(factor)).numpy()
    got = ember.cholesky_inverse(ember.tensor(factor)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shapes,mode", [
    (((30, 5), (40, 5)), None),
    (((2, 30, 5), (40, 5)), None),
    (((1, 2, 27, 3), (3, 1, 4, 3)), None),
    (((3, 4), (5, 4)), "use_mm_for_euclid_dist"),
    (((30, 5), (40, 5)), "donot_use_mm_for_euclid_dist"),
    (((20, 5), (26, 5)), "use_mm_for_euclid_dist_if_necessary"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cdist_paths(shapes, mode, dtype):
    (e1, t1), (e2, t2) = (_pair(RNG.standard_normal(s).astype(dtype)) for s in shapes)
    kw = {} if mode is None else {"compute_mode": mode}
    e_out, t_out = ember.cdist(e1, e2, **kw), torch.cdist(t1, t2, **kw)
    assert type(e_out.grad_fn).__name__ == t_out.grad_fn.name()
    _close(e_out, t_out, 1e-5)
    _backward_both(e_out, t_out)
    _close(e1.grad, t1.grad, 1e-4)
    _close(e2.grad, t2.grad, 1e-4)


def test_cdist_rejects_an_unknown_compute_mode_as_torch_does():
    x = ember.zeros(2, 3)
    with pytest.raises(ValueError, match="fast is not a valid value for compute_mode"):
        ember.cdist(x, x, compute_mode="fast")
    with pytest.raises(ValueError):
        torch.cdist(torch.zeros(2, 3), torch.zeros(2, 3), compute_mode="fast")


@pytest.mark.parametrize("shape", [(4, 3), (30, 7), (120, 50)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pdist_row_by_row(shape, dtype):
    e, t = _pair(RNG.standard_normal(shape).astype(dtype))
    e_out, t_out = ember.pdist(e), torch.pdist(t)
    assert type(e_out.grad_fn).__name__ == t_out.grad_fn.name()
    _close(e_out, t_out, 1e-5)
    _backward_both(e_out, t_out)
    _close(e.grad, t.grad, 1e-4)


def test_pdist_of_equal_rows_has_zero_distance_and_zero_gradient():
    e, t = _pair(np.ones((3, 2), np.float32))
    ember.pdist(e).sum().backward()
    torch.pdist(t).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
    assert not math.isnan(e.grad.numpy().sum())


REDUCTIONS = [None, "sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_scatter_reduce_and_gather_with_repeated_indices(dim, reduce, layout):
    shape = (3, 40, 30)
    data = RNG.standard_normal(shape).astype(np.float32)
    if layout == "transposed":   # not C-contiguous: the tuple-key path
        data = np.ascontiguousarray(data.transpose(0, 2, 1)).transpose(0, 2, 1)
    index = RNG.integers(0, shape[dim], (3, 20, 25))   # many repeats along dim
    src = RNG.standard_normal(index.shape).astype(np.float32)
    (e, t), (e_src, t_src) = _pair(data), _pair(src)
    e_index, t_index = ember.tensor(index), torch.tensor(index)
    if reduce is None:
        e_out, t_out = e.scatter_add(dim, e_index, e_src), t.scatter_add(dim, t_index, t_src)
    else:
        for include_self in (True, False):
            _close(ember.scatter_reduce(e.detach(), dim, e_index, e_src.detach(), reduce,
                                        include_self=include_self),
                   torch.scatter_reduce(t.detach(), dim, t_index, t_src.detach(), reduce,
                                        include_self=include_self), 1e-5)
        e_out, t_out = e.scatter_reduce(dim, e_index, e_src, "sum"), t.scatter_reduce(dim, t_index, t_src, "sum")
    _close(e_out, t_out, 1e-5)
    _backward_both(e_out, t_out)
    _close(e_src.grad, t_src.grad, 1e-5)
    e_out, t_out = e.detach().requires_grad_().gather(dim, e_index), t.detach().requires_grad_().gather(dim, t_index)
    _close(e_out, t_out, 0)


def test_gather_backward_adds_repeated_positions():
    data = RNG.standard_normal((50, 40)).astype(np.float32)
    index = RNG.integers(0, 40, (50, 200))
    (e, t) = _pair(data)
    e_out, t_out = e.gather(1, ember.tensor(index)), t.gather(1, torch.tensor(index))
    _backward_both(e_out, t_out)
    _close(e.grad, t.grad, 1e-5)


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_nansum(nan, dim):
    data = RNG.standard_normal((60, 70)).astype(np.float32)
    if nan:
        data[::3, ::2] = np.nan
    e, t = _pair(data)
    kw = {} if dim is None else {"dim": dim}
    e_out, t_out = ember.nansum(e, **kw), torch.nansum(t, **kw)
    _close(e_out, t_out, 1e-5)
    _backward_both(e_out, t_out)
    _close(e.grad, t.grad, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
@pytest.mark.parametrize("shape,dim", [((60, 90), -1), ((5, 40, 12), 1)])
@pytest.mark.parametrize("k", [1, 3, 8, 9])   # 9: past the argmax passes
@pytest.mark.parametrize("largest", [True, False])
def test_topk_by_passes_with_nan_and_infinities(dtype, shape, dim, k, largest):
    if dtype == np.uint8:
        data = RNG.integers(0, 255, shape).astype(dtype)
    else:
        data = (RNG.standard_normal(shape) * 10).astype(dtype)
    if dtype in (np.float32, np.float64):
        flat = data.reshape(-1)
        flat[::7], flat[3::11], flat[5::13] = np.nan, -np.inf, np.inf
    e_values, e_indices = ember.topk(ember.tensor(data), k, dim, largest)
    t_values, _ = torch.topk(torch.tensor(data), k, dim, largest)
    np.testing.assert_array_equal(e_values.numpy(), t_values.numpy())
    # equal values (NaNs among them) may come from other positions than torch's
    np.testing.assert_array_equal(np.take_along_axis(data, e_indices.numpy(), dim), t_values.numpy())


def test_topk_gradient_reaches_the_picked_positions():
    e, t = _pair(RNG.standard_normal((30, 50)).astype(np.float32))
    e_out, t_out = ember.topk(e, 4)[0], torch.topk(t, 4)[0]
    _backward_both(e_out, t_out)
    _close(e.grad, t.grad, 0)


@pytest.mark.parametrize("op", ["kthvalue", "median", "nanmedian"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("nan", [False, True])
def test_selection_by_partition(op, dim, nan):
    data = RNG.standard_normal((40, 61)).astype(np.float32)
    if nan:
        data[RNG.random(data.shape) < 0.1] = np.nan
    e, t = _pair(data)
    args = (17, dim) if op == "kthvalue" else (dim,)
    (e_values, e_indices), (t_values, t_indices) = getattr(ember, op)(e, *args), getattr(torch, op)(t, *args)
    np.testing.assert_array_equal(e_values.detach().numpy(), t_values.detach().numpy())
    np.testing.assert_array_equal(np.take_along_axis(data, np.expand_dims(e_indices.numpy(), dim), dim),
                                  np.expand_dims(t_values.detach().numpy(), dim))
    if not nan:   # distinct values: one index each
        np.testing.assert_array_equal(e_indices.numpy(), t_indices.numpy())
    _backward_both(e_values, t_values)
    _close(e.grad, t.grad, 0)
    if op != "kthvalue":
        np.testing.assert_array_equal(getattr(ember, op)(e).detach().numpy(), getattr(torch, op)(t).detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.int8, np.bool_])
@pytest.mark.parametrize("shapes", [((40, 500), (40, 500), (40, 500)), ((40, 500), (500,), ()),
                                    ((40, 1, 500), (1, 30, 500), (40, 30, 1))])
def test_where_selects_bits_of_large_operands(dtype, shapes):
    cond_shape, a_shape, b_shape = shapes
    special = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0]) if np.dtype(dtype).kind == "f" else None

    def operand(shape):
        values = RNG.standard_normal(shape) * 50
        if special is not None and values.size > 5:
            values.reshape(-1)[:5] = special
        return values.astype(dtype)

    condition = RNG.random(cond_shape) < 0.5
    a, b = operand(a_shape), operand(b_shape)
    got = ember.where(ember.tensor(condition), ember.tensor(a), ember.tensor(b)).numpy()
    expected = torch.where(torch.tensor(condition), torch.tensor(a), torch.tensor(b)).numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{expected.itemsize}"))


def test_where_with_a_number_and_gradients():
    condition = RNG.random((50, 400)) < 0.5
    e, t = _pair(RNG.standard_normal((50, 400)).astype(np.float32))
    e_out = ember.where(ember.tensor(condition), e, 0.5)
    t_out = torch.where(torch.tensor(condition), t, 0.5)
    _close(e_out, t_out, 0)
    _backward_both(e_out, t_out)
    _close(e.grad, t.grad, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_selection_picks_what_the_stable_sort_picks(dtype, monkeypatch):
    """Every position of small rows full of ties, NaNs and signed zeros: the partition's pick
    (value and index among equal values) is the stable sort's."""
    from ember import _dtype
    from ember.ops import sort
    monkeypatch.setattr(sort, "SELECT_MIN_ELEMENTS", 0)
    np_dtype = getattr(_dtype, dtype).np
    for shape in [(7,), (5, 9), (4, 6, 3)]:
        for _ in range(5):
            data = RNG.integers(-3, 3, shape).astype(np_dtype)
            if dtype != "int64":
                data[RNG.random(shape) < 0.2] = np.nan
                data[RNG.random(shape) < 0.1] = -0.0
            for dim in range(len(shape)):
                positions = list(range(shape[dim])) + [sort._median_position(data, dim, True)]
                for position in positions:
                    sorted_pick = sort._pick_sorted(data, dim, position, False)
                    selected_pick = sort._pick_selected(data, dim, position, False)
                    np.testing.assert_array_equal(selected_pick[1], sorted_pick[1])
                    np.testing.assert_array_equal(selected_pick[0].astype(np.float64),
                                                  sorted_pick[0].astype(np.float64))


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("op", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("shapes", [((64, 40), (64, 40)), ((64, 40), (1, 40))])
def test_logaddexp_by_whole_array_passes(op, shapes, dtype, tol):
    a = (RNG.standard_normal(shapes[0]) * 3).astype(dtype)
    b = (RNG.standard_normal(shapes[1]) * 3).astype(dtype)
    (e_a, t_a), (e_b, t_b) = _pair(a), _pair(b)
    e_out, t_out = getattr(ember, op)(e_a, e_b), getattr(torch, op)(t_a, t_b)
    _close(e_out, t_out, tol)
    _backward_both(e_out, t_out)
    _close(e_a.grad, t_a.grad, tol)
    _close(e_b.grad, t_b.grad, tol)
    a[0, :6] = [np.inf, -np.inf, np.nan, np.inf, -np.inf, 5.0]
    b[0, :6] = [np.inf, -np.inf, 1.0, -np.inf, 3.0, 5.0]
    a[1, :3] = b[0, :3] = [1e30, -1e30, 0.0] if dtype == np.float32 else [1e300, -1e300, 0.0]
    e_out = getattr(ember, op)(ember.tensor(a), ember.tensor(b))
    t_out = getattr(torch, op)(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(4096,), (222, 295), (3, 1000, 7)])
def test_product_of_all_elements_in_blocks(shape, dtype, tol):
    data = (1 + RNG.standard_normal(shape) * 1e-3).astype(dtype)
    e_x, t_x = _pair(data)
    e_out, t_out = ember.prod(e_x), torch.prod(t_x)
    _close(e_out, t_out, tol)
    _backward_both(e_out, t_out)
    _close(e_x.grad, t_x.grad, tol)
    with_zero_and_inf = data.copy()
    with_zero_and_inf.reshape(-1)[[5, 700]] = [0.0, np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        e_nan = ember.prod(ember.tensor(with_zero_and_inf)).item()
    assert math.isnan(e_nan) and math.isnan(torch.prod(torch.tensor(with_zero_and_inf)).item())


@pytest.mark.parametrize("width", [300, 7])
def test_gradient_of_repeated_rows_sums_long_runs_apart_from_short_ones(width, monkeypatch, numpy_kernels):
    """``x[index]``'s backward (``add_rows_at``, NumPy's kernel) with runs of one index longer
    than ``MAX_RUN_BY_POSITION`` among short ones: wide rows sum only the long runs by
    ``reduceat``, narrow rows all of them."""
    from ember._backend import rows
    monkeypatch.setattr(rows, "ADD_AT_MAX_ELEMENTS", 0)   # (the sorted runs at any size)
    index = np.concatenate([RNG.permutation(200)[:150], np.full(9, 3), np.full(6, 17), np.full(5, 150)])
    RNG.shuffle(index)
    assert (150 * width > rows.REDUCEAT_ALL_MAX_CELLS) == (width == 300)
    e_x, t_x = _pair(RNG.standard_normal((200, width)).astype(np.float32))
    e_out, t_out = e_x[ember.tensor(index)], t_x[torch.tensor(index)]
    _backward_both(e_out, t_out)
    _close(e_x.grad, t_x.grad, 1e-5)

def _same_bits(e, t):
    """Equal values, NaN where torch has NaN, and zeros of the same sign."""
    e, t = e.detach().numpy(), t.detach().numpy()
    assert e.dtype == t.dtype
    nan = np.isnan(t)
    np.testing.assert_array_equal(np.isnan(e), nan)
    np.testing.assert_array_equal(e[~nan], t[~nan])
    np.testing.assert_array_equal(np.signbit(e[~nan]), np.signbit(t[~nan]))


def _division_operands(shape):
    """Quotients of every size, exact multiples (signed zero remainders), huge quotients, zero and
    infinite divisors, infinite and NaN dividends."""
    a = (RNG.standard_normal(shape) * 10).astype(np.float32)
    b = (RNG.standard_normal(shape) * 3).astype(np.float32)
    a.reshape(-1)[:200] = np.round(a.reshape(-1)[:200])
    b.reshape(-1)[:200] = np.where(RNG.random(200) < 0.5, 1.0, -1.0) * RNG.integers(1, 4, 200)
    a.reshape(-1)[200:220] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 3e30, 2 ** 22 + 1,
                              -7e6, 1e-30, -1e-30, 1e-45, -4.0, 4.0, 5.0, -5.0, 0.0, -0.0, 6.0]
    b.reshape(-1)[200:220] = [2.0, -2.0, 3.0, 1.0, 1.0, 1e-3, 7.0, -3.0, 1.0, 1.0, 1.0, 1.0,
                              1.0, 0.0, -0.0, np.inf, np.inf, -np.inf, np.inf, np.nan]
    return a, b


DIVISION_OPS = {
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
}


@pytest.mark.parametrize("op", list(DIVISION_OPS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_float_division_by_whole_array_passes_matches_torch_bit_for_bit(op, dtype):
    a, b = _division_operands((222, 295))
    fn = DIVISION_OPS[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for ea, eb, ta, tb in [
                (ember.tensor(a), ember.tensor(b), torch.tensor(a), torch.tensor(b)),
                (ember.tensor(a), ember.tensor(b[:1]), torch.tensor(a), torch.tensor(b[:1])),
                (ember.tensor(a[:, :1]), ember.tensor(b), torch.tensor(a[:, :1]), torch.tensor(b))]:
            ea, eb = ea.to(getattr(ember, dtype)), eb.to(getattr(ember, dtype))
            ta, tb = ta.to(getattr(torch, dtype)), tb.to(getattr(torch, dtype))
            _same_bits(fn(ember, ea, eb).float(), fn(torch, ta, tb).float())
            for number in (0.75, -3.0, 7, 0.0, math.inf, -math.inf, math.nan) if ea.numel() > 1024 else ():
                _same_bits(fn(ember, ea, number).float(), fn(torch, ta, number).float())


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_and_remainder_gradients_at_large_size(op):
    a = (RNG.standard_normal((222, 295)) * 10).astype(np.float32)
    b = (RNG.uniform(0.5, 3, (222, 295)) * RNG.choice([-1, 1], (222, 295))).astype(np.float32)
    (e_a, t_a), (e_b, t_b) = _pair(a), _pair(b)
    e_out, t_out = getattr(ember, op)(e_a, e_b), getattr(torch, op)(t_a, t_b)
    _same_bits(e_out, t_out)
    _backward_both(e_out, t_out)
    _same_bits(e_a.grad, t_a.grad)
    _same_bits(e_b.grad, t_b.grad)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
@pytest.mark.parametrize("shape,dim", [((198, 331), 1), ((198, 331), 0), ((7, 40, 33), 1), ((5000,), 0)])
def test_cumulative_extremes_at_large_size_with_ties_nan_and_signed_zeros(op, dtype, shape, dim):
    data = np.round(RNG.standard_normal(shape) * 3)
    flat = data.reshape(-1)
    for value in (np.nan, -0.0, np.inf, -np.inf):
        flat[RNG.integers(0, flat.size, 30)] = value
    if dtype == "int64":
        data = np.nan_to_num(data, nan=0.0, posinf=5, neginf=-5)
    e_values, e_indices = getattr(ember, op)(ember.tensor(data).to(getattr(ember, dtype)), dim)
    t_values, t_indices = getattr(torch, op)(torch.tensor(data).to(getattr(torch, dtype)), dim)
    np.testing.assert_array_equal(e_indices.numpy(), t_indices.numpy())
    _same_bits(e_values.double(), t_values.double())


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumulative_extreme_gradient_at_large_size(op):
    e_x, t_x = _pair(RNG.standard_normal((198, 331)).astype(np.float32))
    (e_out, _), (t_out, _) = getattr(ember, op)(e_x, 1), getattr(torch, op)(t_x, 1)
    _backward_both(e_out, t_out)
    _same_bits(e_x.grad, t_x.grad)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__


@pytest.mark.parametrize("op", ["tril_", "triu_"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(222, 295), (3, 40, 30), (5, 3)])
@pytest.mark.parametrize("diagonal", [-3, 0, 2, 400, -400])
def test_triangle_in_place_writes_self(op, dtype, shape, diagonal):
    data = RNG.standard_normal(shape)
    data.reshape(-1)[:5] = np.nan
    e_x = ember.tensor(data).to(getattr(ember, dtype))
    t_x = torch.tensor(data).to(getattr(torch, dtype))
    version = e_x._version
    assert getattr(e_x, op)(diagonal) is e_x
    getattr(t_x, op)(diagonal)
    np.testing.assert_array_equal(e_x.numpy(), t_x.numpy())
    assert e_x._version > version
    e_base, t_base = ember.tensor(data[:7, :6]), torch.tensor(data[:7, :6])   # a strided view
    getattr(e_base[1:, ::2], op)(diagonal)
    getattr(t_base[1:, ::2], op)(diagonal)
    np.testing.assert_array_equal(e_base.numpy(), t_base.numpy())


@pytest.mark.parametrize("op", ["tril_", "triu_"])
def test_triangle_in_place_with_autograd(op):
    e_x, t_x = _pair(RNG.standard_normal((60, 70)).astype(np.float32))
    e_out, t_out = getattr(e_x * 2, op)(1), getattr(t_x * 2, op)(1)
    _same_bits(e_out, t_out)
    _backward_both(e_out, t_out)
    _same_bits(e_x.grad, t_x.grad)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__


@pytest.mark.parametrize("shape", [(256, 256), (300, 7), (7, 300), (20, 20, 20)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "complex64"])
@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("value", [2.5, -1, True, math.nan])
def test_fill_diagonal_in_place_writes_self(shape, dtype, wrap, value):
    if dtype in ("int64", "bool") and value != value:
        return
    data = RNG.standard_normal(shape).astype(np.float32)
    e_x = ember.tensor(data).to(getattr(ember, dtype))
    t_x = torch.tensor(data).to(getattr(torch, dtype))
    assert e_x.fill_diagonal_(value, wrap=wrap) is e_x
    t_x.fill_diagonal_(value, wrap=wrap)
    np.testing.assert_array_equal(e_x.numpy(), t_x.numpy())


def test_fill_diagonal_of_a_view_refusals_and_gradient():
    e_base, t_base = ember.zeros(6, 6), torch.zeros(6, 6)
    e_base[1:, ::2].fill_diagonal_(3)
    t_base[1:, ::2].fill_diagonal_(3)
    np.testing.assert_array_equal(e_base.numpy(), t_base.numpy())
    with pytest.raises(RuntimeError, match="without overflow"):
        ember.zeros(3, 3, dtype=ember.uint8).fill_diagonal_(300)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.zeros(3, 3, dtype=torch.uint8).fill_diagonal_(300)
    e_x, t_x = _pair(RNG.standard_normal((50, 50)).astype(np.float32))
    e_out, t_out = (e_x * 2).fill_diagonal_(1.5), (t_x * 2).fill_diagonal_(1.5)
    _same_bits(e_out, t_out)
    _backward_both(e_out, t_out)
    _same_bits(e_x.grad, t_x.grad)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("lambd", [0.5, 0.1, -1.0, 0.0])
def test_hardshrink_single_node_with_nan_inf_and_boundaries(dtype, lambd):
    data = RNG.standard_normal(5000).astype(np.float32)
    data[:12] = [0.5, -0.5, np.nan, -0.0, 0.0, np.inf, -np.inf, 0.50000006, -0.50000006,
                 0.49999997, 1e-45, -1.0]
    e_x = ember.tensor(data).to(getattr(ember, dtype)).requires_grad_()
    t_x = torch.tensor(data).to(getattr(torch, dtype)).requires_grad_()
    e_out = ember.nn.functional.hardshrink(e_x, lambd)
    t_out = torch.nn.functional.hardshrink(t_x, lambd)
    _same_bits(e_out.float(), t_out.float())
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "HardshrinkBackward0"
    seed = RNG.standard_normal(5000).astype(np.float32)
    seed[:3] = np.inf   # at a shrunk element the gradient is 0, not inf * 0
    e_out.backward(ember.tensor(seed).to(getattr(ember, dtype)))
    t_out.backward(torch.tensor(seed).to(getattr(torch, dtype)))
    _same_bits(e_x.grad.float(), t_x.grad.float())


def test_hardshrink_second_order():
    e_x, t_x = _pair(RNG.standard_normal((40, 50)))
    e_g = ember.autograd.grad(ember.nn.functional.hardshrink(e_x, 0.3).pow(3).sum(), e_x, create_graph=True)[0]
    t_g = torch.autograd.grad(torch.nn.functional.hardshrink(t_x, 0.3).pow(3).sum(), t_x, create_graph=True)[0]
    _close(e_g, t_g, 1e-12)
    _backward_both(e_g, t_g)
    _close(e_x.grad, t_x.grad, 1e-12)


@pytest.mark.parametrize("shape,channels", [((8, 30, 16, 17), 30), ((8, 30, 16, 17), 1), ((5000,), 1),
                                            ((40, 300), 300)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-12)])
def test_prelu_single_node_values_and_gradients(shape, channels, dtype, tol):
    data = RNG.standard_normal(shape).astype(dtype)
    data.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    (e_x, t_x), (e_w, t_w) = _pair(data), _pair(RNG.standard_normal(channels).astype(dtype))
    e_out, t_out = ember.nn.functional.prelu(e_x, e_w), torch.nn.functional.prelu(t_x, t_w)
    _same_bits(e_out, t_out)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "PreluKernelBackward0"
    _backward_both(e_out, t_out)
    _same_bits(e_x.grad, t_x.grad)
    e_g, t_g = e_w.grad.numpy(), t_w.grad.numpy()
    np.testing.assert_allclose(e_g, t_g, rtol=tol, atol=tol * np.nanmax(np.abs(t_g)), equal_nan=True)


def test_prelu_second_order_and_forward_mode():
    (e_x, t_x), (e_w, t_w) = _pair(RNG.standard_normal((6, 5, 7))), _pair(RNG.standard_normal(5))
    e_gx, e_gw = ember.autograd.grad(ember.nn.functional.prelu(e_x, e_w).pow(2).sum(), (e_x, e_w),
                                     create_graph=True)
    t_gx, t_gw = torch.autograd.grad(torch.nn.functional.prelu(t_x, t_w).pow(2).sum(), (t_x, t_w),
                                     create_graph=True)
    _close(e_gx, t_gx, 1e-12)
    _close(e_gw, t_gw, 1e-12)
    _backward_both(e_gw, t_gw)
    _close(e_x.grad, t_x.grad, 1e-12)
    _close(e_w.grad, t_w.grad, 1e-12)
    tangents = RNG.standard_normal((6, 5, 7)), RNG.standard_normal(5)
    e_jvp = ember.func.jvp(ember.nn.functional.prelu, (e_x.detach(), e_w.detach()),
                           tuple(ember.tensor(t) for t in tangents))[1]
    t_jvp = torch.func.jvp(torch.nn.functional.prelu, (t_x.detach(), t_w.detach()),
                           tuple(torch.tensor(t) for t in tangents))[1]
    _close(e_jvp, t_jvp, 1e-12)


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
@pytest.mark.parametrize("view", ["stride 2", "transposed stride 2"])
def test_infinity_predicates_of_large_strided_tensors(name, view):
    data = RNG.standard_normal((40, 128)).astype(np.float32)
    data[::3, ::5] = np.inf
    data[1::4, ::7] = -np.inf
    data[::6, 1::9] = np.nan
    e, t = _pair(data, requires_grad=False)
    pick = (lambda x: x[:, ::2]) if view == "stride 2" else (lambda x: x.t()[::2])
    got, expected = getattr(ember, name)(pick(e)), getattr(torch, name)(pick(t))
    assert got.dtype == ember.bool and got.shape == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("shapes", [((222, 295), (295,)), ((222, 295), (1, 295)), ((30, 40, 50), (40, 50)),
                                    ((8000, 3), (3,))], ids=str)
def test_a_row_repeated_over_a_large_tensor_in_one_loop(op, shapes, spy):
    """A float32 tensor of 64 KB or more and an operand of its trailing shape: one loop over the
    rows (``binary_rows``), NumPy's bits; values and gradients as torch's."""
    from ember.ops import pointwise
    big, row = RNG.standard_normal(shapes[0]).astype(np.float32), RNG.uniform(0.5, 2.0, shapes[1]).astype(np.float32)
    taken = spy(pointwise, "_rows_binary_kernel")
    (ea, ta), (eb, tb) = _pair(big), _pair(row)
    got, want = getattr(ember, op)(ea, eb), getattr(torch, op)(ta, tb)
    assert len(taken) == 1
    ufunc = getattr(np, {"sub": "subtract", "div": "true_divide", "mul": "multiply"}.get(op, op))
    np.testing.assert_array_equal(got.detach().numpy(), ufunc(big, row))
    from ember._backend import openmp_kernels
    if openmp_kernels.available():   # (the loop itself answers, with NumPy's bits)
        np.testing.assert_array_equal(openmp_kernels.binary_rows(ufunc, big, row), ufunc(big, row))
    _close(got, want, 1e-6)
    _backward_both(got, want)
    _close(ea.grad, ta.grad, 1e-5)
    _close(eb.grad, tb.grad, 1e-4)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("form", ["two slices", "slice and tensor", "slice and number", "split pieces 3-d"])
def test_slices_along_the_last_dimension_in_one_loop(op, form, spy):
    """Large float32 operands whose rows lie apart (``x[:, 1:]``, a split's pieces), or such an
    operand and a number: one loop over the rows (``binary_row_slices``), NumPy's bits; values
    and gradients as torch's."""
    from ember.ops import pointwise
    ufunc = getattr(np, {"sub": "subtract", "div": "true_divide", "mul": "multiply"}.get(op, op))
    data = RNG.uniform(0.5, 2.0, (3, 100, 402) if form == "split pieces 3-d" else (200, 301)).astype(np.float32)
    e, t = _pair(data)
    taken = spy(pointwise, "_row_slices_binary_kernel")
    if form == "two slices":
        args = [(x[:, 1:], x[:, :-1]) for x in (e, t)]
    elif form == "slice and tensor":
        other = RNG.uniform(0.5, 2.0, (200, 300)).astype(np.float32)
        args = [(x[:, 1:], lib.tensor(other)) for x, lib in ((e, ember), (t, torch))]
    elif form == "slice and number":
        args = [(x[:, :-1], 0.3) for x in (e, t)]
    else:
        args = [tuple(x.split(201, dim=-1)) for x in (e, t)]
    got, want = getattr(ember, op)(*args[0]), getattr(torch, op)(*args[1])
    assert len(taken) == 1
    arrays = [a.detach().numpy() if hasattr(a, "detach") else np.float32(a) for a in args[0]]
    np.testing.assert_array_equal(got.detach().numpy(), ufunc(*arrays))
    from ember._backend import openmp_kernels
    if openmp_kernels.available():   # (the loop itself answers, with NumPy's bits)
        second = args[0][1] if form == "slice and number" else args[0][1].detach().numpy()
        np.testing.assert_array_equal(openmp_kernels.binary_row_slices(ufunc, arrays[0], second), ufunc(*arrays))
    _close(got, want, 1e-6)
    _backward_both(got, want)
    _close(e.grad, t.grad, 1e-5)


@pytest.mark.parametrize("shape, dims", [((222, 295), 0), ((40, 8, 300), (0, 1)), ((4096, 8), 0), ((300, 3, 5), 0),
                                         ((50, 130), 0)], ids=str)
def test_float32_sums_over_leading_dims_on_the_column_loop(shape, dims, spy):
    """A float32 tensor of 4,096 elements or more, 32 rows or more, summed over its leading
    dims: the column-sum loop, NumPy's bits (its additions in NumPy's order); the bias-like
    gradient of a broadcast add too. Values as torch's."""
    from ember._backend import openmp_kernels
    data = (RNG.standard_normal(shape) * 50).astype(np.float32)
    taken = spy(openmp_kernels, "column_sums")
    e, t = _pair(data)
    got = e.sum(dims)
    assert len(taken) == 1
    np.testing.assert_array_equal(got.detach().numpy(), np.add.reduce(data, dims))
    _close(got, t.sum(dims), 1e-4)
    bias_e, bias_t = _pair(RNG.standard_normal(shape[1:]).astype(np.float32) if dims == 0 else
                           RNG.standard_normal(shape[2:]).astype(np.float32))
    _backward_both(e + bias_e, t + bias_t)
    _close(bias_e.grad, bias_t.grad, 1e-4)
