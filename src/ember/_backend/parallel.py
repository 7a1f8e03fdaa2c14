"""Intra-op parallelism of ember's NumPy kernels on the CPU, for when oneDNN is not in use:
its large kernels (convolutions, batch norm, elementwise passes of ``ELEMENTWISE_MIN_BYTES`` or
more, attention, cross-entropy, the optimizers' blocked updates) split their work into
``get_num_threads()`` parts, the calling thread runs the first and persistent worker threads
the others, each part a run of NumPy calls that release the GIL (GEMMs, copies, ufuncs).
Inside such a split NumPy's OpenBLAS is held to one thread; elsewhere it threads the GEMMs
itself, over the same count.

Where oneDNN runs (``ember.backends.mkldnn.enabled``, the default where its wheel is
installed), its OpenMP threads are the one pool: ember does not split, since its own threads
beside OpenMP's (which spin a while after each kernel, waiting for the next) contend for the
cores (``python -m benchmarks.thread_pools``; BENCHMARKS.md has the figures).

``set_num_threads`` sets the counts, as ``torch.set_num_threads`` sets torch's. The default
is the thread count OpenBLAS had when ember was imported (one per core, or
``OPENBLAS_NUM_THREADS``, or a ``threadpoolctl`` limit set before). Before its first split
with two threads or more, ember has OpenBLAS's idle workers sleep after a short spin instead
of OpenBLAS's long one (``cblas.shorten_worker_spin``): spinning, they take the cores from the
kernels split here (``benchmarks/thread_interference.py``, ``benchmarks/threads_ab.py``).
Where OpenBLAS's thread count cannot be set (another BLAS), ember does not split and leaves the
BLAS alone.

A split region inside another (or a second thread's, at the same time) runs serially. Workers
block on a queue while idle and use no CPU between calls; a forked child starts new ones.
"""
import math
import os
import queue
import threading

import numpy as np

from . import cblas


class _Worker:
    """One daemon thread running the callables handed to ``submit``, one at a time."""

    def __init__(self):
        self._tasks = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="ember-intra-op", daemon=True)
        self._thread.start()

    def _serve(self):
        while True:
            task, outcome, finished = self._tasks.get()
            try:
                outcome.append((True, task()))
            except BaseException as error:  # handed back to the caller
                outcome.append((False, error))
            # drop the task before signalling: its closure may hold large arrays (the
            # caller's buffers), which would otherwise live until the next task arrives
            task = None
            finished.set()
            del outcome, finished

    def submit(self, task):
        """Starts ``task`` on the worker; returns a function that waits for it and returns its
        result (or raises its exception)."""
        outcome, finished = [], threading.Event()
        self._tasks.put((task, outcome, finished))

        def result():
            finished.wait()
            ok, value = outcome[0]
            if not ok:
                raise value
            return value
        return result


# OpenBLAS's idle workers spin about 2**this CPU cycles before they sleep (``cblas``): long
# enough to stay awake between back-to-back GEMMs, short enough to leave the cores to a split
# kernel soon after (OpenBLAS's default is 2**28; docs/performance-log.md has the measurements).
WORKER_SPIN_EXPONENT = 20
_num_threads = 1
_splits = False  # whether kernels split: two threads or more, OpenBLAS's count under control
_workers = []
_workers_lock = threading.Lock()
_region_lock = threading.Lock()


def _forget_workers():
    """In a forked child: the parent's workers do not exist there; new ones start on demand."""
    global _workers, _workers_lock, _region_lock
    _workers, _workers_lock, _region_lock = [], threading.Lock(), threading.Lock()


os.register_at_fork(after_in_child=_forget_workers)


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations."""
    return _num_threads


def set_num_threads(num_threads):
    """Sets the number of threads used for intra-op parallelism on CPU: oneDNN's kernels run
    on this many OpenMP threads; where oneDNN is not in use, ember's large NumPy kernels split
    their work over this many threads and NumPy's OpenBLAS uses as many for GEMMs (where it is,
    OpenBLAS keeps to one: its idle workers spin a long while and would take oneDNN's cores).
    As with torch's, call it before work starts on other threads."""
    global _num_threads, _splits
    if type(num_threads) is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got "
                           f"{type(num_threads).__name__}")
    if num_threads < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    if cblas.set_num_threads(_blas_threads(num_threads)):
        _num_threads, _splits = num_threads, num_threads >= 2
    else:  # another BLAS: it keeps its own threads, ember's kernels run serially
        _num_threads, _splits = num_threads, False


def _blas_threads(num_threads):
    return 1 if _onednn_in_use() else num_threads


def follow_onednn():
    """OpenBLAS's thread count after oneDNN was switched on or first used (one thread) or
    switched off (ember's count)."""
    if _num_threads > 1:
        cblas.set_num_threads(_blas_threads(_num_threads))


def _workers_for(count):
    """``count`` started workers."""
    with _workers_lock:
        while len(_workers) < count:
            _workers.append(_Worker())
        return _workers[:count]


