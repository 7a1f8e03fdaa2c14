"""``DataLoader``: combines a dataset and a sampler and iterates over batches, in the main
process (``num_workers=0``) or in worker processes that send batches through shared memory.

Worker failures surface in the main process: an exception re-raises there with the worker id
and the original traceback; a worker that dies (killed, segfault) raises a RuntimeError naming
it and its signal within about ``MP_STATUS_CHECK_INTERVAL`` seconds; ``timeout`` bounds the
wait for each batch; Ctrl-C shuts the workers down.
"""
import itertools
import math
import multiprocessing as _python_mp
import os
import queue
import signal
import time
import warnings
from multiprocessing.reduction import ForkingPickler

from ... import multiprocessing as _ember_mp
from . import _worker
from ._collate import default_collate, default_convert
from ._worker import ExceptionWrapper, ResumeIteration, IterableDatasetStopIteration, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

# How often (seconds) the main process checks that its workers are alive while it waits.
MP_STATUS_CHECK_INTERVAL = 0.25
# How long (seconds) shutting down waits for a worker to exit before terminating it.
_SHUTDOWN_JOIN_SECONDS = 2.0


class _InfiniteConstantSampler(Sampler):
    """The index sampler of an IterableDataset: ``None`` forever (the dataset decides)."""

    def __iter__(self):
        while True:
            yield None


def _check_loader_arguments(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; "
                         "use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_arguments(shuffle, sampler, batch_sampler):
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                         f"but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                         f"but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler "
                         f"option, but got batch_sampler={batch_sampler}")


def _suggested_max_workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


class DataLoader:
    """Data loader: combines a dataset and a sampler, and provides an iterable over the given
    dataset, with torch's arguments (``batch_size``, ``shuffle``, ``sampler``,
    ``batch_sampler``, ``num_workers``, ``collate_fn``, ``pin_memory`` (a no-op without an
    accelerator), ``drop_last``, ``timeout``, ``worker_init_fn``,
    ``multiprocessing_context``, ``generator``, ``prefetch_factor``, ``persistent_workers``,
    ``in_order``). The order of batches depends only on the sampler (and so on ``generator``),
    never on ``num_workers``."""

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_loader_arguments(num_workers, timeout, prefetch_factor, persistent_workers)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            _check_iterable_arguments(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = _ember_mp.get_all_start_methods()
                if context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start "
                                     f"method in {valid!r}, but got multiprocessing_context={context!r}")
                context = _ember_mp.get_context(context)
            if not isinstance(context, _python_mp.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object "
                                "or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        object.__setattr__(self, "_multiprocessing_context", context)

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        """A fresh iterator over the batches (with ``persistent_workers``, the same workers
        are reused from epoch to epoch)."""
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        """The number of batches: ``len(batch_sampler)`` (or ``len(sampler)``); for an
        IterableDataset, ``len(dataset)`` divided by ``batch_size`` (rounded up, or down
        with ``drop_last``), which counts right only if the workers shard the data."""
        if not self._is_iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self):
        """Warns when ``num_workers`` exceeds the CPUs this process may use."""
        max_workers = _suggested_max_workers()
        if max_workers is not None and self.num_workers > max_workers:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our "
                f"suggested max number of worker in current system is {max_workers}, which is "
                "smaller than what this DataLoader is going to create. Please be aware that "
                "excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        from ... import empty, int64
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                          "device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._is_iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            self._warn_length_exceeded()
        return data

    def _warn_length_exceeded(self):
        msg = (f"Length of IterableDataset {self._dataset} was reported to be "
               f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
               f"{self._num_yielded} samples have been fetched. ")
        if self._num_workers > 0:
            msg += ("For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset "
                    "for examples.")
        warnings.warn(msg, stacklevel=3)

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = _worker.create_fetcher(
            self._is_iterable, self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)


