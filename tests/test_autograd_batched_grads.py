"""autograd.grad(..., is_grads_batched=True) against torch: a batch of cotangents in the first
dimension of each grad_output gives a batch of vector-Jacobian products; create_graph,
retain_graph, unused inputs and torch's errors."""
import numpy as np
import pytest
import torch

import ember


def _arrays(seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((3, 4)), r.standard_normal((4, 5)), r.standard_normal((6, 3, 5)), r.standard_normal((6,))


def _graph(lib, xa, wa):
    x, w = lib.tensor(xa, requires_grad=True), lib.tensor(wa, requires_grad=True)
    unused = lib.tensor([1.0], requires_grad=True)
    y = (x @ w).tanh() * 2 + x.sum()
    s = (x.sin() * x).sum()
    return x, w, unused, y, s


def _np(t):
    return t.detach().numpy()


def test_batched_vector_jacobian_products():
    xa, wa, ca, sa = _arrays()
    got = {}
    for lib in (torch, ember):
        x, w, unused, y, s = _graph(lib, xa, wa)
        g = lib.autograd.grad((y, s), (x, w, unused), (lib.tensor(ca), lib.tensor(sa)),
                              is_grads_batched=True, allow_unused=True, retain_graph=True)
        one = lib.autograd.grad(y, x, lib.tensor(ca[:, :1].repeat(3, 1)), is_grads_batched=True)
        got[lib] = g, one
    (eg, eone), (tg, tone) = got[ember], got[torch]
    assert eg[2] is None and tg[2] is None
    for e, t in zip(eg[:2] + eone, tg[:2] + tone):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-10, atol=1e-12)


def test_batched_grads_with_create_graph_and_materialize():
    xa, wa, ca, _ = _arrays(1)
    got = {}
    for lib in (torch, ember):
        x, w, _, y, _ = _graph(lib, xa, wa)
        gx, gw = lib.autograd.grad(y, (x, w), lib.tensor(ca), is_grads_batched=True, create_graph=True)
        second = lib.autograd.grad((gx ** 2).sum() + gw.sum(), (x, w))
        got[lib] = [gx, gw, *second]
    for e, t in zip(got[ember], got[torch]):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-10, atol=1e-12)
    x, w, unused, y, _ = _graph(ember, xa, wa)
    g = ember.autograd.grad(y, (x, unused), ember.tensor(ca), is_grads_batched=True, materialize_grads=True)
    assert tuple(g[1].shape) == (6, 1) and not g[1].any()


def test_batched_grads_free_the_graph_unless_retained():
    xa, wa, ca, _ = _arrays(2)
    errors = []
    for lib in (torch, ember):
        x, w, _, y, _ = _graph(lib, xa, wa)
        lib.autograd.grad(y, x, lib.tensor(ca), is_grads_batched=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad(y, x, lib.tensor(ca), is_grads_batched=True)
        errors.append(str(info.value))
    assert errors[0].split(".")[0] == errors[1].split(".")[0]


def test_batched_grads_errors_as_torch():
    xa, wa, _, _ = _arrays(3)
    for bad in (np.zeros((6, 3, 4)), np.zeros(5)):
        messages = []
        for lib in (torch, ember):
            x, w, _, y, _ = _graph(lib, xa, wa)
            with pytest.raises(RuntimeError) as info:
                lib.autograd.grad(y, x, lib.tensor(bad), is_grads_batched=True)
            messages.append(str(info.value))
        # (torch's message shows the grad_output's shape without its first two sizes; ember's
        # without the batch size, the shape compared with the output's)
        assert messages[0].split(": grad_output")[0] == messages[1].split(": grad_output")[0]
        assert f"grad_output[0] has a shape of ember.Size({list(bad.shape[1:])})" in messages[1]
    messages = []
    for lib in (torch, ember):
        x, w, _, y, _ = _graph(lib, xa, wa)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad(y, x, None, is_grads_batched=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
