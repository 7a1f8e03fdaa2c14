"""Every nn layer class of ember, recorded into a graph and run from it: ``ember.export``
records the layer's forward through to ember functions (no call_module nodes: the layer's own
code is what is traced, as ``ember.jit.trace`` records a user module), and the program's
``module()`` must give the eager layer's outputs and gradients (inputs and parameters).

Every Module subclass in ``ember.nn`` must have an entry in LAYERS or a stated reason in SKIPPED,
so a new layer cannot go untested."""
import inspect

import numpy as np
import pytest

import ember
import ember.export

nn, F = ember.nn, ember.nn.functional

SKIPPED = {
    "Module": "the abstract base class",
    "Sequential": "a container (traced through in the Transformer entries)",
    "ModuleList": "a container (traced through in the Transformer entries)",
    "ModuleDict": "a container without a forward",
    "ParameterList": "a container without a forward",
    "ParameterDict": "a container without a forward",
    "RNNBase": "the abstract base of RNN, LSTM and GRU (tested)",
    "RNNCellBase": "the abstract base of RNNCell, LSTMCell and GRUCell (tested)",
    "AdaptiveLogSoftmaxWithLoss": "its rows are picked by target value (data-dependent shapes); "
                                  "tested against torch in tests/nn/test_adaptive_log_softmax.py",
    "CrossMapLRN2d": "a legacy layer run through an autograd Function (tested against torch in "
                     "tests/nn/test_legacy_layers.py)",
    "Container": "deprecated (warns); a Module holding its keyword arguments, without a forward",
    "DataParallel": "a wrapper that calls its module (without GPUs); the module is traced",
}


def f(*shape):
    return ("float", shape)


def i(high, *shape):
    return ("int", high, shape)


def _pool_indices(pool, *shape):
    """(pooled, indices) of a max pooling, as MaxUnpool's inputs."""
    def make(rng):
        x = ember.tensor(rng.standard_normal(shape).astype(np.float32))
        out, idx = pool(x, 2, return_indices=True)
        return [out.detach().requires_grad_(True), idx]
    return make


def _ctc_inputs(rng):
    log_probs = ember.tensor(rng.standard_normal((6, 2, 4)).astype(np.float32))
    log_probs = F.log_softmax(log_probs, 2).detach().requires_grad_(True)
    targets = ember.tensor(rng.integers(1, 4, (2, 3)))
    return [log_probs, targets, ember.tensor([6, 5]), ember.tensor([3, 2])]


def _probabilities(*shape):
    def make(rng):
        p = rng.uniform(0.05, 0.95, shape).astype(np.float32)
        target = rng.uniform(0, 1, shape).astype(np.float32)
        return [ember.tensor(p).requires_grad_(True), ember.tensor(target)]
    return make


def _signs(*shape):
    def make(rng):
        return [ember.tensor(rng.standard_normal(shape).astype(np.float32)).requires_grad_(True),
                ember.tensor(np.where(rng.uniform(size=shape) > 0.5, 1.0, -1.0)
                             .astype(np.float32))]
    return make


def _multilabel(rng):
    x = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32)).requires_grad_(True)
    return [x, ember.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])]


def _decoder_layer():
    return nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


def _encoder_layer():
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


