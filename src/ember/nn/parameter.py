"""``Parameter``: a tensor that a Module registers as one of its parameters."""
from .._tensor import Tensor, _new
from .._torch_function import _disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "is_parameter"]


class Parameter(Tensor):
    """A kind of Tensor that is to be considered a module parameter: assigned as a Module
    attribute it is added to the module's parameters. Shares memory with ``data``."""

    _is_param = True
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        p = _new(cls)
        p._data = data._data
        p.grad_fn = None
        p._version_counter = data._version_counter
        p._requires_grad = False
        if requires_grad:
            p.requires_grad = True  # validates the dtype as torch does
        return p

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, protocol), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(_copy(self), self._requires_grad)
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out


def _copy(t):
    from .._tensor import _make
    return _make(t._data.copy())


def _rebuild_parameter(reduced, requires_grad):
    fn, args = reduced
    return Parameter(fn(*args), requires_grad)


def is_parameter(obj):
    return isinstance(obj, Parameter)


class _BufferMeta(type):
    """``isinstance(t, Buffer)``: a tensor made by ``Buffer(...)``."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.__dict__.get("_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A kind of Tensor that is not a parameter but is part of a module's state (BatchNorm's
    ``running_mean``): assigned as a Module attribute it is added to the module's buffers, in
    its ``state_dict`` unless ``persistent`` is False. ``Buffer(data)`` is ``data`` detached
    (a plain Tensor, marked)."""

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
