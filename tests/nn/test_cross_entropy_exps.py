"""Cross entropy over class indices keeps ``softmax * sum_c Q_c`` for its backward, written by
the forward: the unshifted exponentials (blocked, row sums by BLAS) against the shifted path and
torch, the fallback for logits that would overflow or underflow, incoming gradients other than
1, and the gradient written over the kept array only when the graph is not retained."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F
from ember._backend import choice, vector_math
from ember.autograd import engine
from ember.nn.functional import loss as loss_module

KWARGS = [{}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.2},
          {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}]
TOL = {"float32": {"rtol": 2e-5, "atol": 2e-6}, "float64": {"rtol": 1e-12, "atol": 1e-13}}


def _case(shape, dtype, kwargs, scale=3.0, shift=0.0, seed=1):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale + shift).astype(dtype)
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, shape[1] if len(shape) > 1 else shape[0], target_shape)
    kwargs = dict(kwargs)
    if kwargs.get("ignore_index") is not None and t.ndim:
        t.reshape(-1)[0] = kwargs["ignore_index"]
    weight = rng.random(x.shape[1 if x.ndim > 1 else 0]) + 0.5 if kwargs.pop("weight", False) \
        else None
    return x, t, weight, kwargs


def _loss_and_grad(lib, x, t, weight, kwargs):
    """Cross-entropy of ``x`` against ``t`` on ``lib`` (ember or torch): the loss and the
    gradient of its sum in ``x``, as arrays."""
    xl = lib.tensor(x, requires_grad=True)
    w = None if weight is None else lib.tensor(weight.astype(x.dtype))
    loss = lib.nn.functional.cross_entropy(xl, lib.tensor(t), weight=w, **kwargs)
    loss.backward(lib.ones_like(loss))
    return loss.detach().numpy(), xl.grad.numpy()


def _assert_close(got, want, dtype):
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **TOL[dtype])


def _shifted_only(monkeypatch):
    monkeypatch.setattr(loss_module, "_unshifted_exps", lambda xp, logits, factors: None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5), (5,), (3, 5, 2, 2), (37, 301)])
@pytest.mark.parametrize("kwargs", KWARGS)
def test_unshifted_path_matches_shifted_path_and_torch(kwargs, shape, dtype, monkeypatch):
    monkeypatch.setattr(loss_module, "_EXP_BLOCK_ELEMENTS", 1000)  # several blocks of rows
    monkeypatch.setattr(loss_module, "_UNSHIFTED_MIN_ELEMENTS", 0)
    case = _case(shape, dtype, kwargs)
    unshifted = _loss_and_grad(ember, *case)
    _assert_close(unshifted, _loss_and_grad(torch, *case), dtype)
    _shifted_only(monkeypatch)
    _assert_close(unshifted, _loss_and_grad(ember, *case), dtype)


def _paths_taken(monkeypatch):
    """The general path's choice between shifted and unshifted exponentials, spied on (the fused
    row loop, which would take these cases, is turned off)."""
    monkeypatch.setattr(loss_module, "FUSED_MAX_ELEMENTS", 0)
    monkeypatch.setattr(loss_module, "_UNSHIFTED_MIN_ELEMENTS", 0)
    taken = []
    real = loss_module._unshifted_exps

    def spy(xp, logits, factors):
        result = real(xp, logits, factors)
        taken.append("unshifted" if result is not None else "shifted")
        return result
    monkeypatch.setattr(loss_module, "_unshifted_exps", spy)
    return taken


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shift, scale", [(0.0, 3.0), (20.0, 1.0), (-30.0, 1.0)])
def test_moderate_logits_take_the_unshifted_path(shift, scale, dtype, monkeypatch):
    taken = _paths_taken(monkeypatch)
    case = _case((16, 40), dtype, {}, scale=scale, shift=shift)
    _assert_close(_loss_and_grad(ember, *case), _loss_and_grad(torch, *case), dtype)
    assert taken == ["unshifted"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shift", [1000.0, -1000.0])
def test_logits_out_of_exp_range_take_the_shifted_path_without_warnings(shift, dtype,
                                                                         monkeypatch):
    taken = _paths_taken(monkeypatch)
    case = _case((16, 40), dtype, {"label_smoothing": 0.1}, shift=shift)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _loss_and_grad(ember, *case)
    _assert_close(got, _loss_and_grad(torch, *case), dtype)
    assert taken == ["shifted"]


def test_one_row_out_of_range_sends_all_rows_to_the_shifted_path(monkeypatch):
    taken = _paths_taken(monkeypatch)
    x, t, weight, kwargs = _case((8, 30), "float32", {})
    x[3] += 200.0
    x[5] -= 200.0
    _assert_close(_loss_and_grad(ember, x, t, weight, kwargs),
                  _loss_and_grad(torch, x, t, weight, kwargs), "float32")
    assert taken == ["shifted"]


@pytest.mark.parametrize("bad", [-np.inf, np.nan])
def test_non_finite_logits_behave_like_torch(bad):
    x, t, weight, kwargs = _case((4, 6), "float32", {"reduction": "none"})
    x[1, 2] = bad
    got = _loss_and_grad(ember, x, t, weight, kwargs)
    want = _loss_and_grad(torch, x, t, weight, kwargs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def _logits_and_loss():
    x, t, _, _ = _case((7, 9), "float32", {})
    xe = ember.tensor(x, requires_grad=True)
    z = xe * 1.0  # a non-leaf, so that the loss's node is not the graph's only one
    return xe, z, F.cross_entropy(z, ember.tensor(t))


def test_gradient_is_written_over_the_kept_exponentials_when_the_graph_is_freed():
    _, z, loss = _logits_and_loss()
    kept = loss.grad_fn.weighted
    seen = []
    z.register_hook(seen.append)
    loss.backward()
    assert np.shares_memory(seen[0].numpy(), kept)
    assert loss.grad_fn.weighted is None  # released with the saved tensors


def test_retained_graph_keeps_the_exponentials_for_a_second_backward():
    xe, _, loss = _logits_and_loss()
    kept = loss.grad_fn.weighted.copy()
    loss.backward(retain_graph=True)
    first = xe.grad.numpy().copy()
    np.testing.assert_array_equal(loss.grad_fn.weighted, kept)
    loss.backward()
    np.testing.assert_allclose(xe.grad.numpy(), 2 * first, rtol=1e-6)


def test_calling_the_node_directly_does_not_overwrite_what_it_kept():
    _, _, loss = _logits_and_loss()
    node = loss.grad_fn
    kept = node.weighted.copy()
    with ember.no_grad():
        first = node(ember.tensor(1.0))[0].numpy().copy()
        np.testing.assert_array_equal(node.weighted, kept)
        np.testing.assert_array_equal(node(ember.tensor(1.0))[0].numpy(), first)


def test_releases_after_run_names_only_the_node_running_without_retain_graph():
    seen = []

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = ember.ones(3, requires_grad=True)
    y = Probe.apply(x)
    node = y.grad_fn
    real = type(node).backward

    def spy(self, *grads):
        seen.append(engine.releases_after_run(self))
        return real(self, *grads)
    type(node).backward = spy
    try:
        y.sum().backward(retain_graph=True)
        y.sum().backward()
    finally:
        type(node).backward = real
    assert seen == [False, True]
    assert not engine.releases_after_run(node)


def test_autograd_grad_with_create_graph_still_differentiates_twice():
    x, t, _, _ = _case((5, 7), "float64", {"label_smoothing": 0.1})
    xe = ember.tensor(x, requires_grad=True)
    (g,) = ember.autograd.grad(F.cross_entropy(xe, ember.tensor(t), label_smoothing=0.1), xe,
                               create_graph=True)
    (gg,) = ember.autograd.grad((g * g).sum(), xe)
    xt = torch.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(TF.cross_entropy(xt, torch.tensor(t), label_smoothing=0.1), xt,
                                create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), xt)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 3}, {"ignore_index": -7}])
@pytest.mark.parametrize("ignored", [False, True])
def test_targets_without_masks_match_the_masked_path_and_torch(kwargs, ignored):
    """All targets valid and none ignored needs no masks; a target equal to ``ignore_index``
    (the default -100 included) or an ``ignore_index`` among the classes takes the masked
    path."""
    x, t, weight, _ = _case((9, 6), "float64", {})
    if ignored:
        t[4] = kwargs.get("ignore_index", -100)
    for fn_e, fn_t in ((F.cross_entropy, TF.cross_entropy), (F.nll_loss, TF.nll_loss)):
        xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        le, lt = fn_e(xe, ember.tensor(t), **kwargs), fn_t(xt, torch.tensor(t), **kwargs)
        le.backward()
        lt.backward()
        np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("bad", [6, -1])
def test_out_of_range_targets_still_raise(bad):
    x, t, _, _ = _case((5, 6), "float32", {})
    t[2] = bad
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        F.cross_entropy(ember.tensor(x), ember.tensor(t))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("seed_grad", [1.0, 0.37, -2.0])
def test_incoming_gradients_other_than_one(reduction, seed_grad):
    """The kept array already carries the reduction's division; the incoming gradient still
    multiplies it (a per-row one for 'none')."""
    x, t, weight, _ = _case((6, 11), "float64", {})
    kwargs = {"reduction": reduction, "label_smoothing": 0.1, "ignore_index": 2}
    results = []
    for lib in (ember, torch):
        xl = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(xl, lib.tensor(t), **kwargs)
        g = np.full(tuple(loss.shape), seed_grad)
        if g.ndim:
            g = g * np.linspace(0.5, 1.5, g.size)
        loss.backward(lib.tensor(g))
        results.append(xl.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shift", [0.0, 1000.0])
def test_loss_without_a_graph_equals_the_loss_with_one(shift):
    """No node, no weighted exponentials: the loss alone, on both paths."""
    x, t, weight, _ = _case((9, 13), "float32", {"label_smoothing": 0.2}, shift=shift)
    with ember.no_grad():
        plain = F.cross_entropy(ember.tensor(x), ember.tensor(t), label_smoothing=0.2)
    graphed = F.cross_entropy(ember.tensor(x, requires_grad=True), ember.tensor(t),
                              label_smoothing=0.2)
    np.testing.assert_array_equal(plain.numpy(), graphed.detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_logits_are_shifted_without_trying_the_unshifted_path(dtype, monkeypatch):
    """Below ``_UNSHIFTED_MIN_ELEMENTS`` the row peaks' pass costs less than the checks."""
    monkeypatch.setattr(loss_module, "FUSED_MAX_ELEMENTS", 0)
    taken = []
    real = loss_module._unshifted_exps
    monkeypatch.setattr(loss_module, "_unshifted_exps",
                        lambda *args: taken.append(args) or real(*args))
    for shape in [(32, 27), (128, 127)]:
        case = _case(shape, dtype, {})
        _assert_close(_loss_and_grad(ember, *case), _loss_and_grad(torch, *case), dtype)
    assert taken == []
    case = _case((128, 128), dtype, {})
    _assert_close(_loss_and_grad(ember, *case), _loss_and_grad(torch, *case), dtype)
    assert len(taken) == 1


