"""The ``__torch_function__`` protocol: Tensor subclasses, tensor-like objects and
``TorchFunctionMode``s override ember's functions, methods, operators and properties.

An ember function knows nothing of the protocol until something can use it: dispatch is switched
on the first time a Tensor subclass with its own ``__torch_function__`` is defined, a mode is
entered, or an op meets a tensor-like argument (``dispatch_or_raise``). Switching on gives every
overridable callable (``_overridable``) a short entry code that looks for overriding arguments and
otherwise runs the callable's own code: the function objects stay the same (``ember.add`` keeps
its identity, so ``func is ember.add`` in a handler, and everything that holds or wraps a function
sees the change), and a program that never uses the protocol runs exactly the code it ran before.
Dispatch switched on by a mode alone is switched off again when the last mode exits.
"""
import functools
import inspect
import threading
import types

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "handle_torch_function",
           "has_torch_function", "overloaded_args", "switch_on", "dispatch_or_raise",
           "default_torch_function", "convert", "mode_stack", "is_enabled",
           "override_or_raise"]


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of a class whose instances do not take part in dispatch
    (``nn.Parameter``): it runs ``func`` and keeps the result's type."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


# ----------------------------------------------------------------------------------------
# State: whether subclasses / everything is disabled, and the stack of modes (per thread)

_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2


class _State(threading.local):
    def __init__(self):
        self.level = _ENABLED
        self.modes = []


_state = _State()


def mode_stack():
    """This thread's TorchFunctionModes, innermost last."""
    return _state.modes


def is_enabled():
    """True unless ``DisableTorchFunction`` is active."""
    return _state.level != _ALL_DISABLED


class _Level:
    _to = _ENABLED

    def __init__(self):
        self._saved = []

    def __enter__(self):
        self._saved.append(_state.level)
        _state.level = max(_state.level, self._to)
        return self

    def __exit__(self, *exc):
        _state.level = self._saved.pop()
        return False


class DisableTorchFunctionSubclass(_Level):
    """Within this context, Tensor subclasses and tensor-like objects do not override ember's
    functions (TorchFunctionModes still do)."""
    _to = _SUBCLASSES_DISABLED


class DisableTorchFunction(_Level):
    """Within this context, neither Tensor subclasses, tensor-like objects nor
    TorchFunctionModes override ember's functions."""
    _to = _ALL_DISABLED


# ----------------------------------------------------------------------------------------
# Which arguments override

_handler_cache = {}


def _handler_of(cls):
    """The ``__torch_function__`` that instances of ``cls`` override with, or None (plain
    Tensors, numbers, ``nn.Parameter``, classes without one)."""
    hit = _handler_cache.get(cls, _handler_cache)
    if hit is not _handler_cache:
        return hit
    from ._tensor import Tensor
    impl = None if cls is Tensor else getattr(cls, "__torch_function__", None)
    function = getattr(impl, "__func__", impl)
    if impl is not None and (function is _disabled_torch_function_impl or _is_torch_default(function)):
        impl = None
    _handler_cache[cls] = impl
    return impl


def _is_torch_default(function):
    """Whether ``function`` is torch's own ``Tensor.__torch_function__``: a torch tensor
    given to an ember function (``from_dlpack``, ``as_tensor``) is data, not an override;
    torch's default would call the ember function again, without end."""
    return (getattr(function, "__qualname__", None) == "Tensor.__torch_function__"
            and getattr(function, "__module__", None) == "torch._tensor")


def overloaded_args(relevant_args):
    """The arguments whose types override, one per type, a subclass before its base class and
    otherwise left to right (torch's ``_get_overloaded_args``)."""
    found_types = []
    found = []
    for arg in relevant_args:
        cls = type(arg)
        if cls in found_types or _handler_of(cls) is None:
            continue
        found_types.append(cls)
        index = len(found)
        for i, other in enumerate(found):
            if issubclass(cls, type(other)):
                index = i
                break
        found.insert(index, arg)
    return found


def has_torch_function(relevant_args):
    """True when an argument overrides or a mode is active, unless dispatch is disabled."""
    level = _state.level
    if level == _ALL_DISABLED:
        return False
    if _state.modes:
        return True
    if level == _SUBCLASSES_DISABLED:
        return False
    for arg in relevant_args:
        if _handler_of(type(arg)) is not None:
            return True
    return False


