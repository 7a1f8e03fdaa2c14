"""MultiheadAttention and the Transformer layers against torch: same weights (through
state_dict), then outputs, attention weights, input and parameter gradients, in train mode
(dropout 0) and eval mode."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

try:
    from ._oracle_layers import assert_close, to_ember
except ImportError:
    from _oracle_layers import assert_close, to_ember

ATOL = 1e-10


def _pair(torch_cls, ember_cls, *args, **kwargs):
    """Both modules in float64, ember's loaded from torch's state_dict (same keys)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch_cls(*args, **kwargs).double()
        em = ember_cls(*args, **kwargs).double()
    return _load(tm, em)


def _load(tm, em):
    """Copy torch's weights into the ember module (keys identical); both in float64."""
    tm, em = tm.double(), em.double()
    state = tm.state_dict()
    assert list(em.state_dict().keys()) == list(state.keys())
    em.load_state_dict({k: to_ember(v) for k, v in state.items()})
    return tm, em


def _as(lib, value, device="cpu"):
    if isinstance(value, np.ndarray):
        return torch.tensor(value) if lib is torch else ember.tensor(value, device=device)
    return value


def _compare(tm, em, inputs, kwargs=None, modes=("train", "eval"), seed=1, device="cpu"):
    """Run both modules on the same (numpy) inputs and keyword arguments (numpy arrays become
    masks); compare every output, input gradient and parameter gradient. ember's module,
    inputs and masks go to ``device``."""
    kwargs = kwargs or {}
    rng = np.random.default_rng(seed)
    em.to(device)
    for mode in modes:
        tm.train(mode == "train")
        em.train(mode == "train")
        tm.zero_grad()
        em.zero_grad()
        xt = [torch.tensor(a, requires_grad=True) for a in inputs]
        xe = [ember.tensor(a, requires_grad=True, device=device) for a in inputs]
        yt = tm(*xt, **{k: _as(torch, v) for k, v in kwargs.items()})
        ye = em(*xe, **{k: _as(ember, v, device) for k, v in kwargs.items()})
        yt = yt if isinstance(yt, tuple) else (yt,)
        ye = ye if isinstance(ye, tuple) else (ye,)
        loss_t, loss_e = 0, 0
        for i, (a, b) in enumerate(zip(ye, yt)):
            if b is None:
                assert a is None
                continue
            assert tuple(a.shape) == tuple(b.shape), f"output {i} shape"
            assert a.device.type == device, f"output {i} device"
            assert_close(a, b, ATOL, what=f"{mode} output {i}")
            g = rng.standard_normal(tuple(b.shape))
            loss_t = loss_t + (b * torch.tensor(g)).sum()
            loss_e = loss_e + (a * ember.tensor(g, device=device)).sum()
        loss_t.backward()
        loss_e.backward()
        for i, (a, b) in enumerate(zip(xe, xt)):
            assert_close(a.grad, b.grad, ATOL, what=f"{mode} grad of input {i}")
        for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
            assert_close(pe.grad, pt.grad, ATOL, what=f"{mode} grad of {name}")


# -- MultiheadAttention ------------------------------------------------------------------------

MHA_CONFIGS = [
    {},
    {"batch_first": True},
    {"bias": False},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"add_bias_kv": True, "add_zero_attn": True},
    {"kdim": 3, "vdim": 5},
    {"kdim": 3, "vdim": 5, "batch_first": True, "bias": False},
]


def _qkv(rng, config, batch=3, tgt=4, src=5, embed=8, unbatched=False):
    kdim, vdim = config.get("kdim", embed), config.get("vdim", embed)

    def shape(length, dim):
        if unbatched:
            return (length, dim)
        return (batch, length, dim) if config.get("batch_first") else (length, batch, dim)
    return [rng.standard_normal(shape(tgt, embed)), rng.standard_normal(shape(src, kdim)),
            rng.standard_normal(shape(src, vdim))]


