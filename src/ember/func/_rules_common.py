"""Helpers the batching rules share: moving a mapped dimension to the front, wrapping results,
binding a call to its signature."""
import functools
import inspect

from .._tensor import Tensor
from ._batched import BatchedTensor

__all__ = ["is_batched", "front", "wrap_outputs", "wrap_dim", "tree_map", "bind"]


def is_batched(x, level):
    return type(x) is BatchedTensor and x.level == level


def front(x, level):
    """The tensor behind ``x`` with its mapped dimension first (``x`` when not mapped)."""
    if type(x) is BatchedTensor and x.level == level:
        v = x.value
        return v if x.bdim == 0 else v.movedim(x.bdim, 0)
    return x


def wrap_outputs(out, level):
    """Results computed with the mapped dimension first, as BatchedTensors of ``level``."""
    if isinstance(out, Tensor):
        return BatchedTensor(out, 0, level)
    if isinstance(out, (tuple, list)):
        fields = [wrap_outputs(o, level) for o in out]
        if hasattr(out, "_fields"):
            return type(out)(*fields)
        return type(out)(fields)
    return out


def wrap_dim(dim, ndim):
    """``dim`` of a tensor with ``ndim`` dimensions as a non-negative index, or torch's error."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def tree_map(fn, obj):
    if type(obj) in (tuple, list):
        return type(obj)(tree_map(fn, x) for x in obj)
    if type(obj) is dict:
        return {k: tree_map(fn, v) for k, v in obj.items()}
    return fn(obj)


@functools.cache
def signature_of(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def bind(fn, args, kwargs):
    """``fn``'s BoundArguments for the call (defaults filled in), or None."""
    sig = signature_of(fn)
    if sig is None:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound

