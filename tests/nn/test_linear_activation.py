"""Linear layers, activations, dropout, embeddings and distances against torch."""
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
    from ._oracle_layers import check_function, check_layer, gradcheck_both, to_ember
except ImportError:
    from _oracle_layers import check_function, check_layer, gradcheck_both, to_ember


ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}),
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 1.0}), ("softsign", {}),
    ("sigmoid", {}), ("hardsigmoid", {}), ("hardswish", {}), ("hardtanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("tanh", {}), ("tanhshrink", {}),
    ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("hardshrink", {}),
    ("hardshrink", {"lambd": 0.3}), ("threshold", {"threshold": 0.1, "value": 20.0}),
    ("logsigmoid", {}), ("softmax", {"dim": 1}), ("softmax", {"dim": -1}),
    ("log_softmax", {"dim": 0}), ("log_softmax", {"dim": 2}), ("softmin", {"dim": 1}),
    ("glu", {}), ("glu", {"dim": 1}),
]


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(3, 4, 2), (2, 6, 2)])
def test_activation_function_matches_torch(name, kwargs, shape):
    x = np.random.default_rng(1).standard_normal(shape) * 3
    if name == "threshold":
        ember_fn = lambda t: F.threshold(t, **kwargs)  # noqa: E731
        torch_fn = lambda t: TF.threshold(t, **kwargs)  # noqa: E731
    else:
        ember_fn = lambda t: getattr(F, name)(t, **kwargs)  # noqa: E731
        torch_fn = lambda t: getattr(TF, name)(t, **kwargs)  # noqa: E731
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = ember_fn(xe), torch_fn(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-7, atol=1e-12)
    g = np.random.default_rng(2).standard_normal(tuple(yt.shape))
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [a for a in ACTIVATIONS if a[0] not in (
    "relu", "relu6", "hardtanh", "hardshrink", "softshrink", "threshold", "hardsigmoid")])
def test_activation_second_order(name, kwargs):
    gradcheck_both(lambda t: getattr(F, name)(t, **kwargs), [(2, 2, 2)])


def test_single_node_activations_have_torch_names():
    x = ember.randn(2, 3, requires_grad=True)
    assert F.relu(x).grad_fn.name() == "ReluBackward0"
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    assert F.hardtanh(x).grad_fn.name() == "HardtanhBackward0"
    for fn, name in ((F.elu, "EluBackward0"), (F.selu, "EluBackward0"), (F.celu, "CeluBackward0"),
                     (F.softplus, "SoftplusBackward0"), (F.mish, "MishBackward0"),
                     (F.logsigmoid, "LogSigmoidBackward0")):
        assert fn(x).grad_fn.name() == name


@pytest.mark.parametrize("name,kwargs", [("elu", {"alpha": 0.7}), ("selu", {}), ("celu", {"alpha": 1.3}),
                                         ("softplus", {"beta": 2, "threshold": 15}), ("mish", {})])