@pytest.mark.parametrize("config", MHA_CONFIGS, ids=str)
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_torch(config, need_weights, device):
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 2, **config)
    inputs = _qkv(np.random.default_rng(0), config)
    _compare(tm, em, inputs, {"need_weights": need_weights}, device=device)


def _padding_mask(rng, batch, src):
    mask = rng.random((batch, src)) < 0.4
    mask[:, 0] = False  # every row keeps a key
    return mask


def _attn_mask(rng, shape):
    mask = rng.random(shape) < 0.4
    mask[..., 0] = False
    return mask


def _float(mask):
    return np.where(mask, -np.inf, 0.0) + np.random.default_rng(5).standard_normal(mask.shape) * 0.1


MASK_CASES = {
    "kpm_bool": lambda rng: {"key_padding_mask": _padding_mask(rng, 3, 5)},
    "kpm_float": lambda rng: {"key_padding_mask": _float(_padding_mask(rng, 3, 5))},
    "attn2d_bool": lambda rng: {"attn_mask": _attn_mask(rng, (4, 5))},
    "attn2d_float": lambda rng: {"attn_mask": _float(_attn_mask(rng, (4, 5)))},
    "attn3d_bool": lambda rng: {"attn_mask": _attn_mask(rng, (6, 4, 5))},
    "attn3d_float": lambda rng: {"attn_mask": _float(_attn_mask(rng, (6, 4, 5)))},
    "both_bool": lambda rng: {"attn_mask": _attn_mask(rng, (4, 5)),
                              "key_padding_mask": _padding_mask(rng, 3, 5)},
    "both_float": lambda rng: {"attn_mask": _float(_attn_mask(rng, (6, 4, 5))),
                               "key_padding_mask": _float(_padding_mask(rng, 3, 5))},
}


@pytest.mark.parametrize("case", sorted(MASK_CASES))
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("config", [{}, {"add_bias_kv": True, "add_zero_attn": True}], ids=str)
def test_multihead_attention_masks_match_torch(case, need_weights, config):
    rng = np.random.default_rng(3)
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 2, **config)
    kwargs = dict(MASK_CASES[case](rng), need_weights=need_weights)
    _compare(tm, em, _qkv(rng, config), kwargs)


def test_multihead_attention_per_head_weights_unbatched_and_causal():
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 4)
    rng = np.random.default_rng(4)
    _compare(tm, em, _qkv(rng, {}), {"average_attn_weights": False})
    _compare(tm, em, _qkv(rng, {}, unbatched=True), {"average_attn_weights": False})
    _compare(tm, em, _qkv(rng, {}, unbatched=True),
             {"key_padding_mask": np.array([False, True, False, False, True]),
              "attn_mask": _attn_mask(rng, (4, 4, 5))})
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    x = rng.standard_normal((4, 3, 8))
    for need_weights in (True, False):
        _compare(tm, em, [x, x, x], {"attn_mask": causal, "is_causal": True,
                                     "need_weights": need_weights})


def test_multihead_attention_self_attention_eval_no_grad_matches_fast_path():
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 2, batch_first=True)
    tm.eval()
    em.eval()
    x = np.random.default_rng(6).standard_normal((3, 4, 8))
    with torch.no_grad():
        xt = torch.tensor(x)
        yt, wt = tm(xt, xt, xt)
    xe = ember.tensor(x)
    ye, we = em(xe, xe, xe)
    assert_close(ye, yt, 1e-9, what="output")
    assert_close(we, wt, 1e-9, what="weights")


def test_multihead_attention_dropout_only_in_training():
    em = nn.MultiheadAttention(8, 2, dropout=0.5).double()
    x = ember.randn(4, 3, 8, dtype=ember.float64)
    em.eval()
    a, b = em(x, x, x)[1], em(x, x, x)[1]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_allclose(a.detach().numpy().sum(-1), 1.0)
    em.train()
    w = em(x, x, x)[1].detach().numpy()
    assert not np.allclose(w.sum(-1), 1.0)  # dropped and rescaled weights


