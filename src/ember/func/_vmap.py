"""``vmap``: map a function over a dimension of its inputs, with batching rules per op."""
import functools
import types

from .._tensor import Tensor

from ._batched import BatchedTensor, _VmapLevel, active_levels
from ._dispatch import _patch_list, _tensor_attribute, dispatch, dispatch_method, patched
from ._pytree import broadcast_prefix, tree_flatten, tree_repr, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_counter = [0]


def _name(func):
    return getattr(func, "__name__", type(func).__name__)


def _new_level(batch_size, randomness):
    _counter[0] += 1
    return _VmapLevel(_counter[0], batch_size, randomness)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizing map: returns a function that runs ``func`` on every slice of its inputs
    along ``in_dims`` and stacks the results along ``out_dims``, as one batched computation.

    ``in_dims`` is an int, None (the input is not mapped over) or a (nested) tuple matching
    the positional inputs; ``out_dims`` likewise for the outputs. ``randomness`` says what a
    random operation inside ``func`` does: ``'error'`` raises, ``'different'`` draws
    independently for each sample, ``'same'`` draws once for the whole batch. ``chunk_size``
    maps that many samples at a time (None: all at once). Calls nest (vmap of vmap) and
    compose with ``grad``, ``vjp`` and ``jacrev``."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _flat_inputs(func, in_dims, args):
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
                         f"be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, "
                         f"or you are trying to vmap over a function with no inputs. The latter "
                         f"is unsupported.")
    leaves, spec = tree_flatten(tuple(args))
    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else in_dims, tuple(args))
    if dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {tree_repr(tree_flatten(in_dims)[1])} "
            f"but inputs has structure {tree_repr(spec)}.")
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"an input but in_dim must be either an integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"an input but the input is of type {type(x)}. We cannot vmap over "
                             f"non-Tensor arguments, please use None as the respective in_dim")
        n = x.ndim
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"some input, but that input is a Tensor of dimensionality {n} so "
                             f"expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(x.shape[d % n])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Expected at least one "
                         f"Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    dims = [None if d is None else d % x.ndim for x, d in zip(leaves, dims)]
    return leaves, spec, dims, sizes[0]


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec, dims, size = _flat_inputs(func, in_dims, args)
    if chunk_size is None or chunk_size >= size:
        return _run(func, out_dims, randomness, leaves, spec, dims, size, kwargs)
    from ._dispatch import original
    chunks = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        part = [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, dims)]
        chunks.append(_run(func, out_dims, randomness, part, spec, dims, n, kwargs))
    out_leaves0, out_spec = tree_flatten(chunks[0])
    outs = [tree_flatten(c)[0] for c in chunks]
    odims = broadcast_prefix(out_dims, chunks[0])
    merged = []
    for j, d in enumerate(odims):
        if d is None or not isinstance(out_leaves0[j], Tensor):
            merged.append(out_leaves0[j])
        else:
            merged.append(dispatch(original("cat"), ([o[j] for o in outs],), {"dim": d}))
    return tree_unflatten(merged, out_spec)


def _run(func, out_dims, randomness, leaves, spec, dims, size, kwargs):
    entry = _new_level(size, randomness)
    wrapped = [x if d is None else BatchedTensor(x, d, entry.level) for x, d in zip(leaves, dims)]
    with patched(getattr(func, "__globals__", None)):
        active_levels.append(entry)
        try:
            out = _through_dispatch(func)(*tree_unflatten(wrapped, spec), **kwargs)
        finally:
            active_levels.pop()
        return _unwrap_outputs(func, out, out_dims, entry)


def _through_dispatch(func):
    """An ember function passed to vmap itself (``vmap(ember.add)``) is called through the
    dispatch step, like the ember functions that the mapped code calls."""
    if isinstance(func, types.FunctionType) and (func.__module__ or "").startswith("ember."):
        if _patch_list()[1].get(id(func)) is func:
            return lambda *args, **kwargs: dispatch(func, args, kwargs)
        name = func.__name__
        if _tensor_attribute(name) is func:
            return lambda self, *args, **kwargs: dispatch_method(name, self, args, kwargs)
    return func


def _unwrap_outputs(func, out, out_dims, entry):
    name = _name(func)
    leaves, spec = tree_flatten(out)
    dims = broadcast_prefix(out_dims, out)
    if dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure "
            f"{tree_repr(tree_flatten(out_dims)[1])} but outputs has structure {tree_repr(spec)}.")
    result = []
    for x, d in zip(leaves, dims):
        if d is None:
            if type(x) is BatchedTensor and x.level == entry.level:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None")
            result.append(x)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
        if type(x) is BatchedTensor and x.level == entry.level:
            result.append(x.value.movedim(x.bdim, d))
        else:
            n = x.ndim + 1
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {d})")
            d %= n
            shape = list(x.shape)
            shape.insert(d, entry.batch_size)
            result.append(x.unsqueeze(d).expand(*shape))
    return tree_unflatten(result, spec)


