"""Fast paths of the transformer step pinned to the general paths and to torch: packed
self-attention in MultiheadAttention (heads read from and written to the packed layout),
the softmax of fused attention without the max shift (and its fallback), the
in-place softmax backward over rows, and embedding's backward summing runs position by
position."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.nn.functional import attention as FA
from ember.nn.functional import fused_attention
from ember.nn.functional.softmax_family import softmax_backward_array, softmax_backward_rows_
from ember.nn.functional.embedding import MAX_RUN_BY_POSITION, _sum_rows_by_index
from ember.nn.functional.misc import _composite_attention

TOL = {"float32": {"rtol": 2e-5, "atol": 2e-6}, "float64": {"rtol": 1e-11, "atol": 1e-13}}


def _assert_close(a, b, dtype):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, **TOL[dtype])


def _attention_modules(dtype, batch_first, embed=12, heads=3):
    """An ember MultiheadAttention and a torch one with the same (random) weights."""
    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(embed, heads, batch_first=batch_first,
                                            dtype=getattr(torch, dtype))
    with torch.no_grad():
        reference.in_proj_bias.normal_()
        reference.out_proj.bias.normal_()
    module = ember.nn.MultiheadAttention(embed, heads, batch_first=batch_first,
                                         dtype=getattr(ember, dtype))
    module.load_state_dict({k: ember.tensor(v.detach().numpy())
                            for k, v in reference.state_dict().items()})
    return module, reference


def _mask_for(kind, length, rng):
    if kind == "float":
        return rng.standard_normal((length, length))
    if kind == "bool":
        m = rng.random((length, length)) > 0.5
        np.fill_diagonal(m, False)
        return m
    return np.triu(np.full((length, length), -np.inf), 1)  # causal (also for is_causal)


def _general_path(module, x, mask, is_causal):
    """The module's computation through ``multi_head_attention_forward`` (the general path)."""
    if module.batch_first:
        x = x.transpose(0, 1)
    out, _ = FA.multi_head_attention_forward(
        x, x, x, module.embed_dim, module.num_heads, module.in_proj_weight, module.in_proj_bias,
        None, None, False, 0.0, module.out_proj.weight, module.out_proj.bias,
        need_weights=False, attn_mask=mask, is_causal=is_causal)
    return out.transpose(0, 1) if module.batch_first else out


