"""``ember._inductor``: the generated kernels of ``ember.compile``'s default backend.

``compile_fx(gm, example_inputs)`` (torch's name) fuses the captured graph's pointwise chains
(``_fusion.py``) into C loops (``_codegen.py``) built by the machine's C compiler and cached on
disk (``_compiler.py``), for calls with grad mode off; with ``aot_backward`` (``config``, on by
default, or ``ember.compile(options=...)``) training calls take the ahead-of-time backward with
both of its graphs fused (``fuse_aot``). ``counters`` says how many kernels were compiled and loaded from
the cache, and the compiler's time."""
from ..autograd.grad_mode import state as grad_mode
from . import config
from ._compiler import cache_dir, compiler_available, counters

__all__ = ["compile_fx", "config", "counters", "cache_dir", "compiler_available", "fuse",
           "kernels_of", "fuse_aot", "OPTIONS"]


def compile_fx(gm, example_inputs, options=None):
    """The callable that runs ``gm``: with grad mode off, its graph with the pointwise chains
    fused; with grad mode on, its graph as captured (eager autograd records every op).
    ``options``: overrides of ``config``'s ``fuse``."""
    if not _option(options, "fuse"):
        return gm.forward
    from ._fusion import fuse
    fused = fuse(gm)
    if fused is gm:
        return gm.forward
    forward, fused_forward = gm.forward, fused.forward

    def run(*args):
        if grad_mode.grad_enabled:
            return forward(*args)
        return fused_forward(*args)
    run.fused = fused
    return run


def fuse_aot(aot_function, options=None):
    """Fuse the forward and backward graphs of an ahead-of-time backward in place."""
    if _option(options, "fuse"):
        from ._fusion import fuse
        aot_function.forward_graph = fuse(aot_function.forward_graph)
        aot_function.backward_graph = fuse(aot_function.backward_graph)


# the ``ember.compile(options=...)`` keys the default backend reads (torch's other inductor
# options are accepted and have no effect)
OPTIONS = ("fuse", "aot_backward")


def _option(options, name):
    if options and name in options:
        return options[name]
    return getattr(config, name)


def __getattr__(name):
    # the fusion (and ember.fx under it) is imported on first use: ember's compiled loops load
    # through ``_compiler`` without it
    if name in ("fuse", "kernels_of"):
        from . import _fusion
        return getattr(_fusion, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
