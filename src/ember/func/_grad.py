"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``hessian``.

They differentiate with ember's autograd on the plain tensors behind the inputs. Inside
``vmap``, each differentiated input becomes a leaf with one leading dimension per running vmap
level (expanded where the input is not mapped), so that the gradient of the summed outputs is
the gradient of every sample: ``vmap(grad(f))`` gives per-sample gradients. Nested calls
(``grad(grad(f))``) build the inner gradients with ``create_graph``. Under forward mode
(``jacfwd(jacrev(f))``, ``jvp`` of ``grad``) the leaves and the detached results keep their
tangents, and the backward pass, run on dual tensors, gives the gradients' tangents.
"""
import functools

from .. import autograd
from .._tensor import Tensor
from ..autograd._dual import forward, set_tangent, tangent_of
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros_like
from ._batched import (BatchedTensor, active_levels, broadcast_to_level, from_front, to_front)
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian"]

_depth = [0]     # how many grad-type transforms are running their function


def _check_argnums(argnums, nargs):
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        for a in argnums:
            _check_argnums(a, nargs)
        if len(set(a % nargs for a in argnums)) != len(argnums):
            raise RuntimeError(f"argnums must be unique, got {argnums}")
        return
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not -nargs <= argnums < nargs:
        raise RuntimeError(f"Got argnum={argnums}, but only {nargs} positional inputs")


class _Leaves:
    """The differentiated inputs as autograd leaves over the running vmap levels."""

    def __init__(self, values):
        self.levels = list(active_levels)
        flat, self.spec = tree_flatten(values)
        self.physical, self.wrapped = [], []
        self.outer_grad = False
        for x in flat:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
            for entry in self.levels:
                x = broadcast_to_level(x, entry.level, entry.batch_size)
            phys = to_front(x, self.levels)
            if phys.requires_grad:
                self.outer_grad = True
                leaf = phys.view_as(phys)
            else:
                leaf = _detach(phys).requires_grad_()
            self.physical.append(leaf)
            self.wrapped.append(from_front(leaf, self.levels))

    def tree(self):
        return tree_unflatten(self.wrapped, self.spec)

    def create_graph(self, *more):
        return self.outer_grad or _depth[0] > 0 or any(
            isinstance(t, Tensor) and t.requires_grad for t in more)

    def gradients(self, outputs, cotangents, create_graph):
        """Gradients of ``outputs`` (tensors of the running levels) for the cotangents, as
        tensors of those levels, in the inputs' structure."""
        outs, cts = [], []
        for o, c in zip(outputs, cotangents):
            po = to_front(o, self.levels)
            if po.requires_grad:
                outs.append(po)
                cts.append(to_front(c, self.levels))
        if outs:
            grads = autograd.grad(outs, self.physical, cts, retain_graph=True,
                                  create_graph=create_graph, allow_unused=True)
        else:
            grads = [None] * len(self.physical)
        result = []
        for g, leaf in zip(grads, self.physical):
            if g is None:
                g = zeros_like(leaf.detach())
            elif not create_graph:
                g = _detach(g)
            result.append(from_front(g, self.levels))
        return tree_unflatten(result, self.spec)


def _detach(t):
    """``t`` detached from the reverse-mode graph, keeping its tangent when forward mode runs
    over this transform (``jacfwd(jacrev(f))``: the tangent is what the outer transform reads)."""
    if type(t) is BatchedTensor:
        return BatchedTensor(_detach(t.value), t.bdim, t.level)
    d = t.detach()
    if forward.active and t._fw_grad is not None:
        set_tangent(d, tangent_of(t))
    return d


def _call(func, args, kwargs):
    _depth[0] += 1
    try:
        with enable_grad():
            return func(*args, **kwargs)
    finally:
        _depth[0] -= 1


def _detach_tree(obj):
    leaves, spec = tree_flatten(obj)
    return tree_unflatten([_detach(x) if isinstance(x, Tensor) else x for x in leaves], spec)


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function that computes ``(gradient, value)`` of ``func`` with respect to the
    inputs at ``argnums`` (an int or a tuple of ints). ``func`` must return a scalar tensor, or
    ``(scalar, aux)`` with ``has_aux=True``, in which case the result is
    ``(gradient, (value, aux))``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        chosen = argnums if isinstance(argnums, tuple) else (argnums,)
        leaves = _Leaves(tuple(args[a] for a in chosen))
        new_args = list(args)
        for a, x in zip(chosen, leaves.tree()):
            new_args[a] = x
        out = _call(func, new_args, kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to use "
                               f"the vjp or jacrev APIs instead?")
        create_graph = leaves.create_graph()
        grads = leaves.gradients([out], [_ones_like(out)], create_graph)
        if not isinstance(argnums, tuple):
            grads = grads[0]
        value = out if create_graph else _detach(out)
        if has_aux:
            return grads, (value, aux if create_graph else _detach_tree(aux))
        return grads, value

    return wrapper