@pytest.mark.skipif(not __import__("ember._backend.vector_math", fromlist=["x"]).available(),
                    reason="no C compiler or libmvec: the loops cannot be built here")
@pytest.mark.parametrize("factors", ["none", "number", "rows"])
def test_exponentials_loop_matches_the_blocked_numpy_path(factors):
    """Large float32 logits take the loop over rows (libmvec's exp, oneDNN's threads): within
    float32 rounding of the blocked NumPy kernel, rows with a sum out of range included."""
    from ember._backend import vector_math
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((53, 301)) * 3).astype(np.float32)
    x[7] += 100.0   # a row whose sum overflows: the caller's check sends it to the shifted path
    given = {"none": None, "number": 0.25, "rows": rng.random(53) + 0.5}[factors]
    got = vector_math.exp_rows_scaled(x, given)
    with np.errstate(over="ignore", invalid="ignore"):
        want = loss_module._numpy_exp_rows_scaled(x, given)
    assert got is not None and got[0].dtype == got[1].dtype == np.float32
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=3e-6, atol=1e-30)
    assert vector_math.exp_rows_scaled(x.astype(np.float64), given) is None
    narrow = np.repeat(x[:, :4], 8, axis=0)   # many narrow rows: NumPy
    assert narrow.size > vector_math.SOFTMAX_NARROW_MAX_ELEMENTS
    assert vector_math.exp_rows_scaled(narrow, np.repeat(given, 8) if factors == "rows" else given) is None


