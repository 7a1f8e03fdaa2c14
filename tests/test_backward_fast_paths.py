"""Backward formulas that compute on arrays when no graph of the backward is built
(``create_graph=False``) give exactly the gradients of the ember-op formulas that
``create_graph=True`` runs."""
import numpy as np
import pytest

import ember
from ember.ops import linalg, pointwise, unary

ARITHMETIC_UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
                    "reciprocal", "tan", "atan", "tanh", "atanh", "sigmoid", "sign", "floor",
                    "ceil", "trunc", "abs"]
FLOATS = ["float16", "float32", "float64", "bfloat16"]


def _values(shape, dtype, seed=0):
    data = np.random.default_rng(seed).uniform(0.1, 0.9, size=shape)
    return ember.tensor(data, dtype=getattr(ember, dtype))


def _gradients(fn, inputs, create_graph):
    leaves = [t.detach().requires_grad_() for t in inputs]
    out = fn(*leaves)
    seed = _values(out.shape, str(out.dtype).split(".")[-1], seed=1)
    grads = ember.autograd.grad(out, leaves, seed, create_graph=create_graph)
    return [g.detach().float().numpy() for g in grads], [g.dtype for g in grads]


def _spy_node(monkeypatch, node_cls):
    """Record, per call of ``node_cls.backward_arrays``, whether it took the array path (gave
    gradients rather than None)."""
    taken = []
    real = node_cls.backward_arrays

    def spy(self, *grads):
        result = real(self, *grads)
        taken.append(result is not None)
        return result
    monkeypatch.setattr(node_cls, "backward_arrays", spy)
    return taken


def _assert_same_both_ways(fn, inputs):
    fast, fast_dtypes = _gradients(fn, inputs, create_graph=False)
    general, general_dtypes = _gradients(fn, inputs, create_graph=True)
    assert fast_dtypes == general_dtypes
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ARITHMETIC_UNARY)
@pytest.mark.parametrize("shape", [(3, 4), ()])
def test_unary_array_backward_matches_ember_ops(monkeypatch, name, dtype, shape):
    node_cls = type(getattr(ember, name)(_values((), "float32").requires_grad_()).grad_fn)
    assert issubclass(node_cls, unary._ArithmeticUnaryNode)
    taken = _spy_node(monkeypatch, node_cls)   # (its own backward_arrays where compiled: tanh's)
    _assert_same_both_ways(getattr(ember, name), [_values(shape, dtype)])
    # the array path runs without create_graph, for every dtype but bfloat16
    assert taken[0] is (dtype != "bfloat16")
    assert not any(taken[1:])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("other", [0.9, 3, -2.5])
def test_mul_by_number_array_backward_matches_ember_ops(monkeypatch, dtype, other):
    taken = _spy_node(monkeypatch, pointwise.MulBackward0)
    _assert_same_both_ways(lambda x: x * other, [_values((2, 3), dtype)])
    assert taken[0] is (dtype != "bfloat16")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 2))])
def test_mul_array_backward_matches_ember_ops(monkeypatch, dtype, shapes):
    taken = _spy_node(monkeypatch, pointwise.MulBackward0)
    _assert_same_both_ways(lambda a, b: a * b, [_values(shapes[0], dtype), _values(shapes[1], dtype, 2)])
    assert taken[0] is (dtype != "bfloat16")


def test_mixed_dtypes_take_the_ember_op_formula(monkeypatch):
    taken = _spy_node(monkeypatch, pointwise.MulBackward0)
    _assert_same_both_ways(lambda a, b: a * b, [_values((2, 3), "float32"), _values((3,), "float64", 2)])
    assert taken[0] is False


