"""``DistributedDataParallel``: data parallelism over ``ember.distributed``.

Each process holds a replica of the module and runs it on its share of the batch. At
construction the parameters and buffers are broadcast from rank 0. Gradients are grouped into
buckets (about ``bucket_cap_mb`` each, parameters in reverse registration order, as they tend
to become ready in backward); a post-accumulate-grad hook on every parameter counts the
bucket's ready gradients and, when all are in, copies them into the bucket's flat buffer and
starts a non-blocking all-reduce, so that communication overlaps the rest of backward.
Buckets start in index order on every rank (MPI needs collectives in the same order). A
callback queued on the autograd engine waits for all reductions at the end of backward and
writes the averaged gradients back into ``.grad``. MPI moves host memory: the flat buffers are
NumPy arrays, and a CUDA model's parameters and gradients are copied through them.
"""
import time
from contextlib import contextmanager

import numpy as np

from ..._backend import cpu as _host, to_device_of
from ...autograd import engine
from ...autograd.grad_mode import state as _grad_state
from ...ops.creation import from_numpy, zeros_like
from ..modules.module import Module
from ...autograd.graph import bump_version

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Parameters whose gradients are all-reduced together through one flat buffer."""

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.sizes = [p._data.size for p in params]
        self.offsets = np.cumsum([0] + self.sizes[:-1]).tolist()
        self.flat = np.zeros(sum(self.sizes), dtype=params[0]._data.dtype)
        self.reset()

    def reset(self):
        self.ready = set()
        self.work = None

    def full(self):
        return len(self.ready) == len(self.params)

    def pack(self):
        """Copy the gradients into the flat buffer (zeros for parameters without one)."""
        for p, off, n in zip(self.params, self.offsets, self.sizes):
            region = self.flat[off:off + n]
            if p._grad is None:
                region.fill(0)
            else:
                np.copyto(region, _host.from_array(p._grad._data).reshape(-1))

    def unpack(self, params_to_write=None):
        """Copy the reduced values back into ``.grad`` of ``params_to_write`` (a set; all
        when None)."""
        for p, off, n in zip(self.params, self.offsets, self.sizes):
            if params_to_write is not None and p not in params_to_write:
                continue
            if p._grad is None:
                p._grad = zeros_like(p)
            grad = p._grad
            _write(grad._data, self.flat[off:off + n].reshape(grad._data.shape))
            bump_version(grad)


def _write(target, values):
    """Copy the host array ``values`` into ``target``, an array of any device."""
    target[...] = to_device_of(values, target)


def _buckets(params, cap_bytes):
    """Group ``params`` (in the given order) into buckets of at most ``cap_bytes`` of one dtype."""
    buckets, current, size = [], [], 0
    for p in params:
        nbytes = p._data.nbytes
        if current and (size + nbytes > cap_bytes or p._data.dtype != current[0]._data.dtype):
            buckets.append(current)
            current, size = [], 0
        current.append(p)
        size += nbytes
    if current:
        buckets.append(current)
    return [_Bucket(i, ps) for i, ps in enumerate(buckets)]


class DistributedDataParallel(Module):
    """Implements distributed data parallelism at the module level.

    Wraps ``module``: parameters and buffers are broadcast from rank 0, buffers again before
    every forward (``broadcast_buffers``), and gradients are averaged across the processes of
    ``process_group`` during backward. Inside ``no_sync()`` gradients only accumulate locally.
    With ``find_unused_parameters`` parameters that got no gradient in a backward count as
    zero; without it such a parameter is an error, as in torch.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None):
        super().__init__()
        from ... import distributed as dist
        self._dist = dist
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._world_size = dist.get_world_size(process_group)
        self._sync_params_and_buffers()
        self._params = [p for p in dict.fromkeys(module.parameters()) if p.requires_grad]
        self._buckets = _buckets(list(reversed(self._params)), self.bucket_bytes_cap)
        self._bucket_of = {p: b for b in self._buckets for p in b.params}
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params]
        self._expect_backward = False
        self._callback_queued = False
        self._next_bucket = 0
        # benchmark hook: a list to which backward appends (event, bucket index, perf_counter)
        # for "start" (all-reduce started), "end_of_backward", "wait" and "waited"; None: off
        self._timeline = None

    def _mark(self, event, index=None):
        if self._timeline is not None:
            self._timeline.append((event, index, time.perf_counter()))

    # -- forward --------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._broadcast(list(self.module.buffers()))
        self._prepare_for_backward()
        return self.module(*inputs, **kwargs)

    def _prepare_for_backward(self):
        for b in self._buckets:
            b.reset()
        self._next_bucket = 0
        self._callback_queued = False
        self._expect_backward = self.require_backward_grad_sync and _grad_state.grad_enabled

    @contextmanager
    def no_sync(self):
        """A context in which gradients are accumulated locally, without all-reduce; the
        first backward after it reduces the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    # -- parameters and buffers -------------------------------------------------------------------
    def _sync_params_and_buffers(self):
        tensors = list(self.module.parameters()) + list(self.module.buffers())
        self._broadcast(tensors)

    def _broadcast(self, tensors):
        """Broadcast ``tensors`` from rank 0 of the group, through one flat buffer per dtype."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        src = self._dist.get_global_rank(self.process_group, 0)
        for group in by_dtype.values():
            flat = np.concatenate([_host.from_array(t._data).reshape(-1) for t in group])
            self._dist.broadcast(from_numpy(flat), src=src, group=self.process_group)
            off = 0
            for t in group:
                n = t._data.size
                _write(t._data, flat[off:off + n].reshape(t._data.shape))
                bump_version(t)
                off += n

    # -- backward -------------------------------------------------------------------------------
    def _grad_ready(self, param):
        """Post-accumulate-grad hook: mark ``param`` ready, start the buckets that can go."""
        if not self._expect_backward:
            return
        if not self._callback_queued:
            engine.queue_callback(self._finish_backward)
            self._callback_queued = True
        bucket = self._bucket_of[param]
        bucket.ready.add(param)
        self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].full():
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1

    def _launch(self, bucket):
        bucket.pack()
        self._mark("start", bucket.index)
        bucket.work = self._dist.all_reduce(from_numpy(bucket.flat), group=self.process_group,
                                            async_op=True)

    def _finish_backward(self):
        """At the end of backward: start what is left, wait for all reductions, average and
        write the gradients back."""
        self._mark("end_of_backward")
        self._expect_backward = False
        self._callback_queued = False
        missing = [p for b in self._buckets for p in b.params if p not in b.ready]
        if missing and not self.find_unused_parameters:
            for bucket in self._buckets[:self._next_bucket]:
                bucket.work.wait()
            names = {p: n for n, p in self.module.named_parameters()}
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new "
                "one. This error indicates that your module has parameters that were not used in "
                "producing loss. You can enable unused parameter detection by passing the keyword "
                "argument `find_unused_parameters=True` to "
                "`ember.nn.parallel.DistributedDataParallel`. Parameters which did not receive "
                f"grad: {', '.join(names.get(p, '?') for p in missing)}")
        used = self._globally_used() if self.find_unused_parameters else None
        for bucket in self._buckets[self._next_bucket:]:
            bucket.ready.update(bucket.params)
        self._launch_ready_buckets()
        for bucket in self._buckets:
            self._mark("wait", bucket.index)
            bucket.work.wait()
            self._mark("waited", bucket.index)
            bucket.flat /= self._world_size
            bucket.unpack(used)

    def _globally_used(self):
        """The parameters that got a gradient on some rank (one all-reduce of a 0/1 mask)."""
        order = [p for b in self._buckets for p in b.params]
        mask = np.array([p in self._bucket_of[p].ready for p in order], dtype=np.int32)
        self._dist.all_reduce(from_numpy(mask), op=self._dist.ReduceOp.MAX, group=self.process_group)
        return {p for p, m in zip(order, mask) if m}

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel cannot be pickled: pickle its .module")