def _fused_runs():
    """Whether the fused row loop runs here: on oneDNN's side of the kernel choice, built with
    the vector-math loops."""
    return choice.enabled(choice.ONEDNN) and vector_math.available()


def _fused_taken(monkeypatch):
    """Per cross entropy, whether the fused row loop gave the loss (else the passes ran)."""
    taken = []
    real = loss_module._fused_cross_entropy

    def spy(*args):
        result = real(*args)
        taken.append(result is not None)
        return result
    monkeypatch.setattr(loss_module, "_fused_cross_entropy", spy)
    return taken


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}])
@pytest.mark.parametrize("shape", [(1, 3), (32, 27), (16, 40), (128, 10), (9, 1000)])
def test_fused_row_loop_matches_torch(monkeypatch, shape, kwargs):
    taken = _fused_taken(monkeypatch)
    case = _case(shape, "float32", kwargs, scale=5.0)
    _assert_close(_loss_and_grad(ember, *case), _loss_and_grad(torch, *case), "float32")
    assert taken == [_fused_runs()]


def test_fused_row_loop_without_a_gradient_gives_the_loss(monkeypatch):
    taken = _fused_taken(monkeypatch)
    x, t, _, _ = _case((32, 27), "float32", {})
    with ember.no_grad():
        got = F.cross_entropy(ember.tensor(x, requires_grad=True), ember.tensor(t))
    np.testing.assert_allclose(got.numpy(), TF.cross_entropy(torch.tensor(x), torch.tensor(t)).numpy(),
                               **TOL["float32"])
    assert got.grad_fn is None and taken == [_fused_runs()]


@pytest.mark.parametrize("change", ["nan", "inf", "-inf", "ignored", "out of range"])
def test_fused_row_loop_leaves_other_rows_to_the_passes(monkeypatch, change):
    """A row it cannot take (a non-finite logit, an ignored or out-of-range target) sends the
    whole batch to the passes, which give torch's answer (or its error)."""
    taken = _fused_taken(monkeypatch)
    x, t, _, _ = _case((8, 6), "float32", {})
    if change in ("nan", "inf", "-inf"):
        x[2, 3] = float(change)
    else:
        t[2] = -100 if change == "ignored" else 6
    if change == "out of range":
        with pytest.raises(IndexError, match="Target 6 is out of bounds"):
            F.cross_entropy(ember.tensor(x, requires_grad=True), ember.tensor(t))
    else:
        got = _loss_and_grad(ember, x, t, None, {})
        want = _loss_and_grad(torch, x, t, None, {})
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert taken == [False]
