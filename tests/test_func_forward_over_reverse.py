"""Forward mode over ember.func's reverse-mode transforms against torch.func: jacfwd of jacrev
and of grad (torch's hessian), jvp of grad and of a vjp_fn (Hessian-vector products), under
vmap, on functions and on MLPs through functional_call. The op table's backward formulas on dual
tensors are checked one by one in test_forward_over_reverse_ops.py."""
import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef


def _np(x):
    if isinstance(x, ember.Tensor):
        return np.asarray(x.detach()._data)
    return x.detach().numpy()


def _close(e, t, atol=1e-8, rtol=1e-6):
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


def _pair(*shape, seed=0):
    arr = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(arr), torch.tensor(arr)


def _mlp_loss(lib, x, w1, b1, w2, b2, target):
    F = lib.nn.functional
    h = F.gelu(x @ w1.T + b1)
    h = lib.tanh(F.layer_norm(h, (h.shape[-1],)))
    logits = h @ w2.T + b2
    return F.cross_entropy(logits, target) + F.softplus(h).mean()


def test_jacfwd_of_jacrev_and_of_grad():
    (ex, tx), (ew, tw) = _pair(4, seed=1), _pair(3, 4, seed=2)

    def f(lib, w):
        return lambda x: (lib.tanh(w @ x) ** 2).sum() + (x.sin() * x.exp()).sum()

    e_f, t_f = f(ember, ew), f(torch, tw)
    _close(ef.jacfwd(ef.jacrev(e_f))(ex), tf.jacfwd(tf.jacrev(t_f))(tx))
    _close(ef.jacfwd(ef.grad(e_f))(ex), tf.jacfwd(tf.grad(t_f))(tx))
    _close(ef.hessian(e_f)(ex), tf.hessian(t_f)(tx))

    def g(x, y):   # several outputs and inputs
        return (y @ x.sin()) * x[:3].exp(), (x * x).sum()

    for argnums in (0, 1, (0, 1)):
        _close(ef.jacfwd(ef.jacrev(g, argnums), argnums)(ex, ew),
               tf.jacfwd(tf.jacrev(g, argnums), argnums)(tx, tw))


def test_hessian_vector_products_by_jvp_of_grad_and_vjp():
    (ex, tx), (ev, tv), (ec, tc) = _pair(5, seed=3), _pair(5, seed=4), _pair(5, seed=5)

    def f(x):
        return (x.sin() * x.sum()).sum() + (x ** 3).prod()

    def h(x):
        return x.cumsum(0).exp() * x.flip(0)

    e_out = ef.jvp(ef.grad(f), (ex,), (ev,))
    t_out = tf.jvp(tf.grad(f), (tx,), (tv,))
    _close(e_out, t_out)
    # the tangent of the vjp_fn's result, and of vjp's primal output
    _close(ef.jvp(lambda x: ef.vjp(h, x)[1](ec)[0], (ex,), (ev,)),
           tf.jvp(lambda x: tf.vjp(h, x)[1](tc)[0], (tx,), (tv,)))
    _close(ef.jvp(lambda x: ef.vjp(h, x)[0], (ex,), (ev,)),
           tf.jvp(lambda x: tf.vjp(h, x)[0], (tx,), (tv,)))
    _close(ef.jvp(lambda x: ef.grad_and_value(f)(x), (ex,), (ev,)),
           tf.jvp(lambda x: tf.grad_and_value(f)(x), (tx,), (tv,)))
    # linearize of a gradient: jvp_fn gives the Hessian-vector product
    _close(ef.linearize(ef.grad(f), ex)[1](ev), tf.linearize(tf.grad(f), tx)[1](tv))