# class name -> (constructor, inputs: specs or a function of a NumPy generator, eval mode?)
LAYERS = {
    "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(3), [f(2, 3, 7)]),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), [f(2, 3, 7, 8)]),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(3), [f(2, 3, 7)]),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(2), [f(2, 3, 6, 6)]),
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d((2, 3, 1)), [f(2, 3, 5, 6, 4)]),
    "AdaptiveMaxPool3d": (lambda: nn.AdaptiveMaxPool3d(2), [f(2, 3, 4, 5, 4)]),
    "AlphaDropout": (lambda: nn.AlphaDropout(0.3).eval(), [f(3, 5)]),
    "AvgPool1d": (lambda: nn.AvgPool1d(3, 2, 1), [f(2, 3, 9)]),
    "AvgPool2d": (lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True), [f(2, 3, 8, 8)]),
    "AvgPool3d": (lambda: nn.AvgPool3d(2), [f(2, 2, 4, 4, 4)]),
    "BCELoss": (lambda: nn.BCELoss(), _probabilities(3, 4)),
    "BCEWithLogitsLoss": (lambda: nn.BCEWithLogitsLoss(pos_weight=ember.full((4,), 2.0)),
                          _probabilities(3, 4)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(4), [f(5, 4)]),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3), [f(2, 3, 4, 4)]),
    "BatchNorm3d": (lambda: nn.BatchNorm3d(2).eval(), [f(2, 2, 3, 3, 3)]),
    "Bilinear": (lambda: nn.Bilinear(3, 4, 5), [f(2, 3), f(2, 4)]),
    "CELU": (lambda: nn.CELU(0.7), [f(3, 5)]),
    "CTCLoss": (lambda: nn.CTCLoss(), _ctc_inputs),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), [f(2, 4, 3, 3)]),
    "CircularPad1d": (lambda: nn.CircularPad1d(2), [f(2, 3, 5)]),
    "CircularPad2d": (lambda: nn.CircularPad2d((1, 2, 0, 1)), [f(2, 3, 4, 5)]),
    "CircularPad3d": (lambda: nn.CircularPad3d(1), [f(1, 2, 3, 3, 3)]),
    "ConstantPad1d": (lambda: nn.ConstantPad1d(2, 0.5), [f(2, 3, 5)]),
    "ConstantPad2d": (lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0), [f(2, 3, 4, 5)]),
    "ConstantPad3d": (lambda: nn.ConstantPad3d(1, 2.0), [f(1, 2, 3, 3, 3)]),
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3, stride=2, padding=1), [f(2, 3, 9)]),
    "Conv2d": (lambda: nn.Conv2d(4, 6, 3, padding=1, groups=2), [f(2, 4, 6, 6)]),
    "Conv3d": (lambda: nn.Conv3d(2, 3, 2), [f(2, 2, 4, 4, 4)]),
    "ConvTranspose1d": (lambda: nn.ConvTranspose1d(3, 2, 3, stride=2), [f(2, 3, 5)]),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                   output_padding=1), [f(2, 3, 4, 4)]),
    "ConvTranspose3d": (lambda: nn.ConvTranspose3d(2, 2, 2), [f(1, 2, 3, 3, 3)]),
    "CosineEmbeddingLoss": (lambda: nn.CosineEmbeddingLoss(0.1),
                            lambda rng: [*_inputs([f(4, 5), f(4, 5)], rng),
                                         ember.tensor([1.0, -1.0, 1.0, -1.0])]),
    "CosineSimilarity": (lambda: nn.CosineSimilarity(dim=1), [f(3, 5), f(3, 5)]),
    "CrossEntropyLoss": (lambda: nn.CrossEntropyLoss(label_smoothing=0.1), [f(4, 5), i(5, 4)]),
    "Dropout": (lambda: nn.Dropout(0.3).eval(), [f(3, 5)]),
    "Dropout1d": (lambda: nn.Dropout1d(0.3).eval(), [f(2, 3, 5)]),
    "Dropout2d": (lambda: nn.Dropout2d(0.3).eval(), [f(2, 3, 4, 4)]),
    "Dropout3d": (lambda: nn.Dropout3d(0.3).eval(), [f(2, 3, 2, 2, 2)]),
    "ELU": (lambda: nn.ELU(0.5), [f(3, 5)]),
    "Embedding": (lambda: nn.Embedding(10, 4, padding_idx=0), [i(10, 3, 5)]),
    "EmbeddingBag": (lambda: nn.EmbeddingBag(10, 4, mode="mean"), [i(10, 3, 5)]),
    "FeatureAlphaDropout": (lambda: nn.FeatureAlphaDropout(0.3).eval(), [f(2, 3, 4)]),
    "Flatten": (lambda: nn.Flatten(1, 2), [f(2, 3, 4, 5)]),
    "Fold": (lambda: nn.Fold((4, 5), 2), [f(2, 12, 12)]),
    "GELU": (lambda: nn.GELU("tanh"), [f(3, 5)]),
    "GLU": (lambda: nn.GLU(-1), [f(3, 6)]),
    "GRU": (lambda: nn.GRU(4, 5, num_layers=2, batch_first=True), [f(2, 6, 4)]),
    "GRUCell": (lambda: nn.GRUCell(4, 5), [f(3, 4), f(3, 5)]),
    "GaussianNLLLoss": (lambda: nn.GaussianNLLLoss(),
                        lambda rng: [*_inputs([f(4, 3), f(4, 3)], rng),
                                     ember.tensor(rng.uniform(0.5, 2, (4, 3)).astype(
                                         np.float32)).requires_grad_(True)]),
    "GroupNorm": (lambda: nn.GroupNorm(2, 6), [f(2, 6, 3, 3)]),
    "Hardshrink": (lambda: nn.Hardshrink(0.3), [f(3, 5)]),
    "Hardsigmoid": (lambda: nn.Hardsigmoid(), [f(3, 5)]),
    "Hardswish": (lambda: nn.Hardswish(), [f(3, 5)]),
    "Hardtanh": (lambda: nn.Hardtanh(-0.5, 0.7), [f(3, 5)]),
    "HingeEmbeddingLoss": (lambda: nn.HingeEmbeddingLoss(0.5), _signs(3, 4)),
    "HuberLoss": (lambda: nn.HuberLoss(delta=0.5), [f(3, 4), f(3, 4)]),
    "Identity": (lambda: nn.Identity(), [f(3, 5)]),
    "InstanceNorm1d": (lambda: nn.InstanceNorm1d(3, affine=True), [f(2, 3, 6)]),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3, track_running_stats=True), [f(2, 3, 4, 4)]),
    "InstanceNorm3d": (lambda: nn.InstanceNorm3d(2), [f(2, 2, 3, 3, 3)]),
    "KLDivLoss": (lambda: nn.KLDivLoss(reduction="batchmean", log_target=True),
                  [f(3, 4), f(3, 4)]),
    "L1Loss": (lambda: nn.L1Loss(), [f(3, 4), f(3, 4)]),
    "LPPool1d": (lambda: nn.LPPool1d(2, 3, 2), [f(2, 3, 9)]),
    "LPPool2d": (lambda: nn.LPPool2d(2, 2), [f(2, 3, 6, 6)]),
    "LPPool3d": (lambda: nn.LPPool3d(2, 2), [f(2, 3, 4, 4, 4)]),
    "FractionalMaxPool2d": (lambda: nn.FractionalMaxPool2d(
        2, output_size=3, _random_samples=ember.rand(2, 3, 2)), [f(2, 3, 6, 6)]),
    "FractionalMaxPool3d": (lambda: nn.FractionalMaxPool3d(
        2, output_ratio=0.5, _random_samples=ember.rand(1, 2, 3)), [f(1, 2, 6, 6, 6)]),
    "LSTM": (lambda: nn.LSTM(4, 5, num_layers=2, bidirectional=True), [f(6, 2, 4)]),
    "LSTMCell": (lambda: nn.LSTMCell(4, 5), [f(3, 4)]),
    "LayerNorm": (lambda: nn.LayerNorm((4, 5)), [f(2, 3, 4, 5)]),
    "LazyLinear": (lambda: nn.LazyLinear(4), [f(3, 6)]),
    "LazyConv1d": (lambda: nn.LazyConv1d(4, 3, stride=2), [f(2, 3, 9)]),
    "LazyConv2d": (lambda: nn.LazyConv2d(6, 3, padding=1, groups=2), [f(2, 4, 6, 6)]),
    "LazyConv3d": (lambda: nn.LazyConv3d(3, 2), [f(2, 2, 4, 4, 4)]),
    "LazyConvTranspose1d": (lambda: nn.LazyConvTranspose1d(2, 3, stride=2), [f(2, 3, 5)]),
    "LazyConvTranspose2d": (lambda: nn.LazyConvTranspose2d(2, 3, padding=1), [f(2, 3, 4, 4)]),
    "LazyConvTranspose3d": (lambda: nn.LazyConvTranspose3d(2, 2), [f(1, 2, 3, 3, 3)]),
    "LazyBatchNorm1d": (lambda: nn.LazyBatchNorm1d(), [f(5, 4)]),
    "LazyBatchNorm2d": (lambda: nn.LazyBatchNorm2d(), [f(2, 3, 4, 4)]),
    "LazyBatchNorm3d": (lambda: nn.LazyBatchNorm3d().eval(), [f(2, 2, 3, 3, 3)]),
    "LazyInstanceNorm1d": (lambda: nn.LazyInstanceNorm1d(), [f(2, 3, 6)]),
    "LazyInstanceNorm2d": (lambda: nn.LazyInstanceNorm2d(track_running_stats=False), [f(2, 3, 4, 4)]),
    "LazyInstanceNorm3d": (lambda: nn.LazyInstanceNorm3d(affine=False), [f(2, 2, 3, 3, 3)]),
    "LeakyReLU": (lambda: nn.LeakyReLU(0.2), [f(3, 5)]),
    "Linear": (lambda: nn.Linear(6, 4), [f(2, 3, 6)]),
    "LocalResponseNorm": (lambda: nn.LocalResponseNorm(3), [f(2, 5, 4, 4)]),
    "LogSigmoid": (lambda: nn.LogSigmoid(), [f(3, 5)]),
    "LogSoftmax": (lambda: nn.LogSoftmax(dim=1), [f(3, 5)]),
    "MSELoss": (lambda: nn.MSELoss(reduction="sum"), [f(3, 4), f(3, 4)]),
    "MarginRankingLoss": (lambda: nn.MarginRankingLoss(0.2),
                          lambda rng: [*_inputs([f(5), f(5)], rng),
                                       ember.tensor([1.0, -1.0, 1.0, 1.0, -1.0])]),
    "MaxPool1d": (lambda: nn.MaxPool1d(3, 2), [f(2, 3, 9)]),
    "MaxPool2d": (lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [f(2, 3, 8, 8)]),
    "MaxPool3d": (lambda: nn.MaxPool3d(2), [f(2, 2, 4, 4, 4)]),
    "MaxUnpool1d": (lambda: nn.MaxUnpool1d(2), _pool_indices(F.max_pool1d, 2, 3, 8)),
    "MaxUnpool2d": (lambda: nn.MaxUnpool2d(2), _pool_indices(F.max_pool2d, 2, 3, 4, 4)),
    "MaxUnpool3d": (lambda: nn.MaxUnpool3d(2), _pool_indices(F.max_pool3d, 2, 2, 4, 4, 4)),
    "Mish": (lambda: nn.Mish(), [f(3, 5)]),
    "MultiLabelMarginLoss": (lambda: nn.MultiLabelMarginLoss(), _multilabel),
    "MultiLabelSoftMarginLoss": (lambda: nn.MultiLabelSoftMarginLoss(), _probabilities(3, 4)),
    "MultiMarginLoss": (lambda: nn.MultiMarginLoss(margin=0.5), [f(4, 5), i(5, 4)]),
    "MultiheadAttention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                           [f(2, 5, 8), f(2, 6, 8), f(2, 6, 8)]),
    "NLLLoss": (lambda: nn.NLLLoss(), [f(4, 5), i(5, 4)]),
    "LinearCrossEntropyLoss": (lambda: nn.LinearCrossEntropyLoss(4, 5, bias=True), [f(3, 4), i(5, 3)]),
    "NLLLoss2d": (lambda: nn.NLLLoss2d(), [f(2, 5, 3, 3), i(5, 2, 3, 3)]),
    "PReLU": (lambda: nn.PReLU(3), [f(2, 3, 4)]),
    "PairwiseDistance": (lambda: nn.PairwiseDistance(), [f(3, 5), f(3, 5)]),
    "PixelShuffle": (lambda: nn.PixelShuffle(2), [f(2, 8, 3, 3)]),
    "PixelUnshuffle": (lambda: nn.PixelUnshuffle(2), [f(2, 2, 4, 4)]),
    "PoissonNLLLoss": (lambda: nn.PoissonNLLLoss(), [f(3, 4), f(3, 4)]),
    "RMSNorm": (lambda: nn.RMSNorm(5), [f(2, 3, 5)]),
    "RNN": (lambda: nn.RNN(4, 5, nonlinearity="relu", batch_first=True), [f(2, 6, 4)]),
    "RNNCell": (lambda: nn.RNNCell(4, 5), [f(3, 4)]),
    "RReLU": (lambda: nn.RReLU().eval(), [f(3, 5)]),
    "ReLU": (lambda: nn.ReLU(), [f(3, 5)]),
    "ReLU6": (lambda: nn.ReLU6(), [f(3, 5)]),
    "ReflectionPad1d": (lambda: nn.ReflectionPad1d(2), [f(2, 3, 5)]),
    "ReflectionPad2d": (lambda: nn.ReflectionPad2d((1, 2, 0, 1)), [f(2, 3, 4, 5)]),
    "ReflectionPad3d": (lambda: nn.ReflectionPad3d(1), [f(1, 2, 3, 3, 3)]),
    "ReplicationPad1d": (lambda: nn.ReplicationPad1d(2), [f(2, 3, 5)]),
    "ReplicationPad2d": (lambda: nn.ReplicationPad2d((1, 2, 0, 1)), [f(2, 3, 4, 5)]),
    "ReplicationPad3d": (lambda: nn.ReplicationPad3d(1), [f(1, 2, 3, 3, 3)]),
    "SELU": (lambda: nn.SELU(), [f(3, 5)]),
    "SiLU": (lambda: nn.SiLU(), [f(3, 5)]),
    "Sigmoid": (lambda: nn.Sigmoid(), [f(3, 5)]),
    "SmoothL1Loss": (lambda: nn.SmoothL1Loss(beta=0.5), [f(3, 4), f(3, 4)]),
    "SoftMarginLoss": (lambda: nn.SoftMarginLoss(), _signs(3, 4)),
    "Softmax": (lambda: nn.Softmax(dim=0), [f(3, 5)]),
    "Softmax2d": (lambda: nn.Softmax2d(), [f(2, 3, 4, 4)]),
    "Softmin": (lambda: nn.Softmin(dim=1), [f(3, 5)]),
    "Softplus": (lambda: nn.Softplus(2.0, 5.0), [f(3, 5)]),
    "Softshrink": (lambda: nn.Softshrink(0.3), [f(3, 5)]),
    "Softsign": (lambda: nn.Softsign(), [f(3, 5)]),
    "SyncBatchNorm": (lambda: nn.SyncBatchNorm(3).eval(), [f(2, 3, 4)]),
    "Tanh": (lambda: nn.Tanh(), [f(3, 5)]),
    "Tanhshrink": (lambda: nn.Tanhshrink(), [f(3, 5)]),
    "Threshold": (lambda: nn.Threshold(0.1, -2.0), [f(3, 5)]),
    "Transformer": (lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
                    [f(2, 5, 8), f(2, 4, 8)]),
    "TransformerDecoder": (lambda: nn.TransformerDecoder(_decoder_layer(), 2),
                           [f(2, 4, 8), f(2, 5, 8)]),
    "TransformerDecoderLayer": (_decoder_layer, [f(2, 4, 8), f(2, 5, 8)]),
    "TransformerEncoder": (lambda: nn.TransformerEncoder(_encoder_layer(), 2,
                                                         enable_nested_tensor=False),
                           [f(2, 5, 8)]),
    "TransformerEncoderLayer": (_encoder_layer, [f(2, 5, 8)]),
    "TripletMarginLoss": (lambda: nn.TripletMarginLoss(margin=0.5), [f(3, 4)] * 3),
    "TripletMarginWithDistanceLoss": (lambda: nn.TripletMarginWithDistanceLoss(
        distance_function=nn.PairwiseDistance(), margin=0.5, swap=True), [f(3, 4)] * 3),
    "Unflatten": (lambda: nn.Unflatten(1, (2, 3)), [f(4, 6)]),
    "Unfold": (lambda: nn.Unfold(2, padding=1), [f(2, 3, 4, 4)]),
    "Upsample": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), [f(2, 3, 3, 4)]),
    "UpsamplingBilinear2d": (lambda: nn.UpsamplingBilinear2d(size=(5, 6)), [f(2, 3, 3, 4)]),
    "UpsamplingNearest2d": (lambda: nn.UpsamplingNearest2d(scale_factor=2), [f(2, 3, 3, 4)]),
    "ZeroPad1d": (lambda: nn.ZeroPad1d((1, 2)), [f(2, 3, 5)]),
    "ZeroPad2d": (lambda: nn.ZeroPad2d(1), [f(2, 3, 4, 5)]),
    "ZeroPad3d": (lambda: nn.ZeroPad3d(1), [f(1, 2, 3, 3, 3)]),
}


