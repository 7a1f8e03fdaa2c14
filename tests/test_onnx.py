"""ember.onnx.export: every exported model passes onnx.checker, runs in ONNX Runtime and gives
ember's eager outputs (float32 tolerance), at the traced batch size and, through dynamic_axes,
at another one: the benchmark models, the nn layers one by one, and functional programs. A few
models are also exported by torch.onnx and run in ONNX Runtime side by side."""
import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.onnx  # noqa: E402
from benchmarks import models  # noqa: E402

nn, F = ember.nn, ember.nn.functional


def export_bytes(model, args, **kwargs):
    buffer = io.BytesIO()
    ember.onnx.export(model, args, buffer, **kwargs)
    data = buffer.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


def run(data, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return session.run(None, {k: v.numpy() for k, v in feeds.items()})


def flat(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [] if value is None else [value]


def check(model, inputs, other_inputs=None, dynamic=None, atol=1e-5, **kwargs):
    """Export ``model`` on ``inputs`` (a dict name -> tensor), run the file in ONNX Runtime on
    ``inputs`` and ``other_inputs`` and compare with ember's eager outputs."""
    model.eval()
    names = list(inputs)
    data = export_bytes(model, tuple(inputs.values()), input_names=names,
                        dynamic_axes=dynamic, **kwargs)
    for feeds in [inputs] + ([other_inputs] if other_inputs else []):
        with ember.no_grad():
            expected = flat(model(*feeds.values()))
        got = run(data, feeds)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=atol)
    return data


def randn(*shape, seed=0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


# -- the benchmark models --------------------------------------------------------------------------
BENCHMARK_INPUTS = {
    "mlp": lambda b: randn(b, 784, seed=b),
    "lenet": lambda b: randn(b, 1, 28, 28, seed=b),
    "resnet20": lambda b: randn(b, 3, 32, 32, seed=b),
    "mobilenetv2": lambda b: randn(b, 3, 32, 32, seed=b),
    "resnet20_channels_last": lambda b: randn(b, 3, 32, 32, seed=b),
    "mobilenetv2_channels_last": lambda b: randn(b, 3, 32, 32, seed=b),
    "transformer_lm": lambda b: ember.tensor(np.random.default_rng(b).integers(0, 1000, (b, 64))),
}


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_benchmark_models_run_in_onnxruntime_with_a_dynamic_batch(name):
    if name == "lstm_lm":
        workload = models.lstm_lm(ember, batch=2, seq=7)
        tokens = {b: ember.tensor(np.random.default_rng(b).integers(0, 10000, (7, b)))
                  for b in (2, 5)}
        check(workload.modules["model"], {"tokens": tokens[2]}, {"tokens": tokens[5]},
              dynamic={"tokens": {1: "batch"}})
        return
    if name == "dcgan":
        workload = models.dcgan(ember, batch=2)
        check(workload.modules["generator"], {"noise": randn(2, 100, 1, 1)},
              {"noise": randn(5, 100, 1, 1, seed=5)}, dynamic={"noise": {0: "batch"}})
        check(workload.modules["discriminator"], {"image": randn(2, 3, 32, 32)},
              {"image": randn(5, 3, 32, 32, seed=5)}, dynamic={"image": [0]})
        return
    workload = models.MODELS[name](ember, batch=2)
    make = BENCHMARK_INPUTS[name]
    check(workload.modules["model"], {"x": make(2)}, {"x": make(5)}, dynamic={"x": {0: "batch"}},
          atol=3e-5)


# -- layers, one by one ----------------------------------------------------------------------------
def layer(module, *shape):
    return module, shape


LAYERS = {
    "linear": layer(nn.Linear(6, 4), 3, 6),
    "linear_3d": layer(nn.Linear(6, 4), 3, 5, 6),
    "linear_no_bias": layer(nn.Linear(6, 4, bias=False), 3, 6),
    "bilinear_free_mlp": layer(nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 2)), 4, 6),
    "conv1d": layer(nn.Conv1d(3, 4, 3, stride=2, padding=1), 2, 3, 11),
    "conv2d_same_dilated": layer(nn.Conv2d(3, 4, 3, padding="same", dilation=2), 2, 3, 9, 9),
    "conv2d_groups": layer(nn.Conv2d(4, 8, 3, groups=2, bias=False), 2, 4, 7, 7),
    "conv3d": layer(nn.Conv3d(2, 3, 2), 2, 2, 4, 4, 4),
    "conv_transpose1d": layer(nn.ConvTranspose1d(3, 2, 3, stride=2), 2, 3, 5),
    "conv_transpose2d": layer(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                              2, 3, 5, 5),
    "max_pool2d_ceil": layer(nn.MaxPool2d(3, stride=2, ceil_mode=True), 2, 3, 8, 8),
    "max_pool1d": layer(nn.MaxPool1d(2), 2, 3, 8),
    "avg_pool2d": layer(nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                        2, 3, 8, 8),
    "adaptive_avg_pool2d": layer(nn.AdaptiveAvgPool2d((2, 2)), 2, 3, 8, 8),
    "adaptive_avg_pool2d_global": layer(nn.AdaptiveAvgPool2d(1), 2, 3, 5, 5),
    "adaptive_max_pool2d_global": layer(nn.AdaptiveMaxPool2d(1), 2, 3, 5, 5),
    "batch_norm1d": layer(nn.BatchNorm1d(5), 4, 5),
    "batch_norm2d": layer(nn.BatchNorm2d(3), 2, 3, 4, 4),
    "layer_norm": layer(nn.LayerNorm((4, 5)), 2, 3, 4, 5),
    "group_norm": layer(nn.GroupNorm(2, 6), 2, 6, 3, 3),
    "instance_norm": layer(nn.InstanceNorm2d(3, affine=True), 2, 3, 4, 4),
    "dropout_eval": layer(nn.Sequential(nn.Dropout(0.3), nn.Dropout2d(0.2)), 2, 3, 4, 4),
    "flatten": layer(nn.Flatten(), 2, 3, 4, 5),
    "flatten_middle": layer(nn.Flatten(1, 2), 2, 3, 4, 5),
    "softmax": layer(nn.Softmax(dim=1), 2, 5, 3),
    "log_softmax": layer(nn.LogSoftmax(dim=-1), 2, 5),
    "identity": layer(nn.Sequential(nn.Identity(), nn.Linear(3, 3)), 2, 3),
    "prelu": layer(nn.PReLU(3), 2, 3, 4),
    "glu": layer(nn.GLU(), 2, 6),
    "lstm": layer(nn.LSTM(4, 5, num_layers=2), 6, 2, 4),
    "lstm_bidirectional_batch_first": layer(nn.LSTM(4, 3, bidirectional=True, batch_first=True),
                                            2, 6, 4),
    "gru": layer(nn.GRU(4, 5, num_layers=2, bidirectional=True), 6, 2, 4),
    "rnn_relu": layer(nn.RNN(4, 5, nonlinearity="relu", batch_first=True), 2, 6, 4),
    "transformer_encoder_layer": layer(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1), 5, 2, 8),
    "transformer_encoder_layer_norm_first_gelu": layer(nn.TransformerEncoderLayer(
        8, 2, 16, batch_first=True, norm_first=True, activation="gelu"), 2, 5, 8),
}
for _name, _cls in [("relu", nn.ReLU), ("relu6", nn.ReLU6), ("leaky_relu", nn.LeakyReLU),
                    ("elu", nn.ELU), ("selu", nn.SELU), ("celu", nn.CELU), ("gelu", nn.GELU),
                    ("silu", nn.SiLU), ("mish", nn.Mish), ("sigmoid", nn.Sigmoid),
                    ("tanh", nn.Tanh), ("softplus", nn.Softplus), ("softsign", nn.Softsign),
                    ("hardsigmoid", nn.Hardsigmoid), ("hardswish", nn.Hardswish),
                    ("hardtanh", nn.Hardtanh), ("logsigmoid", nn.LogSigmoid),
                    ("tanhshrink", nn.Tanhshrink)]:
    LAYERS[_name] = layer(_cls(), 3, 7)
