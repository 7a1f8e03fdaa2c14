"""Batching rules of views and shape ops, joining (cat, stack) and indexing."""
from .._tensor import Tensor
from ._dispatch import dispatch, register
from ._rules_common import bind, front, is_batched, wrap_dim, wrap_outputs

__all__ = []


def _sizes(args):
    """Sizes given as ``f(2, 3)`` or ``f((2, 3))``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _needs_loop(fn, level, args, kwargs):
    """True unless only the tensor itself is mapped."""
    if not is_batched(args[0], level):
        return True
    return any(is_batched(a, level) for a in args[1:]) or any(
        is_batched(v, level) for v in kwargs.values())


def _reshape(fn, level, args, kwargs):
    """view/reshape(shape): the mapped dimension stays first."""
    if _needs_loop(fn, level, args, kwargs):
        return NotImplemented
    x = args[0]
    if len(args) == 2 and not isinstance(args[1], (int, tuple, list)) and not isinstance(args[1], Tensor):
        return NotImplemented          # view(dtype)
    shape = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("shape", kwargs.get("size", ())))
    v = front(x, level)
    return wrap_outputs(dispatch(fn, (v, (v.shape[0],) + tuple(shape)), {}), level)


def _permute(fn, level, args, kwargs):
    if _needs_loop(fn, level, args, kwargs):
        return NotImplemented
    x = args[0]
    dims = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs["dims"])
    n = x.ndim
    if len(dims) != n:
        return NotImplemented
    v = front(x, level)
    return wrap_outputs(dispatch(fn, (v, (0,) + tuple(wrap_dim(d, n) + 1 for d in dims)), {}), level)


def _expand(fn, level, args, kwargs):
    if _needs_loop(fn, level, args, kwargs):
        return NotImplemented
    x = args[0]
    sizes = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("size", ()))
    n = x.ndim
    if len(sizes) < n:
        return NotImplemented
    v = front(x, level)
    shape = tuple(v.shape)
    v = v.reshape(shape[:1] + (1,) * (len(sizes) - n) + shape[1:])
    return wrap_outputs(dispatch(fn, (v, (shape[0],) + tuple(sizes)), {}), level)


def _expand_as(fn, level, args, kwargs):
    x, other = args[0], args[1]
    if is_batched(other, level):
        return NotImplemented
    return _dispatch_method(x, fn.__name__.replace("_as", ""), tuple(other.shape))


def _dispatch_method(x, name, *args):
    return getattr(x, name)(*args)


def _repeat(fn, level, args, kwargs):
    if _needs_loop(fn, level, args, kwargs):
        return NotImplemented
    x = args[0]
    sizes = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("repeats", kwargs.get("dims")))
    n = x.ndim
    if len(sizes) < n:
        return NotImplemented
    v = front(x, level)
    shape = tuple(v.shape)
    v = v.reshape(shape[:1] + (1,) * (len(sizes) - n) + shape[1:])
    return wrap_outputs(dispatch(fn, (v, (1,) + tuple(sizes)), {}), level)


def _squeeze(fn, level, args, kwargs):
    if _needs_loop(fn, level, args, kwargs):
        return NotImplemented
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    n = x.ndim
    if dim is None:
        dims = tuple(i for i, s in enumerate(x.shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        dims = (dim,)
    if n == 0:
        return x
    v = front(x, level)
    for d in sorted((wrap_dim(d, n) for d in dims), reverse=True):
        if x.shape[d] == 1:
            v = v.squeeze(d + 1)
    return wrap_outputs(v, level)


def _t(fn, level, args, kwargs):
    x = args[0]
    if x.ndim < 2:
        return x
    return x.transpose(0, 1)


def _join(fn, level, args, kwargs):
    """cat and stack: unmapped tensors are expanded to the batch, the dimension moves up."""
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    names = list(bound.arguments)
    tensors = list(bound.arguments[names[0]])
    if not tensors:
        return NotImplemented
    size = next(t.value.shape[t.bdim] for t in tensors if is_batched(t, level))
    rank = max(t.ndim for t in tensors)
    stacking = fn.__name__ == "stack"
    parts = []
    for t in tensors:
        if is_batched(t, level):
            parts.append(front(t, level))
        elif not stacking and t.ndim == 1 and t.shape[0] == 0 and rank > 1:
            continue      # cat skips legacy empty tensors
        else:
            parts.append(t.unsqueeze(0).expand(size, *t.shape))
    dim = bound.arguments.get("dim", 0)
    bound.arguments[names[0]] = parts
    bound.arguments["dim"] = wrap_dim(dim, rank + (1 if stacking else 0)) + 1
    return wrap_outputs(dispatch(fn, bound.args, bound.kwargs), level)


def _is_advanced(k):
    return isinstance(k, (Tensor, list)) or k is True or k is False


def _getitem(fn, level, args, kwargs):
    """Indexing with the mapped dimension first: a full slice is put before the key. Keys
    whose tensors are mapped, or whose advanced indices are apart (NumPy then moves their
    dimensions first), take the per-sample loop."""
    x, key = args[0], args[1]
    keys = key if isinstance(key, tuple) else (key,)
    if any(is_batched(k, level) for k in keys):
        return _getitem_mapped_index(fn, level, x, keys)
    if not is_batched(x, level):
        return NotImplemented
    positions = [i for i, k in enumerate(keys) if _is_advanced(k)]
    if positions:
        if positions[-1] - positions[0] + 1 != len(positions):
            return NotImplemented
        if any(isinstance(k, int) and not isinstance(k, bool) for k in keys):
            return NotImplemented
    v = front(x, level)
    return wrap_outputs(dispatch(fn, (v, (slice(None),) + keys), {}), level)


def _getitem_mapped_index(fn, level, x, keys):
    """Integer index tensors that are mapped: the batch is indexed by an arange of its own, so
    that sample i reads with its own indices; the index dimensions then go where indexing one
    sample puts them."""
    from ._dispatch import original
    positions = [i for i, k in enumerate(keys) if isinstance(k, Tensor)]
    if any(not isinstance(k, (Tensor, slice)) for k in keys) or any(
            keys[i].dtype.is_floating_point or str(keys[i].dtype).endswith("bool")
            for i in positions):
        return NotImplemented
    size = next(k.value.shape[k.bdim] for k in keys if is_batched(k, level))
    rank = max(keys[i].ndim for i in positions)
    xv = front(x, level) if is_batched(x, level) else x.unsqueeze(0).expand(size, *x.shape)
    new_keys = []
    for k in keys:
        if is_batched(k, level):
            v = front(k, level)
            shape = tuple(v.shape)
            new_keys.append(v.reshape(shape[:1] + (1,) * (rank - k.ndim) + shape[1:]))
        else:
            new_keys.append(k)
    batch_index = dispatch(original("arange"), (size,), {}).reshape((size,) + (1,) * rank)
    out = dispatch(fn, (xv, (batch_index, *new_keys)), {})
    first = positions[0]
    adjacent = positions[-1] - first + 1 == len(positions)
    if adjacent and first > 0:
        out = out.movedim(tuple(range(1, 1 + rank)), tuple(range(1 + first, 1 + first + rank)))
    return wrap_outputs(out, level)


def _index_select(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    names = list(bound.arguments)
    x, dim, index = (bound.arguments[n] for n in names[:3])
    if not is_batched(index, level) or index.ndim > 1:
        from ._rules_dims import dim_rule
        return dim_rule(none="keep")(fn, level, args, kwargs)
    d = wrap_dim(dim, x.ndim) if x.ndim else 0
    if x.ndim == 0:
        return NotImplemented
    return x[(slice(None),) * d + (index.reshape(-1),)]


def _setitem(fn, level, args, kwargs):
    x, key, value = args
    if not is_batched(x, level):
        return NotImplemented
    keys = key if isinstance(key, tuple) else (key,)
    if any(is_batched(k, level) for k in keys):
        return NotImplemented
    positions = [i for i, k in enumerate(keys) if _is_advanced(k)]
    if positions and (positions[-1] - positions[0] + 1 != len(positions)
                      or any(isinstance(k, int) and not isinstance(k, bool) for k in keys)):
        return NotImplemented
    v = front(x, level)
    full_key = (slice(None),) + keys
    if is_batched(value, level):
        target_rank = x[key].ndim
        val = front(value, level)
        missing = target_rank - value.ndim
        if missing > 0:
            shape = tuple(val.shape)
            val = val.reshape(shape[:1] + (1,) * missing + shape[1:])
        value = val
    dispatch(fn, (v, full_key, value), {})
    return x


def _gather(fn, level, args, kwargs):
    """gather/take_along_dim/scatter*: input and index batched together (an unmapped one is
    expanded), the dimension moves up."""
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    names = list(bound.arguments)
    x = bound.arguments[names[0]]
    ndim = x.ndim
    if ndim == 0 or bound.arguments.get("dim") is None:
        return NotImplemented
    size = None
    for k in names:
        a = bound.arguments[k]
        if is_batched(a, level):
            size = a.value.shape[a.bdim]
    for k in names:
        a = bound.arguments[k]
        if isinstance(a, Tensor) and a.ndim == ndim:
            bound.arguments[k] = (front(a, level) if is_batched(a, level)
                                  else a.unsqueeze(0).expand(size, *a.shape))
        elif is_batched(a, level):
            return NotImplemented
    bound.arguments["dim"] = wrap_dim(bound.arguments["dim"], ndim) + 1
    out = dispatch(fn, bound.args, bound.kwargs)
    if fn.__name__.endswith("_"):
        if not is_batched(x, level):
            return NotImplemented
        return x
    return wrap_outputs(out, level)


register(_reshape, "reshape", ".view")
register(_permute, "permute")
register(_expand, ".expand", "broadcast_to")
register(_expand_as, ".expand_as", ".view_as", ".reshape_as")
register(_repeat, ".repeat", "tile")
register(_squeeze, "squeeze")
register(_t, "t")
register(_join, "cat", "concat", "concatenate", "stack")
register(_getitem, ".__getitem__")
register(_index_select, "index_select")
register(_setitem, ".__setitem__")
register(_gather, "gather", "take_along_dim", "scatter", "scatter_add", "scatter_reduce",
         ".scatter_", ".scatter_add_", ".scatter_reduce_")


def _as_strided(fn, level, args, kwargs):
    raise NotImplementedError(
        "vmap: as_strided reads the memory layout of its input, which mapping over a batch "
        "changes; ember.func has no batching rule for it yet (index the sample instead)")


register(_as_strided, "as_strided")


def _python_value(fn, level, args, kwargs):
    raise RuntimeError(f"vmap: {fn.__name__} returns a Python value that depends on the data; "
                       f"there is no batching rule for it (use ember.eq / ember.isclose)")


register(_python_value, "equal", "allclose")


def _trace(fn, level, args, kwargs):
    x = args[0]
    if x.ndim != 2:
        return NotImplemented
    return x.diagonal(0, 0, 1).sum(-1)


def _ravel(fn, level, args, kwargs):
    return args[0].reshape(-1)


def _roll(fn, level, args, kwargs):
    bound = bind(fn, args, kwargs)
    if bound is None:
        return NotImplemented
    names = list(bound.arguments)
    x, shifts = bound.arguments[names[0]], bound.arguments[names[1]]
    dims = bound.arguments.get(names[2]) if len(names) > 2 else None
    if not is_batched(x, level) or is_batched(shifts, level) or x.ndim == 0:
        return NotImplemented
    if dims is None or dims == ():
        return x.reshape(-1).roll(shifts, 0).reshape(x.shape)
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    shifted = tuple(wrap_dim(d, x.ndim) + 1 for d in dims)
    return wrap_outputs(dispatch(fn, (front(x, level), shifts, shifted), {}), level)


def _diag(fn, level, args, kwargs):
    x = args[0]
    diagonal = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
    if x.ndim == 1:
        return x.diag_embed(diagonal)
    if x.ndim == 2:
        return x.diagonal(diagonal, 0, 1)
    return NotImplemented


def _cross(fn, level, args, kwargs):
    """cross: without ``dim`` the first dimension of size 3 of the (broadcast) samples."""
    from ._rules_pointwise import elementwise
    a, b = args[0], args[1]
    dim = args[2] if len(args) > 2 else kwargs.get("dim")
    rank = max(a.ndim, b.ndim)
    if dim is None:
        shape = [max(p, q) for p, q in zip((1,) * (rank - a.ndim) + tuple(a.shape),
                                            (1,) * (rank - b.ndim) + tuple(b.shape))]
        if 3 not in shape:
            return NotImplemented
        dim = shape.index(3)
    dim = wrap_dim(dim, rank) - rank    # negative: counts from the end, unchanged by the batch
    return elementwise(fn, level, (a, b), {"dim": dim})


register(_trace, "trace")
register(_ravel, "ravel")
register(_roll, "roll")
register(_diag, "diag")
register(_cross, "cross", "linalg.cross")
