"""``ember._inductor``: the generated kernels of ``ember.compile``'s default backend.

``compile_fx(gm, example_inputs)`` (torch's name) fuses the captured graph's pointwise chains
(``_fusion.py``) into C loops (``_codegen.py``) built by the machine's C compiler and cached on
disk (``_compiler.py``). ``counters`` says how many kernels were compiled and loaded from the
cache, and the compiler's time."""
from . import config
from ._compiler import cache_dir, compiler_available, counters
from ._fusion import fuse, kernels_of

__all__ = ["compile_fx", "config", "counters", "cache_dir", "compiler_available", "fuse",
           "kernels_of", "fuse_aot"]


def compile_fx(gm, example_inputs):
    """The callable that runs ``gm`` with its pointwise chains fused (``gm.forward`` when
    ``config.fuse`` is off)."""
    if not config.fuse:
        return gm.forward
    return fuse(gm).forward


def fuse_aot(aot_function):
    """Fuse the forward and backward graphs of an ahead-of-time backward in place."""
    if config.fuse:
        aot_function.forward_graph = fuse(aot_function.forward_graph)
        aot_function.backward_graph = fuse(aot_function.backward_graph)
