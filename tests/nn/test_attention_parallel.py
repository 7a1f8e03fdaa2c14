"""Fused attention split over ember's threads by parts of its batch (forward and backward,
``fused_attention._split_batch``) against the same computation on one thread (the same bits:
each sample is computed the same way) and against torch: scaled_dot_product_attention with
causal, boolean-batched and no masks, and MultiheadAttention's packed self-attention."""
import numpy as np
import pytest
import torch

import ember
from ember._backend import cblas, parallel
from ember.nn.functional import fused_attention

pytestmark = pytest.mark.skipif(cblas.num_threads() is None,
                                reason="OpenBLAS's thread count cannot be set")


def sdpa_run(lib, arrays, mask, causal):
    q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
    m = None if mask is None else lib.tensor(mask)
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)
    out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(out.shape).astype(
        arrays[0].dtype)))
    return [out.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask_kind", ["causal", "batched_bool", "none"])
def test_split_attention_matches_serial_and_torch(mask_kind, dtype, split_everything,
                                                  ember_threads):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((5, 3, 7, 4)).astype(dtype) for _ in range(3)]
    mask = (rng.random((5, 3, 7, 7)) > 0.3) | np.eye(7, dtype=bool) \
        if mask_kind == "batched_bool" else None
    causal = mask_kind == "causal"
    split = sdpa_run(ember, arrays, mask, causal)
    assert split_everything.count(5) >= 2, "forward and backward should split the batch"
    ember_threads(1)
    for got, want in zip(split, sdpa_run(ember, arrays, mask, causal)):
        np.testing.assert_array_equal(got, want)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(split, sdpa_run(torch, arrays, mask, causal)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_split_packed_self_attention_matches_serial_and_torch(split_everything, ember_threads):
    torch.manual_seed(0)
    layer_t = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    layer_e = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    layer_e.load_state_dict({k: ember.tensor(v.detach().numpy())
                             for k, v in layer_t.state_dict().items()})
    x = np.random.default_rng(6).standard_normal((6, 5, 8)).astype(np.float32)
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)

    def run(lib, layer):
        t = lib.tensor(x, requires_grad=True)
        out = layer(t, t, t, attn_mask=lib.tensor(mask), need_weights=False)[0]
        out.square().sum().backward()
        return out.detach().numpy(), t.grad.numpy()
    split = run(ember, layer_e)
    assert 6 in split_everything
    ember_threads(1)
    layer_e.zero_grad()
    for got, want in zip(split, run(ember, layer_e)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(split, run(torch, layer_t)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_small_batches_stay_serial(monkeypatch, ember_threads):
    ember_threads(2)
    q = np.zeros((1, 2, 4, 3), np.float32)
    assert not fused_attention._split_batch(q, q)  # one sample
    q = np.zeros((4, 2, 4, 3), np.float32)
    assert not fused_attention._split_batch(q, q)  # below ELEMENTWISE_MIN_BYTES
    monkeypatch.setattr(parallel, "ELEMENTWISE_MIN_BYTES", 0)
    assert fused_attention._split_batch(q, q)
    ember_threads(1)
    assert not fused_attention._split_batch(q, q)


def test_packed_self_attention_softmax_backward_on_the_row_loop_matches_torch(monkeypatch):
    """The weights' softmax backward goes through its kernel choice (ember's row loop where
    oneDNN is in use, NumPy's passes otherwise); the gradients match torch's."""
    taken = []
    real = fused_attention._softmax_backward
    monkeypatch.setattr(fused_attention, "_softmax_backward",
                        lambda grad, weights: taken.append(grad.shape) or real(grad, weights))
    x = np.random.default_rng(3).standard_normal((4, 24, 32)).astype(np.float32)
    grads, state = [], {}
    for lib in (torch, ember):   # torch first: ember loads its weights
        lib.manual_seed(0)
        mha = lib.nn.MultiheadAttention(32, 4, batch_first=True)
        if lib is ember:
            mha.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in state.items()})
        else:
            state = mha.state_dict()
        xt = lib.tensor(x, requires_grad=True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(24)
        mha(xt, xt, xt, attn_mask=mask, is_causal=True, need_weights=False)[0].pow(2).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)
    assert taken == [(4, 4, 24, 24)]


def test_attention_weights_on_the_row_loop_match_numpys_passes_with_masked_rows():
    """The weights' softmax through its kernel choice (ember's row loop where oneDNN is in use)
    gives NumPy's path's weights: zeros for a row whose every key is masked, NaN for a row
    holding NaN."""
    rng = np.random.default_rng(4)
    query = rng.standard_normal((2, 3, 20, 8)).astype(np.float32) * 2
    key = rng.standard_normal((2, 3, 24, 8)).astype(np.float32)
    query[0, 1, 2, 5] = np.nan
    bias = np.zeros((20, 24), np.float32)
    bias[1, :] = -np.inf
    bias[4, :10] = -np.inf
    scores = query @ key.swapaxes(-1, -2) + bias
    got = fused_attention._safe_softmax(scores.copy(), query, key, bias)
    want = fused_attention._numpy_safe_softmax(scores.copy(), query, key, bias)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert not got[:, :, 1].any() and np.isnan(got[0, 1, 2]).all() and not np.isnan(got[0, 1, 3]).any()
