"""The CPU's thread count for intra-op parallelism, ``ember.get_num_threads`` and
``ember.set_num_threads``.

Where oneDNN runs (``ember.backends.mkldnn.enabled``, the default where its wheel is
installed), its OpenMP threads are the one pool: oneDNN's primitives and ember's compiled loops
run on them, and NumPy's OpenBLAS keeps to one thread (its idle workers spin a long while after
each GEMM and would take OpenMP's cores). Where oneDNN is not in use, ember's kernels are NumPy
calls on the calling thread and OpenBLAS threads the GEMMs over the same count.

``set_num_threads`` sets the counts, as ``torch.set_num_threads`` sets torch's. The default
is the thread count OpenBLAS had when ember was imported (one per core, or
``OPENBLAS_NUM_THREADS``, or a ``threadpoolctl`` limit set before), read only: importing ember
changes neither the environment nor another library's threads.
"""
import os

from . import cblas

_num_threads = 1


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations."""
    return _num_threads


def set_num_threads(num_threads):
    """Sets the number of threads used for intra-op parallelism on CPU: oneDNN's kernels and
    ember's compiled loops run on this many OpenMP threads; where oneDNN is not in use, NumPy's
    OpenBLAS uses as many for GEMMs (where it is, OpenBLAS keeps to one). As with torch's, call
    it before work starts on other threads."""
    global _num_threads
    if type(num_threads) is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got "
                           f"{type(num_threads).__name__}")
    if num_threads < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    cblas.set_num_threads(_blas_threads(num_threads))
    _num_threads = num_threads
    _choice_module().settings_changed()   # oneDNN's OpenMP count follows on each thread
    if _onednn_in_use():   # this thread's at once: the compiled loops read it before any choice
        from .onednn import threads
        threads.follow_ember()


def _blas_threads(num_threads):
    return 1 if _onednn_in_use() else num_threads


def follow_onednn():
    """OpenBLAS's thread count after oneDNN was switched on or first used (one thread) or
    switched off (ember's count)."""
    if _num_threads > 1:
        cblas.set_num_threads(_blas_threads(_num_threads))


_choice = []   # the choice module, bound on first use (it imports this one)


def _choice_module():
    if not _choice:
        from . import choice
        _choice.append(choice)
    return _choice[0]


def _onednn_in_use():
    choice = _choice_module()
    return choice.enabled(choice.ONEDNN)


def _take_default():
    """ember's thread count from OpenBLAS's at import (see the module's docstring)."""
    global _num_threads
    threads = cblas.num_threads()
    if threads is not None:
        _num_threads = max(1, min(threads, os.cpu_count() or 1))


_take_default()
