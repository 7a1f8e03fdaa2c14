"""``DataLoader``: iterates over batches of a dataset, made in the main process
(``num_workers=0``) or by a pool of worker processes.

Each batch is one *task*: the item of the loader's task source (``batch_sampler`` when
batching automatically, else ``sampler``) that says which samples it holds; a
:class:`~._worker.BatchMaker` turns a task into a batch. The worker pool keeps
``prefetch_factor * num_workers`` tasks in flight, hands them to the workers in turn, and
puts the answers back in task order (unless ``in_order=False``). Workers answer through
their own pipes; the main process waits on those pipes and on the workers' process
sentinels together, so a worker that dies is noticed at once and named in the error. A
worker's exception is raised again in the main process with the worker id and traceback;
``timeout`` bounds each wait; Ctrl-C stops the workers.
"""
import itertools
import math
import multiprocessing as python_mp
import os
import signal
import time
import warnings
from multiprocessing.connection import wait as wait_for_ready
from multiprocessing.reduction import ForkingPickler

from ... import multiprocessing as ember_mp
from ._collate import default_collate, default_convert
from ._worker import EXHAUSTED, BatchMaker, WorkerFailure, WorkerJob, get_worker_info, run_worker
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

# Seconds that stopping the pool waits for workers to exit before terminating them.
STOP_GRACE_SECONDS = 2.0
# Seconds that a batch which cannot be unpacked waits for its worker's death to become visible.
DEATH_NOTICE_SECONDS = 1.0

_NO_MORE_TASKS = object()


class _NoIndexSampler(Sampler):
    """The sampler of a DataLoader over an IterableDataset, where the dataset itself decides
    what comes next: it yields ``None`` without end."""

    def __iter__(self):
        return itertools.repeat(None)


# -- options ----------------------------------------------------------------------------------
def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
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