def test_array_path_does_not_run_under_create_graph_and_gives_second_derivative():
    x = ember.tensor([0.3, -0.7], requires_grad=True)
    (g,) = ember.autograd.grad(ember.tanh(x * 2.0).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (gg,) = ember.autograd.grad(g.sum(), x)
    y = np.tanh(2 * np.array([0.3, -0.7], dtype=np.float32))
    np.testing.assert_allclose(gg.numpy(), -8 * y * (1 - y * y), rtol=1e-5)


# Softmax and pooling: NumPy's array backward gives the ember-op formula's bits; oneDNN's
# (float32, above its size rules) adds in another order, so it is compared with a tolerance.
_POOLS = {"max_pool2d": lambda x: ember.nn.functional.max_pool2d(x, 3, 2, 1),
          "avg_pool2d": lambda x: ember.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
          "softmax": lambda x: ember.nn.functional.softmax(x, -1),
          "log_softmax": lambda x: ember.nn.functional.log_softmax(x, -1)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(_POOLS))
def test_softmax_and_pooling_array_backward_matches_ember_ops(op, dtype):
    from ember._backend import choice
    x = _values((16, 16, 16, 16), dtype)
    with choice.only(choice.NUMPY):
        _assert_same_both_ways(_POOLS[op], [x])
    if dtype == "float32" and choice.enabled(choice.ONEDNN):
        fast, _ = _gradients(_POOLS[op], [x], create_graph=False)
        general, _ = _gradients(_POOLS[op], [x], create_graph=True)
        np.testing.assert_allclose(fast[0], general[0], rtol=1e-5, atol=1e-6)


# -- memory: the engine keeps nothing after use ---------------------------------------------------

def test_gradients_are_freed_once_consumed():
    import weakref
    x = ember.tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
    seen = []
    alive_when_seen = []

    def hook(grad):
        alive_when_seen.append(sum(r() is not None for r in seen))
        seen.append(weakref.ref(grad))
    y = x
    for _ in range(5):
        y = (y * 1.5).tanh()
        y.register_hook(hook)
    y.sum().backward()
    # when a gradient arrives, the one of the tensor after it (already consumed) is gone
    assert alive_when_seen == [0] * 5
    assert all(r() is None for r in seen)


def test_node_no_gradient_reached_releases_its_saved_tensors():
    class DropGrad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()
    node = a.grad_fn
    (DropGrad.apply(a).sum() + x.sum()).backward()
    assert node._saved is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node(ember.ones(2))


@pytest.mark.parametrize("size", [1 << 10, 1 << 19])
def test_the_engines_sum_of_two_gradients_matches_torch(size):
    """Gradients two paths send to one tensor are summed by the engine (large float32 ones on
    the threads the ops' additions use)."""
    import torch
    data = np.random.default_rng(2).standard_normal(size).astype(np.float32)
    seed = np.random.default_rng(3).standard_normal(size).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        h = x * 1.5
        (h.exp() + h * h).backward(lib.tensor(seed))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [lambda a, b: -a * b, lambda a, b: (a - b) * (b - a),
                                lambda a, b: (a * 2 - b.abs()).abs() - a],
                         ids=["neg", "sub", "abs_sub"])
def test_neg_sub_and_abs_array_backwards_match_ember_ops(fn, dtype):
    signed = [t - 0.5 for t in (_values((3, 4), dtype), _values((3, 4), dtype, seed=2))]
    _assert_same_both_ways(fn, signed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("loss", [lambda x, t: ember.nn.functional.mse_loss(x, t),
                                  lambda x, t: ember.nn.functional.smooth_l1_loss(x * 3, t, beta=0.5),
                                  lambda x, t: ember.nn.functional.huber_loss(x * 3, t, delta=0.6,
                                                                              reduction="sum")],
                         ids=["mse", "smooth_l1", "huber"])
def test_pointwise_loss_array_backward_matches_ember_ops(monkeypatch, dtype, loss):
    from ember.nn.functional import loss as loss_module
    taken = _spy_node(monkeypatch, loss_module._PointwiseLossNode)
    _assert_same_both_ways(loss, [_values((40, 50), dtype), _values((40, 50), dtype, 2)])
    assert taken[0] is True


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [lambda x: ember.nn.functional.elu(x * 4 - 2, 0.7),
                                lambda x: ember.nn.functional.selu(x * 4 - 2),
                                lambda x: ember.nn.functional.celu(x * 4 - 2, 1.3)], ids=["elu", "selu", "celu"])
def test_elu_family_array_backward_matches_ember_ops(monkeypatch, dtype, fn):
    """Below the vector-math loop's size the elu family's gradient on arrays is the ember-op
    formula's, bit for bit."""
    from ember.nn.functional import activation
    taken = _spy_node(monkeypatch, activation.EluBackward0)
    taken_celu = _spy_node(monkeypatch, activation.CeluBackward0)
    _assert_same_both_ways(fn, [_values((20, 30), dtype)])
    assert (taken + taken_celu)[0] is True


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(20, 30), (80, 100)])
@pytest.mark.parametrize("fn", [lambda x: ember.nn.functional.softplus(x * 8 - 4),
                                lambda x: ember.nn.functional.softplus(x * 8 - 4, beta=2.0, threshold=3.0),
                                lambda x: ember.nn.functional.logsigmoid(x * 8 - 4)],
                         ids=["softplus", "softplus_beta", "logsigmoid"])
