"""Loss functions and loss layers against torch."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as nn
import ember.nn.functional as F

REDUCTIONS = ["none", "mean", "sum"]


def _pair(array, requires_grad, device="cpu"):
    return (ember.tensor(array, requires_grad=requires_grad, device=device),
            torch.tensor(array, requires_grad=requires_grad))


def compare(ember_fn, torch_fn, inputs, grad_inputs=None, rtol=1e-9, atol=1e-12, device="cpu",
            **kwargs):
    """Run both on the same arrays (float arrays require grad unless ``grad_inputs`` says which
    do; ember's on ``device``) and compare outputs and gradients."""
    if grad_inputs is None:
        grad_inputs = [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in inputs]
    pairs = [_pair(a, g, device) if isinstance(a, np.ndarray) else (a, a)
             for a, g in zip(inputs, grad_inputs)]
    ye = ember_fn(*[p[0] for p in pairs], **_kw(kwargs, 0, device))
    yt = torch_fn(*[p[1] for p in pairs], **_kw(kwargs, 1))
    assert tuple(ye.shape) == tuple(yt.shape) and ye.device.type == device
    np.testing.assert_allclose(ye.detach().cpu().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(5).standard_normal(tuple(yt.shape))
    ye.backward(ember.tensor(g, device=device))
    yt.backward(torch.tensor(g))
    for i, ((e, t), wanted) in enumerate(zip(pairs, grad_inputs)):
        if wanted and e.grad is None:  # no path from this input: torch may give zeros
            assert t.grad is None or not t.grad.any(), f"grad of input {i}"
        elif wanted:
            np.testing.assert_allclose(e.grad.cpu().numpy(), t.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"grad of input {i}")


def _kw(kwargs, side, device="cpu"):
    """kwargs whose values may be (ember, torch) pairs made from arrays."""
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            v = ember.tensor(v, device=device) if side == 0 else torch.tensor(v)
        out[k] = v
    return out


rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [
    ("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 0.3}),
    ("soft_margin_loss", {}),
])
def test_regression_losses(name, kwargs, reduction, device):
    grads = [True, name != "soft_margin_loss"]  # torch refuses a target that requires grad there
    compare(getattr(F, name), getattr(TF, name), [randn(3, 4), randn(3, 4)], grads,
            reduction=reduction, device=device, **kwargs)
    compare(getattr(F, name), getattr(TF, name), [randn(5), randn(5)], grads, reduction=reduction,
            device=device, **kwargs)


def test_broadcasting_target_warns_like_torch():
    with pytest.warns(UserWarning, match=r"Using a target size \(ember.Size\(\[4\]\)\) that is "
                                         r"different to the input size \(ember.Size\(\[3, 4\]\)\)"):
        F.mse_loss(ember.randn(3, 4), ember.randn(4))
    with pytest.raises(ValueError, match="mean_ is not a valid value for reduction"):
        F.l1_loss(ember.randn(2), ember.randn(2), reduction="mean_")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ["2d", "1d", "spatial", "weight", "ignore", "smooth", "smooth_weight_ignore"])
def test_cross_entropy_class_indices(case, reduction, device):
    kwargs = {"reduction": reduction, "device": device}
    x, t = randn(4, 5), rng.integers(0, 5, 4)
    if case == "1d":
        x, t = randn(5), np.array(3)
    if case == "spatial":
        x, t = randn(2, 3, 4, 2), rng.integers(0, 3, (2, 4, 2))
    if case in ("weight", "smooth_weight_ignore"):
        kwargs["weight"] = rng.random(5) + 0.5
    if case in ("ignore", "smooth_weight_ignore"):
        t[1] = 2
        kwargs["ignore_index"] = 2
    if case.startswith("smooth"):
        kwargs["label_smoothing"] = 0.2
    compare(F.cross_entropy, TF.cross_entropy, [x, t], **kwargs)
    compare(F.nll_loss, TF.nll_loss, [x, t], **{k: v for k, v in kwargs.items() if k != "label_smoothing"})


def test_cross_entropy_is_one_node_and_twice_differentiable():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 3, 1])
    assert F.cross_entropy(x, t).grad_fn.name() == "CrossEntropyLossBackward0"
    for kwargs in ({}, {"label_smoothing": 0.1, "weight": ember.tensor([1.0, 2.0, 0.5, 1.0],
                                                                        dtype=ember.float64)},
                   {"reduction": "none"}, {"reduction": "sum", "ignore_index": 1}):
        assert ember.autograd.gradcheck(lambda a: F.cross_entropy(a, t, **kwargs), (x,))
        assert ember.autograd.gradgradcheck(lambda a: F.cross_entropy(a, t, **kwargs), (x,))


