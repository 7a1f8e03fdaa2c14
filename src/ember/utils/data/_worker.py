"""What runs inside a DataLoader worker process: seeding, ``get_worker_info``, fetching and
collating batches, and sending them (or the exception that a fetch raised) to the main
process. A worker exits when told to (``None`` on its index queue), or when the process
that started it has gone."""
import os
import queue
import random
import signal
import sys
import traceback
from multiprocessing.reduction import ForkingPickler

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

# How often (seconds) an idle worker checks that the main process is still there.
MP_STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """Information about the current DataLoader worker: ``id``, ``num_workers``, ``seed``
    (``base_seed + id``) and ``dataset`` (this worker's copy)."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The current DataLoader worker's ``WorkerInfo`` in a worker process; None in the main
    process. Use it in ``IterableDataset.__iter__`` or ``worker_init_fn`` to shard data."""
    return _worker_info


class ExceptionWrapper:
    """An exception plus its traceback text, to be re-raised in another process."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = sys.exc_info() if exc_info is None else exc_info
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises the wrapped exception's type with the original traceback in its message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """A string whose repr is itself, so a KeyError shows the traceback readably."""

    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""


class MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[idx] for idx in possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableDatasetFetcher if is_iterable else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_everything(seed, base_seed, worker_id):
    from ...ops.random import manual_seed
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed % (1 << 64)]).generate_state(4))


def _prepare_process():
    """Worker-process settings: Ctrl-C is the main process's to handle (it shuts the workers
    down); batches not taken by the main process are its to discard."""
    from ...multiprocessing import reductions
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reductions.EXIT_WAIT_SECONDS = 0.0


def _pickled(idx, data, worker_id):
    """``(idx, data)`` pickled for the main process (tensors go by shared memory). Pickling
    here, not in the queue's feeder thread, turns an unpicklable sample into an error the
    main process sees instead of a lost batch."""
    try:
        return bytes(ForkingPickler.dumps((idx, data)))
    except Exception:
        wrapped = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        return bytes(ForkingPickler.dumps((idx, wrapped)))


def worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, manager_pid):
    """The body of a worker process: answers ``(idx, index)`` tasks from ``index_queue``
    with ``(idx, batch)`` on ``data_queue`` until it receives ``None``."""
    global _worker_info
    _prepare_process()
    seed = base_seed + worker_id
    _seed_everything(seed, base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_exception = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_exception = ExceptionWrapper(where=where)
    iteration_end = False
    while os.getppid() == manager_pid:
        try:
            task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        if isinstance(task, ResumeIteration):
            data_queue.put(_pickled(task, None, worker_id))
            iteration_end = False
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
            continue
        if task is None:
            break
        if done_event.is_set() or iteration_end:
            continue
        idx, index = task
        if init_exception is not None:
            data, init_exception = init_exception, None
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not is_iterable:
                    data = ExceptionWrapper(where=where)
                else:
                    data = IterableDatasetStopIteration(worker_id)
                    iteration_end = True
            except Exception:
                data = ExceptionWrapper(where=where)
        data_queue.put(_pickled(idx, data, worker_id))
        del data, idx, index, task
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