def _func_name(func):
    module = getattr(func, "__module__", None)
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    if module and module.startswith("ember"):
        from .fx._names import public_path
        path = public_path(func)
        if path is not None:
            return path
    return f"{module}.{name}" if module else name


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run ``public_api``'s override: the innermost mode's ``__torch_function__`` (popped while
    it runs), then each overriding argument's, until one returns something other than
    ``NotImplemented``; raise TypeError when none does."""
    overloaded = overloaded_args(relevant_args) if _state.level == _ENABLED else []
    types_ = tuple(type(arg) for arg in overloaded)
    modes = _state.modes
    if modes and _state.level != _ALL_DISABLED:
        mode = modes.pop()
        try:
            result = mode.__torch_function__(public_api, types_, args, kwargs)
        finally:
            modes.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types_, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"no implementation found for '{_func_name(public_api)}' on types that "
                    f"implement __torch_function__: {[type(arg) for arg in overloaded]}")


def _relevant(args, kwargs):
    """The arguments, keyword values and the items of list/tuple arguments that are not plain
    Tensors, numbers or strings: the candidates for overriding."""
    Tensor = _Tensor[0]
    found = []
    for arg in args:
        cls = arg.__class__
        if cls is Tensor or cls is int or cls is float or cls is bool or arg is None:
            continue
        if cls is list or cls is tuple:
            found.extend(a for a in arg if a.__class__ is not Tensor)
        else:
            found.append(arg)
    if kwargs:
        for arg in kwargs.values():
            if arg.__class__ is list or arg.__class__ is tuple:
                found.extend(a for a in arg if a.__class__ is not Tensor)
            elif arg.__class__ is not Tensor:
                found.append(arg)
    return found


# argument types that never override: a call whose arguments are all of these or of other
# classes without an override (nn.Parameter, arrays), with no mode active in any thread, runs its
# own code after one pass over them
_PLAIN = frozenset([int, float, bool, str, type(None), slice, type(Ellipsis)])
_modes_active = [0]     # modes entered in all threads (ember.overrides.TorchFunctionMode)
_Tensor = [None]        # ember.Tensor, set when dispatch is switched on


def _dispatch(entry, args, kwargs):
    """What a switched-on callable runs first: the override when there is one, else its code."""
    public, own = entry
    if not _modes_active[0]:
        tensor = _Tensor[0]
        for arg in (args + tuple(kwargs.values())) if kwargs else args:
            cls = arg.__class__
            if cls is not tensor and cls not in _PLAIN and (
                    cls is list or cls is tuple or _handler_of(cls) is not None):
                break
        else:
            return own(*args, **kwargs)
    level = _state.level
    if level != _ALL_DISABLED and (_state.modes or (
            level == _ENABLED and has_torch_function(_relevant(args, kwargs)))):
        return handle_torch_function(public, _relevant(args, kwargs), *args, **kwargs)
    return own(*args, **kwargs)


def _dispatch_property(entry, args, kwargs):
    prop, own = entry
    self = args[0]
    if not _modes_active[0] and _handler_of(self.__class__) is None:
        return own(self)
    level = _state.level
    if level != _ALL_DISABLED and (_state.modes or (
            level == _ENABLED and _handler_of(type(self)) is not None)):
        return handle_torch_function(prop.__get__, (self,), self)
    return own(self)


def _dispatch_setter(entry, args, kwargs):
    """A property's setter: ``prop.__set__`` is what the override sees, as torch's
    ``Tensor.requires_grad.__set__``."""
    prop, own = entry
    self = args[0]
    if not _modes_active[0] and _handler_of(self.__class__) is None:
        return own(*args)
    level = _state.level
    if level != _ALL_DISABLED and (_state.modes or (
            level == _ENABLED and _handler_of(type(self)) is not None)):
        return handle_torch_function(prop.__set__, args, *args)
    return own(*args)


# ----------------------------------------------------------------------------------------
# The default __torch_function__ of Tensor

def convert(ret, cls):
    """``ret`` with its Tensors (also inside tuples and lists) viewed as ``cls``."""
    from ._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)) and not hasattr(ret, "_fields"):
        return type(ret)(convert(r, cls) for r in ret)
    if isinstance(ret, tuple):  # a named tuple (ember.return_types)
        return type(ret)(*(convert(r, cls) for r in ret))
    return ret


def _nowrap_functions():
    from ._tensor import Tensor
    return (Tensor.grad.__get__,)


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """Runs ``func`` with subclass dispatch disabled and returns its Tensors as ``cls`` (when
    every type in ``types`` is a superclass of ``cls``; else NotImplemented)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _nowrap_functions():
            return ret
        return convert(ret, cls)


# ----------------------------------------------------------------------------------------
# Switching dispatch on and off

_templates = {}
_swapped = []           # (function, its own code, signature attribute it had or _MISSING)
_switch = types.SimpleNamespace(on=False, reasons=set())
_switch_lock = threading.RLock()
_MISSING = object()


def _entry_code(free_vars):
    """Code taking any arguments that hands them to ``'__dispatch__'('__entry__', args, kwargs)``
    (both constants are replaced per function), with ``free_vars`` unused free variables so
    that it can be the code of a closure with that many cells."""
    code = _templates.get(free_vars)
    if code is None:
        names = [f"_cell{i}" for i in range(free_vars)]
        src = "def _outer():\n" + "".join(f"    {n} = None\n" for n in names)
        src += "    def entry(*args, **kwargs):\n"
        if names:
            src += "        if False:\n            " + ", ".join(names) + "\n"
        src += "        dispatch = '__dispatch__'\n        return dispatch('__entry__', args, kwargs)\n"
        src += "    return entry\n"
        namespace = {}
        exec(compile(src, "<ember __torch_function__ dispatch>", "exec"), namespace)
        code = _templates[free_vars] = namespace["_outer"]().__code__
    return code