LAYERS["gelu_tanh"] = layer(nn.GELU(approximate="tanh"), 3, 7)
LAYERS["softplus_beta"] = layer(nn.Softplus(beta=2.0, threshold=5.0), 3, 7)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_runs_in_onnxruntime(name):
    ember.manual_seed(0)
    module, shape = LAYERS[name]
    if isinstance(module, nn.BatchNorm1d) or isinstance(module, nn.BatchNorm2d):
        module.running_mean.copy_(randn(*module.running_mean.shape, seed=3))
        module.running_var.copy_(randn(*module.running_var.shape, seed=4).abs() + 0.5)
    x = randn(*shape, seed=1) * 3
    batch_axis = 1 if isinstance(module, (nn.LSTM, nn.GRU, nn.RNN)) and not module.batch_first \
        else 0
    if isinstance(module, nn.TransformerEncoderLayer) and not module.self_attn.batch_first:
        batch_axis = 1
    bigger = list(shape)
    bigger[batch_axis] += 2
    check(module, {"x": x}, {"x": randn(*bigger, seed=2) * 3},
          dynamic={"x": {batch_axis: "batch"}}, atol=3e-5)


def test_embedding_with_integer_input_and_dynamic_sequence():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Embedding(20, 6, padding_idx=0), nn.Linear(6, 3))
    tokens = ember.tensor(np.random.default_rng(0).integers(0, 20, (2, 5)))
    more = ember.tensor(np.random.default_rng(1).integers(0, 20, (4, 9)))
    check(model, {"tokens": tokens}, {"tokens": more}, dynamic={"tokens": {0: "b", 1: "s"}})