def test_single_node_activations_of_large_float32_match_torch(name, kwargs):
    """The activations computed on their arrays with one node: torch's values, gradients and
    saved fields on a large float32 input, its tails and 0 included."""
    x = (np.random.default_rng(3).standard_normal((64, 300)) * 4).astype(np.float32)
    x[0, :3] = [0.0, 30.0, -30.0]
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(t, **kwargs)
        saved = {k: getattr(y.grad_fn, "_saved_" + k) for k in ("alpha", "scale", "input_scale", "beta", "threshold")
                 if hasattr(type(y.grad_fn), "_saved_" + k) or ("_saved_" + k) in dir(y.grad_fn)}
        y.backward(lib.ones_like(y))
        results.append((type(y.grad_fn).__name__, saved, y.detach().numpy(), t.grad.numpy()))
    (node, saved, *values), (want_node, want_saved, *want_values) = results
    assert node == want_node and saved == want_saved
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_softmax_is_stable_and_handles_infinities():
    x = ember.tensor([[1000.0, 1001.0, -float("inf")], [-1000.0, -1000.0, -1000.0]])
    t = torch.tensor(x.numpy())
    np.testing.assert_allclose(F.softmax(x, 1).numpy(), TF.softmax(t, 1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(F.log_softmax(x, 1).numpy(), TF.log_softmax(t, 1).numpy(), rtol=1e-6)
    assert F.softmax(ember.tensor(2.0), 0).item() == 1.0
    assert F.softmax(x, 1, dtype=ember.float64).dtype == ember.float64


def test_softmax_without_dim_warns_and_picks_torch_dim():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        ye = F.softmax(ember.tensor(x))
    with pytest.warns(UserWarning):
        yt = TF.softmax(torch.tensor(x))
    np.testing.assert_allclose(ye.numpy(), yt.numpy())


def test_activation_extremes_have_finite_gradients():
    x = np.array([-200.0, -30.0, -1.0, 0.5, 30.0, 200.0])
    for name in ("elu", "selu", "celu", "softplus", "mish", "logsigmoid", "silu", "gelu"):
        check_function(getattr(F, name), getattr(TF, name), [(0,)])  # empty input
        xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        getattr(F, name)(xe).sum().backward()
        getattr(TF, name)(xt).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


@pytest.mark.parametrize("name,kwargs", [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {}),
    ("selu", {}), ("celu", {}), ("silu", {}), ("mish", {}), ("hardsigmoid", {}),
    ("hardswish", {}), ("hardtanh", {}), ("threshold", {"threshold": 0.0, "value": -1.0}),
])
def test_inplace_activation_writes_into_input(name, kwargs):
    x = np.random.default_rng(3).standard_normal((3, 4))
    ae, at = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    he, ht = ae * 2, at * 2
    re = getattr(F, name)(he, inplace=True, **kwargs)
    rt = getattr(TF, name)(ht, inplace=True, **kwargs)
    assert re is he
    np.testing.assert_allclose(he.detach().numpy(), ht.detach().numpy(), rtol=1e-12)
    re.sum().backward()
    rt.sum().backward()
    np.testing.assert_allclose(ae.grad.numpy(), at.grad.numpy(), rtol=1e-7)  # torch: float 1/6


def test_inplace_on_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.relu(ember.randn(3, requires_grad=True), inplace=True)
    y = ember.tensor([-1.0, 2.0])
    assert F.relu_(y) is y and y.tolist() == [0.0, 2.0]
    assert ember.tensor([-1.0, 3.0]).relu().tolist() == [0.0, 3.0]


ACTIVATION_MODULES = [
    ("ReLU", (), {}), ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}), ("LeakyReLU", (0.2,), {}),
    ("LeakyReLU", (), {"inplace": True}), ("PReLU", (), {}), ("PReLU", (4,), {"init": 0.1}),
    ("ELU", (), {"alpha": 0.7}), ("SELU", (), {}), ("CELU", (1.5,), {}), ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Mish", (), {}),
    ("Softplus", (2.0, 5.0), {}), ("Softsign", (), {}), ("Sigmoid", (), {}),
    ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Hardtanh", (-2.0, 2.0), {}), ("Tanh", (), {}),
    ("Tanhshrink", (), {}), ("Softshrink", (0.3,), {}), ("Hardshrink", (), {}),
    ("Threshold", (0.1, 2.0), {}), ("LogSigmoid", (), {}), ("Softmax", (1,), {}),
    ("LogSoftmax", (-1,), {}), ("Softmin", (1,), {}), ("GLU", (1,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ACTIVATION_MODULES)
def test_activation_module_matches_torch(name, args, kwargs):
    if kwargs.get("inplace"):
        em, tm = getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)
        assert repr(em) == repr(tm)
        return
    em, tm = check_layer(getattr(nn, name), getattr(tnn, name), args, (2, 4, 3), kwargs)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,)])
def test_linear_matches_torch(bias, shape, device):
    em, tm = check_layer(nn.Linear, tnn.Linear, (3, 4), shape, {"bias": bias}, device=device)
    assert repr(em) == repr(tm)


def test_linear_init_distribution():
    ember.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)  # kaiming_uniform(a=sqrt(5)) gives the same bound
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and abs(w.mean()) < 0.01 * bound
    assert layer.weight.dtype == ember.float32
    assert nn.Linear(2, 3, dtype=ember.float64).weight.dtype == ember.float64


