"""``ember.utils.checkpoint`` against torch: same weights, same inputs, with and without
checkpointing, gradients equal; fewer tensors kept alive; RNG restored for Dropout."""
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import ember
import ember.nn as enn
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

VARIANTS = [False, True]


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def pair_mlp(dropout=0.0):
    """The same float64 MLP in torch and in ember (weights copied through state_dict)."""
    torch.manual_seed(0)

    def layers(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(dropout), nn.Linear(6, 5),
                             nn.ReLU(), nn.Linear(5, 3))
    tm = layers(torch.nn).double()
    em = layers(enn).double()
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    return tm, em


def inputs(shape=(3, 4), seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    return torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)


def grads_of(model, x, out):
    out.sum().backward() if out.dim() else out.backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


def assert_all_close(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradients_match_torch_and_plain(use_reentrant):
    tm, em = pair_mlp()
    xt, xe = inputs()
    torch_grads = grads_of(tm, xt, tcp.checkpoint(tm, xt, use_reentrant=use_reentrant) ** 2)
    out = checkpoint(em, xe, use_reentrant=use_reentrant)
    np.testing.assert_allclose(out.detach().numpy(), tm(xt).detach().numpy(), rtol=1e-12)
    assert_all_close(grads_of(em, xe, out ** 2), torch_grads)

    _, plain = pair_mlp()
    _, xp = inputs()
    assert_all_close(grads_of(plain, xp, plain(xp) ** 2), torch_grads)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_dropout_gradients_equal_thanks_to_rng_restore(use_reentrant):
    _, em = pair_mlp(dropout=0.5)
    _, xe = inputs()
    ember.manual_seed(7)
    plain = grads_of(em, xe, em(xe))
    em.zero_grad()
    _, xc = inputs()
    ember.manual_seed(7)
    checkpointed = grads_of(em, xc, checkpoint(em, xc, use_reentrant=use_reentrant))
    assert_all_close(checkpointed, plain)
    assert not np.allclose(plain[1], 0)


def test_without_rng_restore_dropout_mask_differs():
    _, em = pair_mlp(dropout=0.5)
    _, xe = inputs(shape=(8, 4))
    ember.manual_seed(7)
    plain = grads_of(em, xe, em(xe))
    em.zero_grad()
    _, xc = inputs(shape=(8, 4))
    ember.manual_seed(7)
    out = checkpoint(em, xc, use_reentrant=False, preserve_rng_state=False)
    assert not all(np.allclose(a, b) for a, b in zip(grads_of(em, xc, out), plain))


def chain(x, log):
    """sin -> mul -> mul; records a weakref to each intermediate (each one saved by a mul)."""
    a = x.sin()
    b = a * x
    log.extend([weakref.ref(a), weakref.ref(b)])
    return b * b


def test_intermediates_are_freed_during_forward():
    x = ember.randn(5, requires_grad=True)
    kept = []
    plain_out = chain(x, kept)
    gc.collect()
    assert all(r() is not None for r in kept)  # saved for backward without checkpoint

    freed = []
    out = checkpoint(chain, x, [], use_reentrant=False)
    out2 = checkpoint(lambda t: chain(t, freed), x, use_reentrant=False)
    gc.collect()
    assert freed and all(r() is None for r in freed)
    out2.sum().backward()
    expected = ember.autograd.grad(plain_out.sum(), x)[0]
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy())
    assert out.requires_grad


def test_pack_hook_stores_handles_and_recompute_is_lazy_and_once():
    calls = []

    def fn(x):
        calls.append(1)
        return x.sin().exp().tanh()

    x = ember.randn(4, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1
    node = out.grad_fn
    saved = node._saved
    assert all(not hasattr(p, "_data") for p in saved)  # handles, not tensors
    frame = saved.unpack_hook.__self__
    loss = out.sum()
    assert len(calls) == 1  # nothing recomputed before backward
    loss.backward()
    assert len(calls) == 2  # recomputed once for all the nodes
    assert len(frame.recomputed) == 0  # every recomputed tensor freed once unpacked
    xn = x.detach().numpy()
    expected = (1 - np.tanh(np.exp(np.sin(xn))) ** 2) * np.exp(np.sin(xn)) * np.cos(xn)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_retain_graph_recomputes_again():
    x = ember.randn(4, dtype=ember.float64, requires_grad=True)
    out = checkpoint(lambda t: (t * t).exp(), x, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())


@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")  # as torch warns
@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_nested_checkpoints(use_reentrant):
    def inner(t):
        return (t.sin() * t).exp()

    def outer(t):
        return checkpoint(inner, t.cos(), use_reentrant=use_reentrant).tanh()

    xt, xe = inputs(shape=(5,))
    tcp.checkpoint(lambda t: tcp.checkpoint(lambda u: (u.sin() * u).exp(), t.cos(),
                                            use_reentrant=use_reentrant).tanh(),
                   xt, use_reentrant=use_reentrant).sum().backward()
    checkpoint(outer, xe, use_reentrant=use_reentrant).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


def test_kwargs_and_non_tensor_outputs():
    def fn(x, y, scale=1.0, tag=None):
        return x * y * scale, tag, (x + y).sum()

    xt, xe = inputs(shape=(2, 3))
    yt, ye = inputs(shape=(2, 3), seed=1)
    ot = tcp.checkpoint(fn, xt, yt, use_reentrant=False, scale=3.0, tag="t")
    oe = checkpoint(fn, xe, ye, use_reentrant=False, scale=3.0, tag="t")
    assert oe[1] == ot[1] == "t"
    (ot[0].sum() + ot[2]).backward()
    (oe[0].sum() + oe[2]).backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy())
    np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy())


