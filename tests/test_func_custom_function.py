"""autograd.Function under vmap against torch.func: ``generate_vmap_rule=True`` and a ``vmap``
staticmethod, with gradients through the Function's own backward (per-sample gradients, a
backward after vmap, nested vmap), run once on the batch rather than once per sample."""
import numpy as np
import torch
import torch.func as tf

import ember
import ember.func as ef
from ember.func._dispatch import FALLBACK_OPS


def _np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach()._data)


def _close(e, t, atol=1e-10):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, atol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(e), _np(t), atol=atol, rtol=1e-8)


def _functions(lib):
    class RoundStraightThrough(lib.autograd.Function):
        """A rounding whose backward is the identity (what autograd alone cannot give)."""
        generate_vmap_rule = True

        @staticmethod
        def forward(x, scale):
            return lib.round(x * scale) / scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g, None

    class ScaledCube(lib.autograd.Function):
        """Two tensor inputs, one broadcast (its gradient summed by the backward), and a second
        output marked non-differentiable."""
        generate_vmap_rule = True

        @staticmethod
        def forward(x, w):
            return x ** 3 * w, (x > 0).to(x.dtype)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, _):
            x, w = ctx.saved_tensors
            return 3 * g * x ** 2 * w, g * x ** 3   # (w's summed to its shape by autograd)

    class Exp(lib.autograd.Function):
        """A vmap staticmethod of its own (its backward runs batched through the rules)."""

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def vmap(info, in_dims, x):
            return Exp.apply(x), in_dims[0]

    return RoundStraightThrough, ScaledCube, Exp


def _pair(*shape, seed=0):
    arr = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(arr), torch.tensor(arr)


def test_per_sample_gradients_through_custom_backwards():
    (ex, tx), (ew, tw), (ev, tv) = _pair(5, 3, seed=1), _pair(5, 3, seed=2), _pair(1, seed=5)
    (er, ec, ee), (tr, tc, te) = _functions(ember), _functions(torch)

    def loss(r, c, e, w):
        return lambda x: (r.apply(x, 4.0) * c.apply(x, w[0])[0] + e.apply(x)).sin().sum()

    FALLBACK_OPS.clear()
    _close(ef.vmap(ef.grad(loss(er, ec, ee, ew)))(ex), tf.vmap(tf.grad(loss(tr, tc, te, tw)))(tx))
    for (ea, ta), dims in (((ew, tw), 0), ((ev, tv), None)):
        _close(ef.vmap(ef.grad(lambda x, w: ec.apply(x, w)[0].sum(), argnums=(0, 1)), (0, dims))(ex, ea),
               tf.vmap(tf.grad(lambda x, w: tc.apply(x, w)[0].sum(), argnums=(0, 1)), (0, dims))(tx, ta))
    _close(ef.vmap(ef.vmap(ef.grad(lambda a: ee.apply(a * ew[0]).sum())))(ex[None].expand(2, 5, 3)),
           tf.vmap(tf.vmap(tf.grad(lambda a: te.apply(a * tw[0]).sum())))(tx[None].expand(2, 5, 3)))
    assert not FALLBACK_OPS   # no per-sample loop: the backward ran batched


def test_backward_after_vmap_and_values():
    (ex, tx), (ew, tw) = _pair(4, 3, seed=3), _pair(1, seed=4)
    (er, ec, ee), (tr, tc, te) = _functions(ember), _functions(torch)
    got = []
    for lib, fn, (r, c, e), x0, w0 in ((ember, ef, (er, ec, ee), ex, ew), (torch, tf, (tr, tc, te), tx, tw)):
        x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        y, positive = fn.vmap(lambda a: c.apply(a, w))(x)
        z = fn.vmap(lambda a: e.apply(r.apply(a, 2.0)))(x)
        if lib is ember:   # (torch's vmap keeps a history on an output marked non-differentiable)
            assert not positive.requires_grad
        ((y * z).sum() + y.pow(2).sum()).backward()
        got.append((y, positive, z, x.grad, w.grad))
    _close(got[0], got[1])


def test_node_named_as_torch_s():
    (ex, tx), (ew, tw) = _pair(4, 3, seed=6), _pair(1, seed=7)
    names = []
    for fn, c, x, w in ((ef, _functions(ember)[1], ex, ew), (tf, _functions(torch)[1], tx, tw)):
        w = w.clone().requires_grad_()
        y = fn.vmap(lambda a: c.apply(a, w)[0])(x)
        node = y.grad_fn
        while node.name() == "PermuteBackward0":   # (ember's vmap moves the batch dimension back)
            node = node.next_functions[0][0]
        names.append(node.name())
    assert names[0] == names[1] == "VmappedScaledCubeBackward"
