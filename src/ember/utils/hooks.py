"""``ember.utils.hooks``: the handle every ``register_*hook`` returns, and the marks for hooks
that are not saved with a tensor."""
import warnings

from .._hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not expected to be saved: :func:`warn_if_has_hooks` stays
    silent about it. Returns ``f``."""
    f.__torch_unserializable__ = True
    return f


def _backward_hooks(tensor):
    """The backward hooks registered on ``tensor`` with ``register_hook`` (a leaf keeps them
    itself; a computed tensor's live on its grad_fn)."""
    if tensor.grad_fn is None:
        return dict(tensor._leaf_hooks or {})
    per_output = tensor.grad_fn.__dict__.get("_tensor_pre_hooks", {})
    return dict(per_output.get(tensor._output_nr, {}))


def warn_if_has_hooks(tensor):
    """Warn for each backward hook on ``tensor`` that saving it would drop (those not marked
    with :func:`unserializable_hook`)."""
    for hook in _backward_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                          "expected, you can decorate the function with "
                          "@ember.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