def _graph_names(out):
    """The names of every node in ``out``'s graph."""
    names, stack, seen = set(), [out.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(fn.name())
        stack.extend(f for f, _ in fn.next_functions)
    return names


MASKS = [(None, False), ("causal", True), ("causal", False), ("float", False), ("bool", False)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("mask_kind,is_causal", MASKS)
def test_packed_self_attention_matches_general_path_and_torch(mask_kind, is_causal, batch_first,
                                                              dtype):
    rng = np.random.default_rng(0)
    module, reference = _attention_modules(dtype, batch_first)
    shape = (2, 5, 12) if batch_first else (5, 2, 12)
    x_np = rng.standard_normal(shape)
    mask_np = None if mask_kind is None else _mask_for(mask_kind, 5, rng)
    x = ember.tensor(x_np, dtype=getattr(ember, dtype), requires_grad=True)
    mask = None if mask_np is None else ember.tensor(
        mask_np, dtype=ember.bool if mask_np.dtype == bool else getattr(ember, dtype))
    out, weights = module(x, x, x, attn_mask=mask, is_causal=is_causal, need_weights=False)
    assert weights is None
    assert "PackedSelfAttentionBackward0" in _graph_names(out)
    grad_out = rng.standard_normal(out.shape)
    params = [x, module.in_proj_weight, module.in_proj_bias, module.out_proj.weight,
              module.out_proj.bias]
    fast = ember.autograd.grad(out, params, ember.tensor(grad_out, dtype=out.dtype))
    general = _general_path(module, x, mask, is_causal)
    _assert_close(out, general, dtype)
    for a, b in zip(fast, ember.autograd.grad(general, params,
                                              ember.tensor(grad_out, dtype=out.dtype))):
        _assert_close(a, b, dtype)

    xt = torch.tensor(x_np, dtype=getattr(torch, dtype), requires_grad=True)
    mt = None if mask_np is None else torch.tensor(mask_np, dtype=torch.bool
                                                   if mask_np.dtype == bool else xt.dtype)
    expected, _ = reference(xt, xt, xt, attn_mask=mt, is_causal=is_causal, need_weights=False)
    _assert_close(out, expected.detach().numpy(), dtype)
    tparams = [xt, reference.in_proj_weight, reference.in_proj_bias, reference.out_proj.weight,
               reference.out_proj.bias]
    for a, b in zip(fast, torch.autograd.grad(expected, tparams,
                                              torch.tensor(grad_out, dtype=xt.dtype))):
        _assert_close(a, b.numpy(), dtype)


@pytest.mark.parametrize("is_causal", [True, False])
def test_packed_self_attention_is_twice_differentiable(is_causal):
    module, _ = _attention_modules("float64", True, embed=4, heads=2)
    x = ember.tensor(np.random.default_rng(1).standard_normal((2, 3, 4)), requires_grad=True)
    mask = ember.tensor(_mask_for("causal", 3, None)) if is_causal else None

    def fn(a):
        return module(a, a, a, attn_mask=mask, is_causal=is_causal, need_weights=False)[0]
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


def test_packed_self_attention_leaves_other_calls_to_the_general_path():
    module, _ = _attention_modules("float32", True)
    x = ember.randn(2, 5, 12, requires_grad=True)
    y = ember.randn(2, 5, 12)
    for out in (module(x, y, y, need_weights=False)[0], module(x, x, x)[0],
                module(x, x, x, need_weights=False, key_padding_mask=ember.zeros(2, 5).bool())[0]):
        assert "PackedSelfAttentionBackward0" not in _graph_names(out)


# case -> how many times the scores are computed: 1 without a fallback or when only the
# failed rows are redone (few of them), 2 when every row is redone
SOFTMAX_CASES = {"causal": 1, "no mask": 1, "one row overflows": 1, "many rows overflow": 2,
                 "underflow": 2, "masked row": 1}


@pytest.mark.parametrize("row_loop", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SOFTMAX_CASES)
def test_unshifted_softmax_and_its_fallbacks_match_composite_and_torch(case, dtype, row_loop, monkeypatch):
    """The attention softmax without the max shift, and the max-shifted fallback for the
    rows where exp overflows (scores far beyond exp's range), where every entry underflows
    (a bias of -2000) or where every key is masked: for those rows alone when few fail,
    else for all rows. With ``row_loop`` (float32 only), the rows of 6 take the compiled row
    loop instead, as a small array does, which redoes no rows."""
    from ember._backend import choice, vector_math
    if row_loop and not (dtype == "float32" and vector_math.available() and choice.enabled(choice.ONEDNN)):
        pytest.skip("the row loop takes float32 arrays, where it can be built and is in use")
    if not row_loop:   # (rows of 6: the NumPy path, as for a larger array)
        monkeypatch.setattr(vector_math, "SOFTMAX_NARROW_MAX_ELEMENTS", 0)
    calls = {"scores": 0, "shifted": 0}

    def counting(name, fn):
        def wrapper(*args):
            calls[name] += 1
            return fn(*args)
        return wrapper
    monkeypatch.setattr(fused_attention, "_biased_scores",
                        counting("scores", fused_attention._biased_scores))
    monkeypatch.setattr(fused_attention, "_softmax_shifted_by_peak_",
                        counting("shifted", fused_attention._softmax_shifted_by_peak_))
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 3, 6, 5)) for _ in range(3)]
    causal = case == "causal"
    mask_np = None
    if case == "one row overflows":
        arrays[0][0, 0, 3] *= 3000
    elif case == "many rows overflow":
        arrays[1][0, 0, 1] *= 3000
    elif case == "underflow":
        mask_np = np.full((6, 6), -2000.0)
    elif case == "masked row":
        mask_np = rng.random((2, 3, 6, 6)) > 0.3
        mask_np[0, 0, 2] = False
    q, k, v = (ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True) for a in arrays)
    mask = None if mask_np is None else ember.tensor(
        mask_np, dtype=ember.bool if mask_np.dtype == bool else getattr(ember, dtype))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    if row_loop:
        assert calls == {"scores": 1, "shifted": 0}   # (the scores once, no row redone)
    else:
        assert calls == {"scores": SOFTMAX_CASES[case],
                         "shifted": int(case not in ("causal", "no mask"))}
    composite = _composite_attention(q, k, v, mask, 0.0, causal, 5 ** -0.5)
    _assert_close(out, composite, dtype)
    grad_out = ember.tensor(rng.standard_normal(out.shape), dtype=out.dtype)
    for a, b in zip(ember.autograd.grad(out, (q, k, v), grad_out),
                    ember.autograd.grad(composite, (q, k, v), grad_out)):
        _assert_close(a, b, dtype)
    tq, tk, tv = (torch.tensor(a, dtype=getattr(torch, dtype)) for a in arrays)
    tmask = None if mask_np is None else torch.tensor(
        mask_np, dtype=torch.bool if mask_np.dtype == bool else tq.dtype)
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask,
                                                                is_causal=causal)
    _assert_close(out, expected.numpy(), dtype)


