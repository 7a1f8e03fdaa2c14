"""linear_cross_entropy and LinearCrossEntropyLoss (the reference computation) against torch."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F


def _close(e, t):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = [
    # (input shape, weight shape, bias, target kind, kwargs)
    ((5, 4), (6, 4), False, "index", {}),
    ((5, 4), (6, 4), True, "index", dict(reduction="sum", ignore_index=2)),
    ((4,), (6, 4), True, "index", {}),
    ((5, 4), (6, 4), False, "index", dict(reduction="none", label_smoothing=0.2, weight=True)),
    ((5, 4), (6, 4), True, "probs", dict(reduction="mean", label_smoothing=0.1)),
    ((3, 4), (6, 2, 4), True, "index", dict(weight=True)),      # K-dimensional
    ((3, 4), (5, 2, 3, 4), False, "probs", {}),
]


def _make(rng, in_shape, w_shape, bias, kind, kwargs):
    x = rng.standard_normal(in_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[:-1]) if bias else None
    logits_shape = in_shape[:-1] + (w_shape[0],) + w_shape[1:-1]
    if kind == "index":
        t = rng.integers(0, w_shape[0], in_shape[:-1] + w_shape[1:-1])
    else:
        t = rng.random(logits_shape)
        t /= t.sum(axis=len(in_shape) - 1, keepdims=True)
    cw = rng.random(w_shape[0]) if kwargs.get("weight") else None
    return x, w, b, t, cw


@pytest.mark.parametrize("in_shape,w_shape,bias,kind,kwargs", CASES)
def test_linear_cross_entropy_matches_torch(in_shape, w_shape, bias, kind, kwargs):
    rng = np.random.default_rng(len(w_shape) + len(in_shape))
    x, w, b, t, cw = _make(rng, in_shape, w_shape, bias, kind, kwargs)
    kw = {k: v for k, v in kwargs.items() if k != "weight"}
    results = []
    for lib, fn in ((torch, TF.linear_cross_entropy), (ember, F.linear_cross_entropy)):
        args = [lib.tensor(a, requires_grad=True) for a in (x, w)]
        lb = lib.tensor(b, requires_grad=True) if b is not None else None
        out = fn(*args, lib.tensor(t), linear_bias=lb,
                 weight=lib.tensor(cw) if cw is not None else None, **kw)
        out.sum().backward()
        results.append((out, [a.grad for a in args] + ([lb.grad] if lb is not None else [])))
    (tout, tgrads), (eout, egrads) = results
    _close(eout, tout)
    for e, t_ in zip(egrads, tgrads):
        _close(e, t_)


@pytest.mark.parametrize("in_shape,w_shape,bias,kind,kwargs", CASES[:2] + CASES[5:6])
def test_linear_cross_entropy_loss_module_matches_torch(in_shape, w_shape, bias, kind, kwargs):
    rng = np.random.default_rng(3)
    x, _, _, t, cw = _make(rng, in_shape, w_shape, bias, kind, kwargs)
    kw = {k: v for k, v in kwargs.items() if k != "weight"}
    args = (in_shape[-1], w_shape[0])
    extra = dict(out_features=tuple(w_shape[1:-1]), bias=bias, dtype=torch.float64, **kw)
    tm = torch.nn.LinearCrossEntropyLoss(*args, **extra,
                                         weight=torch.tensor(cw) if cw is not None else None)
    em = ember.nn.LinearCrossEntropyLoss(*args, **dict(extra, dtype=ember.float64),
                                         weight=ember.tensor(cw) if cw is not None else None)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tout, eout = tm(torch.tensor(x), torch.tensor(t)), em(ember.tensor(x), ember.tensor(t))
    _close(eout, tout)
    tout.sum().backward()
    eout.sum().backward()
    _close(em.linear.weight.grad, tm.linear.weight.grad)


@pytest.mark.parametrize("in_shape,w_shape,b_shape,t_shape,kwargs", [
    ((2, 3, 4), (5, 4), None, (2,), {}),
    ((2, 4), (4,), None, (2,), {}),
    ((2, 4), (5, 3), None, (2,), {}),
    ((2, 4), (5, 4), (4,), (2,), {}),
    ((4,), (5, 2, 4), None, (2,), {}),
    ((2, 4), (5, 4), None, (2, 5), dict(ignore_index=1)),
])
def test_linear_cross_entropy_errors_match_torch(in_shape, w_shape, b_shape, t_shape, kwargs):
    for lib, fn in ((torch, TF.linear_cross_entropy), (ember, F.linear_cross_entropy)):
        target = lib.zeros(t_shape) if len(t_shape) == 2 else lib.zeros(t_shape, dtype=lib.int64)
        bias = lib.zeros(b_shape) if b_shape else None
        with pytest.raises(RuntimeError) as err:
            fn(lib.zeros(in_shape), lib.zeros(w_shape), target, linear_bias=bias, **kwargs)
        if lib is torch:
            expected = str(err.value)
        else:
            assert str(err.value) == expected


def test_module_argument_errors_match_torch():
    for kwargs in (dict(weight=np.ones(3)), dict(label_smoothing=1.5)):
        with pytest.raises(RuntimeError) as t_err:
            torch.nn.LinearCrossEntropyLoss(4, 5, **{k: torch.tensor(v) if k == "weight" else v
                                                     for k, v in kwargs.items()})
        with pytest.raises(RuntimeError) as e_err:
            ember.nn.LinearCrossEntropyLoss(4, 5, **{k: ember.tensor(v) if k == "weight" else v
                                                     for k, v in kwargs.items()})
        assert str(e_err.value) == str(t_err.value)


def test_options():
    assert [f.name for f in __import__("dataclasses").fields(ember.nn.LinearCrossEntropyOptions)] == \
        [f.name for f in __import__("dataclasses").fields(torch.nn.LinearCrossEntropyOptions)]
    assert repr(ember.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    x, w = ember.randn(3, 4), ember.randn(5, 4)
    with pytest.raises(NotImplementedError, match="no chunked implementation"):
        F.linear_cross_entropy(x, w, ember.tensor([0, 1, 2]),
                               options=ember.nn.LinearCrossEntropyOptions())
    # where torch's chunked path does not apply, options are ignored with torch's warning
    for lib, fn in ((torch, TF.linear_cross_entropy), (ember, F.linear_cross_entropy)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib.ones(3, 4), lib.ones(5, 4), lib.tensor([0, 1, 2]), label_smoothing=0.1,
               options=lib.nn.LinearCrossEntropyOptions())
        assert any("``options`` ignored" in str(w.message) for w in caught)
