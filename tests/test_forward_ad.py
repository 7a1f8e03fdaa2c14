"""Forward-mode AD's API against torch: dual levels, make_dual/unpack_dual and their errors,
tangents under no_grad, through in-place ops and views, together with reverse mode;
autograd.Function.jvp; gradcheck(check_forward_ad=True); autograd.functional's forward-mode
strategies; ember.func's jvp, jacfwd and linearize. (The op table's tangents are checked in
test_forward_ad_ops.py.)"""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.func as tfunc

import ember
import ember.autograd.forward_ad as efw
from ember.func._forward_transforms import jacfwd, jvp, linearize

LIBS = [(torch, tfw), (ember, efw)]
rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (3, 4))
V = rng.uniform(-1, 1, (3, 4))
W = rng.uniform(-1, 1, (4, 2))


def _np(t):
    return None if t is None else t.detach().numpy()


def _both(fn):
    """``fn(lib, fw)`` on torch and on ember: each result, or the (type, message) raised."""
    out = []
    for lib, fw in LIBS:
        try:
            out.append(fn(lib, fw))
        except Exception as e:   # compared below
            out.append((type(e), str(e).split("\n")[0].replace("torch.", "").replace("ember.", "")))
    return out


def _same(a, b):
    if isinstance(a, tuple) and a and isinstance(a[0], type):
        assert a == b, (a, b)
        return
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _check(fn):
    t, e = _both(fn)
    _same(t, e)


# -- levels, make_dual, unpack_dual ------------------------------------------------------------

def test_make_dual_outside_a_level():
    _check(lambda lib, fw: fw.make_dual(lib.ones(2), lib.ones(2)))


def test_nested_levels_are_refused():
    def fn(lib, fw):
        with fw.dual_level():
            with fw.dual_level():
                pass
    _check(fn)


def test_level_numbers_and_exit_errors():
    def fn(lib, fw):
        with fw.dual_level() as level:
            first = level
        second = fw.enter_dual_level()
        fw.exit_dual_level(level=second)
        return [np.array(first), np.array(second)]
    _check(fn)
    _check(lambda lib, fw: fw.exit_dual_level(level=-1))
    _check(lambda lib, fw: fw.exit_dual_level())

    def wrong_level(lib, fw):
        fw.enter_dual_level()
        try:
            fw.exit_dual_level(level=3)
        finally:
            fw.exit_dual_level()
    _check(wrong_level)


@pytest.mark.parametrize("case", ["size", "integer", "level", "twice", "dtype"])
def test_make_dual_errors(case):
    def fn(lib, fw):
        with fw.dual_level():
            if case == "size":
                return fw.make_dual(lib.ones(2), lib.ones(3))
            if case == "integer":
                return fw.make_dual(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))
            if case == "level":
                return fw.make_dual(lib.ones(2), lib.ones(2), level=5)
            if case == "twice":
                x = fw.make_dual(lib.ones(2), lib.ones(2))
                return fw.make_dual(x, lib.ones(2))
            x = fw.make_dual(lib.ones(2), lib.ones(2, dtype=lib.float64))   # accepted, as torch does
            return [_np(t) for t in fw.unpack_dual(x)]
    _check(fn)


def test_unpack_dual():
    def fn(lib, fw):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            unpacked = fw.unpack_dual(x)
            assert type(unpacked).__name__ == "UnpackedDualTensor"
            assert unpacked._fields == ("primal", "tangent")
            plain = fw.unpack_dual(lib.tensor(X))
            assert fw.unpack_dual(unpacked.primal).tangent is None   # the primal has no tangent
            inside = [_np(unpacked.primal), _np(unpacked.tangent), _np(plain.primal), plain.tangent]
        after = fw.unpack_dual(x)
        return inside + [_np(after.primal), after.tangent]
    _check(fn)
    _check(lambda lib, fw: fw.unpack_dual(lib.ones(2), level=3))


# -- propagation ----------------------------------------------------------------------------

def _chain(lib, x, w):
    h = (x @ w).tanh() * 2 + x.sum(1, keepdim=True)
    return lib.cat([h, h.exp()], 1).mean(0)


def test_tangents_through_a_chain_and_under_no_grad():
    def fn(lib, fw):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            out = _chain(lib, x, lib.tensor(W))
            with lib.no_grad():
                quiet = _chain(lib, x, lib.tensor(W))
            return [_np(t) for t in fw.unpack_dual(out)] + [_np(fw.unpack_dual(quiet).tangent)]
    _check(fn)