def test_hessian_under_vmap_and_of_an_mlp():
    (ex, tx), (ew1, tw1), (eb1, tb1) = _pair(2, 4, seed=6), _pair(5, 4, seed=7), _pair(5, seed=8)
    (ew2, tw2), (eb2, tb2) = _pair(3, 5, seed=9), _pair(3, seed=10)
    e_target, t_target = ember.tensor([0, 2]), torch.tensor([0, 2])

    def loss(lib, target):
        return lambda x, w1, b1, w2, b2: _mlp_loss(lib, x, w1, b1, w2, b2, target)

    e_args, t_args = (ex, ew1, eb1, ew2, eb2), (tx, tw1, tb1, tw2, tb2)
    for argnums in (0, 2, (1, 4)):
        _close(ef.hessian(loss(ember, e_target), argnums)(*e_args),
               tf.hessian(loss(torch, t_target), argnums)(*t_args))
    # per-sample Hessians with respect to the input
    _close(ef.vmap(ef.hessian(lambda x: _mlp_loss(ember, x[None], ew1, eb1, ew2, eb2, e_target[:1])))(ex),
           tf.vmap(tf.hessian(lambda x: _mlp_loss(torch, x[None], tw1, tb1, tw2, tb2, t_target[:1])))(tx))
    _close(ef.vmap(lambda x, v: ef.jvp(ef.grad(lambda a: (a.sin() * a).sum()), (x,), (v,))[1])(ex, ex.cos()),
           tf.vmap(lambda x, v: tf.jvp(tf.grad(lambda a: (a.sin() * a).sum()), (x,), (v,))[1])(tx, tx.cos()))


def test_hessian_of_a_module_through_functional_call():
    torch.manual_seed(0)
    t_net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    e_net = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2)).double()
    e_net.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_net.state_dict().items()})
    (ex, tx) = _pair(6, 3, seed=11)
    e_y, t_y = ember.tensor([0, 1, 1, 0, 1, 0]), torch.tensor([0, 1, 1, 0, 1, 0])

    def loss(lib, net, x, y):
        return lambda p: lib.nn.functional.cross_entropy(
            lib.func.functional_call(net, p, (x,)), y)

    e_h = ef.hessian(loss(ember, e_net, ex, e_y))({"0.weight": e_net[0].weight.detach()})
    t_h = tf.hessian(loss(torch, t_net, tx, t_y))({"0.weight": t_net[0].weight.detach()})
    _close(e_h, t_h)


def test_xlogy_gradient_at_zero_is_torch_s():
    """d/dx xlogy(x, y) is log(y) at x = 0 too (torch's formula), 0 where y <= 0 there; the same
    for xlog1py with y <= -1. Its second derivatives through forward over reverse as well."""
    x, y = np.array([0.0, 0.0, 0.0, 1.5]), np.array([2.0, 0.0, -1.0, 0.5])
    for name in ("xlogy", "special.xlog1py"):
        got = []
        for lib in (ember, torch):
            fn = lib.xlogy if name == "xlogy" else lib.special.xlog1py
            a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
            grads = lib.autograd.grad(fn(a, b).sum(), (a, b))
            hess = lib.func.hessian(lambda a, b: fn(a, b).sum(), argnums=(0, 1))(a.detach(), b.detach())
            got.append((grads, hess))
        _close(got[0], got[1])


_LAYERS = {
    "batch_norm": lambda lib, a: lib.nn.functional.batch_norm(a, None, None, training=True),
    "group_norm": lambda lib, a: lib.nn.functional.group_norm(a, 3),
    "instance_norm": lambda lib, a: lib.nn.functional.instance_norm(a),
    "layer_norm": lambda lib, a: lib.nn.functional.layer_norm(a, (2, 2)),
    "rms_norm": lambda lib, a: lib.nn.functional.rms_norm(a, (2,)),
    "conv2d": lambda lib, a: lib.nn.functional.conv2d(a, a[:1]),
    "max_pool2d": lambda lib, a: lib.nn.functional.max_pool2d(a * a, 2),
    "avg_pool2d": lambda lib, a: lib.nn.functional.avg_pool2d(a * a, 2),
    "interpolate": lambda lib, a: lib.nn.functional.interpolate(a, scale_factor=2, mode="bilinear"),
    "local_response_norm": lambda lib, a: lib.nn.functional.local_response_norm(a, 2),
}


