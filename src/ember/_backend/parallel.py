"""Two-way intra-op parallelism for kernels built of NumPy calls that release the GIL (copies,
``matmul``): a kernel splits its work in two halves, the calling thread runs one and a
persistent worker thread the other.

OpenBLAS alone threads only the GEMMs, and narrow ones (16-64 output columns) scale poorly,
while the copies around them run on one core. Splitting the whole kernel instead (copies and
GEMMs of half the batch on each core) keeps both cores busy throughout. Inside such a region
OpenBLAS is held to one thread, so that the two halves do not also contend with its workers,
and its thread count is restored afterwards, also when a half raises.

The split is used only where OpenBLAS was allowed two or more threads (by default, or by
``threadpoolctl`` / ``OPENBLAS_NUM_THREADS``) and its thread count can be set; with one
thread, or another BLAS, kernels run serially as before. The worker blocks on a queue while
idle: it uses no CPU between calls.
"""
import queue
import threading

import numpy as np

from . import cblas

# Off by default: at 2 threads the split runs ResNet-20's step in 0.78x the time and DCGAN's
# in 0.94x, but LeNet's in 1.15x and MobileNetV2's in 1.15x, where other GEMMs (linear layers)
# left to OpenBLAS's threads keep its worker spinning through the split kernels. Set True to
# split the kernels that support it.
ENABLED = False


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
            finished.set()

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


_worker = None
_worker_lock = threading.Lock()
_region_lock = threading.Lock()


def _the_worker():
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
        return _worker


def available():
    """Whether kernels should split their work now: enabled, OpenBLAS allowed at least two
    threads and its count settable, and no split region already running (a nested or
    concurrent one runs serially)."""
    if not ENABLED or _region_lock.locked():
        return False
    threads = cblas.num_threads()
    return threads is not None and threads >= 2


def run_pair(first, second):
    """``(first(), second())``, run at once on the calling thread and the worker with
    OpenBLAS held to one thread; serially where ``available()`` is false. The worker's half
    is always waited for, and the thread count restored, even when a half raises."""
    if not available() or not _region_lock.acquire(blocking=False):
        return first(), second()
    cblas.level1_on_one_thread()
    try:
        with cblas.one_thread():
            wait = _the_worker().submit(second)
            try:
                a = first()
            finally:
                b = wait()
    finally:
        _region_lock.release()
    return a, b


def worth_splitting(array, min_bytes):
    """Whether a pass over ``array`` (samples first) should run as two halves of its samples:
    a NumPy array of two samples or more and at least ``min_bytes``, and ``available()``."""
    return (type(array) is np.ndarray and array.ndim > 0 and array.shape[0] >= 2
            and array.nbytes >= min_bytes and available())


def over_halves(n, compute):
    """``compute(samples)`` (``samples`` a slice of a batch of ``n``) for the first and the
    second half of the batch at once (``run_pair``): the two results."""
    half = (n + 1) // 2
    return run_pair(lambda: compute(slice(0, half)), lambda: compute(slice(half, n)))
