"""``out=`` arguments write into the given tensor, as in torch."""
import numpy as np
import pytest
import torch

import ember

CASES = [
    ("mm", lambda lib, a, b: (a[:, :3], b[:3, :])),
    ("matmul", lambda lib, a, b: (a, b[:4, :])),
    ("add", lambda lib, a, b: (a, a)),
    ("mul", lambda lib, a, b: (a, a)),
    ("exp", lambda lib, a, b: (a,)),
    ("clamp", lambda lib, a, b: (a, -0.5, 0.5)),
]


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_out_matches_torch(name, args):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    results = []
    for lib in (torch, ember):
        ins = args(lib, lib.tensor(a, dtype=lib.float32), lib.tensor(b, dtype=lib.float32))
        expected = getattr(lib, name)(*ins)
        out = lib.empty(expected.shape, dtype=lib.float32)
        returned = getattr(lib, name)(*ins, out=out)
        assert returned is out
        results.append(out.numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


def test_creation_out_and_resize_warning():
    out = ember.empty(0)
    assert ember.zeros(2, 3, out=out) is out and out.shape == (2, 3) and not out.numpy().any()
    out = ember.ones(5)
    with pytest.warns(UserWarning, match="was resized"):
        ember.arange(3, out=out)
    assert out.tolist() == [0, 1, 2] or out.tolist() == [0.0, 1.0, 2.0]


def test_out_refuses_autograd():
    a = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.mul(a, 2, out=ember.empty(2))


REDUCTION_CASES = [
    ("nansum", lambda lib, x: (x, 1)), ("nanmean", lambda lib, x: (x, 1)), ("prod", lambda lib, x: (x, 1)),
    ("cumsum", lambda lib, x: (x, 1)), ("cumprod", lambda lib, x: (x, 0)), ("amax", lambda lib, x: (x, 1)),
    ("amin", lambda lib, x: (x, 0)), ("max", lambda lib, x: (x,)), ("max", lambda lib, x: (x, 1)),
    ("min", lambda lib, x: (x, 1, True)), ("argmax", lambda lib, x: (x, 1)), ("argmin", lambda lib, x: (x,)),
    ("var", lambda lib, x: (x, 1)), ("std", lambda lib, x: (x,)),
    ("logsumexp", lambda lib, x: (x, 1)), ("all", lambda lib, x: (x > 0, 1)),
    ("any", lambda lib, x: (x > 0,)), ("msort", lambda lib, x: (x,)),
    ("topk", lambda lib, x: (x, 2)), ("kthvalue", lambda lib, x: (x, 2, 1)), ("median", lambda lib, x: (x, 1)),
    ("nanmedian", lambda lib, x: (x, 0)), ("mode", lambda lib, x: ((x * 2).round(), 1)),
    ("quantile", lambda lib, x: (x, 0.3, 1)), ("nanquantile", lambda lib, x: (x, 0.7)),
    ("diff", lambda lib, x: (x, 1, 1)),
    ("cummax", lambda lib, x: (x, 1)), ("cummin", lambda lib, x: (x, 0)), ("logcumsumexp", lambda lib, x: (x, 1)),
]


def test_argsort_out_matches_torch():
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    got = []
    for lib in (torch, ember):   # (torch takes argsort's out= only with stable=)
        out = lib.empty(3, 4, dtype=lib.int64)
        assert lib.argsort(lib.tensor(x), stable=True, dim=1, out=out) is out
        got.append(out.numpy().copy())
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("name,args", REDUCTION_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(REDUCTION_CASES)])
def test_reduction_and_sorting_out_match_torch(name, args):
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        ins = args(lib, lib.tensor(x))
        expected = getattr(lib, name)(*ins)
        many = isinstance(expected, tuple)
        outs = tuple(lib.empty_like(e) for e in expected) if many else lib.empty_like(expected)
        returned = getattr(lib, name)(*ins, out=outs)
        assert all(r is o for r, o in zip(returned, outs)) if many else returned is outs
        results.append([o.numpy().copy() for o in (outs if many else (outs,))])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_aminmax_out_matches_torch():
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    got = []
    for lib in (torch, ember):
        outs = (lib.empty(3), lib.empty(3))
        returned = lib.aminmax(lib.tensor(x), dim=1, out=outs)
        assert returned[0] is outs[0] and returned[1] is outs[1]
        got.append([o.numpy().copy() for o in outs])
    np.testing.assert_array_equal(got[0], got[1])