def test_multihead_attention_with_masks_and_weights():
    ember.manual_seed(0)

    class Attend(nn.Module):
        def __init__(self, batch_first):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=batch_first)

        def forward(self, q, kv, padding):
            out, weights = self.attn(q, kv, kv, key_padding_mask=padding)
            return out, weights

    for batch_first in (True, False):
        model = Attend(batch_first)
        q, kv = (randn(2, 3, 8, seed=1), randn(2, 5, 8, seed=2)) if batch_first else \
            (randn(3, 2, 8, seed=1), randn(5, 2, 8, seed=2))
        padding = ember.tensor([[False] * 4 + [True], [False] * 5])
        check(model, {"q": q, "kv": kv, "padding": padding})


def test_causal_attention_with_a_mask_buffer_and_sdpa():
    ember.manual_seed(0)

    class Causal(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(4))
            self.qkv = nn.Linear(8, 24)

        def forward(self, x):
            a = self.attn(x, x, x, attn_mask=self.mask, need_weights=False, is_causal=True)[0]
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return a + y.transpose(1, 2).reshape(B, T, C)

    check(Causal(), {"x": randn(2, 4, 8)}, {"x": randn(3, 4, 8, seed=5)},
          dynamic={"x": {0: "batch"}})


def test_causal_sdpa_follows_a_dynamic_sequence_length():
    """The causal mask is built from the sequence length in the graph, not the traced one."""
    ember.manual_seed(0)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return y.transpose(1, 2).reshape(B, T, C)

    data = check(CausalSelfAttention(), {"x": randn(2, 4, 8)}, {"x": randn(3, 7, 8, seed=5)},
                 dynamic={"x": {0: "batch", 1: "time"}})
    ops = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert {"Range", "Greater", "Where"} <= ops


class GeneratedCausalMask(nn.Module):
    """A causal mask made per call from the sequence length, as nn.Transformer's users do."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        return self.layer(x, src_mask=mask, is_causal=True)


class SlicedCausalBuffer(nn.Module):
    """minGPT's causal attention: a (1, 1, 16, 16) lower-triangular buffer sliced to T."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", ember.tril(ember.ones(16, 16)).view(1, 1, 16, 16))
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * 0.5
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return y.transpose(1, 2).contiguous().view(B, T, C)


