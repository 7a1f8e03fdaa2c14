"""The engine and stream, memory descriptors over NumPy buffers, and ``Plan``: a oneDNN
primitive together with the reorders between the layouts its caller holds (plain or strided
NumPy arrays) and the layouts the primitive chose, and a cache of plans keyed on everything
that shapes them (creating a primitive costs milliseconds; running one from the cache costs
ctypes calls around the kernel: one per argument, the primitive's and the stream's, or, for a
plan whose arguments all stay in the caller's layout, one call of ``direct_calls``' shim).
"""
import collections
import ctypes
import threading

import numpy as np

from . import capi, direct_calls, threads
from .blocked import BlockedArray, Layout, convert_into
from .capi import call
from ..._memory_format import dense_strides, is_contiguous_as, suggest
from ..pointers import address

_DATA_TYPES = {np.dtype(np.float32): capi.F32}
# what memory descriptors may hold besides data: a pooling workspace's window positions
_MEMORY_TYPES = {**_DATA_TYPES, np.dtype(np.uint8): capi.U8, np.dtype(np.int32): capi.S32}


def data_type(np_dtype):
    """oneDNN's data type for a NumPy dtype, or None where oneDNN has none ember uses."""
    return _DATA_TYPES.get(np_dtype)


class _Engine:
    """The CPU engine and its stream, made on first use."""
    __slots__ = ("engine", "stream")

    def __init__(self):
        engine, stream = ctypes.c_void_p(), ctypes.c_void_p()
        call("dnnl_engine_create", ctypes.byref(engine), capi.ENGINE_CPU, 0)
        call("dnnl_stream_create", ctypes.byref(stream), engine, capi.STREAM_DEFAULT_FLAGS)
        self.engine, self.stream = engine, stream


_engine = []
_engine_lock = threading.Lock()


def engine():
    if not _engine:
        with _engine_lock:
            if not _engine:
                _engine.append(_Engine())
    return _engine[0]


class MemoryDesc:
    """An owned ``dnnl_memory_desc_t``."""
    __slots__ = ("handle", "_destroy")

    def __init__(self, handle):
        self.handle = handle
        self._destroy = capi.lib().dnnl_memory_desc_destroy  # still callable at shutdown

    @classmethod
    def strided(cls, shape, strides, dtype):
        """Dims ``shape`` with element ``strides`` (a NumPy array's layout, in elements)."""
        handle = ctypes.c_void_p()
        call("dnnl_memory_desc_create_with_strides", ctypes.byref(handle), len(shape),
             capi.dims(shape), _MEMORY_TYPES[np.dtype(dtype)], capi.dims(strides))
        return cls(handle)

    @classmethod
    def copy_of(cls, handle):
        """An owned copy of the descriptor ``handle`` (one a primitive owns, say)."""
        copy = ctypes.c_void_p()
        call("dnnl_memory_desc_clone", ctypes.byref(copy), handle)
        return cls(copy)

    @classmethod
    def any(cls, shape, dtype):
        """Dims ``shape`` in whichever layout the primitive prefers."""
        handle = ctypes.c_void_p()
        call("dnnl_memory_desc_create_with_tag", ctypes.byref(handle), len(shape),
             capi.dims(shape), data_type(dtype), capi.FORMAT_ANY)
        return cls(handle)

    @classmethod
    def of(cls, array):
        """``array``'s layout. A dense row-major or channels-last array is described with its
        format's strides on every dimension, size-1 ones included: oneDNN knows a layout (nchw,
        nhwc) for its kernels only by all its strides, and NumPy's strides of size-1 dimensions
        are arbitrary. A ``BlockedArray`` is described by the plain layout it stands for."""
        if array.__class__ is BlockedArray:
            return cls.dense(array.shape, array.dtype, array.layout.fmt)
        fmt = suggest(array)
        if is_contiguous_as(array, fmt):
            return cls.dense(array.shape, array.dtype, fmt)
        return cls.strided(array.shape, element_strides(array), array.dtype)

    @classmethod
    def dense(cls, shape, dtype, fmt):
        """Dims ``shape`` laid out densely in memory format ``fmt``, with the strides the format
        gives dimensions of size 1 as well: oneDNN knows a layout (nchw, nhwc) for its kernels
        only by all its strides."""
        return cls.strided(shape, dense_strides(shape, fmt), dtype)

    def __del__(self):
        if self.handle:
            self._destroy(self.handle)