def test_tangents_with_reverse_mode():
    """A backward through ops whose inputs are dual; the tangent itself has a history."""
    def fn(lib, fw):
        w = lib.tensor(W, requires_grad=True)
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            out = _chain(lib, x, w)
            primal, tangent = fw.unpack_dual(out)
            (g,) = lib.autograd.grad(out.sum(), [w], retain_graph=True)
            (gt,) = lib.autograd.grad(tangent.sum(), [w])
            return [_np(primal), _np(tangent), _np(g), _np(gt)]
    _check(fn)


def test_in_place_ops_and_views():
    def fn(lib, fw):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V)).clone()
            y = x * 2                       # its tangent is read after x changes below
            view = x[1]
            x.mul_(3)
            x.add_(fw.make_dual(lib.tensor(V), lib.tensor(X)))
            plain = lib.zeros(3, 4, dtype=lib.float64)
            plain[0] = fw.make_dual(lib.tensor(X[0]), lib.tensor(V[0]))   # a plain tensor gets one
            base = lib.ones(3, 4, dtype=lib.float64)
            part = base[1:, 2]
            part.mul_(fw.make_dual(lib.tensor(X[0, :2]), lib.tensor(V[0, :2])))   # so does its base
            column = base.t()[3]
            column.add_(fw.make_dual(lib.tensor(X[1, :3]), lib.tensor(V[1, :3])))
            return [_np(fw.unpack_dual(t).tangent) for t in (y, x, view, plain, base, part, column)]
    _check(fn)


def test_op_without_a_rule_raises_torch_error():
    """Every ember node has a rule (below): a node class made here without one stands for an op
    torch has no rule for, and gets torch's error, named as torch names the op."""
    from ember.autograd.graph import Node
    from ember.ops._common import make, record

    class SpecialThingBackward0(Node):
        def backward(self, grad):
            return (grad,)

    x = ember.ones(2)
    with efw.dual_level():
        dual = efw.make_dual(x, ember.ones(2))
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with special_thing "
                                                      "that does not support it because it has not "
                                                      "been implemented yet."):
            record(SpecialThingBackward0, (dual,), make(x._data.copy()))


def test_cholesky_inverse_tangent():
    """Against central differences of torch's values: torch's own tangent differs from them
    (even for a triangular factor), so it is not the reference here."""
    a = np.array([[2.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.3, 0.2, 1.5]])
    t = np.random.default_rng(5).uniform(-1, 1, (3, 3))
    for upper in (False, True):
        f, dt = (a.T.copy(), np.triu(t)) if upper else (a, np.tril(t))
        eps = 1e-6
        numeric = (torch.cholesky_inverse(torch.tensor(f + eps * dt), upper=upper)
                   - torch.cholesky_inverse(torch.tensor(f - eps * dt), upper=upper)).numpy() / (2 * eps)
        with efw.dual_level():
            out = ember.cholesky_inverse(efw.make_dual(ember.tensor(f), ember.tensor(t)), upper=upper)
            np.testing.assert_allclose(_np(efw.unpack_dual(out).tangent), numeric, atol=1e-7)


def test_integer_results_have_no_tangent():
    def fn(lib, fw):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            return [fw.unpack_dual(x.argmax()).tangent, fw.unpack_dual(x.long()).tangent,
                    _np(fw.unpack_dual(x.max(1).values).tangent)]
    _check(fn)


# -- Function.jvp ---------------------------------------------------------------------------

