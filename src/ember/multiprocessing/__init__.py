"""``ember.multiprocessing``: a drop-in replacement for Python's ``multiprocessing`` in which
tensors sent to another process (through a ``Queue``, a ``Pipe``, ``Pool`` arguments or
spawned ``Process`` arguments) move to shared memory and are rebuilt on the other side
without a copy, as in ``torch.multiprocessing``.

Sharing uses torch's ``file_descriptor`` strategy: each segment is an unlinked file in
``/dev/shm`` that the kernel frees when the last process holding it lets go, so no names
leak even when a process is killed. A receiver gets the segment as a duplicate file
descriptor from the sender, so the sender must still be running when the receiver takes the
tensor off the queue (as in torch).

Also attaches ``Tensor.share_memory_()`` and ``Tensor.is_shared()`` (``Module.share_memory()``
calls ``_module_share_memory`` here).
"""
import multiprocessing
from multiprocessing import *  # noqa: F403

from ..ops._common import method
from . import _shm  # noqa: F401 (ember.multiprocessing._shm)
from .reductions import init_reductions, is_shared, share_memory_
from .spawn import (
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, spawn,
    start_processes,
)

__all__ = list(multiprocessing.__all__) + [
    "spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
    "get_all_sharing_strategies",
]

_STRATEGIES = {"file_descriptor"}
_strategy = "file_descriptor"


def get_all_sharing_strategies():
    """The sharing strategies this system supports (ember has only ``file_descriptor``)."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _strategy


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors (one of ``get_all_sharing_strategies()``)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported; "
                         f"choose one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


def _module_share_memory(self):
    """Moves the parameters, their gradients and the buffers to shared memory (in place);
    returns the module."""
    for p in self.parameters():
        share_memory_(p)
        if p.grad is not None:
            share_memory_(p.grad)
    for b in self.buffers():
        share_memory_(b)
    return self


def _attach_methods():
    method()(share_memory_)
    method()(is_shared)


init_reductions()
_attach_methods()