def _ones_like(x):
    from ._dispatch import dispatch, original
    return dispatch(original("ones_like"), (x,), {})


def grad(func, argnums=0, has_aux=False):
    """Returns a function that computes the gradient of ``func`` (which returns a scalar
    tensor) with respect to the inputs at ``argnums``; with ``has_aux=True`` ``func`` returns
    ``(scalar, aux)`` and the result is ``(gradient, aux)``."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """Runs ``func(*primals)`` and returns ``(output, vjp_fn)`` (and ``aux`` with
    ``has_aux=True``): ``vjp_fn(cotangents)`` gives the vector-Jacobian products with respect to
    every primal, one per primal in a tuple. ``vjp_fn`` may be called several times, and under
    ``vmap`` (a batch of cotangents)."""
    leaves = _Leaves(primals)
    out = _call(func, leaves.tree(), {})
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        out, aux = out
    flat_out, out_spec = tree_flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, "
                               f"got unsupported type {type(o)}")
    levels_above = max((e.level for e in leaves.levels), default=0)
    create_graph_forward = leaves.create_graph()

    def vjp_fn(cotangents):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: {ct_spec}, "
                               f"primal output: {out_spec}")
        newer = [c.level for c in flat_ct if type(c) is BatchedTensor and c.level > levels_above]
        if newer:
            return _loop_over_level(vjp_fn, cotangents, max(newer))
        for c, o in zip(flat_ct, flat_out):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected cotangents to be Tensors, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} "
                                   f"and output[0] has a shape of {o.shape}.")
        create_graph = create_graph_forward or leaves.create_graph(*flat_ct)
        return tuple(leaves.gradients(flat_out, flat_ct, create_graph))

    value = out if create_graph_forward else _detach_tree(out)
    if has_aux:
        return value, vjp_fn, aux if create_graph_forward else _detach_tree(aux)
    return value, vjp_fn


def _loop_over_level(fn, argument, level):
    """``fn`` applied to every sample of ``argument`` at a vmap level newer than the forward
    pass (a batch of cotangents): one backward pass per sample, results stacked."""
    from ._dispatch import FALLBACK_OPS, _batch_size, _select, stack_results
    FALLBACK_OPS.add("vjp_fn")
    flat, _ = tree_flatten(argument)
    size = _batch_size(flat, level)
    results = [fn(_select(argument, level, i)) for i in range(size)]
    return stack_results(results, level)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Returns a function that computes the Jacobian of ``func`` with respect to the inputs at
    ``argnums`` by reverse mode: one ``vjp`` and ``vmap`` of its ``vjp_fn`` over the rows of
    the identity (``chunk_size`` rows at a time). The result has the structure of the output,
    each leaf holding the Jacobians for the inputs (a tuple when ``argnums`` is a tuple)."""
    from ._vmap import vmap

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        chosen = argnums if isinstance(argnums, tuple) else (argnums,)

        def partial(*diff):
            new_args = list(args)
            for a, x in zip(chosen, diff):
                new_args[a] = x
            return func(*new_args, **kwargs)

        primals = tuple(args[a] for a in chosen)
        result = vjp(partial, *primals, has_aux=has_aux)
        out, vjp_fn = result[0], result[1]
        flat_out, out_spec = tree_flatten(out)
        flat_in, in_spec = tree_flatten(primals)
        numels = [o.numel() for o in flat_out]
        total = sum(numels)
        eye = _eye(total, flat_out[0])
        basis, offset = [], 0
        for o, n in zip(flat_out, numels):
            basis.append(eye.narrow(1, offset, n).reshape((total,) + tuple(o.shape)))
            offset += n
        rows = vmap(lambda ct: vjp_fn(tree_unflatten(ct, out_spec)), chunk_size=chunk_size)(basis)
        flat_rows, _ = tree_flatten(rows)
        per_output = []
        offset = 0
        for o, n in zip(flat_out, numels):
            jac_in = [r.narrow(0, offset, n).reshape(tuple(o.shape) + tuple(x.shape))
                      for r, x in zip(flat_rows, flat_in)]
            tree = tree_unflatten(jac_in, in_spec)
            per_output.append(tree if isinstance(argnums, tuple) else tree[0])
            offset += n
        jac = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jac, result[2]
        return jac

    return wrapper


def _eye(n, like):
    from ._dispatch import dispatch, original
    return dispatch(original("eye"), (n,), {"dtype": like.dtype})


def hessian(func, argnums=0):
    """The Hessian of ``func`` with respect to the inputs at ``argnums``: the forward-mode
    Jacobian of its reverse-mode Jacobian, ``jacfwd(jacrev(func, argnums), argnums)``, as
    torch.func computes it."""
    from ._forward_transforms import jacfwd
    return jacfwd(jacrev(func, argnums), argnums)