def _inputs(specs, rng):
    out = []
    for spec in specs:
        if spec[0] == "float":
            out.append(ember.tensor(rng.standard_normal(spec[1]).astype(np.float32))
                       .requires_grad_(True))
        else:
            out.append(ember.tensor(rng.integers(0, spec[1], spec[2])))
    return out


def _make_inputs(spec, seed):
    rng = np.random.default_rng(seed)
    return spec(rng) if callable(spec) else _inputs(spec, rng)


def _float_leaves(value):
    if isinstance(value, ember.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _float_leaves(v)]
    return []


def _run(module, inputs):
    """Outputs (detached) and the gradients of the outputs' sum: inputs' then parameters'."""
    for p in module.parameters():
        p.grad = None
    outputs = _float_leaves(module(*inputs))
    total = sum((o * (1.0 + 0.1 * ember.arange(o.numel()).reshape(o.shape))).sum()
                for o in outputs)
    total.backward()
    grads = [x.grad for x in inputs if x.is_floating_point()]
    grads += [p.grad for _, p in sorted(module.named_parameters())]
    return [o.detach() for o in outputs], grads


def test_every_nn_layer_class_has_an_entry_or_a_reason():
    classes = {k for k, v in vars(nn).items() if inspect.isclass(v) and issubclass(v, nn.Module)}
    assert classes - set(SKIPPED) == set(LAYERS), (classes - set(SKIPPED)) ^ set(LAYERS)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_graph_of_layer_gives_eager_outputs_and_gradients(name):
    ember.manual_seed(0)
    make, spec = LAYERS[name]
    module = make()
    module(*_make_inputs(spec, 0))          # lazy layers take their shapes on a first call
    inputs = _make_inputs(spec, 1)
    program = ember.export.export(module, tuple(x.detach() for x in inputs))
    assert not [n for n in program.graph.nodes if n.op == "call_module"]
    assert isinstance(program.graph_module, ember.fx.GraphModule)
    expected_out, expected_grads = _run(module, [x.detach().requires_grad_(x.requires_grad)
                                                 for x in inputs])
    got_out, got_grads = _run(program.module(), [x.detach().requires_grad_(x.requires_grad)
                                                 for x in inputs])
    assert len(got_out) == len(expected_out) > 0
    for got, expected in zip(got_out, expected_out):
        ember.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    assert len(got_grads) == len(expected_grads)
    for got, expected in zip(got_grads, expected_grads):
        assert (got is None) == (expected is None)
        if got is not None:
            ember.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