def test_cross_entropy_all_ignored_gives_nan_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3))
    t = np.array([1, 1])
    e = F.cross_entropy(ember.tensor(x), ember.tensor(t), ignore_index=1)
    assert np.isnan(e.item()) and np.isnan(TF.cross_entropy(torch.tensor(x), torch.tensor(t), ignore_index=1).item())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.3}, {"weight": np.array([1.0, 2.0, 3.0])}])
def test_cross_entropy_class_probabilities(kwargs, reduction, device):
    probs = np.random.default_rng(1).dirichlet(np.ones(3), size=(4, 2)).transpose(0, 2, 1)
    compare(F.cross_entropy, TF.cross_entropy, [randn(4, 3, 2), probs], reduction=reduction,
            device=device, **kwargs)


def test_cross_entropy_errors_match_torch():
    x = ember.randn(3, 5)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, ember.tensor([1, 7, 2]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.nll_loss(x, ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.cross_entropy(ember.randn(2, 3, 4), ember.zeros(2, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, ember.tensor([1.0, 2.0, 0.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    p, t = rng.random((3, 4)) * 0.98 + 0.01, rng.random((3, 4))
    compare(F.binary_cross_entropy, TF.binary_cross_entropy, [p, t], reduction=reduction)
    compare(F.binary_cross_entropy, TF.binary_cross_entropy, [p, t], reduction=reduction,
            weight=rng.random(4))
    compare(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
            [randn(3, 4) * 5, t], reduction=reduction)
    compare(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
            [randn(3, 4) * 5, t], reduction=reduction, weight=rng.random(4),
            pos_weight=rng.random(4) * 3)


def test_binary_cross_entropy_edges_and_errors():
    p = np.array([0.0, 1.0, 0.5])
    t = np.array([1.0, 0.0, 1.0])
    e = F.binary_cross_entropy(ember.tensor(p), ember.tensor(t), reduction="none")
    tt = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t), reduction="none")
    np.testing.assert_allclose(e.numpy(), tt.numpy())
    with pytest.raises(ValueError, match="is deprecated. Please ensure they have the same size."):
        F.binary_cross_entropy(ember.rand(3), ember.rand(3, 1))
    with pytest.raises(ValueError, match=r"Target size \(ember.Size\(\[3, 4\]\)\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(ember.randn(3, 5), ember.rand(3, 4))
    big = np.array([100.0, -100.0])
    compare(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
            [big, np.array([0.0, 1.0])])


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np.log(np.random.default_rng(2).dirichlet(np.ones(4), 3))
    t = np.random.default_rng(3).dirichlet(np.ones(4), 3)
    t[0, 0] = 0.0
    if log_target:
        t = np.log(t + 0.01)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(F.kl_div, TF.kl_div, [x, t], reduction=reduction, log_target=log_target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"log_input": False}, {"full": True},
                                    {"log_input": False, "full": True, "eps": 0.1}])
def test_poisson_nll(kwargs, reduction):
    x = rng.random((3, 4)) + 0.1
    t = rng.integers(0, 5, (3, 4)).astype(float)
    compare(F.poisson_nll_loss, TF.poisson_nll_loss, [x, t], reduction=reduction, **kwargs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1)])
def test_gaussian_nll(var_shape, reduction):
    var = rng.random(var_shape) + 0.1
    compare(F.gaussian_nll_loss, TF.gaussian_nll_loss, [randn(3, 4), randn(3, 4), var],
            reduction=reduction)
    compare(F.gaussian_nll_loss, TF.gaussian_nll_loss, [randn(3, 4), randn(3, 4), var],
            reduction=reduction, full=True, eps=0.5)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ember.randn(3, 4), ember.randn(3, 4), ember.ones(2))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(ember.randn(3, 4), ember.randn(3, 4), -ember.ones(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_and_embedding_losses(reduction):
    y = np.array([1.0, -1.0, 1.0, -1.0])
    compare(F.margin_ranking_loss, TF.margin_ranking_loss, [randn(4), randn(4), y],
            reduction=reduction, margin=0.3)
    compare(F.hinge_embedding_loss, TF.hinge_embedding_loss, [randn(4, 1), y.reshape(4, 1)],
            reduction=reduction, margin=0.5)
    compare(F.cosine_embedding_loss, TF.cosine_embedding_loss, [randn(4, 3), randn(4, 3), y],
            reduction=reduction, margin=0.2)
    compare(F.cosine_embedding_loss, TF.cosine_embedding_loss, [randn(3), randn(3), np.array(-1.0)],
            reduction=reduction)
    compare(F.triplet_margin_loss, TF.triplet_margin_loss, [randn(4, 3), randn(4, 3), randn(4, 3)],
            reduction=reduction)
    compare(F.triplet_margin_loss, TF.triplet_margin_loss, [randn(4, 3), randn(4, 3), randn(4, 3)],
            reduction=reduction, margin=2.0, p=1.0, swap=True)
    compare(F.triplet_margin_with_distance_loss, TF.triplet_margin_with_distance_loss,
            [randn(4, 3), randn(4, 3), randn(4, 3)], reduction=reduction, margin=1.5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_and_multiclass_margin_losses(reduction):
    x = randn(3, 5)
    labels = (rng.random((3, 5)) > 0.5).astype(float)
    compare(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss, [x, labels],
            reduction=reduction)
    compare(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss, [x, labels],
            reduction=reduction, weight=rng.random(5))
    t = np.array([1, 4, 0])
    for kwargs in ({}, {"p": 2, "margin": 0.5}, {"weight": rng.random(5)}):
        compare(F.multi_margin_loss, TF.multi_margin_loss, [x, t], reduction=reduction, **kwargs)
    compare(F.multi_margin_loss, TF.multi_margin_loss, [randn(5), np.array([2])], reduction=reduction)
    mt = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 2, 3, 4]])
    compare(F.multilabel_margin_loss, TF.multilabel_margin_loss, [x, mt], reduction=reduction)
    compare(F.multilabel_margin_loss, TF.multilabel_margin_loss, [randn(4), np.array([2, 0, -1, 1])],
            reduction=reduction)


