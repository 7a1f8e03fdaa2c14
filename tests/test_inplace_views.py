"""In-place ops on views of tensors in the autograd graph: the base takes a CopySlices history
and other views of it see the change, as in torch."""
import numpy as np
import pytest
import torch

import ember


def _chain(lib, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    a = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = lib.tensor(rng.standard_normal(4), requires_grad=True)
    x = a * 2
    v = x[1]
    v.mul_(y)                    # in place on a view: x gets CopySlices
    w = x[:, 1:3]
    w.mul_(3)                    # another view; v's elements change too
    x.t()[0].add_(1.5)           # a view of a view
    x.add_(0.5)                  # the base itself, after its views were made
    out = (x * x).sum() + (v ** 2).sum() + w.sum()
    out.backward()
    return (x.detach().numpy().copy(), a.grad.numpy().copy(), y.grad.numpy().copy(),
            type(x.grad_fn).__name__)


def test_inplace_on_views_matches_torch():
    expected, got = _chain(torch), _chain(ember)
    for e, g in zip(expected[:3], got[:3]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    assert got[3] == expected[3] == "AddBackward0"


def test_view_write_makes_plain_base_require_grad():
    grads = []
    for lib in (torch, ember):
        buf = lib.zeros(3, 4)
        z = lib.ones(4, requires_grad=True)
        buf[1].copy_(z * 3)
        assert buf.requires_grad and type(buf.grad_fn).__name__ == "CopySlices"
        (buf * buf).sum().backward()
        grads.append(z.grad.numpy().copy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_unary_inplace_on_view_second_order():
    results = []
    for lib in (torch, ember):
        a = lib.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=lib.float64, requires_grad=True)
        x = a.clone()
        x[0].tanh_()
        g, = lib.autograd.grad((x ** 3).sum(), a, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), a)
        results.append((g.detach().numpy().copy(), gg.numpy().copy()))
    for e, g in zip(*results):
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_view_of_leaf_refused(lib):
    leaf = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        leaf[0].mul_(2)
    assert leaf.tolist() == [1.0, 1.0, 1.0]
