"""ember.func (torch.func's API) against torch.func on the same inputs: vmap's in_dims,
out_dims, nesting, chunking, randomness and errors; grad, grad_and_value, vjp, jacrev, hessian
and their compositions; per-sample gradients of an MLP and a CNN; ensembles through
stack_module_state; functional_call; autograd.Function under vmap; ember.functorch."""
import warnings

import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef
import ember.functorch as efunctorch
from ember.func._dispatch import FALLBACK_OPS


def _np(x):
    if isinstance(x, ember.Tensor):
        return np.asarray(x.detach()._data)
    return x.detach().numpy()


def _close(e, t, atol=1e-6, rtol=1e-5):
    if isinstance(t, dict):
        assert set(e) == set(t)
        for k in t:
            _close(e[k], t[k], atol, rtol)
        return
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, atol, rtol)
        return
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    np.testing.assert_allclose(_np(e), _np(t), atol=atol, rtol=rtol)


def _pair(*shape, seed=0, dtype=np.float64):
    arr = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(arr), torch.tensor(arr)


def _same_error(ember_call, torch_call):
    with pytest.raises(Exception) as t_err:
        torch_call()
    with pytest.raises(type(t_err.value)) as e_err:
        ember_call()
    t_msg = str(t_err.value).replace("torch", "ember").replace("PyTorch", "ember")
    assert str(e_err.value).split("\n")[0][:60] == t_msg.split("\n")[0][:60]


# -- vmap --------------------------------------------------------------------------------------
def test_top_level_alias():
    assert ember.vmap is ef.vmap


def test_in_dims_out_dims_nested():
    (ex, tx), (ey, ty) = _pair(3, 4), _pair(4, 5, seed=1)

    def f(lib):
        return lambda a, d: (a.sin() * d["s"] + d["t"].sum(), a.cos())

    e = ef.vmap(f(ember), in_dims=(1, {"s": 0, "t": None}), out_dims=(1, 0))(
        ex, {"s": ey[:, :3], "t": ey})
    t = tf.vmap(f(torch), in_dims=(1, {"s": 0, "t": None}), out_dims=(1, 0))(
        tx, {"s": ty[:, :3], "t": ty})
    _close(e, t)


def test_vmap_of_vmap_and_chunks():
    (ex, tx), (ey, ty) = _pair(2, 3, 4), _pair(4, 5, seed=1)
    e = ef.vmap(ef.vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(0, None))(ex, ey)
    t = tf.vmap(tf.vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(0, None))(tx, ty)
    _close(e, t)
    e = ef.vmap(lambda a: a.softmax(-1) * 2, chunk_size=2)(ex)
    t = tf.vmap(lambda a: a.softmax(-1) * 2, chunk_size=2)(tx)
    _close(e, t)
    # an output that does not depend on the mapped input is broadcast along the batch
    _close(ef.vmap(lambda a: ey, in_dims=0)(ex), tf.vmap(lambda a: ty, in_dims=0)(tx))


def test_nn_modules_under_vmap():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.ReLU(),
                             torch.nn.MaxPool2d(2), torch.nn.Flatten(0), torch.nn.Linear(12, 4),
                             torch.nn.LogSoftmax(-1)).double()
    em = ember.nn.Sequential(ember.nn.Conv2d(2, 3, 3, padding=1), ember.nn.ReLU(),
                             ember.nn.MaxPool2d(2), ember.nn.Flatten(0), ember.nn.Linear(12, 4),
                             ember.nn.LogSoftmax(-1)).double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    ex, tx = _pair(5, 2, 4, 4)
    _close(ef.vmap(em)(ex), tf.vmap(tm)(tx))


