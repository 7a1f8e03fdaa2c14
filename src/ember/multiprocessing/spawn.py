"""``spawn``/``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes and re-raise the
first failure in the parent, as ``torch.multiprocessing.spawn`` does."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # interrupted by the parent
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


def _signal_name(exitcode):
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"<Unknown signal {-exitcode}>"


class ProcessContext:
    """The processes started by ``start_processes``; ``join`` waits for them."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Waits for one process to finish; True when all have finished. If a process failed,
        terminates the others and raises its exception (with the original traceback)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_all(grace_period)
        raise self._failure(failed)

    def _stop_all(self, grace_period):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join(30 if grace_period is None else grace_period)
            if p.is_alive():
                p.kill()
                p.join()

    def _failure(self, index):
        process, queue = self.processes[index], self.error_queues[index]
        if not queue.empty():
            msg = f"\n\n-- Process {index:d} terminated with the following error:\n" + queue.get()
            return ProcessRaisedException(msg, index, process.pid)
        code = process.exitcode
        if code < 0:
            name = _signal_name(code)
            return ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                          index, process.pid, code, name)
        return ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                      index, process.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes running ``fn(i, *args)`` with the given start method;
    joins them if ``join`` (re-raising the first failure), else returns the ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawns ``nprocs`` processes that run ``fn(i, *args)`` (``i`` is the process index).
    If one process exits with a non-zero status, the others are terminated and an exception
    with the cause is raised in the parent."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