LOSS_MODULES = [
    ("L1Loss", {}, "reg"), ("MSELoss", {"reduction": "sum"}, "reg"), ("SmoothL1Loss", {"beta": 0.5}, "reg"),
    ("HuberLoss", {"delta": 0.5}, "reg"), ("SoftMarginLoss", {}, "reg"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, "cls"),
    ("CrossEntropyLoss", {"weight": "w", "ignore_index": 1, "reduction": "none"}, "cls"),
    ("NLLLoss", {"weight": "w"}, "cls"), ("MultiMarginLoss", {"p": 2}, "cls"),
    ("BCEWithLogitsLoss", {"pos_weight": "w"}, "bin"), ("BCELoss", {"weight": "w"}, "prob"),
    ("MultiLabelSoftMarginLoss", {}, "bin"), ("KLDivLoss", {"reduction": "batchmean"}, "reg"),
    ("PoissonNLLLoss", {}, "reg"),
]


@pytest.mark.parametrize("name,kwargs,kind", LOSS_MODULES)
def test_loss_modules_match_torch(name, kwargs, kind):
    w = rng.random(5) + 0.5
    ek = {k: ember.tensor(w) if v == "w" else v for k, v in kwargs.items()}
    tk = {k: torch.tensor(w) if v == "w" else v for k, v in kwargs.items()}
    em, tm = getattr(nn, name)(**ek), getattr(tnn, name)(**tk)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    x = randn(4, 5)
    target = {"reg": randn(4, 5), "cls": rng.integers(0, 5, 4), "bin": (rng.random((4, 5)) > 0.5) * 1.0,
              "prob": rng.random((4, 5))}[kind]
    if kind == "prob":
        x = rng.random((4, 5)) * 0.9 + 0.05
    compare(em, tm, [x, target], grad_inputs=[True, False])