def test_packed_attention_redoes_overflowing_rows_like_torch():
    """The row fallback through the packed node's strided views of q and k."""
    module, reference = _attention_modules("float32", True)
    with torch.no_grad():
        reference.in_proj_weight[:12] *= 40  # large queries: some rows' exp overflows
    module.load_state_dict({k: ember.tensor(v.detach().numpy())
                            for k, v in reference.state_dict().items()})
    x_np = np.random.default_rng(7).standard_normal((2, 5, 12)).astype(np.float32)
    x, xt = ember.tensor(x_np), torch.tensor(x_np)
    out = module(x, x, x, need_weights=False)[0]
    expected = reference(xt, xt, xt, need_weights=False)[0]
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("query_len,key_len", [(3, 0), (0, 3)])
def test_fused_attention_with_no_queries_or_no_keys_matches_torch(query_len, key_len):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ((1, 2, query_len, 2), (1, 2, key_len, 2), (1, 2, key_len, 4))]
    q, k, v = (ember.tensor(a, requires_grad=True) for a in arrays)
    out = F.scaled_dot_product_attention(q, k, v)
    expected = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, arrays))
    _assert_close(out, expected.numpy(), "float32")
    grads = ember.autograd.grad(out.sum(), (q, k, v), allow_unused=True)
    assert [tuple(g.shape) for g in grads] == [a.shape for a in arrays]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_backward_rows_in_place_matches_array_backward(dtype):
    rng = np.random.default_rng(3)
    out = rng.random((3, 4, 7)).astype(dtype)
    out /= out.sum(-1, keepdims=True)
    grad = rng.standard_normal((3, 4, 7)).astype(dtype)
    expected = softmax_backward_array(grad, out, -1)
    got = softmax_backward_rows_(grad.copy(), out)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows,num_weights", [(1024, 1000), (300, 20), (50, 1), (7, 7)])
def test_embedding_backward_by_position_is_add_at(rows, num_weights, dtype):
    """Runs up to ``MAX_RUN_BY_POSITION`` long are summed position by position, in add.at's
    order (bit-identical); longer runs go through reduceat."""
    rng = np.random.default_rng(4)
    flat = rng.integers(0, num_weights, rows)
    values = rng.standard_normal((rows, 5)).astype(dtype)
    expected = np.zeros((num_weights, 5), dtype)
    np.add.at(expected, flat, values)
    got = _sum_rows_by_index(np, values, flat, num_weights)
    assert got.dtype == dtype
    if np.bincount(flat).max() <= MAX_RUN_BY_POSITION:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("library", ["numpy", "onednn"])
def test_large_embedding_backward_on_each_kernel_is_add_at(library):
    """An embedding's gradient of 1024 looked-up rows of 128 (a language model's): NumPy's
    sorted runs and the OpenMP loop both add in ``add.at``'s order, bit for bit."""
    from ember._backend import choice
    if library == "onednn" and not choice.enabled(choice.ONEDNN):
        pytest.skip("oneDNN is not in use (not installed, or EMBER_ONEDNN=0)")
    rng = np.random.default_rng(6)
    flat = rng.integers(0, 1000, 1024)
    flat[:40] = 7   # one long run, as a padding token makes
    values = rng.standard_normal((1024, 128)).astype(np.float32)
    expected = np.zeros((1000, 128), np.float32)
    np.add.at(expected, flat, values)
    with choice.only(library):
        got = _sum_rows_by_index(np, values, flat, 1000)
    if library == "onednn":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_embedding_backward_matches_torch_with_padding_and_frequency_scaling():
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 9, (4, 6))
    weight = rng.standard_normal((9, 3)).astype(np.float32)
    grad = rng.standard_normal((4, 6, 3)).astype(np.float32)
    for kwargs in ({}, {"padding_idx": 2}, {"scale_grad_by_freq": True}):
        we = ember.tensor(weight, requires_grad=True)
        wt = torch.tensor(weight, requires_grad=True)
        F.embedding(ember.tensor(idx), we, **kwargs).backward(ember.tensor(grad))
        torch.nn.functional.embedding(torch.tensor(idx), wt, **kwargs).backward(
            torch.tensor(grad))
        np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-6)