@pytest.mark.parametrize("name", sorted(_LAYERS))
def test_hessian_through_layers(name):
    """Layers whose backward formulas use statistics saved from the forward pass (normalizations)
    or run their own kernels: under forward mode the backward recomputes what it differentiates."""
    x = np.random.default_rng(12).standard_normal((2, 3, 2, 2))
    layer = _LAYERS[name]

    def loss(lib):
        return lambda a: (layer(lib, a) ** 2).sum() + layer(lib, a).sin().sum()

    _close(ef.hessian(loss(ember))(ember.tensor(x)), tf.hessian(loss(torch))(torch.tensor(x)), atol=1e-7)


def test_layer_norm_with_an_input_dependent_weight_against_finite_differences():
    """torch's own Hessian here is not symmetric (its layer_norm double backward is off when the
    weight depends on the input): ember's is checked against central differences of torch's
    gradient instead."""
    x = np.random.default_rng(13).standard_normal((2, 3, 2))

    def loss(lib):
        return lambda a: (lib.nn.functional.layer_norm(a, (2,), a[0, 0], a[1, 1]) ** 2).sum()

    def torch_grad(arr):
        a = torch.tensor(arr, requires_grad=True)
        return torch.autograd.grad(loss(torch)(a), a)[0].numpy().ravel()

    eps, n = 1e-6, x.size
    numeric = np.zeros((n, n))
    for k in range(n):
        step = np.zeros(n)
        step[k] = eps
        numeric[:, k] = (torch_grad(x + step.reshape(x.shape)) - torch_grad(x - step.reshape(x.shape))) / (2 * eps)
    got = _np(ef.hessian(loss(ember))(ember.tensor(x))).reshape(n, n)
    np.testing.assert_allclose(got, numeric, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(got, got.T, atol=1e-10)


def test_compiled_region_under_forward_mode():
    """A region compiled with an ahead-of-time backward ("aot_eager") inside a dual level, with
    an input that requires grad: the tangent and the gradients are torch's eager ones, and
    hessian (forward over reverse) runs through it."""
    r = np.random.default_rng(14)
    x, v, w = r.standard_normal((3, 4)), r.standard_normal((3, 4)), r.standard_normal((4, 2))

    def region(lib, weight):
        return lambda a: (lib.tanh(a @ weight) ** 2).sum(-1) + a.sin().sum()

    ew, tw = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    compiled = ember.compile(region(ember, ew), backend="aot_eager")
    compiled(ember.tensor(x, requires_grad=True)).sum().backward()   # captured with its backward
    ew.grad = None
    got = []
    for lib, fn, weight in ((ember, compiled, ew), (torch, region(torch, tw), tw)):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = lib.tensor(x, requires_grad=True)
            y = fn(fw.make_dual(a, lib.tensor(v)))
            y.sum().backward()
            got.append((fw.unpack_dual(y).tangent, a.grad, weight.grad))
    _close(got[0], got[1])
    _close(ef.hessian(lambda a: compiled(a).sum())(ember.tensor(x)),
           tf.hessian(lambda a: region(torch, tw.detach())(a).sum())(torch.tensor(x)))


def test_backward_inside_a_dual_level_accumulates_as_torch():
    """``.grad`` from a backward inside a dual level: detached (no tangent) as torch's, unless
    ``create_graph``, where its tangent is the Hessian-vector product."""
    got = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = lib.tensor([1.0, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
            dual = fw.make_dual(x, lib.tensor([1.0, 0.5, -2.0], dtype=lib.float64))
            (dual ** 3 * dual.sin()).sum().backward()
            plain = (x.grad.clone(), fw.unpack_dual(x.grad).tangent)
            x.grad = None
            (dual ** 3 * dual.sin()).sum().backward(create_graph=True)
            got.append((plain, (x.grad.detach().clone(), fw.unpack_dual(x.grad).tangent.detach())))
    (e_plain, e_graph), (t_plain, t_graph) = got
    assert e_plain[1] is None and t_plain[1] is None
    _close(e_plain[0], t_plain[0])
    _close(e_graph, t_graph)
