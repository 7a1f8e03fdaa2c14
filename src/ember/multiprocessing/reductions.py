"""Pickling tensors across processes through shared memory.

``init_reductions()`` registers a reducer for ``Tensor`` and ``Parameter`` with
``multiprocessing.reduction.ForkingPickler``, the pickler behind ``Queue``, ``Pipe``, ``Pool``
and spawned ``Process`` arguments. A CPU tensor sent that way first moves its data into
shared memory (``share_memory_``, in place, as torch does), then travels as a duplicate of the
segment's file descriptor (``SharedFd``) plus its offset, shape, strides and dtype; the receiver maps the
same memory, so nothing is copied and writes on either side are seen by both. Plain
``pickle`` (e.g. ``ember.save``) is not affected: it still copies the data.
"""
import ctypes
import os
import threading
import time
from multiprocessing import context, reduction, resource_sharer, util
from multiprocessing.reduction import ForkingPickler

import numpy as np

from .._tensor import Tensor, _make
from . import _shm

__all__ = ["init_reductions", "share_memory_", "is_shared", "rebuild_tensor"]


def _byte_extent(arrays):
    bounds = [np.lib.array_utils.byte_bounds(a) for a in arrays]
    return min(lo for lo, _ in bounds), max(hi for _, hi in bounds)


def _address(array):
    return array.__array_interface__["data"][0]


def _relocated(array, segment, lo):
    return _shm.array_in(segment, array.shape, array.dtype, _address(array) - lo, array.strides)


def share_memory_(self):
    """Moves the underlying storage to shared memory. This is a no-op if the storage is
    already in shared memory and for CUDA tensors. Tensors in shared memory cannot be
    resized. Returns ``self``.

    The tensor and the base it views keep their values, strides and offsets and now look into
    one shared segment; other views of that base taken *before* the call keep the old, private
    memory (ember has no storage object that all views point to)."""
    if self.device.type != "cpu" or _shm.segment_of(self._data) is not None:
        return self
    root = self if self._base is None else self._base
    tensors = [root] if root is self else [root, self]
    arrays = [t._data for t in tensors]
    lo, hi = _byte_extent(arrays)
    segment = _shm.new_segment(hi - lo)
    if hi > lo:
        source = (ctypes.c_ubyte * (hi - lo)).from_address(lo)
        np.frombuffer(segment, np.uint8, count=hi - lo)[:] = np.frombuffer(source, np.uint8)
    for t, array in zip(tensors, arrays):
        t._data = _relocated(array, segment, lo)
    return self


def is_shared(self):
    """Checks if the tensor is in shared memory (always True for CUDA tensors)."""
    return self.device.type != "cpu" or _shm.segment_of(self._data) is not None


def rebuild_tensor(dup_fd, size, offset, shape, strides, dtype, requires_grad):
    """The receiving side of ``reduce_tensor``: maps the sender's segment (no copy)."""
    segment = _shm.SharedSegment(dup_fd.detach(), size)
    return _make(_shm.array_in(segment, shape, np.dtype(dtype), offset, strides), requires_grad)


def rebuild_parameter(cls, reduced_tensor, requires_grad):
    fn, args = reduced_tensor
    return cls(fn(*args[:-1], False), requires_grad)


def _check_sendable(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue).")


# How long a process that is exiting waits for receivers to take the descriptors it still has
# to hand out (a thread of this process serves them, so they die with it). DataLoader workers
# set it to 0: their main process discards what it does not take.
EXIT_WAIT_SECONDS = 10.0
_pending = {"count": 0, "pid": None}
_pending_lock = threading.Lock()


def _wait_for_receivers():
    """Lets queued tensors be pickled (the queues' feeder threads flush after they are closed,
    at exit priority 10), then waits until receivers have taken every segment handed out,
    before the handle server's socket goes away (exit priority 0)."""
    deadline = time.monotonic() + EXIT_WAIT_SECONDS
    for thread in threading.enumerate():
        if thread.name == "QueueFeederThread" and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    while _pending["count"] > 0 and time.monotonic() < deadline:
        time.sleep(0.005)


def _count_pending(delta):
    with _pending_lock:
        if _pending["pid"] != os.getpid():  # first handle in this process (or after a fork)
            _pending["pid"] = os.getpid()
            _pending["count"] = 0
        _pending["count"] = max(0, _pending["count"] + delta)


class _ExitWait:
    """Registers ``_wait_for_receivers`` to run at exit in this process and, through
    ``register_after_fork``, in every forked child (spawned children import this module)."""

    def __init__(self):
        self.register()
        util.register_after_fork(self, _ExitWait.register)

    def register(self):
        util.Finalize(None, _wait_for_receivers, exitpriority=5)


_exit_wait = _ExitWait()


class SharedFd:
    """A picklable duplicate of a file descriptor for another process, like
    ``multiprocessing.reduction.DupFd``, that also counts the handles not yet taken so an
    exiting process can wait for its receivers."""

    def __init__(self, fd):
        popen = context.get_spawning_popen()
        if popen is not None:  # pickled for a child being spawned: the fd is inherited
            self._inherited = popen.DupFd(popen.duplicate_for_child(fd))
            return
        self._inherited = None
        new_fd = os.dup(fd)

        def send(conn, pid):
            reduction.send_handle(conn, new_fd, pid)

        def close():
            os.close(new_fd)
            _count_pending(-1)

        _count_pending(+1)
        self._id = resource_sharer._resource_sharer.register(send, close)

    def detach(self):
        """The file descriptor, now owned by the calling process."""
        if self._inherited is not None:
            return self._inherited.detach()
        with resource_sharer._resource_sharer.get_connection(self._id) as conn:
            return reduction.recv_handle(conn)


def _shared_handle(tensor):
    """Moves ``tensor`` to shared memory and returns the arguments of ``rebuild_tensor``."""
    share_memory_(tensor)
    array = tensor._data
    segment = _shm.segment_of(array)
    return (SharedFd(segment.fd), segment.size, _shm.offset_in(segment, array), array.shape,
            array.strides, array.dtype, tensor.requires_grad)


def reduce_tensor(tensor):
    """Pickles ``tensor`` as a handle to its shared-memory segment (moving it there first)."""
    _check_sendable(tensor)
    if tensor.device.type != "cpu":
        return Tensor.__reduce_ex__(tensor, 2)
    return (rebuild_tensor, _shared_handle(tensor))


def reduce_parameter(param):
    """Pickles a Parameter as its shared data plus its class and ``requires_grad``."""
    if param.device.type != "cpu":
        return param.__reduce_ex__(2)
    return (rebuild_parameter, (type(param), (rebuild_tensor, _shared_handle(param)),
                                param.requires_grad))


def init_reductions():
    """Registers the shared-memory reducers with ``ForkingPickler`` (idempotent)."""
    ForkingPickler.register(Tensor, reduce_tensor)
    try:
        from ..nn.parameter import Parameter
    except ImportError:
        return
    ForkingPickler.register(Parameter, reduce_parameter)
