"""``grad_fn._saved_<name>`` on the nodes nn layers, losses and everyday tensor code make,
against torch's: the same program runs on both libraries (weights copied through
``state_dict``), the two graphs are walked side by side from the output, and every field torch
has on a node whose name ember shares is compared by value (tensors by value, sizes, strides
and flags as they are)."""
import numpy as np
import pytest
import torch

import ember
from test_saved_fields import _same, _same_dims, _value

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 3, 8, 8))
X3 = RNG.standard_normal((2, 5, 6))
X2 = RNG.standard_normal((4, 6))
Y2 = RNG.standard_normal((4, 6))
TARGET = np.array([1, 0, 5, 2])


def _layer(ctor, make_input, train=True):
    def program(lib, state):
        module = ctor(lib).double()
        if lib is torch:
            state.update({k: v.detach().numpy().copy() for k, v in module.state_dict().items()})
        else:
            module.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
        module.train(train)
        out = module(make_input(lib))
        return out[0] if isinstance(out, tuple) else out
    return program


def _leaf(array):
    return lambda lib: lib.tensor(array, requires_grad=True)


def _fn(f):
    return lambda lib, state: f(lib)


PROGRAMS = {
    "linear": _layer(lambda nn: nn.nn.Linear(6, 3), _leaf(X2)),
    "linear_3d": _layer(lambda nn: nn.nn.Linear(6, 3), _leaf(X3)),
    "linear_no_bias": _layer(lambda nn: nn.nn.Linear(6, 3, bias=False), _leaf(X2)),
    "conv2d": _layer(lambda nn: nn.nn.Conv2d(3, 4, 3, padding=1, stride=2), _leaf(X4)),
    "conv2d_groups": _layer(lambda nn: nn.nn.Conv2d(3, 6, 3, dilation=2, groups=3, bias=False),
                            _leaf(X4)),
    "conv1d_same": _layer(lambda nn: nn.nn.Conv1d(5, 4, 3, padding="same"), _leaf(X3)),
    "conv_transpose2d": _layer(lambda nn: nn.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1),
                               _leaf(X4)),
    "max_pool2d": _layer(lambda nn: nn.nn.MaxPool2d(2), _leaf(X4)),
    "max_pool2d_ceil": _layer(lambda nn: nn.nn.MaxPool2d(3, 2, 1, ceil_mode=True), _leaf(X4)),
    "avg_pool2d": _layer(lambda nn: nn.nn.AvgPool2d(3, 2, 1, count_include_pad=False), _leaf(X4)),
    "adaptive_avg_pool2d": _layer(lambda nn: nn.nn.AdaptiveAvgPool2d(4), _leaf(X4)),
    "adaptive_max_pool2d": _layer(lambda nn: nn.nn.AdaptiveMaxPool2d((3, 3)), _leaf(X4)),
    "batch_norm2d": _layer(lambda nn: nn.nn.BatchNorm2d(3), _leaf(X4)),
    "batch_norm2d_eval": _layer(lambda nn: nn.nn.BatchNorm2d(3), _leaf(X4), train=False),
    "batch_norm1d": _layer(lambda nn: nn.nn.BatchNorm1d(5), _leaf(X3)),
    "layer_norm": _layer(lambda nn: nn.nn.LayerNorm(6), _leaf(X3)),
    "layer_norm_2d": _layer(lambda nn: nn.nn.LayerNorm((5, 6), elementwise_affine=False), _leaf(X3)),
    "embedding": _layer(lambda nn: nn.nn.Embedding(10, 4), lambda lib: lib.tensor([[1, 2], [4, 1]])),
    "embedding_padding": _layer(lambda nn: nn.nn.Embedding(10, 4, padding_idx=2),
                                lambda lib: lib.tensor([[1, 2], [4, 1]])),
    "relu": _layer(lambda nn: nn.nn.ReLU(), _leaf(X2)),
    "gelu": _layer(lambda nn: nn.nn.GELU(), _leaf(X2)),
    "gelu_tanh": _layer(lambda nn: nn.nn.GELU("tanh"), _leaf(X2)),
    "silu": _layer(lambda nn: nn.nn.SiLU(), _leaf(X2)),
    "leaky_relu": _layer(lambda nn: nn.nn.LeakyReLU(0.1), _leaf(X2)),
    "hardtanh": _layer(lambda nn: nn.nn.Hardtanh(-0.5, 2.0), _leaf(X2)),
    "relu6": _layer(lambda nn: nn.nn.ReLU6(), _leaf(X2)),
    "hardswish": _layer(lambda nn: nn.nn.Hardswish(), _leaf(X2)),
    "hardsigmoid": _layer(lambda nn: nn.nn.Hardsigmoid(), _leaf(X2)),
    "softmax": _layer(lambda nn: nn.nn.Softmax(-1), _leaf(X2)),
    "zero_pad": _layer(lambda nn: nn.nn.ZeroPad2d((1, 2, 0, 1)), _leaf(X4)),
    "index": _fn(lambda lib: lib.tensor(X2, requires_grad=True)[lib.tensor([0, 2])]),
    "index_columns": _fn(lambda lib: lib.tensor(X2, requires_grad=True)[:, lib.tensor([0, 2])]),
    "select": _fn(lambda lib: lib.tensor(X2, requires_grad=True)[1]),
    "select_negative": _fn(lambda lib: lib.tensor(X2, requires_grad=True).select(1, -1)),
    "slice": _fn(lambda lib: lib.tensor(X2, requires_grad=True)[1:3]),
    "slice_step": _fn(lambda lib: lib.tensor(X2, requires_grad=True)[:, ::2]),
    "narrow": _fn(lambda lib: lib.tensor(X2, requires_grad=True).narrow(1, 1, 2)),
    "var": _fn(lambda lib: lib.tensor(X2, requires_grad=True).var(1)),
    "std_keepdim": _fn(lambda lib: lib.tensor(X2, requires_grad=True).std(-1, correction=0,
                                                                          keepdim=True)),
    "bmm": _fn(lambda lib: lib.bmm(lib.tensor(X3, requires_grad=True),
                                   lib.tensor(X3).transpose(1, 2))),
    "baddbmm": _fn(lambda lib: lib.baddbmm(lib.tensor(X2[:, :5]), lib.tensor(X3[:, :4], requires_grad=True),
                                           lib.tensor(X3, requires_grad=True).transpose(1, 2),
                                           beta=0.5, alpha=2)),
    "addmm_frozen_mat1": _fn(lambda lib: lib.addmm(lib.tensor(X2[0, :4], requires_grad=True),
                                                   lib.tensor(X2),
                                                   lib.tensor(Y2, requires_grad=True).t())),
    "stack": _fn(lambda lib: lib.stack([lib.tensor(X2, requires_grad=True)] * 2, -1)),
    "chunk": _fn(lambda lib: lib.tensor(X2, requires_grad=True).chunk(2, 1)[0]),
    "split_sizes": _fn(lambda lib: lib.tensor(X2, requires_grad=True).split([1, 3])[1]),
    "unbind": _fn(lambda lib: lib.tensor(X2, requires_grad=True).unbind(1)[2]),
    "where": _fn(lambda lib: lib.where(lib.tensor(X2) > 0, lib.tensor(X2, requires_grad=True),
                                       lib.tensor(Y2, requires_grad=True))),
    "masked_fill": _fn(lambda lib: lib.tensor(X2, requires_grad=True).masked_fill(
        lib.tensor(X2) > 0, 1.0)),
    "clamp": _fn(lambda lib: lib.tensor(X2, requires_grad=True).clamp(-0.5, 0.5)),
    "clamp_min": _fn(lambda lib: lib.tensor(X2, requires_grad=True).clamp(min=0.1)),
    "clamp_tensors": _fn(lambda lib: lib.tensor(X2, requires_grad=True).clamp(
        lib.tensor(Y2[0]), lib.tensor(Y2[0] + 1))),
    "tril": _fn(lambda lib: lib.tensor(X2, requires_grad=True).tril(1)),
    "triu_negative": _fn(lambda lib: lib.tensor(X2, requires_grad=True).triu(-1)),
    "vector_norm": _fn(lambda lib: lib.tensor(X2, requires_grad=True).norm(dim=1)),
    "vector_norm_ord": _fn(lambda lib: lib.linalg.vector_norm(lib.tensor(X2, requires_grad=True), 3,
                                                              (0, 1), keepdim=True)),
    "addcmul": _fn(lambda lib: lib.addcmul(lib.tensor(X2, requires_grad=True), lib.tensor(X2),
                                           lib.tensor(Y2, requires_grad=True), value=0.5)),
    "addcdiv": _fn(lambda lib: lib.addcdiv(lib.tensor(X2[0]), lib.tensor(X2, requires_grad=True),
                                           lib.tensor(Y2 + 3), value=2)),
    "topk": _fn(lambda lib: lib.tensor(X2, requires_grad=True).topk(2)[0]),
    "sort": _fn(lambda lib: lib.tensor(X2, requires_grad=True).sort(0)[0]),
    "index_select": _fn(lambda lib: lib.tensor(X2, requires_grad=True).index_select(
        1, lib.tensor([0, 2]))),
}

