"""oneDNN's threads are GNU OpenMP's (the wheel links libgomp): they follow
``ember.set_num_threads``, applied when oneDNN is next used from a thread whose count differs
(OpenMP keeps the count per calling thread); NumPy's OpenBLAS then keeps to one thread, so
that OpenMP's threads are the one pool (``_backend/parallel.py``).

GNU OpenMP's thread pool does not survive ``fork``: a child that starts a parallel region
with the parent's pool in place can hang. As torch does, a forked child runs oneDNN on one
thread (set from the moment ember first used OpenMP in the parent), and drops the parent's
plans: a primitive keeps the thread count it was created with, so the child creates its own.
"""
import ctypes
import os
import threading

from .. import parallel


class _Applied(threading.local):
    count = None    # the thread count this thread's OpenMP was last given
    forked = False  # a forked child: one thread, whatever ember's count


_applied = _Applied()
_gomp = []


def _omp_set_num_threads():
    if not _gomp:
        _gomp.append(ctypes.CDLL("libgomp.so.1").omp_set_num_threads)  # the one libdnnl loaded
        os.register_at_fork(after_in_child=_one_thread_in_child)
    return _gomp[0]


def _one_thread_in_child():
    global _applied
    from .runtime import plans
    _gomp[0](1)
    plans.forget_after_fork()
    _applied = _Applied()
    _applied.count = 1
    _applied.forked = True


def applied_count():
    """The OpenMP thread count this thread's oneDNN primitives are created and run under."""
    return _applied.count


def follow_ember():
    """Give this thread's oneDNN primitives ``ember.get_num_threads()`` threads (one in a
    forked child)."""
    n = parallel.get_num_threads()
    if _applied.count != n and not _applied.forked:
        _omp_set_num_threads()(n)
        _applied.count = n
        parallel.follow_onednn()   # OpenMP's threads are the pool: OpenBLAS keeps to one
