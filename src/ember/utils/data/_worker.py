"""The worker side of the DataLoader, and what both sides share.

A worker process receives :class:`WorkerJob` (what to load and how to seed itself), then
answers tasks from its task queue: each task ``(epoch, number, indices)`` is turned into a
batch by a :class:`BatchMaker` and sent back, pickled, through the worker's own result pipe as
``(epoch, number, outcome)``. The outcome is the batch, a :class:`WorkerFailure` (the
exception the work raised, with its traceback text), or :data:`EXHAUSTED` (the worker's copy
of an IterableDataset has no more samples this epoch). Every task gets exactly one answer.

Tensors in a batch travel through shared memory (see ``ember.multiprocessing``): the pipe
carries only their handles. A worker stops when it receives ``None``, when its shared stop
flag is set, when the main process closes its end of the pipe, or when the main process is
gone.
"""
import dataclasses
import multiprocessing
import pickle
import queue
import random
import signal
import sys
import traceback
from multiprocessing.reduction import ForkingPickler

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "WorkerFailure", "BatchMaker", "WorkerJob",
           "EXHAUSTED", "run_worker"]

# How often (seconds) an idle worker checks its stop flag and that the main process exists.
IDLE_CHECK_SECONDS = 0.1

_current_worker = None


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """Information about the DataLoader worker process running the current code: its ``id``
    (``0 <= id < num_workers``), ``num_workers``, its random ``seed`` and ``dataset``, this
    worker's own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """Returns the information about the current DataLoader iterator worker process, or
    ``None`` in the main process. In ``IterableDataset.__iter__`` or ``worker_init_fn`` it
    tells each worker which part of the data is its own."""
    return _current_worker


class _ReadableKeyErrorText(str):
    """A KeyError shows the repr of its argument; this keeps a multi-line message readable."""

    def __repr__(self):
        return str(self)


class WorkerFailure:
    """An exception raised while loading a batch, carried to the main process as its type
    and formatted traceback, and raised there again with both in the message."""

    def __init__(self, where):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_name = exc_type.__name__
        self.where = where
        self.traceback_text = "".join(traceback.format_exception(exc_type, exc, tb))

    def __getstate__(self):
        # the type travels pickled on its own, so that a type the main process cannot rebuild
        # (a class defined in a function, or in a module only the worker has) loses only itself
        state = dict(self.__dict__)
        try:
            state["exc_type"] = pickle.dumps(self.exc_type)
        except Exception:
            state["exc_type"] = None
        return state

    def __setstate__(self, state):
        try:
            state["exc_type"] = pickle.loads(state["exc_type"])
        except Exception:  # a RuntimeError carries the message instead
            state["exc_type"] = RuntimeError
        self.__dict__.update(state)

    def message(self):
        return (f"Caught {self.exc_name} {self.where}.\n"
                f"Original {self.traceback_text}")

    def reraise(self):
        """Raises an exception of the original type whose message holds the worker's
        traceback (a RuntimeError if that type cannot be built from a message)."""
        text = self.message()
        if self.exc_type is KeyError:
            text = _ReadableKeyErrorText(text)
        try:
            error = self.exc_type(text)
        except Exception:
            raise RuntimeError(text) from None
        raise error


class _Exhausted:
    """The answer of a worker whose IterableDataset copy has run out this epoch."""

    def __reduce__(self):
        return "EXHAUSTED"


EXHAUSTED = _Exhausted()


class BatchMaker:
    """Turns one task into one batch.

    For a map-style dataset a task is a list of indices (``batched``) or a single index; the
    samples are read with ``dataset.__getitems__`` when the dataset has it, else one by one.
    For an IterableDataset a task says only how many samples to take from the dataset's
    iterator (the length of the list); a short final batch is kept unless ``drop_last``.
    ``collate_fn`` turns the samples into the batch."""

    def __init__(self, dataset, iterable, batched, collate_fn, drop_last):
        self.dataset = dataset
        self.iterable = iterable
        self.batched = batched
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self._samples = None
        self.exhausted = False

    def start_epoch(self):
        """Starts a fresh pass over an IterableDataset (nothing to do for map-style)."""
        self.exhausted = False
        self._samples = iter(self.dataset) if self.iterable else None

    def make(self, task):
        """The batch for ``task``; raises StopIteration when an IterableDataset has no more."""
        if self.iterable:
            return self._make_from_iterator(task)
        if not self.batched:
            return self.collate_fn(self.dataset[task])
        read_many = getattr(self.dataset, "__getitems__", None)
        samples = read_many(task) if read_many is not None else [self.dataset[i] for i in task]
        return self.collate_fn(samples)

    def _make_from_iterator(self, task):
        if self.exhausted:
            raise StopIteration
        if not self.batched:
            sample = next(self._samples, EXHAUSTED)
            if sample is EXHAUSTED:
                self.exhausted = True
                raise StopIteration
            return self.collate_fn(sample)
        samples = []
        for sample in self._samples:
            samples.append(sample)
            if len(samples) == len(task):
                return self.collate_fn(samples)
        self.exhausted = True
        if not samples or self.drop_last:
            raise StopIteration
        return self.collate_fn(samples)


@dataclasses.dataclass
class WorkerJob:
    """Everything a worker process needs, sent once when it starts."""

    maker: BatchMaker
    worker_id: int
    num_workers: int
    base_seed: int
    init_fn: object

    @property
    def seed(self):
        return self.base_seed + self.worker_id

    @property
    def where(self):
        return f"in DataLoader worker process {self.worker_id}"


def _seed_generators(job):
    """Seeds Python's, ember's and NumPy's global generators differently in each worker,
    reproducibly for a given base seed."""
    from ...ops.random import manual_seed
    random.seed(job.seed)
    manual_seed(job.seed)
    numpy_seed = np.random.SeedSequence([job.worker_id, job.base_seed % (1 << 64)])
    np.random.seed(numpy_seed.generate_state(4))


def _become_worker(job):
    """Process-wide settings of a worker: Ctrl-C belongs to the main process (which stops
    the workers), and batches the main process never takes are simply dropped at exit."""
    global _current_worker
    from ...multiprocessing import reductions
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reductions.EXIT_WAIT_SECONDS = 0.0
    _seed_generators(job)
    _current_worker = WorkerInfo(id=job.worker_id, num_workers=job.num_workers, seed=job.seed,
                                 dataset=job.maker.dataset)


def _next_task(tasks, stop, parent):
    """The next task, or None when told to stop (``None`` on the queue or ``stop`` set) or
    when the main process has gone. The flag reaches the worker even when the queue's
    sending thread in the main process cannot run."""
    while not stop.value and (parent is None or parent.is_alive()):
        try:
            task = tasks.get(timeout=IDLE_CHECK_SECONDS)
        except queue.Empty:
            continue
        return None if stop.value else task
    return None


def _outcome(job, task, failure):
    """What answers ``task``: the batch, a failure, or EXHAUSTED."""
    if failure is not None:
        return failure
    try:
        return job.maker.make(task)
    except StopIteration:
        if job.maker.iterable:
            return EXHAUSTED
        return WorkerFailure(job.where)
    except Exception:
        return WorkerFailure(job.where)


def _run_init_fn(job):
    """Calls ``worker_init_fn``; its failure, if any, answers every task."""
    try:
        if job.init_fn is not None:
            job.init_fn(job.worker_id)
    except Exception:
        return WorkerFailure(job.where)
    return None


def _start_epoch(job):
    """Restarts the dataset pass; a failure answers every task of the epoch."""
    try:
        job.maker.start_epoch()
    except Exception:
        return WorkerFailure(job.where)
    return None


def _pack(job, epoch, number, outcome):
    """``(epoch, number, outcome)`` pickled for the main process (tensors as shared-memory
    handles); a batch that cannot be pickled becomes a reported failure."""
    try:
        return ForkingPickler.dumps((epoch, number, outcome))
    except Exception:
        return ForkingPickler.dumps((epoch, number, WorkerFailure(job.where)))


def run_worker(job, tasks, results, stop):
    """The body of a worker process: answers each ``(epoch, number, task)`` from ``tasks``
    with one message on the ``results`` connection until told to stop (``stop`` is a
    shared flag)."""
    _become_worker(job)
    parent = multiprocessing.parent_process()  # with any start method, unlike os.getppid()
    init_failure = _run_init_fn(job)
    current_epoch, epoch_failure = None, None
    while True:
        message = _next_task(tasks, stop, parent)
        if message is None:
            break
        epoch, number, task = message
        if epoch != current_epoch and init_failure is None:
            current_epoch, epoch_failure = epoch, _start_epoch(job)
        outcome = _outcome(job, task, init_failure or epoch_failure)
        payload = _pack(job, epoch, number, outcome)
        del outcome
        try:
            results.send_bytes(payload)
        except OSError:  # the main process closed its end: it wants nothing more
            break
        del payload
    results.close()