def test_reentrant_non_tensor_args_and_outputs():
    def fn(x, k):
        return x * k, "label"

    xt, xe = inputs(shape=(3,))
    ot = tcp.checkpoint(fn, xt, 2.5, use_reentrant=True)
    oe = checkpoint(fn, xe, 2.5, use_reentrant=True)
    assert oe[1] == ot[1] == "label"
    ot[0].pow(2).sum().backward()
    oe[0].pow(2).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy())


def test_autograd_grad_with_non_reentrant():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    out = checkpoint(lambda t: t.exp() * t, x, use_reentrant=False).sum()
    (g,) = ember.autograd.grad(out, x)
    xn = x.detach().numpy()
    np.testing.assert_allclose(g.numpy(), np.exp(xn) * (1 + xn))


@pytest.mark.parametrize("use_reentrant", VARIANTS)
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches_plain(use_reentrant, segments):
    tm, em = pair_mlp()
    xt, xe = inputs()
    torch_grads = grads_of(tm, xt, tcp.checkpoint_sequential(tm, segments, xt, use_reentrant=use_reentrant))
    out = checkpoint_sequential(em, segments, xe, use_reentrant=use_reentrant)
    assert_all_close(grads_of(em, xe, out), torch_grads)
    em.zero_grad()
    _, xp = inputs()
    assert_all_close(grads_of(em, xp, em(xp)), torch_grads)


def test_checkpoint_sequential_on_list_of_functions():
    fns = [lambda t: t * 2, ember.sin, ember.exp, lambda t: t.sum()]
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    checkpoint_sequential(fns, 2, x, use_reentrant=False).backward()
    xn = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.sin(2 * xn)) * np.cos(2 * xn) * 2)


def test_use_reentrant_none_warns_and_defaults_to_reentrant():
    x = ember.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        out = checkpoint(lambda t: t * 2, x)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
        checkpoint_sequential([lambda t: t * 2, lambda t: t + 1], 2, x)


def test_errors_match_torch():
    x = ember.randn(3, requires_grad=True)
    xt = torch.randn(3, requires_grad=True)
    cases = [
        (dict(use_reentrant=True, foo=1), ValueError),
        (dict(use_reentrant=True, debug=True), ValueError),
        (dict(use_reentrant=False, determinism_check="bad"), ValueError),
    ]
    for kwargs, exc in cases:
        with pytest.raises(exc) as te:
            tcp.checkpoint(lambda t: t * 2, xt, **kwargs)
        with pytest.raises(exc) as ee:
            checkpoint(lambda t: t * 2, x, **kwargs)
        assert str(ee.value) == str(te.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="None of the inputs have requires_grad=True"):
            checkpoint(lambda t: t * 2, ember.randn(3), use_reentrant=True)


def test_determinism_check_catches_changed_shapes():
    calls = []

    def fn(t):
        calls.append(1)
        return (t[: 4 - len(calls)] * 2).exp().sum()

    x = ember.randn(4, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        out.backward()


def test_context_fn_runs_forward_and_recompute_contexts():
    import contextlib
    seen = []

    @contextlib.contextmanager
    def mark(name):
        seen.append(name)
        yield

    x = ember.randn(3, requires_grad=True)
    out = checkpoint(lambda t: t.exp(), x, use_reentrant=False,
                     context_fn=lambda: (mark("forward"), mark("recompute")))
    assert seen == ["forward"]
    out.sum().backward()
    assert seen == ["forward", "recompute"]
