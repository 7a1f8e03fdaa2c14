"""``ember.compile`` and ``OptimizedModule``."""
import functools

from ..nn import Module
from ._backends import lookup_backend
from ._capture import NO_ROOT
from ._compiled import CompiledFunction

__all__ = ["compile", "OptimizedModule"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class OptimizedModule(Module):
    """The module ``ember.compile(module)`` returns: calling it runs the original module
    (``_orig_mod``, hooks included) through captured graphs. Its parameters and buffers are the
    original's, so ``state_dict`` keys carry the prefix ``_orig_mod.`` as torch's do; other
    attributes are read from the original module."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)


def _check_options(mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict, got {type(options).__name__}")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """See ``ember.compile``."""
    _check_options(mode, options)
    compiler = lookup_backend(backend)
    if options and hasattr(compiler, "with_options"):
        compiler = compiler.with_options(options)
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorate
    if disable:
        return model
    if isinstance(model, Module):
        compiled = CompiledFunction(model, model, backend=compiler, fullgraph=fullgraph,
                                    dynamic=dynamic)
        return OptimizedModule(model, compiled)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    owner = getattr(model, "__self__", None)
    root = owner if isinstance(owner, Module) else NO_ROOT
    compiled = CompiledFunction(model, root, backend=compiler, fullgraph=fullgraph,
                                dynamic=dynamic)

    @functools.wraps(model)
    def compiled_function(*args, **kwargs):
        return compiled(*args, **kwargs)
    compiled_function._ember_compiled = compiled
    compiled_function._torchdynamo_orig_callable = model
    return compiled_function