def element_strides(array):
    """``array``'s strides in elements; a dimension of size 1 (whose stride NumPy leaves
    arbitrary) gets 1."""
    item = array.itemsize
    return tuple(s // item if n > 1 else 1 for s, n in zip(array.strides, array.shape))


def describable(array):
    """Whether oneDNN can read ``array`` in place: a non-empty NumPy array of a dtype it has,
    with positive element strides (broadcast and reversed views must be copied first), or a
    ``BlockedArray``."""
    if array.__class__ is BlockedArray:
        return True
    if type(array) is not np.ndarray or array.dtype not in _DATA_TYPES or not array.size:
        return False
    if array.flags.c_contiguous:
        return True
    item = array.itemsize
    return all(s > 0 and s % item == 0 for s, n in zip(array.strides, array.shape) if n > 1)


def layout_key(array):
    """What a plan's key holds of an array's layout: a ``BlockedArray`` counts as the plain
    array it stands for (its plan binds it without a reorder where the layouts agree)."""
    if array.__class__ is BlockedArray:
        return array.layout.plain_key
    return array.shape, array.strides, array.dtype.char


def format_of(array):
    """The memory format of ``array``, or of the plain array a ``BlockedArray`` stands for."""
    if array.__class__ is BlockedArray:
        return array.layout.fmt
    return suggest(array)


class _Memories:
    """The oneDNN memory objects a primitive's arguments are bound with, one per slot (an
    argument, or an argument's layout before a reorder), made on first use and pointed at each
    call's buffers after (unless a slot's buffer is the one it points at already, as a weight's
    is from step to step): making and destroying one costs several times the call that points
    it. One caller at a time: ``take`` gives them to the first, and a concurrent caller (another
    thread running the same primitive) fresh ones, destroyed by ``done``."""
    __slots__ = ("_slots", "_pointers", "_args", "_lock", "_lib")

    def __init__(self):
        self._slots = {}
        self._pointers = {}
        self._args = {}
        self._lock = threading.Lock()
        self._lib = capi.lib()

    def take(self):
        return self if self._lock.acquire(False) else _FreshMemories()

    def bind(self, slot, md, pointer):
        """A memory object in layout ``md`` over ``pointer`` (the same ``md`` for a slot)."""
        mem = self._slots.get(slot)
        if mem is None:
            mem = self._slots[slot] = _memory(md, pointer)
        elif self._pointers.get(slot) != pointer:   # (``_DirectRun`` clears them)
            status = self._lib.dnnl_memory_set_data_handle(mem, pointer)
            if status:
                capi.check(status, "dnnl_memory_set_data_handle")
        self._pointers[slot] = pointer
        return mem

    def args(self, pairs):
        """The ``dnnl_exec_arg_t`` array of ``pairs`` ((arg, memory from ``bind``), ...),
        made once per list of arguments and memory objects."""
        key = tuple([(arg, id(mem)) for arg, mem in pairs])
        array = self._args.get(key)
        if array is None:
            array = self._args[key] = exec_args(pairs)
        return array

    def done(self):
        self._lock.release()

    def destroy(self):
        for mem in self._slots.values():
            self._lib.dnnl_memory_destroy(mem)
        self._slots = {}
        self._pointers = {}
        self._args = {}


class _FreshMemories:
    """``_Memories``' interface over memory objects made for one call."""
    __slots__ = ("_made",)

    def __init__(self):
        self._made = []

    def bind(self, slot, md, pointer):
        mem = _memory(md, pointer)
        self._made.append(mem)
        return mem

    args = staticmethod(lambda pairs: exec_args(pairs))

    def done(self):
        destroy = capi.lib().dnnl_memory_destroy
        for mem in self._made:
            destroy(mem)


class _Primitive:
    """A primitive descriptor and its primitive (both owned), and the memory objects its
    callers bind arguments with."""
    __slots__ = ("pd", "handle", "what", "memories", "_lib")

    def __init__(self, pd, what):
        self.pd, self.what = pd, what
        self._lib = capi.lib()  # still reachable at shutdown, when module globals are gone
        self.handle = ctypes.c_void_p()
        self.memories = _Memories()
        call("dnnl_primitive_create", ctypes.byref(self.handle), pd, what=what)

    def md(self, query, index=0):
        return capi.lib().dnnl_primitive_desc_query_md(self.pd, query, index)

    def implementation(self):
        """oneDNN's name for the kernel it picked (``brgconv:avx512_core``, ``ref:any``, ...)."""
        text = ctypes.c_char_p()
        call("dnnl_primitive_desc_query", self.pd, capi.QUERY_IMPL_INFO_STR, 0,
             ctypes.byref(text), what=self.what)
        return text.value.decode()

    def execute(self, args):
        """Run on ``args``, an array from ``exec_args``."""
        status = self._lib.dnnl_primitive_execute(self.handle, engine().stream, len(args), args)
        if status:
            capi.check(status, "dnnl_primitive_execute", self.what)

    def __del__(self):
        memories = getattr(self, "memories", None)
        if memories is not None:
            memories.destroy()
        if self.handle:
            self._lib.dnnl_primitive_destroy(self.handle)
        self._lib.dnnl_primitive_desc_destroy(self.pd)


def scratchpad_attr():
    """Primitive attributes asking for a user-managed scratchpad (ember passes a NumPy buffer
    per call instead of each primitive keeping its own)."""
    attr = ctypes.c_void_p()
    call("dnnl_primitive_attr_create", ctypes.byref(attr))
    call("dnnl_primitive_attr_set_scratchpad_mode", attr, capi.SCRATCHPAD_MODE_USER)
    return attr


def destroy_attr(attr):
    capi.lib().dnnl_primitive_attr_destroy(attr)


def exec_args(pairs):
    """A ``dnnl_exec_arg_t`` array of ``pairs``: (argument index, memory object), ..."""
    return (capi.ExecArg * len(pairs))(*pairs)


def _memory(md, pointer):
    mem = ctypes.c_void_p()
    call("dnnl_memory_create", ctypes.byref(mem), md, engine().engine, ctypes.c_void_p(pointer))
    return mem


def run_reorder(reorder, src_md, src_pointer, dst_md, dst_pointer):
    """Convert the memory at ``src_pointer`` (layout ``src_md``) into ``dst_pointer``'s (the
    layouts ``reorder`` was made for)."""
    memories = reorder.memories.take()
    try:
        reorder.execute(memories.args(
            ((capi.ARG_FROM, memories.bind(capi.ARG_FROM, src_md, src_pointer)),
             (capi.ARG_TO, memories.bind(capi.ARG_TO, dst_md, dst_pointer)))))
        call("dnnl_stream_wait", engine().stream)
    finally:
        memories.done()


def _reorder(src_md, dst_md, what):
    pd = ctypes.c_void_p()
    eng = engine().engine
    call("dnnl_reorder_primitive_desc_create", ctypes.byref(pd), src_md, eng, dst_md, eng, None,
         what=f"reorder for {what}")
    return _Primitive(pd, f"reorder for {what}")


class Plan:
    """A primitive and, for each of its arguments, the user's layout (a ``MemoryDesc``) and
    the reorder into (inputs) or out of (outputs) the layout the primitive chose, where the
    two differ. A primitive with a workspace (max pooling in training) is given one by its
    caller as ``arrays[ARG_WORKSPACE]``, bytes of ``workspace_bytes``, in the layout it chose
    (``workspace_md``)."""
    __slots__ = ("primitive", "args", "fixed", "scratchpad_md", "scratchpad_bytes", "workspace_bytes",
                 "workspace_md", "user_mds", "key", "_layouts", "_direct")

    def __init__(self, pd, what, inputs, outputs, fixed=None):
        """``inputs`` and ``outputs``: {arg index: (user MemoryDesc, the query for the layout
        the primitive chose, or (query, index) where an argument is not the query's first)};
        ``fixed``: {arg index: MemoryDesc} for arguments the primitive was created with in the
        user's layout (statistics, scales), bound as they are."""
        self.primitive = _Primitive(pd, what)
        self.user_mds = list((fixed or {}).values())  # kept alive with the plan
        self.fixed = tuple((fixed or {}).items())
        self.args = []  # (arg, is_output, user md, chosen md, reorder or None, chosen bytes)
        lib = capi.lib()
        for is_output, table in ((False, inputs), (True, outputs)):
            for arg, (user, query) in table.items():
                self.user_mds.append(user)
                chosen = self.primitive.md(*query) if isinstance(query, tuple) \
                    else self.primitive.md(query)
                reorder = None
                if not lib.dnnl_memory_desc_equal(chosen, user.handle):
                    reorder = _reorder(chosen, user.handle, what) if is_output \
                        else _reorder(user.handle, chosen, what)
                self.args.append((arg, is_output, user.handle, chosen, reorder,
                                  lib.dnnl_memory_desc_get_size(chosen)))
        self.scratchpad_md = self.primitive.md(capi.QUERY_SCRATCHPAD_MD)
        self.scratchpad_bytes = lib.dnnl_memory_desc_get_size(self.scratchpad_md)
        self.workspace_md = self.primitive.md(capi.QUERY_WORKSPACE_MD)
        self.workspace_bytes = lib.dnnl_memory_desc_get_size(self.workspace_md)
        self.key = None   # the plan cache's key, set by ``PlanCache.get``
        self._layouts = {}
        # a ``_DirectRun`` once the first call has made the memory objects; False for plans
        # with a reorder or a workspace, which take ``__call__``'s general path
        self._direct = None if not self.workspace_bytes and all(
            reorder is None for *_, reorder, _ in self.args) else False

    def implementation(self):
        return self.primitive.implementation()

    def layout(self, arg, chosen_md, user_md, size, plain):
        """The ``Layout`` of output ``arg`` (made once per plan), ``plain`` being an array of
        the caller's layout for it."""
        layout = self._layouts.get(arg)
        if layout is None:
            layout = self._layouts[arg] = Layout(
                chosen_md, plain.shape, plain.dtype, suggest(plain), layout_key(plain), user_md,
                size, (self.key, arg), self)
        return layout

    def __call__(self, arrays, reordered=None, blocked_outputs=()):
        """Run on ``arrays`` ({arg index: NumPy array in the user's layout, or a
        ``BlockedArray``, read in place where its layout is the one the primitive chose}).
        With ``reordered`` (a ``Reordered``), an input another plan has already converted into
        the layout this primitive chose is read from there, and the inputs this plan converts
        are added to it. Outputs whose index is in ``blocked_outputs`` and whose layout the
        primitive chose differs from the user's are left in it: returned as
        {arg: ``BlockedArray``} (the user's array for them is not written)."""
        direct = self._direct
        if direct and direct(arrays):
            return {}
        lib = capi.lib()
        bound, after, keep, kept = [], [], [], {}
        # memory slots: an argument's own layout under its index, the layout the primitive
        # chose (where a reorder stands between them) under ``~arg``
        memories = self.primitive.memories.take()
        bind = memories.bind
        try:
            for arg, is_output, user_md, chosen_md, reorder, size in self.args:
                array = arrays[arg]
                if array.__class__ is BlockedArray:
                    if lib.dnnl_memory_desc_equal(array.layout.md, chosen_md):
                        buffer = array.buffer
                    else:   # from its layout into the chosen one directly
                        buffer = np.empty(size, np.uint8)
                        keep.append(buffer)
                        convert_into(array, chosen_md, (self.key, arg), buffer)
                    bound.append((arg, bind(~arg, chosen_md, address(buffer))))
                    continue
                if is_output and reorder is not None and arg in blocked_outputs:
                    buffer = np.empty(size, np.uint8)
                    bound.append((arg, bind(~arg, chosen_md, address(buffer))))
                    layout = self.layout(arg, chosen_md, user_md, size, array)
                    kept[arg] = BlockedArray(layout, buffer)
                    continue
                if reorder is not None and not is_output and reordered is not None:
                    buffer = reordered.find(array, chosen_md)
                    if buffer is not None:
                        bound.append((arg, bind(~arg, chosen_md, address(buffer))))
                        continue
                user_mem = bind(arg, user_md, address(array))
                if reorder is None:
                    bound.append((arg, user_mem))
                    continue
                buffer = np.empty(size, np.uint8)
                keep.append(buffer)
                mem = bind(~arg, chosen_md, address(buffer))
                bound.append((arg, mem))
                if is_output:
                    after.append((reorder, mem, user_mem))
                else:
                    reorder.execute(memories.args(((capi.ARG_FROM, user_mem), (capi.ARG_TO, mem))))
                    if reordered is not None:
                        reordered.add(array, chosen_md, buffer, self)
            for arg, md in self.fixed:
                array = arrays[arg]
                pointer = address(array.buffer if array.__class__ is BlockedArray else array)
                bound.append((arg, bind(arg, md.handle, pointer)))
            if self.workspace_bytes:
                bound.append((capi.ARG_WORKSPACE, bind(capi.ARG_WORKSPACE, self.workspace_md,
                                                       address(arrays[capi.ARG_WORKSPACE]))))
            if self.scratchpad_bytes:
                scratch = np.empty(self.scratchpad_bytes, np.uint8)
                keep.append(scratch)
                bound.append((capi.ARG_SCRATCHPAD, bind(capi.ARG_SCRATCHPAD, self.scratchpad_md,
                                                        address(scratch))))
            self.primitive.execute(memories.args(bound))
            for reorder, src, dst in after:
                reorder.execute(memories.args(((capi.ARG_FROM, src), (capi.ARG_TO, dst))))
            status = lib.dnnl_stream_wait(engine().stream)
            if status:
                capi.check(status, "dnnl_stream_wait", self.primitive.what)
        finally:
            memories.done()
        if direct is None and memories is self.primitive.memories:
            self._direct = _DirectRun.of(self)
        return kept


class _DirectRun:
    """A plan whose arguments all stay in the caller's layout (no reorder, no workspace), run
    through ``direct_calls.run_plan``: its memory objects (made by the plan's first call)
    pointed at the arrays, the primitive executed and the stream waited on in one compiled
    call, where ``Plan.__call__``'s general path makes a ctypes call for each."""
    __slots__ = ("run", "functions", "primitive", "stream", "args_array", "exec_args", "count",
                 "memories", "slots", "scratchpad_bytes", "lock", "pointers", "what")

    @classmethod
    def of(cls, plan):
        """The direct run of ``plan``; None where its first calls have not made all its
        memory objects yet (an argument came in a oneDNN layout), False where the shim
        cannot be built."""
        memories = plan.primitive.memories
        slots = tuple([arg for arg, *_ in plan.args] + [arg for arg, _ in plan.fixed])
        every = slots + ((capi.ARG_SCRATCHPAD,) if plan.scratchpad_bytes else ())
        if any(slot not in memories._slots for slot in every):
            return None
        run = direct_calls.run_plan()
        if run is None:
            return False
        self = cls()
        self.run, self.functions = run, direct_calls.plan_functions()
        self.primitive, self.stream = plan.primitive.handle.value, engine().stream.value
        self.args_array = exec_args([(slot, memories._slots[slot]) for slot in every])
        self.exec_args, self.count = ctypes.addressof(self.args_array), len(every)
        self.memories = tuple(memories._slots[slot].value for slot in every)
        self.slots, self.scratchpad_bytes = slots, plan.scratchpad_bytes
        self.lock, self.pointers, self.what = memories._lock, memories._pointers, plan.primitive.what
        return self

    def __call__(self, arrays):
        """Run on ``arrays`` (as ``Plan.__call__`` takes them); False, having done nothing,
        where another thread runs the plan or an argument is a ``BlockedArray``."""
        if not self.lock.acquire(False):
            return False
        try:
            operands = [arrays[slot] for slot in self.slots]
            if self.scratchpad_bytes:
                operands.append(np.empty(self.scratchpad_bytes, np.uint8))
            self.pointers.clear()   # (the general path's record of where each memory points)
            try:
                status = self.run(self.functions, self.primitive, self.stream, self.exec_args,
                                  self.count, self.memories, tuple(operands))
            except TypeError:   # an argument held in a oneDNN layout: the general path binds it
                return False
        finally:
            self.lock.release()
        if status:
            capi.check(status & 255, direct_calls.STAGES[status >> 8], self.what)
        return True


class Reordered:
    """Arrays that plans converted into the layouts their primitives chose, kept for later
    plans that read the same arrays in the same layouts (a convolution's output gradient, read
    by its backward-data and its backward-weights primitives): the reorder then runs once.
    Only the ``arrays`` it is made for are kept, found by the array object itself: hold a
    ``Reordered`` only while they are not written to. It keeps them, their converted buffers
    and the plans (owners of the layouts' descriptors) alive."""
    __slots__ = ("_entries",)

    def __init__(self, *arrays):
        self._entries = {id(a): [a] for a in arrays}  # id -> [array, (md, buffer, plan), ...]

    def find(self, array, chosen_md):
        """The buffer holding ``array`` in the layout ``chosen_md``, or None."""
        entry = self._entries.get(id(array))
        if entry is not None and entry[0] is array:
            equal = capi.lib().dnnl_memory_desc_equal
            for md, buffer, _ in entry[1:]:
                if equal(md, chosen_md):
                    return buffer
        return None

    def add(self, array, chosen_md, buffer, plan):
        """Keep ``buffer``, ``array`` in the layout ``chosen_md``, if ``array`` is one of
        those this was made for."""
        entry = self._entries.get(id(array))
        if entry is not None and entry[0] is array:
            entry.append((chosen_md, buffer, plan))


_MISSING = object()


class PlanCache:
    """Plans by key and thread count, the least recently used dropped past ``capacity``. A key
    whose ``make`` gave None (oneDNN declined the case) keeps None, so the case is not tried
    again. A primitive splits its work for the OpenMP thread count it was created under, so a
    plan made at one count is not reused at another (``set_num_threads`` between steps)."""

    def __init__(self, capacity=512):
        self.capacity = capacity
        self._plans = collections.OrderedDict()
        self._lock = threading.Lock()
        self.created = 0

    def get(self, key, make):
        key = (key, threads.applied_count())
        with self._lock:
            plan = self._plans.get(key, _MISSING)
            if plan is not _MISSING:
                self._plans.move_to_end(key)
                return plan
        plan = make()
        if plan is not None:
            plan.key = key
        with self._lock:
            self._plans[key] = plan
            self.created += 1
            while len(self._plans) > self.capacity:
                self._plans.popitem(last=False)
        return plan

    def clear(self):
        with self._lock:
            self._plans.clear()

    def forget_after_fork(self):
        """In a forked child: drop every plan (and the lock, which a parent thread may have
        held at the fork)."""
        self._lock = threading.Lock()
        self._plans = collections.OrderedDict()

    def __len__(self):
        return len(self._plans)


plans = PlanCache()
