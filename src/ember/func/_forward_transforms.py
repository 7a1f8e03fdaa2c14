"""torch.func's forward-mode transforms, ``jvp``, ``jacfwd`` and ``linearize``, built on
``ember.autograd.forward_ad``: each evaluation of the function runs at one dual level.

Inside ``vmap`` the tangents ride on the plain tensors behind the inputs (one leading dimension
per running vmap level), as ``_grad.py``'s leaves do for reverse mode, so ``vmap(jvp(f))`` and
``vmap(hessian(f))`` work. ``jacfwd`` evaluates the function once per basis tangent (not under a
vmap of its own), and these transforms do not nest inside one another (one dual level at a
time, as torch's forward_ad).
"""
from ..autograd import forward_ad
from ._batched import active_levels, broadcast_to_level, from_front, to_front

__all__ = ["jvp", "jacfwd", "linearize"]


def _flatten(tree):
    """The tensors of a pytree (tuples, lists and dicts of tensors) in order, and a function
    that rebuilds the tree from such a list."""
    from .._tensor import Tensor
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        counts = [len(p[0]) for p in parts]
        kind = type(tree)

        def rebuild(leaves):
            out, i = [], 0
            for (_, build), n in zip(parts, counts):
                out.append(build(leaves[i:i + n]))
                i += n
            return kind(out) if kind in (tuple, list) else kind(*out)
        return [t for p in parts for t in p[0]], rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, build = _flatten([tree[k] for k in keys])
        return leaves, lambda ls: dict(zip(keys, build(ls)))
    raise RuntimeError(f"Expected tensors (or tuples, lists and dicts of them), got "
                       f"{type(tree).__name__}")


def _check_pair(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should "
                           "be valid to call f(*primals).")
    p_leaves, _ = _flatten(primals)
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should "
                           "be valid to call f(*primals).")
    t_leaves, _ = _flatten(tangents)
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same "
                           f"python structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {len(p_leaves)} tensors "
                           f"and tangents with structure {len(t_leaves)} tensors")
    return p_leaves, t_leaves   # (make_dual refuses a tangent of another shape, as torch's)


def _dual_call(func, primals, p_leaves, t_leaves, has_aux):
    """``func`` at a dual level with the given tangents: (outputs, output tangents, aux)."""
    _, rebuild = _flatten(primals)
    with forward_ad.dual_level():
        duals = _make_duals(p_leaves, t_leaves)
        result = func(*rebuild(duals))
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            result, aux = result
            aux_leaves, aux_build = _flatten(aux)
            aux = aux_build([a.detach() for a in aux_leaves])
        out_leaves, out_build = _flatten(result)
        primal_out, tangent_out = [], []
        for o in out_leaves:
            p, t = _unpack(o)
            primal_out.append(p)
            tangent_out.append(t)
    return out_build(primal_out), out_build(tangent_out), aux


def _make_duals(primals, tangents):
    """Dual tensors of ``primals`` with ``tangents``; inside vmap, over the plain tensors
    behind them (every running level made explicit) and wrapped back."""
    if not active_levels:
        return [forward_ad.make_dual(p, t) for p, t in zip(primals, tangents)]
    levels = list(active_levels)
    duals = []
    for p, t in zip(primals, tangents):
        for entry in levels:
            p = broadcast_to_level(p, entry.level, entry.batch_size)
            t = broadcast_to_level(t, entry.level, entry.batch_size)
        duals.append(from_front(forward_ad.make_dual(to_front(p, levels), to_front(t, levels)),
                                levels))
    return duals


def _unpack(out):
    """``(primal, tangent)`` of an output, both detached; a zero tangent where it has none."""
    levels = list(active_levels)
    if levels:
        for entry in levels:
            out = broadcast_to_level(out, entry.level, entry.batch_size)
        phys = to_front(out, levels)
        p, t = forward_ad.unpack_dual(phys)
        t = phys.new_zeros(phys.shape) if t is None else t
        return from_front(p.detach(), levels), from_front(t.detach(), levels)
    p, t = forward_ad.unpack_dual(out)
    return p.detach(), (out.new_zeros(out.shape) if t is None else t).detach()