def test_linear_shape_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 3x4\)"):
        nn.Linear(3, 4)(ember.randn(2, 5))


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(bias):
    torch.manual_seed(0)
    tm = tnn.Bilinear(3, 2, 4, bias=bias).double()
    em = nn.Bilinear(3, 2, 4, bias=bias).double()
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    assert repr(em) == repr(tm)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    ae, be = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ye, yt = em(ae, be), tm(at, bt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ae.grad.numpy(), at.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(be.grad.numpy(), bt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-10)


def test_lazy_linear_infers_in_features():
    layer = nn.LazyLinear(4)
    assert repr(layer) == repr(tnn.LazyLinear(4))
    out = layer(ember.randn(2, 3))
    assert out.shape == (2, 4) and type(layer) is nn.Linear
    assert layer.weight.shape == (4, 3) and layer.in_features == 3
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad


def test_identity_flatten_unflatten():
    assert repr(nn.Identity(3, x=1)) == repr(tnn.Identity(3, x=1))
    x = ember.randn(2, 3)
    assert nn.Identity()(x) is x
    check_layer(nn.Flatten, tnn.Flatten, (), (2, 3, 4, 5), modes=("train",))
    em, tm = check_layer(nn.Flatten, tnn.Flatten, (0, 2), (2, 3, 4, 5), modes=("train",))
    assert repr(em) == repr(tm)
    em, tm = check_layer(nn.Unflatten, tnn.Unflatten, (1, (2, 6)), (2, 12, 3), modes=("train",))
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout_statistics_and_gradient(p):
    ember.manual_seed(0)
    x = ember.ones(200, 100, requires_grad=True)
    layer = nn.Dropout(p)
    y = layer(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - (1 - p)) < 0.02
    if p < 1:
        np.testing.assert_allclose(y.detach().numpy()[kept], 1 / (1 - p))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    layer.eval()
    assert layer(x) is x
    assert repr(layer) == repr(tnn.Dropout(p))


def test_dropout_rejects_bad_p():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="but got -0.1"):
        F.dropout(ember.ones(2), -0.1)


@pytest.mark.parametrize("cls,shape", [
    ("Dropout1d", (4, 50, 6)), ("Dropout2d", (4, 50, 3, 3)), ("Dropout3d", (4, 50, 2, 2, 2)),
    ("Dropout1d", (50, 6)), ("Dropout3d", (50, 2, 2, 2)),
])
def test_channel_dropout_zeroes_whole_channels(cls, shape):
    ember.manual_seed(0)
    y = getattr(nn, cls)(0.5)(ember.ones(*shape)).numpy()
    lead = 2 if len(shape) in (3, 4, 5) and cls != "Dropout1d" or len(shape) == 3 else 1
    lead = 1 if (cls, len(shape)) in (("Dropout1d", 2), ("Dropout3d", 4)) else 2
    channels = y.reshape(int(np.prod(shape[:lead])), -1)
    assert ((channels == 0).all(1) | (channels == 2).all(1)).all()
    assert 0.3 < (channels[:, 0] == 0).mean() < 0.7


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(0)
    x = ember.randn(400, 250)
    y = nn.AlphaDropout(0.3).train()(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert (nn.AlphaDropout(0.3).eval()(x) is x)
    y = F.feature_alpha_dropout(ember.randn(50, 40, 30), 0.5, training=True).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0},
                                    {"scale_grad_by_freq": True, "padding_idx": 0}])
def test_embedding_matches_torch(kwargs):
    torch.manual_seed(0)
    tm = tnn.Embedding(6, 3, **kwargs).double()
    em = nn.Embedding(6, 3, **kwargs).double()
    assert repr(em) == repr(tm)
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    idx = np.array([[0, 1, 5], [1, 1, 3]])
    ye, yt = em(ember.tensor(idx)), tm(torch.tensor(idx))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
    g = np.random.default_rng(0).standard_normal((2, 3, 3))
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)


def test_embedding_init_padding_and_errors():
    ember.manual_seed(0)
    e = nn.Embedding(500, 40, padding_idx=3)
    w = e.weight.detach().numpy()
    assert (w[3] == 0).all() and abs(w.std() - 1) < 0.02
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
    with pytest.raises(IndexError, match="index out of range in self"):
        e(ember.tensor([500]))
    pre = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(pre)
    assert not frozen.weight.requires_grad
    assert frozen(ember.tensor([1])).tolist() == [[3.0, 4.0]]
    assert nn.Embedding.from_pretrained(pre, freeze=False).weight.requires_grad


def test_embedding_double_backward():
    w = ember.randn(5, 3, dtype=ember.float64, requires_grad=True)
    idx = ember.tensor([0, 2, 2, 4])
    assert ember.autograd.gradcheck(lambda t: F.embedding(idx, t), (w,))
    out = F.embedding(idx, w, padding_idx=2)
    out.sum().backward()
    assert w.grad.tolist()[2] == [0.0, 0.0, 0.0] and w.grad.tolist()[0] == [1.0, 1.0, 1.0]
    assert ember.autograd.gradgradcheck(lambda t: F.embedding(idx, t) ** 2, (w,))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last_offset", "padding"])
