"""Fused attention's softmax through its kernel choices (ember's row loops where oneDNN is in
use, NumPy's passes otherwise) against torch and against NumPy's passes."""
import numpy as np
import torch

import ember
from ember.nn.functional import fused_attention


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
