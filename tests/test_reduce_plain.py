"""Reductions: what the op table cannot check. Errors and warnings (type and wording, against
torch), node names, the named tuples of max/min, gradients at zeros and ties under no_grad and
create_graph, in-place scans."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember


def both(values, dtype="float32", requires_grad=False):
    """The same values as an ember and a torch tensor."""
    arr = np.array(values)
    return (ember.tensor(arr, dtype=getattr(ember, dtype), requires_grad=requires_grad),
            torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def same_error(fn, e, t):
    """``fn(lib, x)`` raises the same exception type with the same message in both."""
    with pytest.raises(Exception) as expected:
        fn(torch, t)
    with pytest.raises(Exception) as got:
        fn(ember, e)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value).split("\n")[0]


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.sum(x, 2),
    lambda lib, x: lib.sum(x, (0, -3)),
    lambda lib, x: lib.mean(x, -3),
    lambda lib, x: lib.amax(x, 5),
    lambda lib, x: lib.max(x, 2),
    lambda lib, x: lib.argmax(x, -3),
    lambda lib, x: lib.cumsum(x, 2),
    lambda lib, x: lib.prod(x, 2),
    lambda lib, x: lib.var(x, 2),
    lambda lib, x: lib.logsumexp(x, 2),
    lambda lib, x: lib.norm(x, 2, 2),
    lambda lib, x: lib.all(x, 2),
    lambda lib, x: lib.count_nonzero(x, 2),
], ids=["sum", "sum_tuple", "mean", "amax", "max", "argmax", "cumsum", "prod", "var", "logsumexp",
        "norm", "all", "count_nonzero"])
def test_dim_out_of_range(call):
    e, t = both(np.ones((3, 4)))
    same_error(call, e, t)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.sum(x, (0, 0)),
    lambda lib, x: lib.sum(x, (0, -2)),
    lambda lib, x: lib.amax(x, (1, -1)),
    lambda lib, x: lib.count_nonzero(x, (0, 0)),
])
def test_repeated_dim(call):
    e, t = both(np.ones((3, 4)))
    same_error(call, e, t)


def test_zero_dim_tensor_dims():
    e, t = both(3.0)
    same_error(lambda lib, x: lib.sum(x, 1), e, t)
    same_error(lambda lib, x: lib.sum(x, (0, -1)), e, t)
    assert ember.sum(e, (0,)).item() == 3.0


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.max(x),
    lambda lib, x: lib.min(x),
    lambda lib, x: lib.amax(x),
    lambda lib, x: lib.amin(x, ()),
    lambda lib, x: lib.max(x, 0),
    lambda lib, x: lib.min(x, -2),
    lambda lib, x: lib.amax(x, -2),
    lambda lib, x: lib.amin(x, (1, 0)),
    lambda lib, x: lib.argmax(x),
    lambda lib, x: lib.argmin(x, 0),
    lambda lib, x: lib.norm(x, float("inf")),
    lambda lib, x: lib.norm(x, -1),
    lambda lib, x: lib.norm(x, -0.5, 0),
    lambda lib, x: lib.norm(x, float("inf"), (1, -2)),
], ids=["max", "min", "amax", "amin_empty_tuple", "max_dim", "min_negdim", "amax_negdim",
        "amin_dims", "argmax", "argmin_dim", "norm_inf", "norm_neg1", "norm_neg_half", "norm_inf_dims"])
def test_no_identity_over_empty(call):
    e, t = both(np.zeros((0, 3)))
    same_error(call, e, t)


def test_reductions_with_identity_over_empty():
    e, t = both(np.zeros((0, 3)))
    for call in (lambda lib, x: lib.sum(x), lambda lib, x: lib.prod(x), lambda lib, x: lib.prod(x, 0),
                 lambda lib, x: lib.max(x, 1).values, lambda lib, x: lib.amax(x, 1),
                 lambda lib, x: lib.logsumexp(x, 0), lambda lib, x: lib.all(x), lambda lib, x: lib.any(x),
                 lambda lib, x: lib.norm(x), lambda lib, x: lib.norm(x, float("inf"), 1)):
        expected, got = call(torch, t), call(ember, e)
        assert tuple(got.shape) == tuple(expected.shape)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert ember.sum(e).item() == 0.0 and ember.prod(e).item() == 1.0


@pytest.mark.parametrize("call,dtype", [
    (lambda lib, x: lib.mean(x), "int64"),
    (lambda lib, x: lib.mean(x, 0), "bool"),
    (lambda lib, x: lib.mean(x.float(), dtype=lib.int32), "int64"),
    (lambda lib, x: lib.nanmean(x), "int32"),
    (lambda lib, x: lib.nanmean(x, dtype=lib.float32), "int64"),
    (lambda lib, x: lib.var(x), "int64"),
    (lambda lib, x: lib.std(x, 0), "uint8"),
    (lambda lib, x: lib.var_mean(x), "int32"),
    (lambda lib, x: lib.norm(x), "int64"),
    (lambda lib, x: lib.norm(x, 1), "bool"),
    (lambda lib, x: lib.argmax(x), "bool"),
    (lambda lib, x: lib.argmin(x, 0), "bool"),
])
def test_dtype_errors(call, dtype):
    e, t = both([[1, 0], [2, 3]], dtype)
    same_error(call, e, t)


def test_norm_order_errors():
    e, t = both(np.ones((2, 3)))
    same_error(lambda lib, x: lib.norm(x, "abc"), e, t)
    same_error(lambda lib, x: lib.norm(x[0], "nuc"), e, t)            # a matrix norm of a vector
    same_error(lambda lib, x: lib.norm(x, "fro", (0, 1, 2)), e, t)    # 'fro' over three dims


def test_argument_type_errors():
    e = ember.ones(3, 4)
    with pytest.raises(TypeError):
        ember.prod(e, (0, 1))
    with pytest.raises(TypeError):
        ember.max(e, (0, 1))
    with pytest.raises(TypeError):
        ember.max(e, other=1.5)
    with pytest.raises(TypeError):
        e.min(1.5)
    with pytest.raises(TypeError):
        ember.logsumexp(e)


# -- var/std corrections and degrees of freedom ----------------------------------------------

@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", [{"correction": 12}, {"correction": 13}, {"dim": 1, "correction": 4}])
def test_correction_at_or_above_count_warns(op, kwargs):
    e, t = both(np.arange(12.0).reshape(3, 4))
    with warnings.catch_warnings(record=True) as caught_torch:
        warnings.simplefilter("always")
        expected = getattr(torch, op)(t, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = getattr(ember, op)(e, **kwargs)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    torch_message = str(caught_torch[0].message).split(" (Triggered internally")[0]
    assert messages == [torch_message]
    as_tuple = lambda v: v if isinstance(v, tuple) else (v,)  # noqa: E731
    for g, x in zip(as_tuple(got), as_tuple(expected)):
        np.testing.assert_array_equal(g.numpy(), x.numpy())


def test_var_of_one_element_is_nan_with_warning():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = ember.var(ember.tensor(2.0))
    assert np.isnan(out.item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.var(ember.tensor(2.0), correction=0).item() == 0.0


def test_unbiased_and_correction_together_is_an_error():
    with pytest.raises(TypeError):
        ember.var(ember.ones(3), 0, unbiased=True, correction=1)


def test_std_gradient_of_constant_input_is_zero():
    e, t = both(np.full((2, 3), 1.5), "float64", requires_grad=True)
    ember.std(e, 1).sum().backward()
    torch.std(t, 1).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
    assert not np.any(e.grad.numpy())


# -- max/min named tuples ---------------------------------------------------------------------

def test_max_returns_named_tuple():
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    out = ember.max(x, 1)
    assert type(out) is ember.return_types.max
    assert isinstance(out, tuple) and len(out) == 2
    values, indices = out
    assert out.values is values and out.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype is ember.int64
    assert type(x.min(dim=0, keepdim=True)) is ember.return_types.min
    assert repr(out).startswith("ember.return_types.max(\nvalues=tensor(")
    back = pickle.loads(pickle.dumps(out))
    assert type(back) is ember.return_types.max and back.indices.tolist() == [1, 0]


def test_max_indices_are_not_differentiable():
    x = ember.tensor([[1.0, 5.0], [7.0, 0.0]], requires_grad=True)
    values, indices = ember.max(x, 1)
    assert values.requires_grad and values.grad_fn.name() == "MaxBackward0"
    assert not indices.requires_grad and indices.grad_fn is None


def test_max_with_other_tensor_is_maximum():
    a, b = ember.tensor([1.0, 5.0, -2.0]), ember.tensor([3.0, 4.0, -1.0])
    assert ember.max(a, b).tolist() == [3.0, 5.0, -1.0]
    assert a.min(b).tolist() == [1.0, 4.0, -2.0]
    assert ember.max(a, other=b).tolist() == [3.0, 5.0, -1.0]


# -- node names -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(), lambda lib, x: x.sum(1), lambda lib, x: x.sum(dim=()),
    lambda lib, x: x.mean(), lambda lib, x: x.mean(1), lambda lib, x: x.mean(dim=None, keepdim=True),
    lambda lib, x: lib.nansum(x, 1), lambda lib, x: lib.nanmean(x),
    lambda lib, x: x.prod(), lambda lib, x: x.prod(1),
    lambda lib, x: x.amax(1), lambda lib, x: x.amin(), lambda lib, x: x.max(), lambda lib, x: x.min(),
    lambda lib, x: x.max(1)[0], lambda lib, x: x.min(0).values,
    lambda lib, x: x.var(), lambda lib, x: x.std(1), lambda lib, x: lib.var_mean(x)[0],
    lambda lib, x: lib.var_mean(x)[1], lambda lib, x: lib.std_mean(x, 1)[1],
    lambda lib, x: x.logsumexp(1), lambda lib, x: x.norm(), lambda lib, x: x.norm(float("inf"), 1),
    lambda lib, x: x.cumsum(1), lambda lib, x: x.cumprod(0),
])
def test_node_names(call):
    e, t = both(np.arange(1.0, 13.0).reshape(3, 4), requires_grad=True)
    assert call(ember, e).grad_fn.name() == call(torch, t).grad_fn.name()


def test_no_history_without_grad():
    x = ember.ones(3, 4, requires_grad=True)
    with ember.no_grad():
        for out in (x.sum(), x.mean(1), x.prod(), x.amax(0), x.max(1).values, x.var(), x.cumsum(0),
                    x.norm(), x.logsumexp(1), ember.var_mean(x)[1]):
            assert out.grad_fn is None and not out.requires_grad


# -- gradients at zeros and ties --------------------------------------------------------------

def _first_and_second_order(lib, fn, x, seed=0):
    rng = np.random.default_rng(seed)
    out = fn(x)
    g = lib.tensor(rng.uniform(-1, 1, size=tuple(out.shape)), dtype=out.dtype)
    (first,) = lib.autograd.grad(out, x, g, create_graph=True)
    w = lib.tensor(rng.uniform(-1, 1, size=tuple(first.shape)), dtype=first.dtype)
    second = None
    if first.requires_grad:
        (second,) = lib.autograd.grad((first * w).sum(), x)
    (plain,) = lib.autograd.grad(fn(x), x, g)  # the no-graph path
    return plain.numpy(), first.detach().numpy(), None if second is None else second.numpy()


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0, 4.0]],
    [[2.0, 0.0, 3.0, 0.0]],
    [[0.0, 0.0, 0.0, 1.5], [1.0, 2.0, 0.0, 3.0]],
    [[0.0, 5.0, 6.0, 0.5], [0.0, 2.0, 0.0, -1.0]],
], ids=["one_zero", "two_zeros", "three_zeros", "leading_zero"])
@pytest.mark.parametrize("op", [
    lambda lib, x: lib.prod(x), lambda lib, x: lib.prod(x, -1), lambda lib, x: lib.prod(x, 0, True),
    lambda lib, x: lib.cumprod(x, -1), lambda lib, x: lib.cumprod(x, 0),
], ids=["prod", "prod_dim", "prod_dim0", "cumprod", "cumprod_dim0"])
def test_products_with_zeros(op, values):
    e, t = both(values, "float64", requires_grad=True)
    got = _first_and_second_order(ember, lambda x: op(ember, x), e)
    expected = _first_and_second_order(torch, lambda x: op(torch, x), t)
    for g, x in zip(got, expected):
        assert (g is None) == (x is None)
        if x is not None:
            np.testing.assert_allclose(g, x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", [
    lambda lib, x: lib.max(x), lambda lib, x: lib.amax(x, 1), lambda lib, x: lib.amin(x, (0, 1)),
    lambda lib, x: lib.max(x, 1)[0], lambda lib, x: lib.min(x, 0, True)[0],
    lambda lib, x: lib.norm(x, float("inf"), 1),
])
def test_gradient_at_ties(op):
    values = [[1.0, 3.0, 3.0, 3.0], [-2.0, -2.0, 0.5, -2.0]]
    e, t = both(values, "float64", requires_grad=True)
    op(ember, e).sum().backward()
    op(torch, t).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-15)


def test_full_max_gradient_goes_to_nan():
    e, t = both([1.0, float("nan"), 3.0], "float64", requires_grad=True)
    ember.max(e).backward()
    torch.max(t).backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_norm_gradient_at_zero_vector():
    for p in (2, 1.5, 3):
        e, t = both([0.0, 0.0, 0.0], "float64", requires_grad=True)
        ember.norm(e, p).backward()
        torch.norm(t, p).backward()
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
        assert not np.any(np.isnan(e.grad.numpy()))


def test_norm_zero_order_has_no_gradient():
    e = ember.tensor([1.0, 0.0, 2.0], requires_grad=True)
    assert ember.autograd.grad(ember.norm(e, 0), e, allow_unused=True) == (None,)


# -- logsumexp ----------------------------------------------------------------------------------

def test_logsumexp_is_stable():
    values = [[1e4, 1e4, -1e4], [-1e4, -1e4 - 1, -1e4], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0]]
    e, t = both(values, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ember.logsumexp(e, 1)
    np.testing.assert_allclose(got.numpy(), torch.logsumexp(t, 1).numpy(), rtol=1e-6)
    assert np.isfinite(got.numpy()[:2]).all()


def test_logsumexp_gradient_is_softmax():
    e, t = both([[1e3, 1e3 + 1, 1e3 - 2], [-5.0, 0.0, 2.5]], "float64", requires_grad=True)
    ember.logsumexp(e, 1).sum().backward()
    softmax = torch.softmax(t.detach(), 1).numpy()
    np.testing.assert_allclose(e.grad.numpy(), softmax, rtol=1e-12)


# -- dtypes, in-place scans -------------------------------------------------------------------

def test_dtype_keyword_keeps_the_gradient_in_the_input_dtype():
    for op in (lambda lib, x: lib.sum(x, dtype=lib.float64), lambda lib, x: lib.mean(x, 0, dtype=lib.float64),
               lambda lib, x: lib.prod(x, 1, dtype=lib.float64), lambda lib, x: lib.cumsum(x, 1, dtype=lib.float64),
               lambda lib, x: lib.cumprod(x, 0, dtype=lib.float64), lambda lib, x: lib.nansum(x, dtype=lib.float64),
               lambda lib, x: lib.norm(x, dtype=lib.float64)):
        e, t = both([[0.5, 1.5, -2.0], [1.0, 0.25, 3.0]], "float32", requires_grad=True)
        out = op(ember, e)
        assert out.dtype is ember.float64
        out.sum().backward()
        op(torch, t).sum().backward()
        assert e.grad.dtype is ember.float32
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_integer_results():
    e, t = both([[1, 2], [3, 4]], "int32")
    for op in (lambda lib, x: lib.sum(x), lambda lib, x: lib.prod(x, 0), lambda lib, x: lib.cumsum(x, 1),
               lambda lib, x: lib.cumprod(x, 0), lambda lib, x: lib.nansum(x),
               lambda lib, x: lib.cumsum(x, 1, dtype=lib.int32), lambda lib, x: lib.sum(x, dtype=lib.int16),
               lambda lib, x: lib.amax(x, 0), lambda lib, x: lib.count_nonzero(x)):
        got, expected = op(ember, e), op(torch, t)
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
        assert got.tolist() == expected.tolist()


def test_all_any_of_uint8_stay_uint8():
    e, t = both([[1, 0, 2], [3, 4, 5]], "uint8")
    for op in (lambda lib, x: lib.all(x), lambda lib, x: lib.any(x, 1), lambda lib, x: x.all(0, True)):
        got, expected = op(ember, e), op(torch, t)
        assert got.dtype is ember.uint8 and expected.dtype is torch.uint8
        assert got.tolist() == expected.tolist()


def test_inplace_scans():
    e, t = both([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    assert e.cumsum_(1) is e
    t.cumsum_(1)
    np.testing.assert_allclose(e.numpy(), t.numpy())
    e.cumprod_(0)
    t.cumprod_(0)
    np.testing.assert_allclose(e.numpy(), t.numpy())


def test_failed_reduction_leaves_input_unchanged():
    e = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    before = e.numpy().copy()
    with pytest.raises(IndexError):
        ember.cumsum(e, 5)
    with pytest.raises(RuntimeError):
        ember.mean(e.long())
    np.testing.assert_array_equal(e.numpy(), before)


@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(1, keepdims=True),
    lambda lib, x: lib.sum(x, axis=0),
    lambda lib, x: x.sum(axis=(0, 1), keepdims=True),
    lambda lib, x: lib.mean(x, 1, keepdims=True),
    lambda lib, x: x.mean(axis=-1),
], ids=["sum_keepdims", "sum_axis", "sum_both", "mean_keepdims", "mean_axis"])
def test_numpy_names_for_dim_and_keepdim(call):
    """torch takes NumPy's ``axis`` and ``keepdims`` for ``dim`` and ``keepdim``."""
    e, t = both([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
    got, expected = call(ember, e), call(torch, t)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


def test_numpy_names_errors():
    e = ember.ones(2, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        e.sum(axes=1)
    with pytest.raises(TypeError):
        e.sum(0, axis=1)


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("op, kwargs", [("sum", {"dim": 0}), ("sum", {"dim": (0, 1), "keepdim": True}),
                                        ("mean", {"dim": 1}), ("mean", {})])
def test_sum_and_mean_write_into_out_as_torch(op, kwargs, out_dtype):
    """Computed in ``out``'s dtype (mean: where it is a floating one), torch's errors elsewhere;
    the Tensor methods take no out=, as torch's."""
    x = np.random.default_rng(18).standard_normal((3, 4)).astype(np.float32) * 100
    results = []
    for lib in (ember, torch):
        shape = tuple(getattr(lib, op)(lib.tensor(x), **kwargs).shape)
        out = lib.zeros(shape, dtype=getattr(lib, out_dtype))
        try:
            returned = getattr(lib, op)(lib.tensor(x), **kwargs, out=out)
            assert returned is out
            results.append(out.numpy())
        except RuntimeError as error:
            results.append(str(error))
    if isinstance(results[1], str):
        assert results[0] == results[1]
    else:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            getattr(lib.tensor(x), op)(0, out=lib.zeros(4))
    with pytest.raises(TypeError):
        ember.sum(ember.tensor(x), out=ember.zeros(()))


# -- nanmean where nothing records -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": -1}, {"dim": ()}])
@pytest.mark.parametrize("nans", ["none", "some", "a_row"])
def test_nanmean_of_arrays_is_the_composites_and_torchs(nans, kwargs, dtype):
    """Where nothing records nanmean divides nansum's array by the counts in NumPy (no tensors between):
    the composite's bits (its tensors' division), torch's values, and no NumPy warning for an all-NaN row."""
    x = np.random.default_rng(19).standard_normal((2, 3, 4)).astype(dtype)
    if nans != "none":
        x[0, 1, 2] = x[1, 0, 0] = np.nan
    if nans == "a_row":
        x[1, 2, :] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ember.nanmean(ember.tensor(x), **kwargs)
    tracked = ember.nanmean(ember.tensor(x, requires_grad=True), **kwargs)
    assert tracked.grad_fn is not None and got.dtype == tracked.dtype
    assert got.numpy().tobytes() == tracked.detach().numpy().tobytes()
    want = torch.nanmean(torch.tensor(x), **kwargs).numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7, equal_nan=True)
