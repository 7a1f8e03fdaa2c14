"""``addmm`` with beta = alpha = 1 runs as one GEMM that adds the bias (``ops/linalg.py``
``_bias_plus_product``, ``products.affine``): oneDNN's matmul primitive with a bias row,
``dnnl_sgemm`` or BLAS's GEMM into a copy of the bias. Pinned to the product-then-add path and
to torch, for every operand layout the GEMM takes, the bias shapes that broadcast, and the cases
that must keep the general path."""
import contextlib

import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas, choice, products

TOL = {np.float32: {"rtol": 2e-5, "atol": 2e-5}, np.float64: {"rtol": 1e-12, "atol": 1e-12}}


def _layout(a, kind):
    if kind == "C":
        return np.ascontiguousarray(a)
    if kind == "F":
        return np.asfortranarray(a)
    wide = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)  # strided: the GEMM must decline
    wide[:, ::2] = a
    return wide[:, ::2]


def _addmm_each_way(bias, m1, m2, monkeypatch, **kwargs):
    """addmm's result and gradients with the kernels in use (oneDNN's at any product size),
    with NumPy's GEMM into a copy of the bias, and (last) with NumPy's product then add."""
    from ember._backend import onednn
    results = []
    for library, min_size in ((None, None), (choice.NUMPY, 0), (choice.NUMPY, 10**12)):
        if min_size is None:
            monkeypatch.setattr(onednn.gemm, "MIN_MULTIPLY_ADDS", 0)
        else:
            monkeypatch.setattr(products, "FILLED_BIAS_MIN_SIZE", min_size)
        tensors = [ember.tensor(a, requires_grad=True) for a in (bias, m1, m2)]
        with choice.only(library) if library else _nothing():
            out = ember.addmm(*tensors, **kwargs)
        g = np.random.default_rng(5).standard_normal(tuple(out.shape)).astype(m1.dtype)
        out.backward(ember.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    return results


@contextlib.contextmanager
def _nothing():
    yield


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout1", ["C", "F", "strided"])
@pytest.mark.parametrize("layout2", ["C", "F"])
@pytest.mark.parametrize("bias_shape", [(33,), (1, 33), (29, 33), (29, 1), ()])
def test_bias_gemm_matches_product_then_add_and_torch(dtype, layout1, layout2, bias_shape,
                                                      monkeypatch):
    rng = np.random.default_rng(0)
    m1 = _layout(rng.standard_normal((29, 300)).astype(dtype), layout1)
    m2 = _layout(rng.standard_normal((300, 33)).astype(dtype), layout2)
    bias = rng.standard_normal(bias_shape).astype(dtype)
    *fused, plain = _addmm_each_way(bias, m1, m2, monkeypatch)
    want = torch.addmm(*(torch.tensor(a) for a in (bias, m1, m2))).numpy()
    for way in fused:
        for a, b in zip(way, plain):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, **TOL[dtype])
        np.testing.assert_allclose(way[0], want, **TOL[dtype])


@pytest.mark.parametrize("out_features,kernel", [(4096, "matmul"), (20000, "dnnl_sgemm")])
def test_bias_gemm_on_onednn_for_linear_layers(out_features, kernel, monkeypatch):
    """A linear layer's forward is one oneDNN call: the matmul primitive adding the bias row,
    or, for a weight over ``AFFINE_MAX_WEIGHTS``, ``dnnl_sgemm`` into a copy of the bias."""
    from ember._backend import onednn
    if not choice.enabled(choice.ONEDNN):
        pytest.skip("oneDNN is not in use")
    calls = []
    for name in ("affine", "matmul"):
        real = getattr(onednn.gemm, name)
        monkeypatch.setattr(onednn.gemm, name,
                            lambda *args, real=real, name=name: calls.append(name) or real(*args))
    monkeypatch.setattr(products.affine, "kernels", (("onednn", onednn.gemm.affine),)
                        + products.affine.kernels[1:])
    x = ember.randn(70, 64)
    layer = ember.nn.Linear(64, out_features)
    want = x.numpy() @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
    np.testing.assert_allclose(layer(x).detach().numpy(), want, rtol=1e-4, atol=1e-4)
    assert calls == (["affine"] if kernel == "matmul" else ["affine", "matmul"])


@pytest.mark.usefixtures("numpy_kernels")
def test_bias_gemm_is_used_for_large_linear_layers(monkeypatch):
    calls = []
    real = cblas.gemm
    monkeypatch.setattr(cblas, "gemm", lambda *a, **k: calls.append(a) or real(*a, **k))
    layer = ember.nn.Linear(64, 4096)
    x = ember.randn(70, 64)
    layer(x)
    assert len(calls) == 1
    ember.nn.Linear(64, 10)(x)  # a small result keeps the plain product
    assert len(calls) == 1


@pytest.mark.parametrize("kwargs", [{"beta": 0.5}, {"alpha": 2.0}, {"beta": 0}])
def test_other_coefficients_keep_the_general_path(kwargs, monkeypatch):
    monkeypatch.setattr(products, "FILLED_BIAS_MIN_SIZE", 0)
    monkeypatch.setattr(cblas, "gemm", lambda *a, **k: pytest.fail("GEMM path taken"))
    rng = np.random.default_rng(1)
    bias, m1, m2 = (rng.standard_normal(s) for s in ((4,), (3, 5), (5, 4)))
    out = ember.addmm(*(ember.tensor(a) for a in (bias, m1, m2)), **kwargs)
    want = torch.addmm(*(torch.tensor(a) for a in (bias, m1, m2)), **kwargs)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)


def test_half_precision_and_mismatched_bias_keep_the_general_path(monkeypatch):
    monkeypatch.setattr(products, "FILLED_BIAS_MIN_SIZE", 0)
    rng = np.random.default_rng(2)
    m1, m2 = rng.standard_normal((3, 5)), rng.standard_normal((5, 4))
    half = ember.addmm(*(ember.tensor(a.astype(np.float16)) for a in
                         (rng.standard_normal(4), m1, m2)))
    assert half.dtype == ember.float16
    with pytest.raises(RuntimeError, match="expand"):
        ember.addmm(ember.tensor(np.ones(3)), ember.tensor(m1), ember.tensor(m2))


def test_gemm_declines_operands_it_cannot_take():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal((6, 5)).astype(np.float32)
    c = np.zeros((4, 5), np.float32)
    assert not cblas.gemm(a, b.astype(np.float64), c)
    assert not cblas.gemm(a, b, c.T.copy().T)  # F-ordered result
    assert not cblas.gemm(a[:, ::2], b[::2], c)  # strided operand
    assert not cblas.gemm(a, b, np.zeros((4, 4), np.float32))
    assert not cblas.gemm(a.astype(np.float16), b.astype(np.float16), c.astype(np.float16))
    assert not cblas.gemm(a, b, c.tolist())
    assert np.all(c == 0)
    assert cblas.gemm(a, b, c, alpha=2.0, beta=0.0)
    np.testing.assert_allclose(c, 2 * a @ b, rtol=1e-6)