def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset chooses its own samples: no shuffling or sampling options."""
    for name, value, unset in (("shuffle", shuffle, shuffle in (False, None)),
                               ("sampler", sampler, sampler is None),
                               ("batch_sampler", batch_sampler, batch_sampler is None)):
        if not unset:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} "
                             f"option, but got {name}={value}")


def _check_batching_options(batch_size, shuffle, sampler, batch_sampler, drop_last):
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")


def _checked_context(context, num_workers):
    """``multiprocessing_context`` as a context object (or None for the default)."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process "
                         f"loading (num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = ember_mp.get_all_start_methods()
        if context not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context={context!r}")
        context = ember_mp.get_context(context)
    if not isinstance(context, python_mp.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got multiprocessing_context={context}")
    return context


def _default_sampler(dataset, shuffle, generator):
    if isinstance(dataset, IterableDataset):
        return _NoIndexSampler()
    if shuffle:
        return RandomSampler(dataset, generator=generator)
    return SequentialSampler(dataset)


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


class DataLoader:
    """Data loader. Combines a dataset and a sampler, and provides an iterable over the
    given dataset.

    Supports map-style and iterable-style datasets with single- or multi-process loading,
    customizing loading order and optional automatic batching (collation). Arguments are
    those of ``torch.utils.data.DataLoader``: ``batch_size``, ``shuffle``, ``sampler``,
    ``batch_sampler``, ``num_workers``, ``collate_fn``, ``pin_memory`` (a no-op: there is no
    accelerator to pin for), ``drop_last``, ``timeout``, ``worker_init_fn``,
    ``multiprocessing_context``, ``generator``, ``prefetch_factor``, ``persistent_workers``,
    ``pin_memory_device`` and ``in_order``. The batches and their order depend on the
    sampler (and so on ``generator``), never on ``num_workers``."""

    _frozen = False
    _FIXED_AFTER_INIT = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last",
                                   "dataset", "persistent_workers"})

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.generator = generator
        self.persistent_workers = persistent_workers
        if isinstance(dataset, IterableDataset):
            _check_iterable_options(shuffle, sampler, batch_sampler)
        shuffle = bool(shuffle)
        _check_batching_options(batch_size, shuffle, sampler, batch_sampler, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            sampler = _default_sampler(dataset, shuffle, generator)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._iterator = None  # the persistent workers' iterator, reused every epoch
        self._reported_length = None  # len(dataset) as len(self) last saw it (IterableDataset)
        self._frozen = True
        self._warn_if_too_many_workers()

    def __setattr__(self, name, value):
        if self._frozen and name in self._FIXED_AFTER_INIT:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        """The context the workers are started with (None: the default start method)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        self._multiprocessing_context = _checked_context(context, self.num_workers)

    def _is_iterable_style(self):
        return isinstance(self.dataset, IterableDataset)

    def _task_source(self):
        """What each batch is made of: lists of indices when batching automatically,
        single indices otherwise (``None`` for an IterableDataset: it picks its samples)."""
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def _batch_maker(self):
        return BatchMaker(self.dataset, self._is_iterable_style(), self.batch_sampler is not None,
                          self.collate_fn, self.drop_last)

    def __iter__(self):
        """An iterator over the batches of one epoch. With ``persistent_workers`` the same
        worker processes serve every epoch."""
        if self.num_workers == 0:
            return _InProcessIterator(self)
        if not self.persistent_workers:
            return _WorkerPoolIterator(self)
        if self._iterator is None or self._iterator.closed:
            self._iterator = _WorkerPoolIterator(self)
        else:
            self._iterator.restart(self)
        return self._iterator

    def __len__(self):
        """The number of batches: the length of the batch sampler (or sampler). For an
        IterableDataset, ``len(dataset)`` divided by ``batch_size`` (rounded up, or down with
        ``drop_last``); this counts right only if each worker yields its own share."""
        if not self._is_iterable_style():
            return len(self._task_source())
        length = self._reported_length = len(self.dataset)
        if self.batch_size is None:
            return length
        if self.drop_last:
            return length // self.batch_size
        return math.ceil(length / self.batch_size)

    def _warn_if_too_many_workers(self):
        cpus = _usable_cpus()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total, "
                f"more than the {cpus} CPUs this process may run on; so many workers can slow "
                "loading down or exhaust memory. Consider lowering num_workers.", stacklevel=3)


def _draw_base_seed(generator):
    """A seed for the workers, drawn from ``generator`` (or the global generator)."""
    from ... import empty, int64
    return int(empty((), dtype=int64).random_(generator=generator).item())


# -- iterators --------------------------------------------------------------------------------
class _LoaderIterator:
    """One epoch of a DataLoader's batches; what both iterators share. It copies what it
    needs from the loader rather than keeping the loader."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable_style = loader._is_iterable_style()
        self._task_source = loader._task_source()
        self._maker = loader._batch_maker()
        self._pin = False
        if loader.pin_memory:
            from ... import cuda
            self._pin = cuda.is_available()
            if not self._pin:
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                              "then device pinned memory won't be used.", stacklevel=3)
        self._rewind(loader)
        self._base_seed = _draw_base_seed(loader.generator)
        self._num_workers = loader.num_workers

    def _rewind(self, loader):
        """Starts a new pass over the task source."""
        self._tasks = iter(self._task_source)
        self._yielded = 0
        self._reported_length = loader._reported_length

    def __iter__(self):
        return self

    def __next__(self):
        batch = self._next_batch()
        if self._pin:
            batch = _pinned(batch)
        self._yielded += 1
        self._warn_if_past_reported_length()
        return batch

    def _next_batch(self):
        raise NotImplementedError

    def _warn_if_past_reported_length(self):
        """An IterableDataset whose ``len()`` the loader reported yields more than that: the
        count compares batches with samples, as torch's does."""
        if not self._is_iterable_style or self._reported_length is None:
            return
        if self._yielded <= self._reported_length:
            return
        message = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._reported_length}(when accessing len(dataloader)), but "
                   f"{self._yielded} samples have been fetched. ")
        if self._num_workers > 0:
            message += ("With num_workers > 0 every worker iterates its own copy of the "
                        "dataset: use get_worker_info() in __iter__ so that each yields only "
                        "its share.")
        warnings.warn(message, stacklevel=3)

    def __len__(self):
        return len(self._task_source)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


def _pinned(batch):
    """``batch`` with every tensor in it copied to page-locked memory (for ``pin_memory``)."""
    from ..._tensor import Tensor
    if isinstance(batch, Tensor):
        return batch.pin_memory()
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_pinned(b) for b in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_pinned(b) for b in batch)
    if isinstance(batch, dict):
        return type(batch)((k, _pinned(v)) for k, v in batch.items())
    return batch


class _InProcessIterator(_LoaderIterator):
    """Makes each batch in the main process when it is asked for."""

    def __init__(self, loader):
        super().__init__(loader)
        self._maker.start_epoch()

    def _next_batch(self):
        return self._maker.make(next(self._tasks))