def _signature_before_swap(fn):
    """``fn``'s signature as ``inspect`` reports it, with the keyword-only parameters a wrapper
    adds to the function it wraps (``with_out``'s ``out``) kept."""
    signature = inspect.signature(fn)
    if getattr(fn, "__wrapped__", None) is None:
        return signature
    params = list(signature.parameters.values())
    added = [p for name, p in inspect.signature(fn, follow_wrapped=False).parameters.items()
             if p.kind is p.KEYWORD_ONLY and name not in signature.parameters]
    if not added:
        return signature
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    return signature.replace(parameters=params[:at] + added + params[at:])


def _swap(fn, public, dispatch):
    """Make ``fn`` run ``dispatch((public, <fn's own code as a function>), args, kwargs)``."""
    own_code = fn.__code__
    own = types.FunctionType(own_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    own.__kwdefaults__ = fn.__kwdefaults__
    template = _entry_code(len(own_code.co_freevars))
    consts = tuple(dispatch if c == "__dispatch__" else (public, own) if c == "__entry__" else c
                   for c in template.co_consts)
    had = fn.__dict__.get("__signature__", _MISSING)
    try:
        fn.__signature__ = _signature_before_swap(fn)
    except (TypeError, ValueError):
        pass
    names = {"co_name": own_code.co_name, "co_filename": own_code.co_filename,
             "co_firstlineno": own_code.co_firstlineno}
    if hasattr(own_code, "co_qualname"):   # (Python 3.11 on)
        names["co_qualname"] = own_code.co_qualname
    fn.__code__ = template.replace(co_consts=consts, **names)
    _swapped.append((fn, own_code, had))


def _install():
    from ._overridable import overridable_functions, tensor_attributes
    from ._tensor import Tensor
    _Tensor[0] = Tensor
    seen = set()
    for _, _, _, fn in overridable_functions():
        if isinstance(fn, types.FunctionType) and id(fn) not in seen:
            seen.add(id(fn))
            _swap(fn, fn, _dispatch)
    for _, value in tensor_attributes():
        if isinstance(value, property):
            if value.fget is not None and id(value.fget) not in seen:
                seen.add(id(value.fget))
                _swap(value.fget, value, _dispatch_property)
            if value.fset is not None and id(value.fset) not in seen:
                seen.add(id(value.fset))
                _swap(value.fset, value, _dispatch_setter)
        elif id(value) not in seen:
            seen.add(id(value))
            _swap(value, value, _dispatch)


def _uninstall():
    while _swapped:
        fn, code, had = _swapped.pop()
        fn.__code__ = code
        if had is _MISSING:
            fn.__dict__.pop("__signature__", None)
        else:
            fn.__signature__ = had


def switch_on(reason):
    """Route ember's callables through dispatch (``reason``: "subclass", "tensor-like" stay
    for good; "mode" until ``switch_off("mode")``)."""
    with _switch_lock:
        _switch.reasons.add(reason)
        if not _switch.on:
            _install()
            _switch.on = True
            from .ops import _compiled_methods
            _compiled_methods.uninstall()   # (handlers see Tensor's own methods)


def switch_off(reason):
    """Drop ``reason``; when none is left, ember's callables run their own code again."""
    with _switch_lock:
        _switch.reasons.discard(reason)
        if _switch.on and not _switch.reasons:
            _uninstall()
            _switch.on = False
            from .ops import _compiled_methods
            _compiled_methods.reinstall()


def is_switched_on():
    return _switch.on


def dispatch_or_raise(public, relevant_args, args, kwargs, error):
    """For an op that met an argument it cannot take: its override when an argument is
    tensor-like (dispatch is switched on for good), else raise ``error``."""
    if not _state.modes and _state.level == _ENABLED and any(
            not isinstance(a, type) and _handler_of(type(a)) is not None for a in relevant_args):
        switch_on("tensor-like")
        return handle_torch_function(public, relevant_args, *args, **kwargs)
    raise error


def override_or_raise(public, error, *args, **kwargs):
    """For an op that failed on its arguments with ``error``: the override of a tensor-like among
    ``args``, the keyword values and the items of list and tuple arguments (dispatch is then
    switched on for good, so later calls go straight to it), else ``error`` raised again."""
    relevant = []
    for arg in args + tuple(kwargs.values()):
        if arg.__class__ is list or arg.__class__ is tuple:
            relevant.extend(arg)
        else:
            relevant.append(arg)
    if any(_handler_of(type(a)) is not None for a in relevant if not isinstance(a, type)):
        return dispatch_or_raise(public, relevant, args, kwargs, error)
    raise error


def on_subclass(cls):
    """``Tensor.__init_subclass__``: a subclass that overrides switches dispatch on."""
    _handler_cache.clear()
    if _handler_of(cls) is not None:
        switch_on("subclass")


def wrap_torch_function(dispatcher):
    """Wraps a given function with ``__torch_function__``-related functionality: ``dispatcher``
    returns the arguments of a call that may override it."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner
