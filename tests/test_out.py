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
