"""``Parameter``: a tensor that a Module registers as one of its parameters."""
from .._tensor import Tensor, _new
from .._torch_function import _disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "is_parameter", "UninitializedTensorMixin", "UninitializedParameter",
           "UninitializedBuffer", "is_lazy"]


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


# ----------------------------------------------------------------------------------------------
# Uninitialized parameters and buffers: the members of a lazy module before its first forward


def _tensor_methods_allowed_uninitialized():
    """The Tensor methods an uninitialized parameter or buffer answers (as torch's
    ``UninitializedTensorMixin._allowed_methods``); every other function refuses it."""
    return frozenset((Tensor.__hash__, Tensor.size, Tensor.copy_, Tensor.is_complex,
                      Tensor.is_floating_point, Tensor.half, Tensor.float, Tensor.double,
                      Tensor.char, Tensor.short, Tensor.int, Tensor.long, Tensor.cuda, Tensor.cpu,
                      Tensor.to, Tensor.get_device))


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: no shape until :meth:`materialize`
    gives them one, after which they become ``cls_to_become``. Until then ember's functions
    refuse them with a ValueError, except the few that only read or convert their dtype and
    device, and their properties."""

    __slots__ = ()
    _allowed_methods = None
    __torch_function__ = _disabled_torch_function_impl  # until the first instance: see below

    def materialize(self, shape, device=None, dtype=None):
        """Give this tensor ``shape`` (new, uninitialized memory on ``device`` with ``dtype``,
        by default its current ones); it becomes a ``cls_to_become`` instance in place."""
        from ..ops.creation import empty
        data = self.data
        device = data.device if device is None else device
        dtype = data.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol):
        return (self.__class__, (self.requires_grad,))


def _refuse_uninitialized(cls, func, types, args=(), kwargs=None):
    """``__torch_function__`` of uninitialized tensors: properties and the allowed methods run
    as they would on the parameter or buffer's base class; anything else raises."""
    if UninitializedTensorMixin._allowed_methods is None:
        UninitializedTensorMixin._allowed_methods = _tensor_methods_allowed_uninitialized()
    if func in UninitializedTensorMixin._allowed_methods or type(func).__name__ == "method-wrapper":
        if issubclass(cls, Parameter):  # results are plain tensors, as from a Parameter
            return _disabled_torch_function_impl(func, types, args, kwargs)
        from .._torch_function import default_torch_function
        return default_torch_function(cls, func, types, args, kwargs)
    raise ValueError(
        f"Attempted to use an uninitialized parameter in {func}. This error happens when you are "
        "using a `LazyModule` or explicitly manipulating `ember.nn.parameter.UninitializedParameter` "
        "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
        "parameters before calling ember functions")


def _make_uninitialized(cls, requires_grad, device, dtype):
    """A ``cls`` instance holding an empty 1-D tensor. The first one switches on
    ``__torch_function__`` dispatch for uninitialized tensors, so that programs without lazy
    modules keep ember's plain call path."""
    from .._torch_function import on_subclass
    from ..ops.creation import empty
    if UninitializedTensorMixin.__dict__["__torch_function__"] is _disabled_torch_function_impl:
        UninitializedTensorMixin.__torch_function__ = classmethod(_refuse_uninitialized)
        on_subclass(UninitializedParameter)
        on_subclass(UninitializedBuffer)
    data = empty(0, device=device, dtype=dtype)
    t = _new(cls)
    t._data = data._data
    t.grad_fn = None
    t._version_counter = data._version_counter
    t._requires_grad = False
    if requires_grad:
        t.requires_grad = True  # validates the dtype as torch does
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, before its first forward):
    :meth:`materialize` gives it one and makes it a :class:`Parameter`."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _make_uninitialized(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = self.data
        out = type(self)(self.requires_grad, data.device, data.dtype)
        memo[id(self)] = out
        return out


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy module's, before its first forward):
    :meth:`materialize` gives it one and makes it a plain Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return _make_uninitialized(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        return _refuse_uninitialized(type(self), Tensor.__deepcopy__, (type(self),), (self, memo))


def is_lazy(param):
    """True if ``param`` is an uninitialized parameter or buffer (of a lazy module)."""
    return isinstance(param, UninitializedTensorMixin)