def _signal_description(signum):
    try:
        return f"{signal.strsignal(signum)} ({signal.Signals(signum).name})"
    except ValueError:
        return f"signal {signum}"


def _death_message(worker_id, process):
    """Why worker ``worker_id`` is gone, naming the signal that killed it."""
    who = f"DataLoader worker {worker_id} (pid {process.pid})"
    code = process.exitcode
    if code is None or code >= 0:
        return f"{who} exited unexpectedly with exit code {code}."
    message = f"{who} is killed by signal: {_signal_description(-code)}."
    if -code == signal.SIGBUS:
        message += " This might be caused by insufficient shared memory (shm)."
    return message


class _WorkerPoolIterator(_LoaderIterator):
    """Batches made by ``num_workers`` worker processes.

    Tasks are numbered within an epoch and go to the workers in turn, skipping workers whose
    IterableDataset copy has run out; ``prefetch_factor`` tasks per worker are in flight.
    Answers that come early wait in ``_arrived`` until their turn (with ``in_order``); an
    answer from an earlier epoch (an abandoned one, with persistent workers) is dropped."""

    closed = True  # until the workers exist

    def __init__(self, loader):
        super().__init__(loader)
        if loader.prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 when num_workers > 0")
        self._in_flight_limit = loader.prefetch_factor * loader.num_workers
        self._in_order = loader.in_order
        self._timeout = loader.timeout if loader.timeout > 0 else None
        self._persistent = loader.persistent_workers
        self._workers, self._task_queues, self._result_pipes = [], [], []
        self._owner_pid = os.getpid()
        context = loader.multiprocessing_context or ember_mp.get_context()
        self._stop_flag = context.RawValue("b", 0)  # shared, lock-free: set to stop the workers
        self.closed = False
        self._start_workers(context, loader)
        self._worker_of_pipe = {pipe: i for i, pipe in enumerate(self._result_pipes)}
        self._worker_of_sentinel = {p.sentinel: i for i, p in enumerate(self._workers)}
        self._waited_on = self._result_pipes + list(self._worker_of_sentinel)
        self._dead = set()  # workers seen dead; an error only once a task of theirs is needed
        self._epoch = 0
        self._begin_epoch()

    def _start_workers(self, context, loader):
        for worker_id in range(loader.num_workers):
            job = WorkerJob(self._maker, worker_id, loader.num_workers, self._base_seed,
                            loader.worker_init_fn)
            tasks = context.Queue()
            tasks.cancel_join_thread()  # never let exit wait on a task nobody will read
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(target=run_worker, daemon=True,
                                      args=(job, tasks, writer, self._stop_flag))
            process.start()
            writer.close()
            self._workers.append(process)
            self._task_queues.append(tasks)
            self._result_pipes.append(reader)

    # -- epochs -----------------------------------------------------------------------------
    def restart(self, loader):
        """Starts the next epoch on the same workers (persistent workers)."""
        self._rewind(loader)
        self._begin_epoch()

    def _begin_epoch(self):
        self._epoch += 1
        self._sent = 0
        self._next_number = 0
        self._owners = {}   # task number -> worker id, for tasks not yet returned
        self._arrived = {}  # task number -> outcome, for answers not yet returned
        self._has_data = [True] * len(self._workers)
        self._turn = 0
        for _ in range(self._in_flight_limit):
            self._send_task()

    def _end_epoch(self):
        if not self._persistent:
            self._shutdown_workers()

    # -- sending ----------------------------------------------------------------------------
    def _next_worker(self):
        """The next worker in turn that still has data, or None."""
        count = len(self._workers)
        for offset in range(count):
            worker_id = (self._turn + offset) % count
            if self._has_data[worker_id]:
                self._turn = worker_id + 1
                return worker_id
        return None

    def _send_task(self):
        task = next(self._tasks, _NO_MORE_TASKS)
        if task is _NO_MORE_TASKS:
            return
        worker_id = self._next_worker()
        if worker_id is None:
            return
        self._task_queues[worker_id].put((self._epoch, self._sent, task))
        self._owners[self._sent] = worker_id
        self._sent += 1

    # -- receiving --------------------------------------------------------------------------
    def _next_batch(self):
        if self.closed:
            raise StopIteration
        try:
            return self._next_answered_batch()
        except KeyboardInterrupt:
            self._shutdown_workers()
            raise

    def _next_answered_batch(self):
        while self._owners:
            number, outcome = self._take_answer()
            worker_id = self._owners.pop(number)
            if outcome is EXHAUSTED:
                self._has_data[worker_id] = False
            self._send_task()
            if outcome is EXHAUSTED:
                continue
            if isinstance(outcome, WorkerFailure):
                outcome.reraise()
            return outcome
        self._end_epoch()
        raise StopIteration

    def _take_answer(self):
        """``(task number, outcome)`` of the next task to return: the oldest with
        ``in_order``, else whichever answered first."""
        if self._in_order:
            number = self._next_number
            while number not in self._arrived:
                self._raise_if_dead(self._owners.get(number))
                self._receive()
            self._next_number += 1
            return number, self._arrived.pop(number)
        while not self._arrived:
            for worker_id in self._owners.values():
                self._raise_if_dead(worker_id)
            self._receive()
        number = next(iter(self._arrived))
        return number, self._arrived.pop(number)

    def _receive(self):
        """Waits until a worker answers (storing the answer) or dies (noting it: answers it
        sent before dying are still used; the error comes when one of its tasks is needed)."""
        ready = wait_for_ready(self._waited_on, timeout=self._timeout)
        if not ready:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        for handle in ready:
            worker_id = self._worker_of_pipe.get(handle)
            if worker_id is not None and worker_id not in self._dead:
                payload = self._read(handle, worker_id)
                if payload is not None:
                    self._store(payload)
        for handle in ready:
            if handle in self._worker_of_sentinel:
                self._note_death(self._worker_of_sentinel[handle])

    def _note_death(self, worker_id):
        pipe = self._result_pipes[worker_id]
        try:
            while pipe.poll():  # what it sent before dying
                self._store(pipe.recv_bytes())
        except (EOFError, OSError):
            pass
        self._dead.add(worker_id)
        self._waited_on = [h for h in self._waited_on
                           if h is not pipe and self._worker_of_sentinel.get(h) != worker_id]

    def _raise_if_dead(self, worker_id):
        if worker_id in self._dead:
            self._worker_died(worker_id)

    def _read(self, pipe, worker_id):
        try:
            return pipe.recv_bytes()
        except (EOFError, OSError):  # the worker is gone with its end of the pipe
            self._note_death(worker_id)
            return None

    def _store(self, payload):
        epoch, number, outcome = self._unpack(payload)
        if epoch == self._epoch:
            self._arrived[number] = outcome

    def _unpack(self, payload):
        """The ``(epoch, number, outcome)`` a worker sent; tensors are mapped from shared
        memory, which needs the sending worker alive: if it is not, that is the error."""
        try:
            return ForkingPickler.loads(payload)
        except Exception as error:
            self._raise_if_a_worker_dies(error)
            raise

    def _raise_if_a_worker_dies(self, cause):
        deadline = time.monotonic() + DEATH_NOTICE_SECONDS
        while time.monotonic() < deadline:
            for worker_id, process in enumerate(self._workers):
                if process.exitcode is not None:
                    self._worker_died(worker_id, cause)
            time.sleep(0.02)

    def _worker_died(self, worker_id, cause=None):
        process = self._workers[worker_id]
        process.join(DEATH_NOTICE_SECONDS)  # its sentinel can fire before its exit code is known
        message = _death_message(worker_id, process)
        self._shutdown_workers()
        raise RuntimeError(message) from cause

    # -- stopping ---------------------------------------------------------------------------
    def _shutdown_workers(self):
        """Stops the workers: raises their stop flag and queues a stop for each, closes the
        result pipes (a worker blocked on sending gives up), waits a little, then terminates
        whatever is left."""
        if self.closed or os.getpid() != self._owner_pid:
            return
        self.closed = True
        try:
            self._stop_flag.value = 1
            for tasks, process in zip(self._task_queues, self._workers):
                if process.exitcode is None:
                    tasks.put(None)
            for pipe in self._result_pipes:
                pipe.close()
            deadline = time.monotonic() + STOP_GRACE_SECONDS
            for process in self._workers:
                process.join(max(0.0, deadline - time.monotonic()))
        finally:
            for process in self._workers:
                if process.is_alive():
                    process.terminate()
                    process.join(STOP_GRACE_SECONDS)
            for tasks in self._task_queues:
                tasks.close()

    def __del__(self):
        self._shutdown_workers()