def test_indexing_with_mapped_indices():
    ex, tx = _pair(4, 5, 6)
    rng = np.random.default_rng(3)
    i, j = rng.integers(0, 5, (4, 3)), rng.integers(0, 6, (4, 3))
    ei, ti, ej, tj = ember.tensor(i), torch.tensor(i), ember.tensor(j), torch.tensor(j)
    cases = [
        (lambda a, b: a[b], (0, 0), (ex, ei), (tx, ti)),
        (lambda a, b: a[:, b], (0, 0), (ex, ej), (tx, tj)),
        (lambda a, b, c: a[b, c], (0, 0, 0), (ex, ei, ej), (tx, ti, tj)),
        (lambda a, b: a[b], (None, 0), (ex[0], ei), (tx[0], ti)),
        (lambda a, b: a.index_select(1, b), (0, 0), (ex, ej), (tx, tj)),
    ]
    for f, dims, e_args, t_args in cases:
        FALLBACK_OPS.clear()
        _close(ef.vmap(f, in_dims=dims)(*e_args), tf.vmap(f, in_dims=dims)(*t_args))
        assert not FALLBACK_OPS


def test_transformer_layer_under_vmap():
    # the layer keeps its activation function in an attribute and calls attention through its
    # own module: both reach vmap's dispatch
    torch.manual_seed(8)
    tm = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double().eval()
    em = _copy(tm, ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                    batch_first=True).double().eval())
    ex, tx = _pair(3, 1, 4, 8)
    _close(ef.vmap(em)(ex), torch.stack([tm(tx[i]) for i in range(3)]), atol=1e-10)


def test_randomness():
    x = ember.ones(4, 50)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ef.vmap(lambda a: a * ember.rand(50))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ef.vmap(lambda a: ember.nn.functional.dropout(a))(x)
    different = ef.vmap(lambda a: a * ember.rand(50), randomness="different")(x)
    same = ef.vmap(lambda a: a * ember.rand(50), randomness="same")(x)
    assert not np.allclose(_np(different[0]), _np(different[1]))
    assert np.allclose(_np(same[0]), _np(same[1]))
    drop_same = ef.vmap(lambda a: ember.nn.functional.dropout(a, 0.5), randomness="same")(x)
    drop_diff = ef.vmap(lambda a: ember.nn.functional.dropout(a, 0.5), randomness="different")(x)
    assert np.array_equal(_np(drop_same[0]), _np(drop_same[3]))
    assert not np.array_equal(_np(drop_diff[0]), _np(drop_diff[3]))
    like = ef.vmap(lambda a: ember.randn_like(a), randomness="different")(x)
    assert not np.allclose(_np(like[0]), _np(like[1]))
    # eval-mode dropout draws nothing
    _close(ef.vmap(lambda a: ember.nn.functional.dropout(a, training=False))(x), x)


def test_vmap_errors_as_torch():
    (ex, tx), (ey, ty) = _pair(3, 4), _pair(2, 4)
    cases = [
        (lambda lib, x, y: lib.func.vmap(lib.add)(x, y)),
        (lambda lib, x, y: lib.func.vmap(lib.add, in_dims=(0,))(x, x)),
        (lambda lib, x, y: lib.func.vmap(lib.add, in_dims=(0, 5))(x, x)),
        (lambda lib, x, y: lib.func.vmap(lib.add, in_dims=(0, 0.5))(x, x)),
        (lambda lib, x, y: lib.func.vmap(lambda a, b: a + b, in_dims=(0, 0))(x, 1.0)),
        (lambda lib, x, y: lib.func.vmap(lambda a: 1)(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a.item())(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a.sum() if a.sum() > 0 else a)(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: lib.randn(3))(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a, randomness="foo")(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a)()),
        (lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims=None)(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a, out_dims=(0, 1))(x)),
        (lambda lib, x, y: lib.func.vmap(lambda a: a)(lib.ones(()))),
        (lambda lib, x, y: lib.func.vmap(lambda a: a, chunk_size=0)(x)),
    ]
    for case in cases:
        _same_error(lambda: case(ember, ex, ey), lambda: case(torch, tx, ty))


def test_python_values_raise():
    x = ember.randn(3, 4)
    for fn in (lambda a: a.tolist(), lambda a: float(a.sum()), lambda a: bool(a.sum() > 0)):
        with pytest.raises(RuntimeError, match="vmap: It looks like"):
            ef.vmap(fn)(x)


