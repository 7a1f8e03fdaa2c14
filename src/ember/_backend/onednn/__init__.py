"""oneDNN, the CPU kernel library PyTorch itself runs, as ember's CPU kernel layer: loaded
from the ``onednn-cpu-gomp`` wheel through ctypes (``capi``), plans of primitives and reorders
over NumPy buffers (``runtime``), and the ops that run on it (``conv``, ``normalization``,
``pooling``, ``softmax``, ``eltwise``, ``gemm``, ``rnn``).

``available()`` says whether the library loads here; whether ember uses it is the kernel
choice's business (``ember._backend.choice``).
"""
from . import (capi, conv, eltwise, gemm, normalization, pooling, rnn, softmax,  # noqa: F401
               threads)


def available():
    """Whether libdnnl loads on this machine."""
    return capi.lib() is not None


def set_verbose(level):
    """Set oneDNN's verbose level (0 off, 1 each primitive run, 2 creation too): it prints a
    line per primitive to stdout. Returns whether oneDNN took it (False where it is not
    loaded or refuses the level)."""
    library = capi.lib()
    return library is not None and library.dnnl_set_verbose(level) == capi.SUCCESS