def _functions(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, x + 1

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            return (tx * y + x * ty) * ctx.k, tx

        @staticmethod
        def backward(ctx, g, h):
            return None, None, None

    class Sine(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return tx * x.cos()

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Scale, Sine, NoJvp


def test_function_jvp():
    def fn(lib, fw):
        scale, sine, _ = _functions(lib)
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            a, b = scale.apply(x, lib.tensor(W[:3, :1]), 2.0)
            s = sine.apply(x)
            return [_np(fw.unpack_dual(t).tangent) for t in (a, b, s)]
    _check(fn)

    def no_jvp(lib, fw):
        with fw.dual_level():
            _functions(lib)[2].apply(fw.make_dual(lib.tensor(X), lib.tensor(V)))
    _check(no_jvp)


# -- gradcheck, functional ------------------------------------------------------------------

def test_gradcheck_forward_ad():
    x = ember.tensor(X, requires_grad=True)
    w = ember.tensor(W, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: _chain(ember, a, b), (x, w), check_forward_ad=True)
    assert ember.autograd.gradcheck(lambda a: a.sin(), (x,), check_forward_ad=True,
                                    check_backward_ad=False)
    assert torch.autograd.gradcheck(lambda a: a.sin(), (torch.tensor(X, requires_grad=True),),
                                    check_forward_ad=True, check_backward_ad=False)

    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sin()

        @staticmethod
        def jvp(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch"):
        ember.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True, check_backward_ad=False)


def test_functional_forward_mode_strategies():
    def fn(lib, fw):
        f = lambda a, b: ((a @ b).tanh(), a.exp().sum(0))   # noqa: E731
        jac = lib.autograd.functional.jacobian(f, (lib.tensor(X), lib.tensor(W)),
                                               strategy="forward-mode", vectorize=True)
        hes = lib.autograd.functional.hessian(lambda a: (a.tanh() * a.exp()).sum() + (a * a).prod(),
                                              lib.tensor(X[0]), outer_jacobian_strategy="forward-mode",
                                              vectorize=True)
        return [_np(t) for row in jac for t in row] + [_np(hes)]
    _check(fn)
    _check(lambda lib, fw: lib.autograd.functional.jacobian(lambda a: a, lib.ones(2),
                                                            strategy="forward-mode"))


# -- ember.func ----------------------------------------------------------------------------

def _f(a, b):
    return {"h": (a @ b).tanh(), "s": (a.exp().sum(0), a * 2)}


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [_np(tree)]


def test_func_jvp():
    e = jvp(_f, (ember.tensor(X), ember.tensor(W)), (ember.tensor(V), ember.tensor(W * 0 + 1)))
    t = tfunc.jvp(_f, (torch.tensor(X), torch.tensor(W)), (torch.tensor(V), torch.tensor(W * 0 + 1)))
    _same(_leaves(e), _leaves(t))
    e = jvp(lambda a: (a.sin(), a.cos()), (ember.tensor(X),), (ember.tensor(V),), has_aux=True)
    t = tfunc.jvp(lambda a: (a.sin(), a.cos()), (torch.tensor(X),), (torch.tensor(V),), has_aux=True)
    _same(_leaves(e), _leaves(t))
    for bad in [lambda lib, j: j(lambda a: a, lib.ones(2), (lib.ones(2),)),
                lambda lib, j: j(lambda a: a, (lib.ones(2),), (lib.ones(3),))]:
        with pytest.raises(RuntimeError) as te:
            bad(torch, tfunc.jvp)
        with pytest.raises(RuntimeError) as ee:
            bad(ember, jvp)
        assert str(ee.value).split(":")[0] == str(te.value).split(":")[0]


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_func_jacfwd(argnums):
    e = jacfwd(_f, argnums=argnums)(ember.tensor(X), ember.tensor(W))
    t = tfunc.jacfwd(_f, argnums=argnums)(torch.tensor(X), torch.tensor(W))
    _same(_leaves(e), _leaves(t))


def test_func_errors():
    for bad in [lambda lib, j: j(lambda a: a, randomness="x")(lib.ones(2)),
                lambda lib, j: j(lambda a: a, argnums=3)(lib.ones(2))]:
        with pytest.raises(RuntimeError) as te:
            bad(torch, tfunc.jacfwd)
        with pytest.raises(RuntimeError) as ee:
            bad(ember, jacfwd)
        assert str(ee.value) == str(te.value)
    e = jvp(lambda a: a.sin(), (ember.tensor(X),), (ember.tensor(V),), strict=True)
    t = tfunc.jvp(lambda a: a.sin(), (torch.tensor(X),), (torch.tensor(V),), strict=True)
    _same(_leaves(e), _leaves(t))


def test_func_jacfwd_has_aux():
    e = jacfwd(lambda a: (a.sin(), a.cos()), has_aux=True)(ember.tensor(X[0]))
    t = tfunc.jacfwd(lambda a: (a.sin(), a.cos()), has_aux=True)(torch.tensor(X[0]))
    _same(_leaves(e), _leaves(t))


def test_func_linearize():
    out, fn = linearize(lambda a, b: (a @ b).sin(), ember.tensor(X), ember.tensor(W))
    tout, tfn = tfunc.linearize(lambda a, b: (a @ b).sin(), torch.tensor(X), torch.tensor(W))
    _same(_np(out), _np(tout))
    for v in (V, X):
        _same(_np(fn(ember.tensor(v), ember.tensor(W))), _np(tfn(torch.tensor(v), torch.tensor(W))))


# -- which nodes have rules ------------------------------------------------------------------

NODES_WITHOUT_JVP = {
    "NotImplemented": "torch's node for an op it does not differentiate: no tangent either",
    "AccumulateGrad": "ends a leaf's gradient; no op to differentiate",
    "Error": "stands for a once_differentiable backward; no forward op",
    "BackwardCFunction": "autograd.Function's node: Function.apply calls the Function's jvp instead",
    "MappedFunctionBackward": "autograd.Function's node under vmap (as above)",
    "FunctionBackward": "the node of the base autograd.Function (as above)",
    "InplaceFunctionBackward": "the node of InplaceFunction (as above)",
    "CheckpointFunctionBackward": "checkpoint's Function has no jvp (torch's reentrant checkpoint "
                                  "has none either)",
    "BackwardHookFunctionBackward": "Module's full backward hooks (a Function without jvp)",
    "AllReduceSumBackward": "SyncBatchNorm's all-reduce (a Function without jvp)",
    "_RecomputingNode": "base class: its subclasses declare their rules",
    "_MomentNode": "base class: its subclasses declare their rules",
    "_TangentInput": "forward AD's own edge marker, never run",
    "CrossMapLRN2dBackward": "torch's legacy CrossMapLRN2d is an autograd.Function without jvp",
    "CompiledFunctionBackward": "never recorded while a dual level is active: a compiled region "
                                "(aot_eager) then replays its forward graph op by op, whose ops "
                                "carry the tangents and record ordinary nodes",
}
# sparse tensors' nodes (ember.sparse): their backward runs on arrays only
for _name in ("CoalesceBackward0", "SparseAddmmBackward0", "SparseCooTensorWithDimsAndTensorsBackward0",
              "SparseLogSoftmaxBackward0", "SparseSoftmaxBackward0", "SparseSparseMatmulBackward0",
              "SparseSumBackward0", "ToDenseBackward0", "ToSparseBackward0", "ToSparseBackward1",
              "ToSparseCsrBackward0", "ValuesBackward0"):
    NODES_WITHOUT_JVP[_name] = "a sparse tensor's op: no forward-mode rules for sparse tensors yet"


def test_nodes_without_jvp_are_listed():
    import ember._dynamo._aot
    import ember.func._custom_function
    import ember.nn.modules.syncbatchnorm  # noqa: F401
    from ember.autograd.graph import Node
    seen, stack = set(), [Node]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    # (the node classes other tests define, for their autograd.Functions or their own, are not ember's)
    without = {c.__name__ for c in seen if c.jvp is Node.jvp
               and (getattr(c, "_forward_cls", None) or c).__module__.startswith("ember")}
    assert without == set(NODES_WITHOUT_JVP)
    assert len(seen) - len(without) > 250


def test_layers_and_losses():
    """nn.functional's nodes (convolution, pooling, normalization, activations, softmax, losses,
    embedding, padding) against torch's tangents."""
    r = np.random.default_rng(3)
    img, img_t = r.uniform(-1, 1, (2, 3, 6, 6)), r.uniform(-1, 1, (2, 3, 6, 6))
    w, w_t = r.uniform(-1, 1, (4, 3, 3, 3)), r.uniform(-1, 1, (4, 3, 3, 3))
    table, table_t = r.uniform(-1, 1, (5, 4)), r.uniform(-1, 1, (5, 4))

    def fn(lib, fw):
        F = lib.nn.functional
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(img), lib.tensor(img_t))
            weight = fw.make_dual(lib.tensor(w), lib.tensor(w_t))
            h = F.conv2d(x, weight, padding=1)
            h = F.batch_norm(h, None, None, training=True)
            h = F.max_pool2d(F.relu(h), 2) + F.avg_pool2d(F.gelu(h), 2)
            h = F.layer_norm(F.silu(h), (3, 3))
            h = F.pad(h, (1, 1)).flatten(1)
            logits = h[:, :5]
            loss = F.cross_entropy(logits, lib.tensor([1, 3])) + F.mse_loss(h, h.detach() * 0.5)
            emb = F.embedding(lib.tensor([[0, 2], [4, 2]]), fw.make_dual(lib.tensor(table),
                                                                       lib.tensor(table_t)))
            outs = [F.softmax(logits, 1), F.log_softmax(logits, 1), loss, emb.tanh()]
            return [_np(fw.unpack_dual(o).tangent) for o in outs]
    t, e = _both(fn)
    for a, b in zip(t, e):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-10)