def test_backward_through_vmap():
    a = np.random.default_rng(0).standard_normal((4, 3))
    ex, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ew, tw = ember.tensor(a[0], requires_grad=True), torch.tensor(a[0], requires_grad=True)

    def f(w):
        return lambda x: (x * w).sin().sum() + x.softmax(0)[0]

    ember.vmap(f(ew))(ex).pow(2).sum().backward()
    torch.vmap(f(tw))(tx).pow(2).sum().backward()
    _close((ex.grad, ew.grad), (tx.grad, tw.grad), atol=1e-12)


def test_nothing_stays_patched():
    add, method, relu = ember.add, ember.Tensor.add, ember.nn.functional.relu
    with pytest.raises(RuntimeError):
        ef.vmap(lambda a: a.item())(ember.randn(3))
    ef.vmap(lambda a: ember.nn.ReLU()(a) + 1)(ember.randn(3))
    assert ember.add is add and ember.Tensor.add is method and ember.nn.functional.relu is relu
    assert ember.nn.ReLU._fn is relu
    assert not hasattr(add, "__vmap_original__")


def test_inplace_into_unmapped_raises():
    x = ember.randn(3, 4)
    with pytest.raises(RuntimeError, match="vmapped over"):
        ef.vmap(lambda a: ember.zeros(4).add_(a))(x)
    # writing into the mapped tensor itself is fine
    out = ef.vmap(lambda a: a.clone().mul_(2).add_(ember.ones(4)))(x)
    _close(out, x * 2 + 1)


# -- grad and friends --------------------------------------------------------------------------
def _f(lib):
    return lambda x, y: (x.sin() * y).sum() + (x * x).sum() * y.mean()


def test_grad_and_value_argnums_has_aux():
    (ex, tx), (ey, ty) = _pair(3, 4), _pair(3, 4, seed=1)
    for argnums in (0, 1, (0, 1), (1, 0)):
        _close(ef.grad(_f(ember), argnums)(ex, ey), tf.grad(_f(torch), argnums)(tx, ty))
        _close(ef.grad_and_value(_f(ember), argnums)(ex, ey),
               tf.grad_and_value(_f(torch), argnums)(tx, ty))

    def with_aux(x):
        return (x ** 3).sum(), {"y": x.cos()}
    _close(ef.grad(with_aux, has_aux=True)(ex), tf.grad(with_aux, has_aux=True)(tx))
    _close(ef.grad_and_value(with_aux, has_aux=True)(ex),
           tf.grad_and_value(with_aux, has_aux=True)(tx))


def test_grad_errors_as_torch():
    ex, tx = _pair(3, 4)
    cases = [
        lambda lib, x: lib.func.grad(lambda a: a * 2)(x),
        lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=2)(x),
        lambda lib, x: lib.func.grad(lambda a: a.sum(), has_aux=True)(x),
        lambda lib, x: lib.func.grad(lambda a: a.sum())(3.0),
        lambda lib, x: lib.func.jacrev(lambda a: a, argnums=())(x),
        lambda lib, x: lib.func.vjp(lambda b: 3, x),
    ]
    for case in cases:
        _same_error(lambda: case(ember, ex), lambda: case(torch, tx))


def test_vjp():
    (ex, tx), (ec, tc) = _pair(3, 4), _pair(3, 4, seed=2)
    eo, efn = ef.vjp(lambda a: a.exp() * a, ex)
    to, tfn = tf.vjp(lambda a: a.exp() * a, tx)
    _close(eo, to)
    _close(efn(ec), tfn(tc))
    _close(efn(ec * 2), tfn(tc * 2))      # vjp_fn may be called again
    eo, efn, eaux = ef.vjp(lambda a, b: (a * b, a.sum()), ex, ex * 2, has_aux=True)
    to, tfn, taux = tf.vjp(lambda a, b: (a * b, a.sum()), tx, tx * 2, has_aux=True)
    _close((eo, eaux), (to, taux))
    _close(efn(ec), tfn(tc))


