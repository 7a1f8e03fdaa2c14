"""The MPI side of ``ember.distributed``: mpi4py, imported only when a process group starts
(importing ``mpi4py.MPI`` initializes MPI), and the mapping of arrays to MPI buffers."""
import importlib.util
import sys
import traceback

import numpy as np

__all__ = ["available", "MPI", "buffer", "reduction_buffer", "mpi_op", "install_excepthook"]

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
    that the other ranks do not wait forever in a collective."""
    previous = sys.excepthook

    def abort_job(exc_type, exc, tb):
        rank = MPI().COMM_WORLD.Get_rank()
        sys.stderr.write(f"[rank {rank}] uncaught exception, aborting the MPI job:\n")
        try:
            previous(exc_type, exc, tb)
        except Exception:
            traceback.print_exception(exc_type, exc, tb)
        sys.stderr.flush()
        sys.stdout.flush()
        MPI().COMM_WORLD.Abort(1)

    abort_job.previous = previous
    sys.excepthook = abort_job
