"""Process groups and collectives over MPI (mpi4py), with torch.distributed's API.

Collectives work in place on the tensors' arrays: each array is handed to mpi4py as a buffer
(``MPI.IN_PLACE`` for reductions), so data moves without Python loops or staging copies.
With ``async_op=True`` the matching non-blocking MPI call starts and a ``Work`` is returned.
Setting ``EMBER_DISTRIBUTED_DEBUG=DETAIL`` makes every collective first compare the
operation, shape and dtype of all ranks and raise an error naming both on a mismatch.
"""
import enum
import os
from datetime import timedelta

import numpy as np

from . import _mpi
from ..autograd.graph import bump_version

__all__ = [
    "Backend", "ReduceOp", "Work", "ProcessGroup", "GroupMember", "group",
    "init_process_group", "destroy_process_group", "is_initialized", "is_available",
    "is_mpi_available", "get_rank", "get_world_size", "get_backend", "new_group",
    "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
    "all_to_all_single", "barrier", "send", "recv", "isend", "irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "monitored_barrier",
]

default_pg_timeout = timedelta(minutes=30)


class ReduceOp(enum.Enum):
    """Reduction operations for ``all_reduce``, ``reduce`` and ``reduce_scatter``."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self):
        return f"RedOpType.{self.name}"


class Backend(str):
    """Names of the backends: only ``"mpi"`` runs here."""
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A set of processes (global ranks ``ranks``) and the MPI communicator joining them."""

    def __init__(self, comm, ranks):
        self.comm = comm
        self.ranks = list(ranks)

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def name(self):
        return Backend.MPI

    def __repr__(self):
        return f"ProcessGroup(backend=mpi, ranks={self.ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` what ``new_group``
    returns to processes outside it."""
    WORLD = None
    NON_GROUP_MEMBER = object()


group = GroupMember


class _State:
    world = None
    groups = []
    debug = False


_state = _State()


class Work:
    """A collective started with ``async_op=True``: ``wait()`` blocks until it finished (then
    the tensors hold the result), ``is_completed()`` polls."""

    def __init__(self, request=None, finish=None, result=None):
        self._request = request
        self._finish = finish
        self._done = request is None
        self._result = result
        if self._done and finish is not None:
            finish()

    def wait(self, timeout=None):
        if not self._done:
            self._request.Wait()
            self._complete()
        return True

    def is_completed(self):
        if not self._done and self._request.Test():
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def result(self):
        return self._result

    def _complete(self):
        self._done = True
        if self._finish is not None:
            self._finish()
            self._finish = None


# -- process groups ----------------------------------------------------------------------------

def is_available():
    """Whether the distributed package can run here (mpi4py is installed)."""
    return _mpi.available()


def is_mpi_available():
    """Whether the MPI backend is available."""
    return _mpi.available()


def is_initialized():
    """Whether the default process group has been initialized."""
    return _state.world is not None


def _check_env(name, value):
    text = os.environ.get(name)
    if text is not None and int(text) != value:
        raise ValueError(f"environment variable {name}={text} disagrees with the MPI launcher, "
                         f"which gives {value}")


def init_process_group(backend="mpi", init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Initializes the default distributed process group over MPI. Rank and world size come
    from the MPI launcher (``mpiexec``); given ones (and ``RANK``/``WORLD_SIZE`` with
    ``env://``) must agree with it."""
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and str(backend).lower() not in ("mpi", "gloo", "cpu:mpi"):
        raise RuntimeError(f"Backend {backend} is not available here: ember.distributed runs "
                           "over MPI only (backend='mpi')")
    if not _mpi.available():
        raise RuntimeError("Distributed package doesn't have MPI built in: install mpi4py and "
                           "an MPI (pip install mpi4py mpich)")
    comm = _mpi.MPI().COMM_WORLD
    if rank is not None and rank >= 0 and rank != comm.Get_rank():
        raise ValueError(f"rank {rank} disagrees with the MPI launcher, which gives {comm.Get_rank()}")
    if world_size is not None and world_size >= 0 and world_size != comm.Get_size():
        raise ValueError(f"world_size {world_size} disagrees with the MPI launcher, "
                         f"which gives {comm.Get_size()}")
    if init_method is None or str(init_method).startswith("env://"):
        _check_env("RANK", comm.Get_rank())
        _check_env("WORLD_SIZE", comm.Get_size())
    _state.world = ProcessGroup(comm, range(comm.Get_size()))
    _state.debug = os.environ.get("EMBER_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    GroupMember.WORLD = _state.world
    _mpi.install_excepthook()


def destroy_process_group(group=None):
    """Destroys ``group`` (all groups, including the default one, when None)."""
    if group is None or group is _state.world:
        for pg in _state.groups:
            pg.comm.Free()
        _state.groups = []
        _state.world = None
        GroupMember.WORLD = None
    elif group in _state.groups:
        _state.groups.remove(group)
        group.comm.Free()


def _world():
    if _state.world is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _state.world


def _resolve(group):
    world = _world()
    return world if group is None else group


def _outside(group):
    return group is GroupMember.NON_GROUP_MEMBER


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """Creates a group of the processes ``ranks`` (all when None). Every process must call
    it, also those not in the group, which get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}, it should be in [0, {world.size() - 1}]")
    member = world.rank() in ranks
    comm = world.comm.Split(0 if member else _mpi.MPI().UNDEFINED, world.rank())
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks)
    _state.groups.append(pg)
    return pg


def get_rank(group=None):
    """The rank of this process in ``group`` (the default group when None); -1 outside it."""
    if _outside(group):
        return -1
    return _resolve(group).rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (the default group when None)."""
    if _outside(group):
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    """The backend of ``group``: ``"mpi"``."""
    if _outside(group):
        raise ValueError("Invalid process group specified")
    _resolve(group)
    return Backend.MPI


def get_process_group_ranks(group):
    """The global ranks of the processes in ``group``."""
    return list(_resolve(group).ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    return _resolve(group).ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of the process with global rank ``global_rank``."""
    pg = _resolve(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


def _root(pg, rank, group_rank, what):
    """The root's rank within ``pg``: ``group_rank``, else global ``rank`` (default 0) translated."""
    if group_rank is not None:
        return group_rank
    return _group_peer(pg, 0 if rank is None else rank, what)


def _group_peer(pg, rank, what):
    if rank not in pg.ranks:
        raise ValueError(f"Invalid {what} rank {rank}: not part of the group (ranks {pg.ranks})")
    return pg.ranks.index(rank)


# -- checks -------------------------------------------------------------------------------------

def _array(tensor):
    """The tensor's array, which MPI reads or writes in place."""
    data = tensor._data
    if not isinstance(data, np.ndarray):
        raise RuntimeError("ember.distributed over MPI supports CPU tensors only")
    if not data.flags.c_contiguous:
        raise RuntimeError("Tensors must be contiguous")
    return data


def _modified(*tensors):
    for t in tensors:
        bump_version(t)


def _describe(entry):
    name, shape, dtype = entry
    return f"{name} with shape {shape} and dtype {dtype}"


def _check_same(pg, name, tensor=None):
    """Under EMBER_DISTRIBUTED_DEBUG=DETAIL: all ranks must run the same collective on tensors
    of the same shape and dtype."""
    if not _state.debug:
        return
    entry = (name, None if tensor is None else tuple(tensor.shape),
             None if tensor is None else str(tensor.dtype).replace("ember.", ""))
    entries = pg.comm.allgather(entry)
    for r, other in enumerate(entries):
        if other != entries[0]:
            raise RuntimeError(
                "Detected mismatch between collectives on ranks. "
                f"Rank {pg.ranks[0]} is running collective: {_describe(entries[0])}, but "
                f"Rank {pg.ranks[r]} is running collective: {_describe(other)}")


def _start(pg, blocking, nonblocking, async_op, finish=None):
    """Run the blocking MPI call, or start the non-blocking one and return its Work."""
    if async_op:
        return Work(nonblocking(), finish)
    blocking()
    if finish is not None:
        finish()
    return None


def _averaging(array, reduced, op, size, tensors):
    """What runs once a reduction finished: AVG divides, 16-bit floats are copied back,
    the tensors' versions move on."""
    def finish():
        if op is ReduceOp.AVG:
            np.divide(reduced, size, out=reduced, casting="unsafe")
        _mpi.finish_reduction(array, reduced)
        _modified(*tensors)
    return finish


def _reduction(array, op):
    """The array MPI reduces for ``array`` and the MPI operation for ``op``."""
    if op is ReduceOp.AVG and array.dtype.kind not in "fcV":
        raise ValueError("ReduceOp.AVG is only supported for floating point tensors")
    return _mpi.reduction_buffer(array), _mpi.mpi_op(op)


def _copy_out(source, tensors):
    """Copy the rows of ``source`` into ``tensors`` (one per row)."""
    def finish():
        for row, t in zip(source, tensors):
            np.copyto(t._data, row.reshape(t._data.shape))
        _modified(*tensors)
    return finish


def _stacked(tensors):
    return np.stack([np.ascontiguousarray(t._data) for t in tensors])


# -- collectives ------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces the tensor data across all machines so that all get the final result
    (in place)."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "all_reduce", tensor)
    array = _array(tensor)
    buf, mop = _reduction(array, op)
    inplace = _mpi.MPI().IN_PLACE
    return _start(pg, lambda: pg.comm.Allreduce(inplace, buf, mop),
                  lambda: pg.comm.Iallreduce(inplace, buf, mop), async_op,
                  _averaging(array, buf, op, pg.size(), [tensor]))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces the tensor data across all machines; only process ``dst`` gets the result."""
    if _outside(group):
        return None
    pg = _resolve(group)
    root = _root(pg, dst, group_dst, "dst")
    _check_same(pg, "reduce", tensor)
    array = _array(tensor)
    buf, mop = _reduction(array, op)
    is_root = pg.rank() == root
    send = _mpi.MPI().IN_PLACE if is_root else buf
    recv = buf if is_root else None
    finish = _averaging(array, buf, op, pg.size(), [tensor]) if is_root else None
    return _start(pg, lambda: pg.comm.Reduce(send, recv, mop, root),
                  lambda: pg.comm.Ireduce(send, recv, mop, root), async_op, finish)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Broadcasts the tensor from process ``src`` to the whole group (in place)."""
    if _outside(group):
        return None
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src")
    _check_same(pg, "broadcast", tensor)
    buf = _mpi.buffer(_array(tensor))
    return _start(pg, lambda: pg.comm.Bcast(buf, root), lambda: pg.comm.Ibcast(buf, root),
                  async_op, lambda: _modified(tensor))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers tensors from all ranks into ``output_tensor``, concatenated along the first
    dimension (or stacked)."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "all_gather_into_tensor", input_tensor)
    send, recv = _mpi.buffer(_array(input_tensor)), _mpi.buffer(_array(output_tensor))
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    return _start(pg, lambda: pg.comm.Allgather(send, recv), lambda: pg.comm.Iallgather(send, recv),
                  async_op, lambda: _modified(output_tensor))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers tensors from the whole group in a list."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "all_gather", tensor)
    if len(tensor_list) != pg.size():
        raise ValueError("tensor_list must have one tensor per rank in the group")
    send = _mpi.buffer(_array(tensor))
    gathered = np.empty((pg.size(),) + tensor._data.shape, tensor._data.dtype)
    recv = _mpi.buffer(gathered)
    return _start(pg, lambda: pg.comm.Allgather(send, recv), lambda: pg.comm.Iallgather(send, recv),
                  async_op, _copy_out(gathered, tensor_list))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` across the group, then scatters its equal chunks (along the first
    dimension) to the ranks: rank i gets chunk i in ``output``."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "reduce_scatter_tensor", input)
    in_array, out_array = _array(input), _array(output)
    if in_array.size != out_array.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    send, mop = _reduction(in_array, op)
    recv = _mpi.reduction_buffer(out_array)
    return _start(pg, lambda: pg.comm.Reduce_scatter_block(send, recv, mop),
                  lambda: pg.comm.Ireduce_scatter_block(send, recv, mop), async_op,
                  _averaging(out_array, recv, op, pg.size(), [output]))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces, then scatters a list of tensors to all processes in a group."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "reduce_scatter", output)
    out_array = _array(output)
    send, mop = _reduction(_stacked(input_list), op)
    recv = _mpi.reduction_buffer(out_array)
    return _start(pg, lambda: pg.comm.Reduce_scatter_block(send, recv, mop),
                  lambda: pg.comm.Ireduce_scatter_block(send, recv, mop), async_op,
                  _averaging(out_array, recv, op, pg.size(), [output]))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gathers a list of tensors in a single process ``dst``."""
    if _outside(group):
        return None
    pg = _resolve(group)
    root = _root(pg, dst, group_dst, "dst")
    _check_same(pg, "gather", tensor)
    send = _mpi.buffer(_array(tensor))
    is_root = pg.rank() == root
    if is_root and (gather_list is None or len(gather_list) != pg.size()):
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    gathered = np.empty((pg.size(),) + tensor._data.shape, tensor._data.dtype) if is_root else None
    recv = _mpi.buffer(gathered) if is_root else None
    finish = _copy_out(gathered, gather_list) if is_root else None
    return _start(pg, lambda: pg.comm.Gather(send, recv, root),
                  lambda: pg.comm.Igather(send, recv, root), async_op, finish)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Scatters a list of tensors from process ``src`` to all processes in the group."""
    if _outside(group):
        return None
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src")
    _check_same(pg, "scatter", tensor)
    recv = _mpi.buffer(_array(tensor))
    is_root = pg.rank() == root
    if is_root and (scatter_list is None or len(scatter_list) != pg.size()):
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    send = _mpi.buffer(_stacked(scatter_list)) if is_root else None
    return _start(pg, lambda: pg.comm.Scatter(send, recv, root),
                  lambda: pg.comm.Iscatter(send, recv, root), async_op, lambda: _modified(tensor))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Each process scatters its list of input tensors to all processes in the group and
    gets the gathered list in ``output_tensor_list`` (equal sizes)."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "all_to_all", input_tensor_list[0] if input_tensor_list else None)
    send = _mpi.buffer(_stacked(input_tensor_list))
    received = np.empty((pg.size(),) + output_tensor_list[0]._data.shape, output_tensor_list[0]._data.dtype)
    recv = _mpi.buffer(received)
    return _start(pg, lambda: pg.comm.Alltoall(send, recv), lambda: pg.comm.Ialltoall(send, recv),
                  async_op, _copy_out(received, output_tensor_list))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Splits ``input`` along its first dimension (equally, or by ``input_split_sizes``),
    scatters the pieces to all ranks and concatenates what arrives into ``output``."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "all_to_all_single", None)
    send, recv = _array(input), _array(output)
    if output_split_sizes is None and input_split_sizes is None:
        send, recv = _mpi.buffer(send), _mpi.buffer(recv)
        return _start(pg, lambda: pg.comm.Alltoall(send, recv), lambda: pg.comm.Ialltoall(send, recv),
                      async_op, lambda: _modified(output))
    send_spec, recv_spec = _split_spec(send, input_split_sizes, pg), _split_spec(recv, output_split_sizes, pg)
    return _start(pg, lambda: pg.comm.Alltoallv(send_spec, recv_spec),
                  lambda: pg.comm.Ialltoallv(send_spec, recv_spec), async_op, lambda: _modified(output))


def _split_spec(array, split_sizes, pg):
    """An MPI vector buffer spec ``[bytes, counts, displacements, BYTE]`` for rows split by
    ``split_sizes`` (equal rows when None)."""
    rows = array.shape[0] if array.ndim else 1
    if split_sizes is None:
        split_sizes = [rows // pg.size()] * pg.size()
    row_bytes = array.nbytes // max(rows, 1)
    counts = [s * row_bytes for s in split_sizes]
    displacements = np.cumsum([0] + counts[:-1]).tolist()
    return [array.reshape(-1).view(np.uint8), counts, displacements, _mpi.MPI().BYTE]


def barrier(group=None, async_op=False, device_ids=None):
    """Synchronizes all processes: returns once every process of the group entered it."""
    if _outside(group):
        return None
    pg = _resolve(group)
    _check_same(pg, "barrier")
    return _start(pg, pg.comm.Barrier, pg.comm.Ibarrier, async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier (MPI has no per-rank timeout; the job aborts if a rank fails)."""
    return barrier(group)


# -- point to point ---------------------------------------------------------------------------

def _peer(group, rank, what):
    pg = _resolve(group)
    return pg, _group_peer(pg, rank, what)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends a tensor synchronously to process ``dst``."""
    pg, peer = (_resolve(group), group_dst) if group_dst is not None else _peer(group, dst, "dst")
    pg.comm.Send(_mpi.buffer(_array(tensor)), peer, tag)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives a tensor synchronously from ``src`` (any process when None); returns the
    sender's rank."""
    pg = _resolve(group)
    peer = group_src if group_src is not None else (
        _mpi.MPI().ANY_SOURCE if src is None else _group_peer(pg, src, "src"))
    status = _mpi.MPI().Status()
    pg.comm.Recv(_mpi.buffer(_array(tensor)), peer, tag, status)
    _modified(tensor)
    return pg.ranks[status.Get_source()]


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends a tensor asynchronously; returns a Work to ``wait()`` on."""
    pg, peer = (_resolve(group), group_dst) if group_dst is not None else _peer(group, dst, "dst")
    return Work(pg.comm.Isend(_mpi.buffer(_array(tensor)), peer, tag))


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives a tensor asynchronously; returns a Work to ``wait()`` on."""
    pg = _resolve(group)
    peer = group_src if group_src is not None else (
        _mpi.MPI().ANY_SOURCE if src is None else _group_peer(pg, src, "src"))
    return Work(pg.comm.Irecv(_mpi.buffer(_array(tensor)), peer, tag), lambda: _modified(tensor))


# -- picklable objects ----------------------------------------------------------------------------

def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Broadcasts the picklable objects in ``object_list`` from ``src`` (in place)."""
    if _outside(group):
        return
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src")
    _check_same(pg, "broadcast_object_list")
    received = pg.comm.bcast(list(object_list) if pg.rank() == root else None, root)
    object_list[:] = received


def all_gather_object(object_list, obj, group=None):
    """Gathers picklable objects from the whole group into ``object_list``."""
    if _outside(group):
        return
    pg = _resolve(group)
    _check_same(pg, "all_gather_object")
    object_list[:] = pg.comm.allgather(obj)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gathers picklable objects from the whole group in process ``dst``."""
    if _outside(group):
        return
    pg = _resolve(group)
    root = _root(pg, dst, group_dst, "dst")
    _check_same(pg, "gather_object")
    gathered = pg.comm.gather(obj, root)
    if pg.rank() == root:
        object_gather_list[:] = gathered

