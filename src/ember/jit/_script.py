"""What TorchScript-decorated code needs to import and run eagerly: ``script`` (which ember
cannot do, and says so), the decorators that mark functions for the TorchScript compiler
(``ignore``, ``unused``, ``export``, ``interface``, ``script_if_tracing``), ``fork``/``wait``,
``freeze`` and ``optimize_for_inference`` of traced modules, and the small helpers."""
import builtins
import typing

from ._recorder import active

__all__ = ["script", "ignore", "unused", "export", "interface", "script_if_tracing",
           "is_scripting", "is_tracing", "Final", "Attribute", "annotate", "isinstance", "fork",
           "wait", "Future", "freeze", "optimize_for_inference", "CompilationUnit", "Error",
           "export_opnames", "enable_onednn_fusion", "onednn_fusion_enabled",
           "set_fusion_strategy", "strict_fusion"]

Final = typing.Final


class Error(RuntimeError):
    """The error TorchScript raises for a program it cannot compile."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Not supported: ember has no TorchScript compiler. Raises NotImplementedError naming the
    alternatives: ``ember.jit.trace`` (records the ops a run executes, Python control flow
    frozen) and ``ember.fx.symbolic_trace`` (a Python-level graph of the program)."""
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    raise NotImplementedError(
        f"ember.jit.script({name}) is not supported: ember does not compile TorchScript. Use "
        f"ember.jit.trace(module, example_inputs) to record the ops one run executes (Python "
        f"control flow frozen), or ember.fx.symbolic_trace(module) for a graph of the program; "
        f"or call the module eagerly.")


def CompilationUnit(*args, **kwargs):
    """Not supported: compiles TorchScript source, which ember does not do."""
    raise NotImplementedError("ember.jit.CompilationUnit is not supported: ember does not compile "
                              "TorchScript. Use ember.jit.trace or ember.fx instead.")


def _marker(attr):
    def decorator(fn=None, **kwargs):
        if fn is None or builtins.isinstance(fn, bool):
            def apply(f):
                setattr(f, attr, True)
                return f
            return apply
        setattr(fn, attr, True)
        return fn
    return decorator


def ignore(drop=False, **kwargs):
    """Marks a function to be left to Python by the TorchScript compiler. ember runs everything
    in Python: the function is returned as it is (``@ignore`` and ``@ignore(drop=True)``)."""
    if callable(drop):
        drop._ember_jit_ignore = True
        return drop

    def decorator(fn):
        fn._ember_jit_ignore = True
        return fn
    return decorator


def unused(fn):
    """Marks a function or method that TorchScript should not compile; runs eagerly in ember."""
    if builtins.isinstance(fn, property):
        return fn
    fn._ember_jit_unused = True
    return fn


def export(fn):
    """Marks a method of a module as an entry point for TorchScript; returns it unchanged."""
    fn._ember_jit_export = True
    return fn


def interface(obj):
    """Marks a class as a TorchScript interface; returns it unchanged."""
    return obj


def script_if_tracing(fn):
    """Compiles ``fn`` when it is first called during tracing in torch; ember runs it as it is
    (a trace records its ops)."""
    return fn


def is_scripting():
    """False: ember never compiles TorchScript, so code is never being scripted."""
    return False


def is_tracing():
    """True while ``ember.jit.trace`` is recording a program."""
    return active() is not None


def Attribute(value, type=None):
    """Declares a module attribute's type for TorchScript; returns ``value``."""
    return value


def annotate(the_type, the_value):
    """Gives ``the_value`` a type for the TorchScript compiler; returns ``the_value``."""
    return the_value


def isinstance(obj, target_type):
    """``isinstance`` that also accepts parameterized container types (``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[Tensor]``), checking the elements."""
    origin = typing.get_origin(target_type)
    if origin is None:
        if target_type is typing.Any:
            return True
        return builtins.isinstance(obj, target_type)
    params = typing.get_args(target_type)
    if origin is typing.Union:
        return any(isinstance(obj, t) for t in params)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return all(isinstance(x, params[0]) for x in obj) if params else True
    if origin is dict:
        return all(isinstance(k, params[0]) and isinstance(v, params[1])
                   for k, v in obj.items()) if params else True
    if origin is tuple:
        if not params:
            return True
        if len(params) == 2 and params[1] is Ellipsis:
            return all(isinstance(x, params[0]) for x in obj)
        return len(obj) == len(params) and all(isinstance(x, t) for x, t in zip(obj, params))
    return True


class Future:
    """The result of ``fork``: ember runs the forked call at once, so ``wait`` returns its
    value (or raises its exception)."""

    def __init__(self):
        self._value = None
        self._error = None
        self._callbacks = []

    def set_result(self, value):
        self._value = value
        for cb in self._callbacks:
            cb(self)

    def set_exception(self, error):
        self._error = error

    def done(self):
        return True

    def wait(self):
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def then(self, callback):
        fut = Future()
        fut.set_result(callback(self))
        return fut

    def add_done_callback(self, callback):
        callback(self)


def fork(func, *args, **kwargs):
    """Start ``func(*args, **kwargs)`` asynchronously and return a ``Future``; ember runs it
    at once (TorchScript's inter-op parallelism is not there)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # the exception belongs to the waiter, as torch's
        fut.set_exception(e)
    return fut


def wait(future):
    """The value of a ``Future`` from ``fork``."""
    return future.wait()


def _require_script_module(mod, what):
    from ._trace import ScriptModule
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError(f"{what} expects a ScriptModule as input. Please use "
                           f"ember.jit.trace to trace your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """A copy of the traced module ``mod`` (in eval mode) whose parameters are constants: they
    no longer require grad."""
    import copy
    _require_script_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    frozen = copy.deepcopy(mod)
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen


def optimize_for_inference(mod, other_methods=None):
    """``freeze`` (putting ``mod`` in eval mode first if needed); ember applies no further
    graph optimizations."""
    _require_script_module(mod, "optimize_for_inference")
    if mod.training:
        mod = mod.eval()
    return freeze(mod)


def export_opnames(m):
    """The names of the ops the traced module's graph calls."""
    from ..fx._names import qualified_name
    names = []
    for node in m.graph.nodes:
        if node.op == "call_function":
            names.append(qualified_name(node.target))
        elif node.op in ("call_method", "call_module"):
            names.append(str(node.target))
    return sorted(set(names))


_onednn_fusion = False


def enable_onednn_fusion(enabled):
    """Records the flag; ember's oneDNN use does not depend on it."""
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled():
    return _onednn_fusion


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]


def set_fusion_strategy(strategy):
    """Sets TorchScript's fusion strategy (kept, unused: ember does not fuse); returns the
    previous one."""
    global _fusion_strategy
    old, _fusion_strategy = _fusion_strategy, list(strategy)
    return old


class strict_fusion:
    """A context manager that asserts fusion in TorchScript; ember does not fuse, so it checks
    nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
