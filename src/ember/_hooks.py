"""``RemovableHandle``: what every ``register_*hook`` returns, for modules, optimizers, autograd
nodes and tensors alike (torch.utils.hooks.RemovableHandle)."""
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "add_hook", "hooks_in"]


class RemovableHandle:
    """A handle which provides the capability to remove a hook.

    ``hooks_dict`` maps handle ids to hooks (an OrderedDict: it is held weakly); ``extra_dict``
    names more dicts (or sets) keyed by the same id that ``remove`` cleans as well."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, (dict, set)):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) if isinstance(d, dict) else _SetRef(d)
                                    for d in extra_dict)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None:
                if isinstance(extra, dict):
                    extra.pop(self.id, None)
                else:
                    extra.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _SetRef:
    """A strong reference with weakref's call syntax (sets cannot be weakly referenced)."""

    def __init__(self, obj):
        self.obj = obj

    def __call__(self):
        return self.obj


def add_hook(hooks_dict, hook):
    """Add ``hook`` to ``hooks_dict`` (an OrderedDict) under a new handle's id; the handle."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    return handle


def hooks_in(owner_dict, name):
    """The OrderedDict of hooks ``owner_dict[name]``, made on first use."""
    hooks = owner_dict.get(name)
    if hooks is None:
        hooks = owner_dict[name] = OrderedDict()
    return hooks