def test_multihead_attention_errors_and_functional_form():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    em = nn.MultiheadAttention(8, 2)
    x = ember.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*, but should be"):
        em(x, x, x, attn_mask=ember.zeros(3, 3, dtype=ember.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        em(x, x, x, attn_mask=ember.zeros(4, 4, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        em(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        em(ember.randn(8), ember.randn(8), ember.randn(8))
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 2)
    rng = np.random.default_rng(7)
    q, k, v = _qkv(rng, {})
    args_t = [tm.in_proj_weight, tm.in_proj_bias, None, None, False, 0.0, tm.out_proj.weight,
              tm.out_proj.bias]
    args_e = [em.in_proj_weight, em.in_proj_bias, None, None, False, 0.0, em.out_proj.weight,
              em.out_proj.bias]
    yt, wt = TF.multi_head_attention_forward(*map(torch.tensor, (q, k, v)), 8, 2, *args_t)
    ye, we = F.multi_head_attention_forward(*map(ember.tensor, (q, k, v)), 8, 2, *args_e)
    assert_close(ye, yt, ATOL)
    assert_close(we, wt, ATOL)


# -- Transformer layers ----------------------------------------------------------------------

LAYER_CONFIGS = [
    {},
    {"batch_first": True},
    {"norm_first": True},
    {"activation": "gelu", "layer_norm_eps": 1e-3},
    {"bias": False, "norm_first": True, "batch_first": True},
]


def _layer_kwargs(config, library):
    kwargs = dict(config, dim_feedforward=16, dropout=0.0)
    if config.get("activation") == "callable":
        kwargs["activation"] = (lambda x: x.tanh() * 2)
    return kwargs


def _seq(rng, length, config, batch=3, d_model=8):
    shape = (batch, length, d_model) if config.get("batch_first") else (length, batch, d_model)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("config", LAYER_CONFIGS + [{"activation": "callable"}], ids=str)
def test_transformer_encoder_layer_matches_torch(config):
    tm, em = _pair(tnn.TransformerEncoderLayer, nn.TransformerEncoderLayer, 8, 2,
                   **_layer_kwargs(config, None))
    rng = np.random.default_rng(0)
    src = _seq(rng, 5, config)
    _compare(tm, em, [src])
    _compare(tm, em, [src], {"src_key_padding_mask": _padding_mask(rng, 3, 5),
                             "src_mask": _float(_attn_mask(rng, (5, 5)))})
    _compare(tm, em, [src[0] if config.get("batch_first") else src[:, 0]])  # unbatched


@pytest.mark.parametrize("config", LAYER_CONFIGS, ids=str)
def test_transformer_decoder_layer_matches_torch(config):
    tm, em = _pair(tnn.TransformerDecoderLayer, nn.TransformerDecoderLayer, 8, 2,
                   **_layer_kwargs(config, None))
    rng = np.random.default_rng(1)
    tgt, memory = _seq(rng, 4, config), _seq(rng, 5, config)
    _compare(tm, em, [tgt, memory])
    _compare(tm, em, [tgt, memory], {
        "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1), "tgt_is_causal": True,
        "tgt_key_padding_mask": _padding_mask(rng, 3, 4),
        "memory_key_padding_mask": _padding_mask(rng, 3, 5),
        "memory_mask": _attn_mask(rng, (4, 5))})


def test_transformer_encoder_and_decoder_stacks_match_torch():
    config = {"batch_first": True}
    rng = np.random.default_rng(2)
    torch.manual_seed(0)
    layer_t = tnn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    layer_e = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    tm, em = _load(tnn.TransformerEncoder(layer_t, 2, tnn.LayerNorm(8)),
                   nn.TransformerEncoder(layer_e, 2, nn.LayerNorm(8)))
    assert em.layers[0] is not layer_e and em.layers[0].linear1 is not em.layers[1].linear1
    src = _seq(rng, 5, config)
    _compare(tm, em, [src])
    _compare(tm, em, [src], {"mask": np.triu(np.full((5, 5), -np.inf), 1),
                             "src_key_padding_mask": _float(_padding_mask(rng, 3, 5))})
    _compare(tm, em, [src], {"is_causal": True, "mask": np.triu(np.full((5, 5), -np.inf), 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dec_t = tnn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=True)
    dec_e = nn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=True)
    tm, em = _load(tnn.TransformerDecoder(dec_t, 2), nn.TransformerDecoder(dec_e, 2))
    assert em.norm is None
    tgt, memory = _seq(rng, 4, {}), _seq(rng, 5, {})
    _compare(tm, em, [tgt, memory], {"tgt_mask": np.triu(np.full((4, 4), -np.inf), 1)})


def test_encoder_warns_like_torch_when_nested_tensors_cannot_be_used():
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=False)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but "
                                         "self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        encoder = nn.TransformerEncoder(layer, 1)
    assert encoder.use_nested_tensor is False


@pytest.mark.parametrize("config", [{}, {"batch_first": True, "norm_first": True}], ids=str)
def test_transformer_matches_torch(config, device):
    tm, em = _pair(tnn.Transformer, nn.Transformer, d_model=8, nhead=2, num_encoder_layers=2,
                   num_decoder_layers=1, dim_feedforward=16, dropout=0.0, **config)
    rng = np.random.default_rng(3)
    src, tgt = _seq(rng, 5, config), _seq(rng, 4, config)
    _compare(tm, em, [src, tgt], device=device)
    _compare(tm, em, [src, tgt], device=device, kwargs={
        "tgt_mask": nn.Transformer.generate_square_subsequent_mask(4).double().numpy(),
        "src_key_padding_mask": _padding_mask(rng, 3, 5),
        "memory_key_padding_mask": _padding_mask(rng, 3, 5)})


def test_generate_square_subsequent_mask_and_transformer_errors():
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    expected = tnn.Transformer.generate_square_subsequent_mask(4)
    assert mask.dtype == ember.float32
    np.testing.assert_array_equal(mask.numpy(), expected.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=ember.float64).dtype == \
        ember.float64
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(ember.randn(5, 2, 8), ember.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        model(ember.randn(5, 2, 8), ember.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_transformer_dropout_trains_and_a_small_model_learns():
    ember.manual_seed(0)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1,
                                                             batch_first=True), 1,
                                  enable_nested_tensor=False)
    head = nn.Linear(8, 1)
    opt = ember.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.01)
    x = ember.randn(16, 5, 8)
    y = x.sum(dim=(1, 2)).reshape(16, 1) * 0.1
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = F.mse_loss(head(model(x).mean(1)), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2


@pytest.mark.parametrize("masks", ["kpm", "attn2d", "attn3d", "both"])
def test_merge_masks_matches_torch(masks):
    tm, em = _pair(tnn.MultiheadAttention, nn.MultiheadAttention, 8, 2, batch_first=True)
    rng = np.random.default_rng(8)
    query = rng.standard_normal((3, 4, 8))
    kpm = _float(_padding_mask(rng, 3, 4)) if masks in ("kpm", "both") else None
    attn = {"attn2d": (4, 4), "attn3d": (6, 4, 4), "both": (4, 4)}.get(masks)
    attn = _float(_attn_mask(rng, attn)) if attn else None
    mt, kt = tm.merge_masks(*(None if a is None else torch.tensor(a) for a in (attn, kpm)),
                            torch.tensor(query))
    me, ke = em.merge_masks(*(None if a is None else ember.tensor(a) for a in (attn, kpm)),
                            ember.tensor(query))
    assert ke == kt
    np.testing.assert_array_equal(me.numpy(), mt.numpy())
