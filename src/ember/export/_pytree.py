"""Flattening the nested outputs of a program to a tuple of leaves and back, with a structure
description that JSON can hold."""

__all__ = ["flatten", "unflatten"]


def flatten(value):
    """``(leaves, spec)``: the leaves of nested tuples, lists and dicts in order, and the
    structure to rebuild them with ``unflatten``."""
    leaves = []
    return leaves, _flatten(value, leaves)


def _flatten(value, leaves):
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return {type(value).__name__: [_flatten(v, leaves) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[k, _flatten(v, leaves)] for k, v in value.items()]}
    leaves.append(value)
    return None


def unflatten(leaves, spec):
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec is None:
        return next(it)
    (kind, items), = spec.items()
    if kind == "dict":
        return {k: _unflatten(it, s) for k, s in items}
    out = [_unflatten(it, s) for s in items]
    return tuple(out) if kind == "tuple" else out