def test_jacrev_hessian_and_compositions():
    (ex, tx), (ey, ty) = _pair(3, seed=3), _pair(2, 3, seed=4)

    def f(x, y):
        return (y @ x.sin()) * x[:2].exp()

    for argnums in (0, 1, (0, 1)):
        _close(ef.jacrev(f, argnums)(ex, ey), tf.jacrev(f, argnums)(tx, ty))
    _close(ef.jacrev(f, chunk_size=2)(ex, ey), tf.jacrev(f, chunk_size=2)(tx, ty))
    _close(ef.jacrev(lambda x: (x.sin(), x.sum()), has_aux=True)(ex),
           tf.jacrev(lambda x: (x.sin(), x.sum()), has_aux=True)(tx))
    _close(ef.jacrev(lambda x: {"a": x * 2, "b": x.sum()})(ex),
           tf.jacrev(lambda x: {"a": x * 2, "b": x.sum()})(tx))

    def g(x):
        return (x.sin() * x ** 2).sum()

    _close(ef.hessian(g)(ex), tf.hessian(g)(tx))
    _close(ef.grad(lambda x: ef.grad(g)(x).sum())(ex), tf.grad(lambda x: tf.grad(g)(x).sum())(tx))
    _close(ef.jacrev(ef.jacrev(lambda x: x.sin() * x.sum()))(ex),
           tf.jacrev(tf.jacrev(lambda x: x.sin() * x.sum()))(tx))
    _close(ef.vmap(ef.jacrev(lambda x: x.sin() * x.sum()))(ey),
           tf.vmap(tf.jacrev(lambda x: x.sin() * x.sum()))(ty))
    _close(ef.vmap(ef.hessian(g))(ey), tf.vmap(tf.hessian(g))(ty))
    _close(ef.vmap(ef.grad(g))(ey), tf.vmap(tf.grad(g))(ty))


def test_more_compositions():
    (ex, tx), (ew, tw), (eW, tW) = _pair(4, 3), _pair(3, 2, seed=1), _pair(4, 3, 2, seed=2)

    def g(x, w):
        return (x @ w).tanh().sum()

    _close(ef.grad(lambda w: ef.vmap(lambda x: g(x, w))(ex).sum())(ew),
           tf.grad(lambda w: tf.vmap(lambda x: g(x, w))(tx).sum())(tw))
    _close(ef.vmap(ef.grad(g, argnums=(0, 1)))(ex, eW), tf.vmap(tf.grad(g, argnums=(0, 1)))(tx, tW))
    _close(ef.vmap(lambda x: ef.jacrev(lambda w: (x @ w).sin())(ew))(ex),
           tf.vmap(lambda x: tf.jacrev(lambda w: (x @ w).sin())(tw))(tx))
    _close(ef.vmap(ef.vmap(ef.grad(lambda a: (a ** 3).sum())))(eW),
           tf.vmap(tf.vmap(tf.grad(lambda a: (a ** 3).sum())))(tW))
    _close(ef.vmap(lambda x, c: ef.vjp(lambda a: a.exp() @ ew, x)[1](c))(ex, ex[:, :2]),
           tf.vmap(lambda x, c: tf.vjp(lambda a: a.exp() @ tw, x)[1](c))(tx, tx[:, :2]))
    _close(ef.jacrev(lambda w: ef.vmap(lambda x: (x @ w).sin())(ex))(ew),
           tf.jacrev(lambda w: tf.vmap(lambda x: (x @ w).sin())(tx))(tw))
    _close(ef.hessian(g, argnums=(0, 1))(ex[0], ew), tf.hessian(g, argnums=(0, 1))(tx[0], tw))


# -- per-sample gradients and ensembles --------------------------------------------------------
def _copy(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em


def _per_sample(lib, model, x, y):
    func = lib.func
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss(p, b, xi, yi):
        out = func.functional_call(model, (p, b), (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    return func.vmap(func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y), loss, params, buffers


def _check_per_sample(tm, em, shape):
    ex, tx = _pair(*shape, seed=5)
    ey, ty = ember.tensor([0, 1, 2, 1, 0, 2]), torch.tensor([0, 1, 2, 1, 0, 2])
    FALLBACK_OPS.clear()
    e_grads, e_loss, e_params, e_buffers = _per_sample(ember, em, ex, ey)
    assert not FALLBACK_OPS       # every op of the model has a batching rule
    t_grads, _, _, _ = _per_sample(torch, tm, tx, ty)
    _close(e_grads, t_grads, atol=1e-10)
    for i in range(shape[0]):      # against a loop of ordinary gradients
        one = ef.grad(e_loss)(e_params, e_buffers, ex[i], ey[i])
        _close({k: v[i] for k, v in e_grads.items()}, one, atol=1e-12)


def test_per_sample_gradients_mlp():
    torch.manual_seed(1)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    em = _copy(tm, ember.nn.Sequential(ember.nn.Linear(5, 8), ember.nn.Tanh(),
                                       ember.nn.Linear(8, 3)).double())
    _check_per_sample(tm, em, (6, 5))


def test_per_sample_gradients_cnn():
    torch.manual_seed(2)
    tm = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
                             torch.nn.Flatten(), torch.nn.Linear(16, 3)).double()
    em = _copy(tm, ember.nn.Sequential(ember.nn.Conv2d(1, 4, 3), ember.nn.ReLU(),
                                       ember.nn.AvgPool2d(2), ember.nn.Flatten(),
                                       ember.nn.Linear(16, 3)).double())
    _check_per_sample(tm, em, (6, 1, 6, 6))


def test_ensemble_with_stack_module_state():
    torch.manual_seed(3)
    t_models = [torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(),
                                    torch.nn.Linear(6, 2)).double() for _ in range(3)]
    e_models = [_copy(tm, ember.nn.Sequential(ember.nn.Linear(4, 6), ember.nn.ReLU(),
                                              ember.nn.Linear(6, 2)).double()) for tm in t_models]
    ex, tx = _pair(5, 4)
    results = []
    for lib, models, x in ((ember, e_models, ex), (torch, t_models, tx)):
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        base = models[0]

        def run(p, b, data):
            return lib.func.functional_call(base, (p, b), (data,))

        same_x = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
        per_x = lib.func.vmap(run)(params, buffers, x[:3].unsqueeze(1).expand(3, 2, 4))
        results.append((same_x, per_x, {k: v.shape for k, v in params.items()}))
    _close(results[0][:2], results[1][:2])
    assert {k: tuple(v) for k, v in results[0][2].items()} == {k: tuple(v) for k, v in results[1][2].items()}
    _same_error(lambda: ef.stack_module_state([]), lambda: tf.stack_module_state([]))


def test_functional_call():
    torch.manual_seed(4)
    tm = torch.nn.Linear(3, 2).double()
    em = _copy(tm, ember.nn.Linear(3, 2).double())
    ex, tx = _pair(4, 3)
    (ew, tw), (eb, tb) = _pair(2, 3, seed=7), _pair(2, seed=8)
    _close(ef.functional_call(em, {"weight": ew, "bias": eb}, (ex,)),
           tf.functional_call(tm, {"weight": tw, "bias": tb}, (tx,)))
    _close(ef.functional_call(em, ({"weight": ew}, {"bias": eb}), ex),
           tf.functional_call(tm, ({"weight": tw}, {"bias": tb}), tx))
    _close(ef.functional_call(em, {"weight": ew}, args=(), kwargs={"input": ex}),
           tf.functional_call(tm, {"weight": tw}, args=(), kwargs={"input": tx}))
    # the module's own tensors are back afterwards
    _close(em.weight, tm.weight)
    cases = [
        lambda lib, m, w: lib.func.functional_call(m, {"foo": w}, (w,), strict=True),
        lambda lib, m, w: lib.func.functional_call(m, {"weight": w}, (w,), strict=True),
        lambda lib, m, w: lib.func.functional_call(m, ({"weight": w}, {"weight": w}), (w,)),
    ]
    for case in cases:
        _same_error(lambda: case(ember, em, ew), lambda: case(torch, tm, tw))


def _tied(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(3, 3, bias=False)
            self.b = lib.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Tied()


def test_functional_call_tie_weights():
    torch.manual_seed(6)
    tm = _tied(torch).double()
    em = _copy(tm, _tied(ember).double())
    assert em.a.weight is em.b.weight
    ex, tx = _pair(2, 3)
    ew, tw = _pair(3, 3, seed=9)
    for tie in (True, False):
        _close(ef.functional_call(em, {"a.weight": ew}, (ex,), tie_weights=tie),
               tf.functional_call(tm, {"a.weight": tw}, (tx,), tie_weights=tie))


def test_batch_norm_in_training_under_vmap():
    torch.manual_seed(7)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    em = _copy(tm, ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4)).double())
    tf.replace_all_batch_norm_modules_(tm)
    ef.replace_all_batch_norm_modules_(em)
    assert em[1].running_mean is None and not em[1].track_running_stats
    ex, tx = _pair(2, 5, 3)
    _close(ef.vmap(em)(ex), tf.vmap(tm)(tx))