# (node, field): fields ember's node does not keep (reading them raises NotImplementedError);
# listed so that a new one is a decision
NOT_KEPT = {
    ("MaxPool2DWithIndicesBackward0", "self"), ("AvgPool2DBackward0", "self"),
    ("AdaptiveAvgPool2DBackward0", "self"), ("AdaptiveMaxPool2DBackward0", "self"),
    ("NativeBatchNormBackward0", "running_mean"), ("NativeBatchNormBackward0", "running_var"),
    ("NativeLayerNormBackward0", "bias"), ("UnsqueezeBackward0", "dim"),
    ("SqueezeBackward1", "dim"), ("SqueezeBackward2", "dim"),
}
# fields torch keeps as passed where ember keeps what they resolve to
DIM_FIELDS = {"dim", "dims"}


def _pool_stride_as_passed(node, name, tv, ev, enode):
    """A pooling's stride left out is () to torch, the kernel size to ember."""
    return name == "stride" and tv == () and ev == enode._saved_kernel_size


def _walk(tnode, enode, out, seen):
    if tnode is None or enode is None or id(tnode) in seen:
        return
    seen.add(id(tnode))
    if tnode.name() != enode.name():
        return   # ember builds this part of the graph from other steps
    out.append((tnode, enode))
    for (t, _), (e, _) in zip(tnode.next_functions, enode.next_functions):
        _walk(t, e, out, seen)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_saved_fields_match_torch(name):
    state = {}
    tout = PROGRAMS[name](torch, state)
    eout = PROGRAMS[name](ember, state)
    pairs = []
    _walk(tout.grad_fn, eout.grad_fn, pairs, set())
    compared = not_kept = 0
    for tnode, enode in pairs:
        fields = type(enode).saved_fields
        for attr in dir(tnode):
            if not attr.startswith("_saved_"):
                continue
            field = attr[len("_saved_"):]
            key = (enode.name(), field)
            assert field in fields, f"{enode.name()} has no {attr}"
            if key in NOT_KEPT:
                with pytest.raises(NotImplementedError, match=field):
                    getattr(enode, attr)
                not_kept += 1
                continue
            tv, ev = _value(getattr(tnode, attr)), _value(getattr(enode, attr))
            compared += 1
            if field in DIM_FIELDS:
                assert _same_dims(getattr(tnode, attr), ev), (key, tv, ev)
            elif not _pool_stride_as_passed(enode, field, tv, ev, enode):
                assert _same(tv, ev), (key, tv, ev)
    assert compared or not_kept, "no field checked"


def test_not_kept_fields_name_what_is_missing():
    x = ember.randn(1, 1, 4, 4, requires_grad=True)
    y = ember.nn.functional.max_pool2d(x, 2)
    with pytest.raises(NotImplementedError, match="MaxPool2DWithIndicesBackward0._saved_self"):
        y.grad_fn._saved_self
    assert y.grad_fn._saved_kernel_size == (2, 2)


def test_reading_fields_leaves_backward_unchanged():
    grads = []
    for read in (False, True):
        x = ember.tensor(X4, requires_grad=True)
        conv = ember.nn.Conv2d(3, 2, 3).double()
        ember.nn.init.constant_(conv.weight, 0.1)
        y = ember.nn.functional.max_pool2d(conv(x), 2)
        if read:
            assert y.grad_fn._saved_result1.shape == y.shape
            assert y.grad_fn.next_functions[0][0]._saved_input is not None
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
