"""``ember.overrides``: the ``__torch_function__`` protocol's helpers, as ``torch.overrides``.

Tensor subclasses, tensor-like objects (any object whose class has a ``__torch_function__``)
and ``TorchFunctionMode``s override ember's functions, Tensor methods, operators and
properties; see the user guide's "Extending ember" section.
"""
import inspect
import threading
import types

from . import _torch_function as _tf
from ._overridable import ignored_functions, overridable_functions, tensor_attributes
from ._torch_function import handle_torch_function, has_torch_function, wrap_torch_function

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "get_default_nowrap_functions", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "TorchFunctionMode",
           "BaseTorchFunctionMode", "resolve_name"]


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))``, for one argument."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``, with the arguments passed separately."""
    return has_torch_function(args)


def is_tensor_like(inp):
    """Returns ``True`` if the passed-in input is a Tensor-like: a Tensor, or an object whose
    type has a ``__torch_function__`` attribute."""
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def _tensor_methods():
    from ._tensor import Tensor
    out = []
    for key, value in tensor_attributes():
        out.append(value.__get__ if isinstance(value, property) else getattr(Tensor, key))
    return out


def is_tensor_method_or_property(func):
    """Returns True if ``func`` is a method or property of ``Tensor``, as passed to
    ``__torch_function__`` (methods are called with the tensor as first argument; properties
    are passed as their ``__get__``)."""
    from ._tensor import Tensor
    name = getattr(func, "__name__", None)
    if isinstance(func, types.MethodWrapperType) and isinstance(func.__self__, property):
        return any(func.__self__ is v for v in vars(Tensor).values())
    return name is not None and any(v is func for _, v in tensor_attributes())


def get_overridable_functions():
    """List functions that are overridable via ``__torch_function__``: a dict from each
    namespace (``ember``, ``ember.nn.functional``, ..., ``ember.Tensor``) to its functions."""
    from ._tensor import Tensor
    out = {}
    for _, module, _, fn in overridable_functions():
        if isinstance(fn, types.FunctionType) and fn not in out.get(module, ()):
            out.setdefault(module, []).append(fn)
    out[Tensor] = _tensor_methods()
    return out


def get_ignored_functions():
    """Return public functions that cannot be overridden by ``__torch_function__``."""
    return set(ignored_functions())


def get_default_nowrap_functions():
    """Public functions whose results the default ``Tensor.__torch_function__`` returns as they
    are (not converted to the subclass)."""
    return set(_tf._nowrap_functions())


def get_testing_overrides():
    """Return a dict mapping each overridable function to a dummy with the same signature that
    returns -1, for testing that a ``__torch_function__`` is called."""
    out = {}
    for functions in get_overridable_functions().values():
        for fn in functions:
            out[fn] = _dummy(fn)
    return out


def _dummy(fn):
    def dummy(*args, **kwargs):
        return -1
    try:
        dummy.__signature__ = inspect.signature(fn)
    except (TypeError, ValueError):
        pass
    dummy.__name__ = getattr(fn, "__name__", "dummy")
    return dummy


def resolve_name(f):
    """The name of ``f`` as ember spells it (``'ember.add'``), or None."""
    name = _tf._func_name(f)
    return name if name else None


# ----------------------------------------------------------------------------------------
# Modes

_modes_lock = threading.Lock()


class TorchFunctionMode:
    """A context manager that overrides every ember function, method, operator and property
    called while it is active: subclasses define ``__torch_function__(self, func, types,
    args=(), kwargs=None)``. While its ``__torch_function__`` runs the mode is not active, so
    calling ``func`` runs it (or the next mode down)."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        with _modes_lock:
            _tf._modes_active[0] += 1
            _tf.switch_on("mode")
        _tf.mode_stack().append(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        stack = _tf.mode_stack()
        if stack and stack[-1] is self:
            stack.pop()
        else:
            stack.remove(self)
        with _modes_lock:
            _tf._modes_active[0] -= 1
            if not _tf._modes_active[0]:
                _tf.switch_off("mode")
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        """Enter a new instance (for ``with Mode.push(...)``)."""
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose ``__torch_function__`` runs ``func`` unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    stack = _tf.mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    return list(_tf.mode_stack())
