"""The MPI side of ``ember.distributed``: mpi4py, imported only when a process group starts
(importing ``mpi4py.MPI`` initializes MPI), and the mapping of arrays to MPI buffers."""
import fcntl
import importlib.util
import os
import stat
import sys
import termios
import time
import traceback

import numpy as np

__all__ = ["available", "MPI", "buffer", "reduction_buffer", "mpi_op", "install_excepthook",
           "write_all", "wait_until_read"]

# How long (seconds) a failing rank waits for the launcher to read its report before aborting.
REPORT_READ_SECONDS = 5.0

_native = frozenset(np.dtype(t) for t in (
    np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_,
    np.complex64, np.complex128))


def available():
    """Whether mpi4py can be imported (without importing it, which would start MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def MPI():
    """The ``mpi4py.MPI`` module (initializes MPI on first use)."""
    from mpi4py import MPI as mpi
    return mpi


def buffer(array):
    """``array`` as an MPI buffer for data movement: itself when MPI knows its dtype, else a
    byte view of the same memory (no copy)."""
    if array.dtype in _native:
        return array
    return array.reshape(-1).view(np.uint8)


def reduction_buffer(array):
    """An array MPI can reduce holding ``array``'s values: ``array`` itself, or a float32
    copy for the 16-bit floats MPI has no arithmetic for. Copy the result back with
    ``finish_reduction``."""
    if array.dtype in _native:
        return array
    return array.astype(np.float32)


def finish_reduction(array, reduced):
    if reduced is not array:
        np.copyto(array, reduced, casting="unsafe")


def mpi_op(op):
    """The MPI operation performing ``ReduceOp`` ``op`` (AVG sums, then divides)."""
    from .c10d import ReduceOp
    mpi = MPI()
    return {ReduceOp.SUM: mpi.SUM, ReduceOp.AVG: mpi.SUM, ReduceOp.PRODUCT: mpi.PROD,
            ReduceOp.MAX: mpi.MAX, ReduceOp.MIN: mpi.MIN, ReduceOp.BAND: mpi.BAND,
            ReduceOp.BOR: mpi.BOR, ReduceOp.BXOR: mpi.BXOR}[op]


def install_excepthook():
    """An uncaught exception on one rank prints its traceback, then aborts the whole job, so
    that the other ranks do not wait forever in a collective.

    The report (rank, exception, traceback) is written to stderr in one piece, and the abort
    waits until the launcher has read what the rank wrote: ``mpiexec`` stops forwarding
    output once it handles the abort."""
    previous = sys.excepthook

    def abort_job(exc_type, exc, tb):
        try:
            rank = MPI().COMM_WORLD.Get_rank()
            report = (f"[rank {rank}] uncaught exception, aborting the MPI job:\n"
                      + "".join(traceback.format_exception(exc_type, exc, tb)))
            _flush(sys.stdout)
            _flush(sys.stderr)
            write_all(sys.stderr, report)
            if previous is not sys.__excepthook__:
                try:
                    previous(exc_type, exc, tb)
                except Exception:
                    pass
                _flush(sys.stderr)
            wait_until_read(sys.stdout)
            wait_until_read(sys.stderr)
        finally:
            MPI().COMM_WORLD.Abort(1)

    abort_job.previous = previous
    sys.excepthook = abort_job


def _flush(stream):
    try:
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass


def write_all(stream, text):
    """Writes ``text`` to ``stream``'s file descriptor in one ``write`` call (more only if
    the system takes part of it), past the stream's own buffer; to the stream itself,
    flushed, if it has no descriptor."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        stream.write(text)
        stream.flush()
        return
    data = memoryview(text.encode(getattr(stream, "encoding", None) or "utf-8",
                                  "backslashreplace"))
    while data:
        data = data[os.write(fd, data):]


def wait_until_read(stream, seconds=REPORT_READ_SECONDS):
    """Waits until the reader of ``stream``'s pipe has taken everything written to it, for
    at most ``seconds``; returns at once if ``stream`` is not a pipe."""
    try:
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (AttributeError, OSError, ValueError):
        return
    deadline = time.monotonic() + seconds
    while _unread_bytes(fd) and time.monotonic() < deadline:
        time.sleep(0.001)


def _unread_bytes(fd):
    try:
        return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, bytes(4)), sys.byteorder)
    except OSError:
        return 0
