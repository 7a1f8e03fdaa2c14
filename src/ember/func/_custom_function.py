"""``autograd.Function`` under vmap: its ``vmap`` staticmethod, or with
``generate_vmap_rule=True`` its forward run on the mapped inputs (its ops have rules)."""
from ..autograd.function import Function, _uses_setup_context
from ..autograd.grad_mode import no_grad
from ._batched import BatchedTensor, current_level
from ._rules_common import is_batched

__all__ = ["apply_batched", "VmapInfo"]


class VmapInfo:
    """What a Function's ``vmap`` staticmethod learns about the call: the batch size and the
    randomness mode."""

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


def _physical_requires_grad(args):
    from ._batched import physical
    from ..autograd.grad_mode import is_grad_enabled
    return is_grad_enabled() and any(
        getattr(physical(a), "requires_grad", False) for a in args if hasattr(a, "shape"))


def apply_batched(cls, level, args, kwargs):
    if not _uses_setup_context(cls):
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    if not cls.generate_vmap_rule and cls.vmap is Function.vmap:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            f"more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    if kwargs:
        from ..autograd.function import _bind
        args = _bind(cls, args, kwargs)
    if _physical_requires_grad(args):
        # gradients through the Function's own backward: one call per sample, each recording
        # its own node on the sample's slice
        from ._dispatch import _loop_fallback
        return _loop_fallback(cls.apply, cls.__name__, level, args, {})
    if cls.generate_vmap_rule:
        with no_grad():
            return cls.forward(*args)
    info = VmapInfo(current_level(level).batch_size, current_level(level).randomness)
    in_dims = tuple(a.bdim if is_batched(a, level) else None for a in args)
    values = tuple(a.value if is_batched(a, level) else a for a in args)
    with no_grad():
        outputs, out_dims = cls.vmap(info, in_dims, *values)
    if isinstance(outputs, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
        return tuple(o if d is None else BatchedTensor(o, d % o.ndim, level)
                     for o, d in zip(outputs, dims))
    return outputs if out_dims is None else BatchedTensor(outputs, out_dims % outputs.ndim, level)