def _basis(like, k):
    """A plain tensor of ``like``'s (logical) shape, dtype and device: 1 at flat index ``k``
    (None: everywhere 0)."""
    from ..ops.creation import zeros
    t = zeros(tuple(like.shape), dtype=like.dtype, device=like.device)
    if k is not None:
        t._data.reshape(-1)[k] = 1
    return t


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """Computes ``func(*primals)`` and the Jacobian of ``func`` at ``primals`` times
    ``tangents`` (a Jacobian-vector product), in forward mode. Returns ``(output, jvp_out)``, or
    ``(output, jvp_out, aux)`` with ``has_aux=True`` (``func`` then returns ``(output, aux)``).
    ``primals`` and ``tangents`` are tuples with the same structure; ``strict`` is accepted and
    has no effect, as in torch."""
    p_leaves, t_leaves = _check_pair(primals, tangents)
    out, tangent, aux = _dual_call(func, primals, p_leaves, t_leaves, has_aux)
    return (out, tangent, aux) if has_aux else (out, tangent)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Returns a function that computes the Jacobian of ``func`` with respect to the argument(s)
    ``argnums`` (an int or a tuple of ints) in forward mode. Without vmap, ember evaluates
    ``func`` once per element of those arguments, each time with one basis tangent. Each
    Jacobian has shape ``output.shape + input.shape``; with several outputs or ``argnums`` a
    tuple, the results are nested as torch.func's. ``randomness`` is accepted for
    compatibility (each evaluation draws its own random numbers)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")

    def jacobian_fn(*args):
        from ._dispatch import dispatch, original
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        for n in nums:
            if not isinstance(n, int):
                raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(n)}")
            if not -len(args) <= n < len(args):
                raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
        nums = tuple(n % len(args) for n in nums)
        diff = [args[n] for n in nums]
        diff_leaves = [_flatten(d)[0] for d in diff]
        flat_inputs = [t for leaves in diff_leaves for t in leaves]
        columns = [[] for _ in flat_inputs]
        out = aux = out_build = None
        for j, inp in enumerate(flat_inputs):
            for k in range(inp.nelement()):
                tangents = [_basis(t, k if i == j else None) for i, t in enumerate(flat_inputs)]
                out, tangent, aux, out_build = _evaluate(func, args, nums, diff, flat_inputs,
                                                         tangents, has_aux)
                columns[j].append(tangent)
        if out is None:   # no element to differentiate: evaluate once for the output's shape
            out, _, aux, out_build = _evaluate(func, args, nums, diff, flat_inputs,
                                               [_basis(t, None) for t in flat_inputs], has_aux)
        blocks = []
        for i, o in enumerate(out):
            per_input = []
            for j, inp in enumerate(flat_inputs):
                shape = tuple(o.shape) + tuple(inp.shape)
                if not columns[j]:
                    per_input.append(o.new_zeros(shape))
                else:
                    per_input.append(dispatch(original("stack"), ([c[i] for c in columns[j]], -1),
                                              {}).reshape(shape))
            blocks.append(_nest(per_input, diff_leaves, diff, argnums))
        jac = out_build(blocks)
        return (jac, aux) if has_aux else jac
    return jacobian_fn


def _evaluate(func, args, nums, diff, flat_inputs, tangents, has_aux):
    """One dual evaluation: the flat outputs, their flat tangents, aux and the output rebuilder."""
    call_args = list(args)
    with forward_ad.dual_level():
        duals = _make_duals(flat_inputs, tangents)
        i = 0
        for n, d in zip(nums, diff):
            leaves, build = _flatten(d)
            call_args[n] = build(duals[i:i + len(leaves)])
            i += len(leaves)
        result = func(*call_args)
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("jacfwd(f, ...)(*args): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            result, aux = result
            aux_leaves, aux_build = _flatten(aux)
            aux = aux_build([a.detach() for a in aux_leaves])
        out_leaves, out_build = _flatten(result)
        outs, tans = [], []
        for o in out_leaves:
            p, t = _unpack(o)
            outs.append(p)
            tans.append(t)
    return outs, tans, aux, out_build


def _nest(per_input, diff_leaves, diff, argnums):
    """One output's Jacobian blocks arranged as the differentiated arguments are."""
    out, i = [], 0
    for leaves, d in zip(diff_leaves, diff):
        _, build = _flatten(d)
        out.append(build(per_input[i:i + len(leaves)]))
        i += len(leaves)
    return tuple(out) if isinstance(argnums, tuple) else out[0]


def linearize(func, *primals):
    """Returns ``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` computes the
    Jacobian-vector product of ``func`` at ``primals``. torch traces the function once; ember
    evaluates it again at a dual level on each call of ``jvp_fn`` (same results)."""
    p_leaves, rebuild = _flatten(primals)
    p_leaves = [p.detach() for p in p_leaves]
    frozen = rebuild(p_leaves)
    from ..autograd.grad_mode import no_grad
    with no_grad():
        out = func(*frozen)
    out_leaves, out_build = _flatten(out)
    out = out_build([o.detach() for o in out_leaves])

    def jvp_fn(*tangents):
        t_leaves, _ = _flatten(tangents)
        if len(t_leaves) != len(p_leaves):
            raise RuntimeError(f"Expected the tangents to have the structure of the primals: "
                               f"{len(p_leaves)} tensors, got {len(t_leaves)}")
        for p, t in zip(p_leaves, t_leaves):
            if p._data.shape != t._data.shape or p._data.dtype != t._data.dtype:
                raise RuntimeError(f"Expected each tangent to have the shape and dtype of its primal: "
                                   f"{list(p._data.shape)} {p.dtype}, got {list(t._data.shape)} "
                                   f"{t.dtype}")
        return _dual_call(func, frozen, p_leaves, t_leaves, False)[1]
    return out, jvp_fn
