"""oneDNN, the CPU kernel library PyTorch itself runs, as ember's CPU kernel layer: loaded
from the ``onednn-cpu-gomp`` wheel through ctypes (``capi``), plans of primitives and reorders
over NumPy buffers (``runtime``), and the ops that run on it (``conv``).

``available()`` says whether the library loads here; whether ember uses it is the kernel
choice's business (``ember._backend.choice``).
"""
from . import capi, conv, gemm, normalization, threads  # noqa: F401  (onednn.conv, ...)


def available():
    """Whether libdnnl loads on this machine."""
    return capi.lib() is not None


def version():
    """oneDNN's version as (major, minor, patch), or None when it is not available."""
    lib = capi.lib()
    if lib is None:
        return None
    import ctypes

    class _Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int)]

    v = ctypes.cast(lib.dnnl_version(), ctypes.POINTER(_Version)).contents
    return v.major, v.minor, v.patch