def test_batch_norm_running_stats_error_as_torch():
    _same_error(lambda: ef.vmap(ember.nn.BatchNorm1d(3))(ember.randn(4, 5, 3)),
                lambda: tf.vmap(torch.nn.BatchNorm1d(3))(torch.randn(4, 5, 3)))


def test_debug_unwrap():
    x = ember.randn(2, 3, 4)
    seen = []
    ef.vmap(ef.vmap(lambda a: seen.append(ef.debug_unwrap(a)) or a))(x)
    assert seen[0] is x


# -- autograd.Function under vmap --------------------------------------------------------------
def _functions(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    class NoRule(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

    return Cube, Double, NoRule


def test_autograd_function_under_vmap():
    ex, tx = _pair(3, 4)
    (ec, ed, en), (tc, td, tn) = _functions(ember), _functions(torch)
    _close(ef.vmap(ec.apply)(ex), tf.vmap(tc.apply)(tx))
    _close(ef.vmap(ed.apply, in_dims=1)(ex), tf.vmap(td.apply, in_dims=1)(tx))
    _close(ef.vmap(ef.grad(lambda x: ec.apply(x).sum()))(ex),
           tf.vmap(tf.grad(lambda x: tc.apply(x).sum()))(tx))
    _close(ef.vmap(ef.grad(lambda x: ed.apply(x).sum()))(ex),
           tf.vmap(tf.grad(lambda x: td.apply(x).sum()))(tx))
    _same_error(lambda: ef.vmap(en.apply)(ex), lambda: tf.vmap(tn.apply)(tx))


# -- ember.functorch ---------------------------------------------------------------------------
def test_functorch_names():
    import functorch
    torch.manual_seed(5)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).double().eval()
    em = _copy(tm, ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4),
                                       ember.nn.Linear(4, 2)).double().eval())
    ex, tx = _pair(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_f, t_p, t_b = functorch.make_functional_with_buffers(tm)
        t_out = t_f(t_p, t_b, tx)
        t_ens = functorch.combine_state_for_ensemble([tm, tm])
        t_ens_out = functorch.vmap(t_ens[0], in_dims=(0, 0, None))(t_ens[1], t_ens[2], tx)
        lin = torch.nn.Linear(3, 2).double()
        t_lf, t_lp = functorch.make_functional(lin)
    e_f, e_p, e_b = efunctorch.make_functional_with_buffers(em)
    _close(e_f(e_p, e_b, ex), t_out)
    e_ens = efunctorch.combine_state_for_ensemble([em, em])
    _close(efunctorch.vmap(e_ens[0], in_dims=(0, 0, None))(e_ens[1], e_ens[2], ex), t_ens_out)
    e_lin = _copy(lin, ember.nn.Linear(3, 2).double())
    e_lf, e_lp = efunctorch.make_functional(e_lin)
    _close(e_lf(e_lp, ex), t_lf(t_lp, tx))
    _close(efunctorch.grad(lambda p: e_lf(p, ex).sum())(e_lp),
           functorch.grad(lambda p: t_lf(p, tx).sum())(t_lp))
    for name in ("vmap", "grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call"):
        assert getattr(efunctorch, name) is getattr(ef, name)