def test_legacy_size_average_and_reduce():
    x, t = randn(3), randn(3)
    message = "size_average and reduce args will be deprecated, please use reduction='sum' instead."
    with pytest.warns(UserWarning, match=message):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.warns(UserWarning):
        e = F.l1_loss(ember.tensor(x), ember.tensor(t), reduce=False)
    assert e.shape == (3,)


_T = ember.tensor(np.random.default_rng(9).standard_normal((2, 3)))
_P = ember.tensor(np.random.default_rng(9).random((2, 3)) * 0.8 + 0.1)
_Y = ember.tensor([1.0, -1.0])
_C = ember.tensor([2, 0])


@pytest.mark.parametrize("name,fn", [
    ("mse", lambda x: F.mse_loss(x, _T)), ("l1", lambda x: F.l1_loss(x, _T)),
    ("smooth_l1", lambda x: F.smooth_l1_loss(x, _T, beta=0.7)), ("huber", lambda x: F.huber_loss(x, _T)),
    ("nll", lambda x: F.nll_loss(x, _C, reduction="sum")),
    ("ce_probs", lambda x: F.cross_entropy(x, _P.softmax(1), label_smoothing=0.1)),
    ("bce", lambda x: F.binary_cross_entropy(x.sigmoid(), _P)),
    ("bce_logits", lambda x: F.binary_cross_entropy_with_logits(x, _P, pos_weight=_P[0])),
    ("bce_logits_plain", lambda x: F.binary_cross_entropy_with_logits(x, _P)),
    ("bce_target", lambda x: F.binary_cross_entropy(_P, x.sigmoid(), reduction="none")),
    ("bce_logits_target", lambda x: F.binary_cross_entropy_with_logits(_T, x.sigmoid(), reduction="sum")),
    ("logsigmoid", lambda x: F.logsigmoid(x * 3)),
    ("mse_target", lambda x: F.mse_loss(_T, x, reduction="sum")),
    ("smooth_l1_sum", lambda x: F.smooth_l1_loss(x * 2, _T, beta=0.7, reduction="sum")),
    ("huber_none", lambda x: F.huber_loss(x * 2, _T, delta=0.8, reduction="none")),
    ("kl", lambda x: F.kl_div(x, _P, reduction="batchmean")),
    ("poisson", lambda x: F.poisson_nll_loss(x, _P * 3, full=True)),
    ("gaussian", lambda x: F.gaussian_nll_loss(x, _T, _P)),
    ("cosine_emb", lambda x: F.cosine_embedding_loss(x, _T, _Y)),
    ("multi_margin", lambda x: F.multi_margin_loss(x, _C, p=2)),
    ("multilabel_soft", lambda x: F.multilabel_soft_margin_loss(x, (_P > 0.5).double())),
    ("soft_margin", lambda x: F.soft_margin_loss(x, _T.sign())),
    ("triplet", lambda x: F.triplet_margin_loss(x, _T, _T * 0.5, margin=3.0)),
])
def test_losses_are_twice_differentiable(name, fn):
    x = ember.tensor(np.random.default_rng(4).standard_normal((2, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_and_logsigmoid_are_torchs_single_nodes(reduction):
    """Without weights, binary_cross_entropy_with_logits of float tensors is one node, as
    torch's (its saved fields), and logsigmoid too (its buffer exp(-|x|)): values and both
    gradients as torch's, far tails and 0 included."""
    x = (rng.standard_normal((64, 300)) * 6).astype(np.float32)
    x[0, :3] = [0.0, -100.0, 100.0]
    t = rng.random((64, 300)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        tx, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(tx, tt, reduction=reduction)
        node = loss.grad_fn
        fields = (type(node).__name__, node._saved_reduction, node._saved_weight, node._saved_pos_weight)
        loss.backward(lib.ones_like(loss))
        y = lib.nn.functional.logsigmoid(tx)
        buffer = y.grad_fn._saved_buffer.detach().numpy().copy()
        (gy,) = lib.autograd.grad(y.sum(), tx)
        results.append((fields, loss.detach().numpy(), tx.grad.numpy(), tt.grad.numpy(), y.detach().numpy(),
                        buffer, gy.numpy(), type(y.grad_fn).__name__))
    (fields, *values, name), (want_fields, *want_values, want_name) = results
    assert fields == want_fields and name == want_name == "LogSigmoidBackward0"
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kwargs, node, fields", [
    ("mse_loss", {}, "MseLossBackward0", ()),
    ("smooth_l1_loss", {"beta": 0.7}, "SmoothL1LossBackward0", ("beta",)),
    ("huber_loss", {"delta": 0.8}, "HuberLossBackward0", ("delta",))])
def test_pointwise_losses_are_torchs_single_nodes(reduction, name, kwargs, node, fields):
    """mse, smooth L1 and Huber losses of float tensors of one shape are one node each, as
    torch's (their saved fields): values and both gradients as torch's, at the kinks too."""
    x = (rng.standard_normal((64, 300)) * 2).astype(np.float32)
    t = rng.standard_normal((64, 300)).astype(np.float32)
    x[0, :3] = t[0, :3] + np.array([0.7, -0.8, 0.0], np.float32)
    results = []
    for lib in (ember, torch):
        tx, tt = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(tx, tt, reduction=reduction, **kwargs)
        saved = (type(loss.grad_fn).__name__, loss.grad_fn._saved_reduction,
                 tuple(getattr(loss.grad_fn, "_saved_" + f) for f in fields))
        loss.backward(lib.ones_like(loss))
        results.append((saved, loss.detach().numpy(), tx.grad.numpy(), tt.grad.numpy()))
    (saved, *values), (want_saved, *want_values) = results
    assert saved == want_saved and saved[0] == node
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_is_torchs_single_node(reduction, weighted):
    """nll_loss of (N, C) and (C,) log-probabilities is one NllLossBackward0 node: torch's
    values, gradients and saved fields (total weight, reduction, ignore_index), ignored targets
    included; without create_graph the gradient is written on the arrays, with it in ember ops
    (the same values)."""
    x = rng.standard_normal((300, 40)).astype(np.float32)
    y = rng.integers(0, 40, 300)
    y[[3, 77]] = -100
    w = rng.random(40).astype(np.float32)
    for shape in ((300, 40), (40,)):
        inputs, targets = (x, y) if len(shape) == 2 else (x[0], y[:1].reshape(()) * 0 + 5)
        results = []
        for lib in (ember, torch):
            t = lib.tensor(inputs, requires_grad=True)
            loss = lib.nn.functional.nll_loss(t, lib.tensor(targets), weight=lib.tensor(w) if weighted else None,
                                              reduction=reduction)
            node = loss.grad_fn
            saved = (type(node).__name__, node._saved_reduction, node._saved_ignore_index,
                     float(node._saved_total_weight))
            seed = lib.ones_like(loss)
            (again,) = lib.autograd.grad(loss, t, seed, create_graph=True)
            loss.backward(seed)
            results.append((saved, loss.detach().numpy(), t.grad.numpy(), again.detach().numpy()))
        (saved, *values), (want_saved, *want_values) = results
        assert saved[:3] == want_saved[:3]
        assert saved[3] == pytest.approx(want_saved[3], rel=1e-6)   # (a float32 sum, in either order)
        for got, want in zip(values, want_values):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_is_torchs_single_node(reduction):
    """binary_cross_entropy of probabilities without weights is one node, as torch's: values
    and both gradients as torch's, probabilities 0 and 1 included (logs clamped at -100)."""
    p = rng.random((64, 300)).astype(np.float32)
    p[0, :3] = [0.0, 1.0, 0.5]
    t = rng.random((64, 300)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        a, b = lib.tensor(p, requires_grad=True), lib.tensor(t, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(a, b, reduction=reduction)
        saved = (type(loss.grad_fn).__name__, loss.grad_fn._saved_reduction, loss.grad_fn._saved_weight)
        loss.backward(lib.ones_like(loss))
        results.append((saved, loss.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    (saved, *values), (want_saved, *want_values) = results
    assert saved == want_saved
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)