@pytest.mark.parametrize("model", [GeneratedCausalMask, SlicedCausalBuffer])
def test_causal_masks_made_in_forward_follow_the_sequence_length(model):
    ember.manual_seed(0)
    check(model(), {"x": randn(2, 4, 8)}, {"x": randn(3, 7, 8, seed=5)},
          dynamic={"x": {0: "batch", 1: "time"}})


def test_a_value_the_trace_froze_is_an_error_not_a_wrong_model():
    class Hidden(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.steps = [ember.sin]        # reached through a list: the recorder cannot see it

        def forward(self, x):
            return self.lin(self.steps[0](x))

    with pytest.raises(RuntimeError, match=r"ember.onnx.export: the trace holds a tensor "
                                           r"computed from the inputs or parameters as a "
                                           r"constant \(_tensor_constant0, made by SinBackward0"):
        export_bytes(Hidden(), (randn(2, 3),))
    # a tensor the module held before the trace is its own constant
    class Held(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.offset = self.lin.weight.sum(0) * 2     # has a history, made before the trace

        def forward(self, x):
            return self.lin(x) + self.offset

    check(Held(), {"x": randn(2, 3)})


# -- functional programs ---------------------------------------------------------------------------
class Functional(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(randn(4, 4, seed=9))

    def forward(self, x, y):
        a = ember.cat([x, y * 2], dim=1)                       # (B, 8)
        b = ember.stack([x, y], dim=-1).sum(-1)                # (B, 4)
        c, d = a.chunk(2, dim=1)
        e = ember.where(c > 0, c, d.abs() ** 1.5)
        f = e.masked_fill(e > 1.0, -1.0).clamp(min=-0.5, max=2.0)
        g = (f @ self.w).permute(1, 0).t() - b.mean(dim=0, keepdim=True)
        h = g[:, 1:3] + g[..., :2].exp() / (1 + g[:, None, 0].sigmoid().squeeze(1)[:, None])
        values, indices = h.max(dim=1)
        i = ember.einsum("bi,ij->bj", x, self.w).cumsum(dim=1).triu()[:, :2]
        j = x.unsqueeze(1).expand(-1, 3, -1).reshape(x.size(0), -1)[:, :2]
        k = y.repeat(1, 2)[:, 1:5:2].log_softmax(-1) + h.argmax(-1, keepdim=True).float()
        return values + indices.float(), i + j + k, x.amax(1) - (x * x).sum(1).sqrt()


def test_functional_ops_run_in_onnxruntime():
    model = Functional()
    check(model, {"x": randn(3, 4, seed=1), "y": randn(3, 4, seed=2)},
          {"x": randn(6, 4, seed=3), "y": randn(6, 4, seed=4)},
          dynamic={"x": {0: "batch"}, "y": {0: "batch"}})


def test_view_of_a_traced_size_follows_the_batch():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.fc = nn.Linear(2 * 4 * 4, 3)

        def forward(self, x):
            x = self.conv(x).relu()
            return self.fc(x.view(x.size(0), -1))

    ember.manual_seed(0)
    check(Net(), {"x": randn(2, 1, 6, 6)}, {"x": randn(7, 1, 6, 6, seed=3)},
          dynamic={"x": {0: "n"}})


# -- options, names and errors ---------------------------------------------------------------------
def test_value_decided_lengths_follow_the_input():
    """nonzero, a boolean-mask index, unique and bincount: the exported lengths come from the
    values the graph is run on, not from the traced example."""
    class ValueShaped(nn.Module):
        def forward(self, x):
            counts = ember.bincount((x.abs() * 3).long().flatten())
            return ember.nonzero(x > 0), x[x > 0], ember.unique(x.round()), counts

    other = randn(4, 3, seed=1) * 3
    check(ValueShaped(), {"x": randn(4, 3)}, {"x": other})
    assert (other > 0).sum().item() != (randn(4, 3) > 0).sum().item()


def test_scans_sorts_and_statistics_follow_a_dynamic_batch():
    class Scans(nn.Module):
        def forward(self, x):
            values, indices = x.sort(dim=0, descending=True)
            top = x.topk(2, dim=1)
            return (x.flip(0), x.cumprod(0), ember.cummax(x, 0), ember.logcumsumexp(x, 0),
                    x.var(0, keepdim=True), x.std(1), ember.linalg.vector_norm(x, 3.5, dim=0),
                    values, indices, top, x.quantile(0.3, dim=0), ember.median(x, 0),
                    ember.diff(x, dim=0), ember.atan2(x, x.flip(0)), ember.logaddexp(x, -x))

    check(Scans(), {"x": randn(5, 4)}, {"x": randn(7, 4, seed=2)}, dynamic={"x": {0: "batch"}})


def test_names_dynamic_axes_and_opset(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    path = tmp_path / "model.onnx"
    ember.onnx.export(model, (randn(2, 3),), path, input_names=["features"],
                      output_names=["scores"], dynamic_axes={"features": {0: "batch"},
                                                             "scores": {0: "batch"}},
                      opset_version=18)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == 18
    assert [i.name for i in proto.graph.input] == ["features"]
    assert [o.name for o in proto.graph.output] == ["scores"]
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and dims[1].dim_value == 3
    assert {"0.weight", "0.bias", "1.weight", "1.bias"} <= {t.name for t in
                                                           proto.graph.initializer}
    x = randn(5, 3, seed=2)
    got = run(path.read_bytes(), {"features": x})[0]
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_export_runs_in_eval_mode_and_restores_training():
    seen = []

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x):
            seen.append((self.training, ember.onnx.is_in_onnx_export()))
            return self.bn(x)

    model = Probe().train()
    export_bytes(model, (randn(4, 3),))
    assert seen == [(False, True)]
    assert model.training and not ember.onnx.is_in_onnx_export()


def test_unsupported_op_names_the_op_and_the_node():
    class Inverts(nn.Module):
        def forward(self, x):
            return x.inverse() + 1

    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError,
                       match=r"operator 'Tensor.inverse' \(ONNX has no matrix inverse.*graph "
                             r"node 'inverse'"):
        ember.onnx.export(Inverts(), (randn(3, 3),), io.BytesIO())
    with pytest.raises(ember.onnx.OnnxExporterError, match="training mode"):
        class Drops(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.5, training=True)
        ember.onnx.export(Drops(), (randn(2, 3),), io.BytesIO())


def test_bad_arguments():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="opset_version 17 or newer"):
        ember.onnx.export(model, (randn(1, 2),), io.BytesIO(), opset_version=13)
    with pytest.raises(ValueError, match="dynamic_axes names 'y'"):
        ember.onnx.export(model, (randn(1, 2),), io.BytesIO(), input_names=["x"],
                          dynamic_axes={"y": [0]})
    with pytest.raises(TypeError, match="expects an ember.nn.Module"):
        ember.onnx.export(lambda x: x, (randn(1, 2),), io.BytesIO())


# -- side by side with torch.onnx ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lenet", "resnet20"])
def test_same_results_as_torch_onnx_export_of_the_same_model(name):
    torch = pytest.importorskip("torch")
    t_work = models.MODELS[name](torch, batch=2)
    e_work = models.MODELS[name](ember, batch=2)
    models.copy_weights(t_work, e_work)
    t_model, e_model = t_work.modules["model"].eval(), e_work.modules["model"].eval()
    x = BENCHMARK_INPUTS[name](3)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(t_model, (torch.tensor(x.numpy()),), buffer, input_names=["x"],
                          dynamo=False, dynamic_axes={"x": {0: "batch"}})
    e_data = export_bytes(e_model, (x,), input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    other = BENCHMARK_INPUTS[name](6)
    np.testing.assert_allclose(run(e_data, {"x": other})[0],
                               run(buffer.getvalue(), {"x": other})[0], rtol=1e-4, atol=3e-5)
