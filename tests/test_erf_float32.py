"""float32 erf as ``tanh(x * P(x*x))`` (``_backend/special.py``) and the exact-GELU kernels
built on it: pinned to ``math.erf`` in ulps, to torch, and across block boundaries."""
import importlib.util
import math
import pathlib

import numpy as np
import pytest
import torch

import ember
from ember._backend import special
from ember.nn.functional import activation

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "fit_erf_float32.py"


def _ulps(got, x):
    """|got - erf(x)| in float32 ulps of erf(x), for the elements where erf(x) != 0."""
    want = np.array([math.erf(float(v)) for v in x])
    ok = want != 0
    ulp = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64)[ok] - want[ok]) / ulp


def test_within_4_ulp_of_erf_on_the_whole_line():
    x = np.concatenate([np.linspace(-7, 7, 400_001), 10.0 ** np.linspace(-38, 1, 40_001),
                        -(10.0 ** np.linspace(-38, 1, 4_001))]).astype(np.float32)
    assert _ulps(special.erf_float32(x), x).max() <= 4.0


def test_special_values_and_saturation():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 10.0, 1e3, 1e19, 3e38,
                  -1e19, -3e38], np.float32)
    got = special.erf_float32(x)
    want = torch.erf(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got, want)  # nan where nan, +-1 exactly where saturated
    assert np.signbit(got[1]) and not np.signbit(got[0])
    # erf rounds to 1 from 3.92 on; NumPy's float32 tanh reaches 1 an ulp later
    edge = np.array([3.92, 4.0, 4.5], np.float32)
    assert (1 - special.erf_float32(edge) <= np.spacing(np.float32(0.9))).all()


def test_polynomial_grows_beyond_the_fitted_range():
    """tanh saturates to erf's +-1 only if x * P(x*x) keeps growing past x = 4."""
    t = np.concatenate([np.linspace(16, 1e4, 10_000)[:-1], 10.0 ** np.linspace(4, 50, 1000)])
    values = np.polyval(special._ERF_TANH_P, t)
    assert (values > 0).all() and (np.diff(values) > 0).all()
    x = (10.0 ** np.linspace(0.7, 38.5, 20_000)).astype(np.float32)
    assert (special.erf_float32(x) == 1).all() and (special.erf_float32(-x) == -1).all()


def test_matches_torch_erf_op_and_its_gradient():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((300, 70)) * 2).astype(np.float32)
    e = ember.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ye, yt = ember.erf(e), torch.erf(t)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=5e-7, atol=1e-7)
    g = rng.standard_normal(x.shape).astype(np.float32)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_erf_computes_in_float32_like_torch(dtype):
    x = np.linspace(-4, 4, 2001, dtype=np.float32)
    ye = ember.erf(ember.tensor(x).to(getattr(ember, dtype))).float().numpy()
    yt = torch.erf(torch.tensor(x).to(getattr(torch, dtype))).float().numpy()
    assert np.abs(ye - yt).max() <= {"float16": 1e-3, "bfloat16": 8e-3}[dtype]


def test_the_fit_script_reproduces_the_coefficients():
    spec = importlib.util.spec_from_file_location("fit_erf_float32", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coeffs, largest = module.fit()
    np.testing.assert_allclose(coeffs, special._ERF_TANH_P, rtol=1e-6)
    assert largest < 1e-7


def _gelu_float64(x):
    x = x.astype(np.float64)
    return x * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))


def _gelu_grad_float64(x, g):
    x = x.astype(np.float64)
    cdf = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    return g * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _gelu_inputs(size, seed=0):
    """``size`` float32 values: normal ones, wide ones and the special values."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(size // 2) * 3, rng.uniform(-12, 12, size // 2)])
    x[:10] = [0.0, -0.0, 5.7, -5.7, 9.0, -9.0, 40.0, -40.0, 1e-30, -1e-30]
    return x[:size].astype(np.float32)


def test_gelu_kernels_match_the_float64_formula():
    x = _gelu_inputs(20_000)
    g = np.random.default_rng(1).standard_normal(x.size).astype(np.float32)
    np.testing.assert_allclose(activation._gelu_float32(x), _gelu_float64(x),
                               rtol=1e-6, atol=3e-7)
    np.testing.assert_allclose(activation._gelu_grad_float32(x, g), _gelu_grad_float64(x, g),
                               rtol=1e-6, atol=5e-7)


def test_gelu_special_values_match_torch():
    """At +inf torch's float32 kernel gives inf on one element and nan vectorised (its float64
    one inf); ember gives inf, the limit."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30], np.float32)
    ye = ember.tensor(x, requires_grad=True)
    yt = torch.tensor(x, requires_grad=True)
    oe, ot = ember.nn.functional.gelu(ye), torch.nn.functional.gelu(yt)
    oe.backward(ember.ones(7))
    ot.backward(torch.ones(7))
    same = [0, 1, 3, 4, 5, 6]
    got, want = oe.detach().numpy(), ot.detach().numpy()
    np.testing.assert_array_equal(got[same], want[same])
    numbers = [0, 1, 5, 6]
    assert list(np.signbit(got[numbers])) == list(np.signbit(want[numbers]))
    assert got[2] == np.inf == torch.nn.functional.gelu(torch.tensor([np.inf])).item()
    np.testing.assert_array_equal(ye.grad.numpy(), yt.grad.numpy())


def test_gelu_across_block_boundaries_matches_torch(monkeypatch):
    """Several blocks, the last one short: every block computes what one whole pass does."""
    monkeypatch.setattr(special, "FLOAT32_BLOCK", 1000)
    x = _gelu_inputs(3018, seed=2).reshape(503, 6)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(np.float32)
    ye, yt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oe, ot = ember.nn.functional.gelu(ye), torch.nn.functional.gelu(yt)
    oe.backward(ember.tensor(g))
    ot.backward(torch.tensor(g))
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy(), rtol=2e-6, atol=2e-6)
    whole = activation._gelu_float32(x.ravel())
    monkeypatch.setattr(special, "FLOAT32_BLOCK", 1 << 20)
    np.testing.assert_array_equal(whole, activation._gelu_float32(x.ravel()))