def _death_message(worker_id, process):
    code = process.exitcode
    if code is not None and code < 0:
        signum = -code
        try:
            name = f"{signal.strsignal(signum)} ({signal.Signals(signum).name})"
        except ValueError:
            name = f"signal {signum}"
        msg = f"DataLoader worker {worker_id} (pid {process.pid}) is killed by signal: {name}."
        if signum == signal.SIGBUS:
            msg += " This might be caused by insufficient shared memory (shm)."
        return msg
    return f"DataLoader worker {worker_id} (pid {process.pid}) exited unexpectedly with exit code {code}."


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    _shutdown = True  # until the workers exist
    """Iterates over batches made by ``num_workers`` worker processes. Up to
    ``prefetch_factor * num_workers`` tasks are outstanding; tasks go to the workers in
    turn; batches are returned in task order (unless ``in_order=False``)."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or _ember_mp.get_context()
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        self._shutdown = False
        for worker_id in range(self._num_workers):
            self._start_worker(context, loader, worker_id)
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _start_worker(self, context, loader, worker_id):
        index_queue = context.Queue()
        index_queue.cancel_join_thread()
        worker = context.Process(
            target=_worker.worker_loop,
            args=(self._is_iterable, self._dataset, index_queue, self._worker_result_queue,
                  self._workers_done_event, self._auto_collation, self._collate_fn,
                  self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                  self._num_workers, os.getpid()),
            daemon=True)
        worker.start()
        self._index_queues.append(index_queue)
        self._workers.append(worker)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            self._resume_workers()
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _resume_workers(self):
        for index_queue in self._index_queues:
            index_queue.put(ResumeIteration())
        remaining = self._num_workers
        while remaining > 0:
            idx, _ = self._get_data()
            if isinstance(idx, ResumeIteration):
                remaining -= 1

    # -- receiving ------------------------------------------------------------------------
    def _dead_worker(self):
        for worker_id, worker in enumerate(self._workers):
            if self._workers_status[worker_id] and worker.exitcode is not None:
                return worker_id, worker
        return None

    def _raise_if_a_worker_died(self, cause=None):
        dead = self._dead_worker()
        if dead is not None:
            self._shutdown_workers()
            raise RuntimeError(_death_message(*dead)) from cause

    def _unpickle(self, payload):
        try:
            return ForkingPickler.loads(payload)
        except Exception as err:  # e.g. the sending worker died before handing over its memory
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                self._raise_if_a_worker_died(err)
                time.sleep(0.02)
            raise

    def _try_get_data(self, timeout=None):
        """``(True, item)`` from the result queue, or ``(False, None)`` after ``timeout``
        seconds (None: wait as long as needed); raises if a worker died meanwhile."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                payload = self._data_queue.get(timeout=wait)
            except queue.Empty:
                self._raise_if_a_worker_died()
                if deadline is not None and time.monotonic() >= deadline:
                    return False, None
                continue
            return True, self._unpickle(payload)

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        return self._try_get_data()[1]

    def _next_data(self):
        try:
            return self._next_batch()
        except KeyboardInterrupt:
            self._shutdown_workers()
            raise

    def _advance_to_pending_task(self):
        """Moves ``_rcvd_idx`` past tasks of workers that have stopped; False when no task is
        left."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info is not None:
                if len(info) == 2 or self._workers_status[info[0]]:
                    return True
                del self._task_info[self._rcvd_idx]
            self._rcvd_idx += 1
        return False

    def _next_batch(self):
        while True:
            if not self._advance_to_pending_task():
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, IterableDatasetStopIteration):
                self._stop_worker(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
                continue
            worker_id = self._task_info.pop(idx)[0]
            self._rcvd_idx += 1
            return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # -- sending --------------------------------------------------------------------------
    def _next_active_worker(self):
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                return worker_id
        return None

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        worker_id = self._next_active_worker()
        if worker_id is None:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # -- shutting down --------------------------------------------------------------------
    def _stop_worker(self, worker_id):
        """Marks a worker as done (its IterableDataset is exhausted, or we shut down)."""
        if not self._persistent_workers or self._shutdown:
            self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id, worker in enumerate(self._workers):
                if worker.exitcode is None:
                    self._index_queues[worker_id].put(None)
                self._workers_status[worker_id] = False
            deadline = time.monotonic() + _SHUTDOWN_JOIN_SECONDS
            for worker in self._workers:
                worker.join(timeout=max(0.0, deadline - time.monotonic()))
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=_SHUTDOWN_JOIN_SECONDS)
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self):
        self._shutdown_workers()
