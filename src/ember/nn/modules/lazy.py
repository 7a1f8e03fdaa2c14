"""``LazyModuleMixin``: modules whose parameters get their shapes from the first input."""
import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """A mixin for modules that infer the shapes of their parameters (and buffers) from their
    first input. Until then those members are ``UninitializedParameter`` /
    ``UninitializedBuffer``s; the first call runs :meth:`initialize_parameters` with the
    forward's arguments, and the module then becomes ``cls_to_become`` (when set), e.g. a
    ``LazyLinear`` becomes a ``Linear``. Loading a state dict into an uninitialized module gives
    its members the loaded shapes. Put the mixin first among the base classes."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._add_hook(self._load_state_dict_pre_hooks, self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        """Give each uninitialized member the shape of its (initialized) entry in
        ``state_dict``, so that loading copies into it."""
        for name, member in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if member is not None and is_lazy(member) and key in state_dict:
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        member.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Give the uninitialized members their shapes from the forward's arguments, and
        initialize their values."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """True while some parameter or buffer of this module (not its children) is
        uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                         self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize from the first input, then drop the hooks and
        become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules")