def test_embedding_bag_matches_torch(mode, layout):
    torch.manual_seed(0)
    kwargs = {"mode": mode}
    if layout == "last_offset":
        kwargs["include_last_offset"] = True
    if layout == "padding":
        kwargs["padding_idx"] = 2
    tm = tnn.EmbeddingBag(7, 3, **kwargs).double()
    em = nn.EmbeddingBag(7, 3, **kwargs).double()
    assert repr(em) == repr(tm)
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    if layout == "2d":
        args = (np.array([[1, 2, 4], [4, 3, 2]]),)
    elif layout == "last_offset":
        args = (np.array([1, 2, 4, 5, 4, 3, 2]), np.array([0, 2, 2, 7]))
    else:
        args = (np.array([1, 2, 4, 5, 4, 3, 2]), np.array([0, 2, 2, 5]))
    ye = em(*[ember.tensor(a) for a in args])
    yt = tm(*[torch.tensor(a) for a in args])
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    g = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-10)


def test_embedding_bag_per_sample_weights():
    torch.manual_seed(0)
    tm = tnn.EmbeddingBag(7, 3, mode="sum").double()
    em = nn.EmbeddingBag(7, 3, mode="sum").double()
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    idx, off = np.array([1, 2, 4, 5, 4]), np.array([0, 3])
    w = np.random.default_rng(1).standard_normal(5)
    we, wt = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ye = em(ember.tensor(idx), ember.tensor(off), per_sample_weights=we)
    yt = tm(torch.tensor(idx), torch.tensor(off), per_sample_weights=wt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(ember.tensor(idx), em.weight, ember.tensor(off), mode="mean",
                        per_sample_weights=we)


@pytest.mark.parametrize("shapes,kwargs", [
    ([(4, 5), (4, 5)], {}), ([(4, 5), (1, 5)], {"p": 1.0}), ([(3, 5), (3, 5)], {"p": 3.0, "keepdim": True}),
    ([(5,), (5,)], {}), ([(2, 3, 4), (2, 3, 4)], {"eps": 0.1}),
])
def test_pairwise_distance_matches_torch(shapes, kwargs):
    check_function(F.pairwise_distance, TF.pairwise_distance, shapes, **kwargs)
    em, tm = nn.PairwiseDistance(**kwargs), tnn.PairwiseDistance(**kwargs)
    check_function(em, tm, shapes)


@pytest.mark.parametrize("shapes,kwargs", [
    ([(4, 5), (4, 5)], {}), ([(4, 5), (1, 5)], {"dim": 1}), ([(3, 5, 2), (3, 5, 2)], {"dim": 0}),
    ([(2, 3, 4), (2, 3, 4)], {"dim": -1, "eps": 1e-3}),
])
def test_cosine_similarity_matches_torch(shapes, kwargs):
    check_function(F.cosine_similarity, TF.cosine_similarity, shapes, **kwargs)
    check_function(nn.CosineSimilarity(**kwargs), tnn.CosineSimilarity(**kwargs), shapes)


@pytest.mark.parametrize("shape,classes,dtype", [
    ((), 4, np.int64), ((7,), -1, np.int64), ((3, 5), 6, np.int64), ((2, 3, 4), -1, np.int32),
    ((0,), 3, np.int64), ((2, 0), 5, np.uint8), ((16000,), 27, np.int64)])
def test_one_hot_matches_torch_on_every_shape(shape, classes, dtype):
    values = np.random.default_rng(len(shape)).integers(0, 3, shape).astype(dtype)
    got = F.one_hot(ember.tensor(values), classes)
    want = TF.one_hot(torch.tensor(values.astype(np.int64)), classes)
    assert got.dtype == ember.int64 and got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_one_hot_normalize_linear_functional():
    t = ember.tensor([[0, 2], [1, 3]])
    assert F.one_hot(t).tolist() == TF.one_hot(torch.tensor(t.numpy())).tolist()
    assert F.one_hot(t, 5).shape == (2, 2, 5) and F.one_hot(t).dtype == ember.int64
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(t, 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(ember.tensor([-1]))
    check_function(F.normalize, TF.normalize, [(3, 4)])
    check_function(F.normalize, TF.normalize, [(3, 4, 2)], p=1.0, dim=-1)
    check_function(F.linear, TF.linear, [(2, 5, 3), (4, 3), (4,)])
    check_function(F.linear, TF.linear, [(3,), (4, 3)])
    check_function(F.bilinear, TF.bilinear, [(2, 3), (2, 4), (5, 3, 4), (5,)])
    gradcheck_both(lambda a, w, b: F.linear(a, w, b), [(2, 3), (4, 3), (4,)])


@pytest.mark.parametrize("kwargs,mask", [
    ({}, None), ({"is_causal": True}, None), ({"scale": 0.3}, None), ({}, "bool"), ({}, "float"),
])
def test_scaled_dot_product_attention_matches_torch(kwargs, mask):
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 2))
    if kwargs.get("is_causal"):
        k, v = k[:, :, :4], v[:, :, :4]
    extra_e, extra_t = {}, {}
    if mask == "bool":
        m = rng.random((4, 6)) > 0.3
        m[:, 0] = True
        extra_e["attn_mask"], extra_t["attn_mask"] = ember.tensor(m), torch.tensor(m)
    elif mask == "float":
        m = rng.standard_normal((4, 6))
        extra_e["attn_mask"], extra_t["attn_mask"] = ember.tensor(m), torch.tensor(m)
    te = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    tt = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ye = F.scaled_dot_product_attention(*te, **kwargs, **extra_e)
    yt = TF.scaled_dot_product_attention(*tt, **kwargs, **extra_t)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-9, atol=1e-12)
    ye.sum().backward()
    yt.sum().backward()
    for a, b in zip(te, tt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_scaled_dot_product_attention_dropout_in_expectation():
    ember.manual_seed(0)
    q = ember.randn(1, 1, 2, 3)
    k, v = ember.randn(1, 1, 4, 3), ember.randn(1, 1, 4, 3)
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    runs = np.mean([F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
                    for _ in range(3000)], axis=0)
    np.testing.assert_allclose(runs, plain, atol=0.08)


def test_softmax_of_empty_tensors():
    assert F.softmax(ember.randn(3, 0), 1).shape == (3, 0)
    assert F.log_softmax(ember.randn(0, 4), 1).shape == (0, 4)


def test_activation_dtype_errors_match_torch():
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.softmax(ember.tensor([1, 2]), 0)
    with pytest.raises(NotImplementedError, match="\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.log_softmax(ember.tensor([1, 2]), 0)
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        F.relu(ember.tensor([True]))
    assert F.softmax(ember.tensor([1, 2]), 0, dtype=ember.float64).dtype == ember.float64
    assert F.relu(ember.tensor([-1, 2])).tolist() == [0, 2]


def test_scaled_dot_product_attention_gqa_and_fully_masked_rows():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((1, 4, 3, 5)), rng.standard_normal((1, 2, 6, 5)), rng.standard_normal((1, 2, 6, 2))
    ye = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), enable_gqa=True)
    yt = TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), enable_gqa=True)
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-10)
    mask = np.ones((3, 6), bool)
    mask[1] = False
    te = [ember.tensor(a, requires_grad=True) for a in (q[:, :2], k, v)]
    tt = [torch.tensor(a, requires_grad=True) for a in (q[:, :2], k, v)]
    ye = F.scaled_dot_product_attention(*te, attn_mask=ember.tensor(mask))
    yt = TF.scaled_dot_product_attention(*tt, attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-15)
    ye.sum().backward()
    yt.sum().backward()
    for a, b in zip(te, tt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_family_with_inf_and_nan_match_torch(dim):
    """A +inf or a NaN makes its whole row NaN in softmax, log_softmax, cross entropy and
    attention (torch's ``inf - inf``), without a warning; -inf is a probability of 0."""
    x = np.random.default_rng(16).standard_normal((4, 5)).astype(np.float32)
    x[1, 2], x[3, 1], x[2, 3] = np.inf, np.nan, -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("softmax", "log_softmax"):
            got = getattr(F, name)(ember.tensor(x), dim).numpy()
            want = getattr(TF, name)(torch.tensor(x), dim).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
        target = np.arange(4) % 5
        got = F.cross_entropy(ember.tensor(x), ember.tensor(target), reduction="none").numpy()
        want = TF.cross_entropy(torch.tensor(x), torch.tensor(target), reduction="none").numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
        q = np.random.default_rng(17).standard_normal((1, 2, 4, 8)).astype(np.float32)
        k = q.copy()
        k[0, 0, 1, 3] = np.inf
        got = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, q))).numpy()
        want = TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, q))).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
