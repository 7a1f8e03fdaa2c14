"""Parametrizations: a parameter or buffer computed on access from an ``original`` tensor by
a chain of modules (``module.weight = f(module.parametrizations.weight.original)``)."""
import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter
from ...autograd.graph import bump_version

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Context manager that enables the caching system within parametrizations registered with
    :func:`register_parametrization`: each parametrized tensor is computed once, on first
    use, and reused until the context exits."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest, src):
    """Make ``dest`` hold ``src``'s data (torch's ``set_``), as an in-place change."""
    dest.data = src
    bump_version(dest)


def _check_same(value, reference, what, returned):
    """The errors torch raises when a safe parametrization changes dtype or shape."""
    if value.dtype != reference.dtype:
        raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, "
                         f"unless the `unsafe` flag is enabled.\n{what}.dtype: "
                         f"{reference.dtype}\n{returned}.dtype: {value.dtype}")
    if tuple(value.shape) != tuple(reference.shape):
        raise ValueError(f"Registering a parametrization may not change the shape of the tensor, "
                         f"unless the `unsafe` flag is enabled.\n{what}.shape: "
                         f"{reference.shape}\n{returned}.shape: {value.shape}")


class ParametrizationList(ModuleList):
    """A sequential container that holds and manages the original parameters or buffers of a
    parametrized module (``original``, or ``original0, original1, ...`` when
    ``right_inverse`` returns several tensors)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new is not original:
                with no_grad():
                    _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            self._register_originals(new, original)
        if not self.unsafe:
            self._check_safe(original_shape, original_dtype)

    def _register_originals(self, tensors, original):
        for i, tensor in enumerate(tensors):
            if not isinstance(tensor, Tensor):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                 f"(list, tuple...). Got element {i} of the sequence with type "
                                 f"{type(tensor).__name__}.")
            if isinstance(original, Parameter):
                tensor = Parameter(tensor, original.requires_grad)
            tensor.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", tensor)

    def _check_safe(self, original_shape, original_dtype):
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
        if z.dtype != original_dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized dtype: {original_dtype}\n"
                             f"parametrized dtype: {z.dtype}")
        if tuple(z.shape) != original_shape:
            raise ValueError("Registering a parametrization may not change the shape of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized shape: {original_shape}\n"
                             f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Set the original tensor(s) so that the parametrization yields ``value``, calling
        each parametrization's ``right_inverse`` in reverse order."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
                return
            self._set_originals(value)

    def _set_originals(self, value):
        if not isinstance(value, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                             f"{type(value).__name__}.")
        if len(value) != self.ntensors:
            raise ValueError("'right_inverse' must return a sequence of tensors of length "
                             f"{self.ntensors}. Got a sequence of length {len(value)}.")
        for i, tensor in enumerate(value):
            original_i = getattr(self, f"original{i}")
            if not isinstance(tensor, Tensor):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                 f"element {i} of type {type(tensor).__name__}.")
            if original_i.dtype != tensor.dtype:
                raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                 f"{tensor.dtype} while `original{i}` has dtype "
                                 f"{original_i.dtype}")
            _maybe_set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _default_deepcopy(self, memo):
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _inject_new_class(module):
    """Give ``module`` its own subclass ``Parametrized<Class>``, to hold the properties."""
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    """``module.<tensor_name>`` now computes the parametrization (or reads the cache), and
    assigning to it calls ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Register a parametrization to a tensor in a module: ``module.tensor_name`` then returns
    ``parametrization(module.parametrizations[tensor_name].original)``. A second
    parametrization on the same tensor is chained after the first. ``right_inverse``, when
    the parametrization has one, initializes ``original`` from the current value."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def _check_chained(module, tensor_name, parametrization):
    """A parametrization added on top of others may not change dtype or shape (and neither
    may its ``right_inverse``)."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    _check_same(x, y, f"module.{tensor_name}", f"parametrization(module.{tensor_name})")
    if hasattr(parametrization, "right_inverse"):
        try:
            z = parametrization.right_inverse(x)
        except NotImplementedError:
            return
        if not isinstance(z, Tensor):
            raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                             f"{type(z).__name__}")
        _check_same(z, y, f"module.{tensor_name}", "returned")


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations on ``tensor_name``. With ``leave_parametrized`` the tensor
    keeps its current (parametrized) value; otherwise it becomes ``original`` again."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's type before parametrizations were registered on it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Give ``to_module`` the parametrizations (and their originals) of ``from_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