def test_softplus_and_logsigmoid_array_backward_matches_ember_ops(monkeypatch, dtype, shape, fn):
    """softplus's and logsigmoid's gradients on arrays (NumPy's passes; large float32 ones on
    the vector-math loop, with the sigmoid loop's expression) are the ember-op formulas', bit
    for bit."""
    from ember.nn.functional import activation
    spies = [_spy_node(monkeypatch, node) for node in (activation.SoftplusBackward0, activation.LogSigmoidBackward0)]
    _assert_same_both_ways(fn, [_values(shape, dtype)])
    assert (spies[0] + spies[1])[0] is True


_PRODUCTS = {
    "mm": (lambda a, b: a @ b, [(5, 4), (4, 3)], linalg.MmBackward0),
    "mm by a transposed weight": (lambda a, b: a @ b.t(), [(5, 4), (3, 4)], linalg.MmBackward0),
    "linear": (lambda a, w, b: ember.nn.functional.linear(a, w, b), [(6, 4), (3, 4), (3,)],
               linalg.AddmmBackward0),
    "bmm": (ember.bmm, [(2, 5, 4), (2, 4, 3)], linalg.BmmBackward0),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_product_array_backwards_match_ember_ops(monkeypatch, name, dtype):
    fn, shapes, node_cls = _PRODUCTS[name]
    taken = _spy_node(monkeypatch, node_cls)
    fast, _ = _gradients(fn, [_values(s, dtype, seed=i) for i, s in enumerate(shapes)], create_graph=False)
    general, _ = _gradients(fn, [_values(s, dtype, seed=i) for i, s in enumerate(shapes)], create_graph=True)
    # (a row bias's gradient is a ones-vector product on the arrays: it may round otherwise)
    for a, b in zip(fast[:2], general[:2]):
        np.testing.assert_array_equal(a, b)
    # every dtype's products (half precision computed in float32, as the ops compute it); a
    # bias's gradient on the arrays for float32 and float64 only
    assert taken[0] is (name != "linear" or dtype in ("float32", "float64"))


def test_product_array_backward_stands_aside_for_a_flop_counter(monkeypatch):
    from ember.utils.flop_counter import FlopCounterMode
    taken = _spy_node(monkeypatch, linalg.MmBackward0)
    a, b = _values((5, 4), "float32").requires_grad_(), _values((4, 3), "float32").requires_grad_()
    with FlopCounterMode(display=False) as counter:
        (a @ b).sum().backward()
    assert taken == [False]
    assert counter.get_total_flops() == 3 * 2 * 5 * 4 * 3   # the forward's product and backward's two


_REDUCTIONS = [lambda x: x.mean(0, keepdim=True), lambda x: x.mean(1), lambda x: x.mean((0, 2)),
               lambda x: x.sum(1), lambda x: x.sum(0, keepdim=True), lambda x: x.std(0, keepdim=True),
               lambda x: x.std(1), lambda x: x.var(2, correction=0), lambda x: x.std(), lambda x: x.var(),
               lambda x: (x * 0 + 1).std(0), lambda x: x[0, 0].mean(0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", _REDUCTIONS)
def test_reduction_array_backwards_match_ember_ops(fn, dtype):
    _assert_same_both_ways(fn, [_values((4, 5, 3), dtype)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [lambda a, b: a / b, lambda a, b: a / b[:1], lambda a, b: a[0, 0] / b])
def test_div_array_backward_matches_ember_ops(monkeypatch, fn, dtype):
    taken = _spy_node(monkeypatch, pointwise.DivBackward0)
    _assert_same_both_ways(fn, [_values((4, 5), dtype), _values((4, 5), dtype, seed=2)])
    assert taken[0] is (dtype != "bfloat16")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [lambda a, b: a / b.sum(1, keepdim=True), lambda a, b: a / b[:1]])
def test_div_by_a_broadcast_array_backward_matches_ember_ops(monkeypatch, fn, dtype):
    """Rows long enough for the gradient's sums to take ``einsum`` (as ember's ``sum`` does)."""
    taken = _spy_node(monkeypatch, pointwise.DivBackward0)
    _assert_same_both_ways(fn, [_values((300, 27), dtype), _values((300, 27), dtype, seed=2)])
    assert taken[0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("other", [3.7, 3])
def test_div_by_number_array_backward_matches_ember_ops(monkeypatch, other, dtype):
    taken = _spy_node(monkeypatch, pointwise.DivBackward0)
    _assert_same_both_ways(lambda a: a / other, [_values((4, 5), dtype)])
    assert taken[0] is (dtype != "bfloat16")
