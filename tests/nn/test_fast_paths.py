"""Fast paths pinned to the general path: the array backward of cross entropy, softmax,
log_softmax and fused attention against the composite each falls back to under
``create_graph``; the sorted scatter of embedding's backward against ``add.at``; linear's
addmm against torch's graph."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F
from ember.nn.functional.embedding import _sum_rows_by_index
from ember.nn.functional.misc import _composite_attention


def _grads_both_ways(fn, inputs, grad_out):
    """Gradients of ``fn(*inputs)`` by the fast backward and by the create_graph one."""
    fast = ember.autograd.grad(fn(*inputs), inputs, grad_out)
    general = ember.autograd.grad(fn(*inputs), inputs, grad_out, create_graph=True)
    return fast, general


def _assert_same(fast, general, dtype):
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-14}
    for a, b in zip(fast, general):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)


CE_CASES = [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.2},
    {"weight": True}, {"ignore_index": 2}, {"weight": True, "ignore_index": 2, "label_smoothing": 0.1},
    {"weight": True, "reduction": "none", "label_smoothing": 0.3},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5), (5,), (3, 5, 2, 2)])
@pytest.mark.parametrize("kwargs", CE_CASES)
def test_cross_entropy_fast_backward_matches_composite(kwargs, shape, dtype):
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal(shape) * 3, dtype=getattr(ember, dtype),
                     requires_grad=True)
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = ember.tensor(rng.integers(0, 5, target_shape))
    if kwargs.get("ignore_index") is not None and t.ndim:
        t.reshape(-1)[0] = kwargs["ignore_index"]
    kwargs = dict(kwargs)
    if kwargs.pop("weight", False):
        kwargs["weight"] = ember.tensor(rng.random(5) + 0.5, dtype=getattr(ember, dtype))
    loss = F.cross_entropy(x, t, **kwargs)
    assert loss.dtype == x.dtype
    grad_out = ember.tensor(rng.standard_normal(tuple(loss.shape)), dtype=loss.dtype)
    fast, general = _grads_both_ways(lambda a: F.cross_entropy(a, t, **kwargs), (x,), grad_out)
    _assert_same(fast, general, dtype)


def test_cross_entropy_with_every_target_ignored_has_zero_gradient_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3))
    e, t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.cross_entropy(e, ember.tensor([1, 1]), ignore_index=1).backward()
    TF.cross_entropy(t, torch.tensor([1, 1]), ignore_index=1).backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
    fast, general = _grads_both_ways(
        lambda a: F.cross_entropy(a, ember.tensor([1, 1]), ignore_index=1),
        (ember.tensor(x, requires_grad=True),), None)
    np.testing.assert_array_equal(fast[0].numpy(), general[0].detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_fast_backward_matches_composite(name, dim, dtype):
    rng = np.random.default_rng(2)
    base = ember.tensor(rng.standard_normal((4, 3, 5)), dtype=getattr(ember, dtype),
                        requires_grad=True)
    x = base.transpose(0, 2)  # non-contiguous
    grad_out = ember.tensor(rng.standard_normal((5, 3, 4)), dtype=getattr(ember, dtype))
    fast, general = _grads_both_ways(lambda a: getattr(F, name)(a, dim), (x,), grad_out)
    _assert_same(fast, general, dtype)


def _attention_inputs(rng, dtype, length=5, source=7):
    shapes = [(2, 3, length, 4), (2, 3, source, 4), (2, 3, source, 6)]
    return [ember.tensor(rng.standard_normal(s), dtype=getattr(ember, dtype), requires_grad=True)
            for s in shapes]


def _mask(rng, kind, length=5, source=7):
    if kind == "bool":
        m = rng.random((length, source)) > 0.4
        m[1] = False  # a row with every key masked: zeros, as the safe softmax gives
        return ember.tensor(m)
    if kind == "float":
        return ember.tensor(rng.standard_normal((2, 1, length, source)))
    return None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "float"])
def test_fused_attention_matches_composite(mask, dtype):
    rng = np.random.default_rng(3)
    q, k, v = _attention_inputs(rng, dtype)
    attn_mask = _mask(rng, mask)
    if attn_mask is not None and attn_mask.is_floating_point():
        attn_mask = attn_mask.to(q.dtype)
    causal = mask == "causal"
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal)
    assert fused.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    composite = _composite_attention(q, k, v, attn_mask, 0.0, causal, 0.5)
    np.testing.assert_allclose(fused.detach().numpy(), composite.detach().numpy(),
                               rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)
    grad_out = ember.tensor(rng.standard_normal(tuple(fused.shape)), dtype=fused.dtype)
    fast, general = _grads_both_ways(
        lambda *a: F.scaled_dot_product_attention(*a, attn_mask=attn_mask, is_causal=causal),
        (q, k, v), grad_out)
    _assert_same(fast, general, dtype)
    by_composite = ember.autograd.grad(composite, (q, k, v), grad_out)
    _assert_same(fast, by_composite, dtype)


def test_fused_attention_is_twice_differentiable():
    rng = np.random.default_rng(4)
    q, k, v = (ember.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 3)))
    mask = ember.tensor(rng.random((3, 4)) > 0.3)
    for kwargs in ({}, {"attn_mask": mask}, {"is_causal": True}):
        fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kwargs)  # noqa: E731
        assert ember.autograd.gradcheck(fn, (q, k, v))
        assert ember.autograd.gradgradcheck(fn, (q, k, v))


@pytest.mark.parametrize("rows,num_weights", [(40, 7), (5, 100), (0, 3), (1, 1)])
def test_embedding_scatter_matches_add_at(rows, num_weights):
    rng = np.random.default_rng(5)
    flat = rng.integers(0, num_weights, rows)
    values = rng.standard_normal((rows, 3)).astype(np.float32)
    expected = np.zeros((num_weights, 3), np.float32)
    np.add.at(expected, flat, values)
    got = _sum_rows_by_index(np, values, flat, num_weights)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
def test_linear_records_addmm_like_torch(shape):
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal(shape), rng.standard_normal((5, 4)), rng.standard_normal(5)
    te = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ye, yt = F.linear(*te), TF.linear(*tt)
    assert ye.grad_fn.name() == type(yt.grad_fn).__name__
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(tuple(yt.shape))
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for a, c in zip(te, tt):
        np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert te[1].grad.numpy().flags.c_contiguous  # the transposed weight's gradient layout


def _linear_case(rng, rows, dtype):
    x = rng.standard_normal((rows, 80)).astype(dtype)
    w = rng.standard_normal((96, 80)).astype(dtype)
    b = rng.standard_normal(96).astype(dtype)
    return x, w, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addmm_bias_grad_by_ones_product_matches_sum(dtype):
    """The bias gradient as ``ones @ grad`` against the general ``sum_to`` path (taken under
    ``create_graph``), and a full-shape bias keeps the general path."""
    rng = np.random.default_rng(9)
    x, w, b = _linear_case(rng, 70, dtype)
    g = ember.tensor(rng.standard_normal((70, 96)).astype(dtype))
    for bias in (b, np.broadcast_to(b, (70, 96)).copy()):
        inputs = [ember.tensor(a, requires_grad=True) for a in (bias, x, w)]
        fast, general = _grads_both_ways(lambda c, a, m: ember.addmm(c, a, m.t()), inputs, g)
        _assert_same(fast, general, dtype)
        assert fast[0].shape == bias.shape