def available():
    """Whether kernels should split their work now: two threads or more, OpenBLAS's count
    under ember's control, oneDNN not in use, and no split region already running."""
    return _splits and not _region_lock.locked() and not _onednn_in_use()


_choice = []   # the choice module, bound on first use (it imports this one)


def _onednn_in_use():
    if not _choice:
        from . import choice
        _choice.append(choice)
    return _choice[0].enabled(_choice[0].ONEDNN)


def _shorten_blas_spin():
    """Before a split: OpenBLAS's idle workers sleep soon (a no-op once they do; one ctypes
    call to see)."""
    cblas.shorten_worker_spin(WORKER_SPIN_EXPONENT)


def run_parts(tasks):
    """``[task() for task in tasks]``, the first run on the calling thread and the others on
    workers at once, with OpenBLAS on one thread; serially where ``available()`` is false.
    Every part is waited for, even when one raises (the first exception is raised)."""
    if len(tasks) < 2 or not available() or not _region_lock.acquire(blocking=False):
        return [task() for task in tasks]
    _shorten_blas_spin()
    try:
        with cblas.one_thread():  # each part's GEMMs on one OpenBLAS thread
            waits = [worker.submit(task) for worker, task in
                     zip(_workers_for(len(tasks) - 1), tasks[1:])]
            results, error = [], None
            try:
                results.append(tasks[0]())
            except BaseException as raised:
                error = raised
            for wait in waits:
                try:
                    results.append(wait())
                except BaseException as raised:
                    error = error or raised
            if error is not None:
                raise error
    finally:
        _region_lock.release()
    return results


def parts(n, count=None):
    """``count`` (default ``get_num_threads()``, at most ``n``) consecutive slices that cover
    ``range(n)``, as equal as can be."""
    count = max(1, min(n, _num_threads if count is None else count))
    bounds = [n * i // count for i in range(count + 1)]
    return [slice(bounds[i], bounds[i + 1]) for i in range(count)]


def over_parts(n, compute):
    """``[compute(part) for part in parts(n)]``, the parts computed at once (``run_parts``)."""
    return run_parts([lambda part=part: compute(part) for part in parts(n)])


def worth_splitting(array, min_bytes):
    """Whether a pass over ``array`` (samples first) should run in parts of its samples: a
    NumPy array of two samples or more and at least ``min_bytes``, and ``available()``."""
    return (type(array) is np.ndarray and array.ndim > 0 and array.shape[0] >= 2
            and array.nbytes >= min_bytes and available())


# Elementwise passes whose largest operand has at least this many bytes split over the
# threads (``elementwise``).
ELEMENTWISE_MIN_BYTES = 1 << 20


def big(array):
    """Whether an elementwise pass over ``array`` may split over the threads: a NumPy array of
    at least ``ELEMENTWISE_MIN_BYTES`` bytes, and ``available()``."""
    return (_splits and type(array) is np.ndarray and array.nbytes >= ELEMENTWISE_MIN_BYTES
            and available())


def elementwise(kernel, *operands):
    """``kernel(*operands)`` for an elementwise ``kernel`` that takes ``out=`` (a ufunc, or a
    function of arrays written with them), computed in parts at once where ``big``: parts of
    the flattened arrays when every array operand has the result's shape and is C-contiguous,
    else parts of the result's leading dimension, operands broadcast along it (and scalars)
    going whole to every part. The result's dtype is the kernel's on a first element."""
    if not (_splits and any(big(x) for x in operands)):  # one test per call when serial
        return kernel(*operands)
    arrays = [x for x in operands if type(x) is np.ndarray]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    if len(shape) > 1 and all(x.shape == shape and x.flags.c_contiguous for x in arrays):
        flat = [x.reshape(-1) if type(x) is np.ndarray else x for x in operands]
        return _in_leading_parts(kernel, flat, (math.prod(shape),)).reshape(shape)
    return _in_leading_parts(kernel, operands, shape)


def _in_leading_parts(kernel, operands, shape):
    """``elementwise`` split by the leading dimension of the result's ``shape``."""
    if not shape or shape[0] < 2:
        return kernel(*operands)
    ndim = len(shape)

    def part_of(x, part):
        return x[part] if type(x) is np.ndarray and x.ndim == ndim and x.shape[0] != 1 else x

    first = kernel(*[part_of(x, slice(0, 1)) for x in operands])
    out = np.empty(shape, dtype=first.dtype)
    over_parts(shape[0], lambda part: kernel(*[part_of(x, part) for x in operands],
                                             out=out[part]))
    return out


def _take_default():
    """ember's thread count from OpenBLAS's at import, read only: importing ember changes
    neither the environment nor another library's threads (``set_num_threads`` does, when
    called)."""
    global _num_threads, _splits
    threads = cblas.num_threads()
    if threads is not None:
        _num_threads = max(1, min(threads, os.cpu_count() or 1))
        _splits = _num_threads >= 2


_take_default()
