"""Flat buffers: how an optimizer step updates a group's parameters with a few whole-array
operations.

Each group's parameters that have a gradient (of one dtype) are laid end to end: the
optimizer's per-element state (``exp_avg``, ``momentum_buffer``, ...) lives in one flat array
per key, and ``self.state[p][key]`` is a view into it, so an update is a few whole-array NumPy
operations however many tensors the group holds. Per-parameter scalar state (``step``, ...) is a
small vector whose elements are 0-d views. The layout is rebuilt whenever the set of parameters
with gradients or the state objects change (``load_state_dict``, a new parameter).

When a group's tensors are few and large, gathering their gradients into one array costs more
than a few whole-array operations per tensor: optimizers whose update never writes into the
gradient then update each parameter in place from its own ``.grad`` and per-parameter state
(``Flat(direct=True)``). Both paths run the same element-wise operations, so their results are
bit-identical.

A large update (``BLOCKED_MIN_SIZE`` elements or more) runs ``_update`` on cache-sized blocks of
its arrays, so that a block's operands stay in cache between its few element-wise operations.
Element-wise operations on disjoint slices give the same bits as on the whole arrays, so the
result is bit-identical to one whole-array update.
"""
import itertools
import threading

import numpy as np

from .._backend import namespace_of, to_device_of
from .._tensor import _make
from ._flat_ops import add_scaled_

# Mean elements per tensor from which a layout updates each parameter in place rather than
# through gathered flat buffers (a gather copy then costs more than the per-tensor calls).
DIRECT_MIN_MEAN_SIZE = 32768
# Elements from which an update runs in blocks of BLOCK_SIZE.
BLOCKED_MIN_SIZE = 327680
BLOCK_SIZE = 65536

_scratch_lock = threading.Lock()


def flat_view(array):
    """``array`` as a 1-D view, or None when it is not a contiguous NumPy array."""
    if isinstance(array, np.ndarray) and array.flags.c_contiguous:
        return array.reshape(-1)
    return None


def few_large(params):
    """Whether ``params`` are large enough on average to update one by one."""
    total = sum(p._data.size for p in params)
    return total >= DIRECT_MIN_MEAN_SIZE * len(params)


def layouts_match(flats, with_grad, state):
    if sum(len(f.params) for f in flats) != len(with_grad):
        return False
    ids = {id(p) for p in with_grad}
    for flat in flats:
        if not flat.still_valid(ids, state):
            return False
    return True


class Flat:
    """One group's parameters (of one dtype) laid end to end, with their state."""

    def __init__(self, params, states, keys, scalar_keys, fresh_ids, direct=False):
        self.params = params
        self.direct = direct
        self.states = states
        self.shapes = [p._data.shape for p in params]
        self.sizes = [p._data.size for p in params]
        self.offsets = list(itertools.accumulate([0] + self.sizes))
        first = params[0]._data
        self.xp = xp = namespace_of(first)
        self.dtype = first.dtype
        total = self.offsets[-1]
        self.param = None
        self._scratch = []
        if direct:  # per-parameter state stays where it is; scratch per parameter
            self.grad = None
            self.buf = {key: None for key in keys}
            self._param_scratch = [[] for _ in params]
        else:
            self.grad = xp.empty(total, dtype=self.dtype)
            self.buf = {key: self._adopt_buffer(key, total) for key in keys}
        self.scalar = {key: self._adopt_scalars(key) for key in scalar_keys}
        self.fresh = [i for i, p in enumerate(params) if id(p) in fresh_ids]
        self._owned = [(st, key, st[key]) for st in states for key in (*keys, *scalar_keys)]

    def views(self, flat):
        return [flat[o:o + n].reshape(s) for o, n, s in zip(self.offsets, self.sizes, self.shapes)]

    def _adopt_buffer(self, key, total):
        flat = self.xp.empty(total, dtype=self.dtype)
        for st, view in zip(self.states, self.views(flat)):
            view[...] = st[key]._data
            st[key] = _make(view)
        return flat

    def _adopt_scalars(self, key):
        like = self.params[0]._data  # scalars (``step``) live with the parameters' data
        values = [to_device_of(st[key]._data, like) for st in self.states]
        vec = self.xp.asarray(self.xp.stack(values)).reshape(-1).copy()
        for i, st in enumerate(self.states):
            st[key] = _make(vec[i:i + 1].reshape(()))
        return vec

    def still_valid(self, ids, state):
        for p, st in zip(self.params, self.states):
            if id(p) not in ids or state.get(p) is not st:
                return False
        for st, key, t in self._owned:
            if st.get(key) is not t:
                return False
        return True

    def scalars_uniform(self):
        if len(self.params) == 1:
            return True
        for vec in self.scalar.values():
            if vec.min() != vec.max() and not self.xp.isnan(vec).any():
                return False
        return True

    def gather_grads(self, maximize):
        xp = self.xp
        xp.concatenate([p._grad._data.reshape(-1) for p in self.params], out=self.grad,
                       casting="same_kind")
        if maximize:
            xp.negative(self.grad, out=self.grad)

    def gather_params(self):
        if self.param is None:
            self.param = self.xp.empty_like(self.grad)
        self.xp.concatenate([p._data.reshape(-1) for p in self.params], out=self.param)
        return self.param

    def scratch(self, i):
        while len(self._scratch) <= i:
            self._scratch.append(self.xp.empty_like(self.grad))
        return self._scratch[i]

    def param_segments(self):
        if self.direct:
            grads = [p._grad._data for p in self.params]
            bufs = {k: [st[k]._data for st in self.states] for k in self.buf}
            scratch = self._param_scratch
        else:
            grads = self.views(self.grad)
            bufs = {k: self.views(v) for k, v in self.buf.items()}
            scratch = [[] for _ in self.params]
        for i, p in enumerate(self.params):
            yield ParamSegment(self, p, grads[i], {k: v[i] for k, v in bufs.items()},
                                {k: v[i:i + 1] for k, v in self.scalar.items()}, i in self.fresh,
                                scratch[i])


class FlatSegment:
    """A whole flat layout, seen by an optimizer's ``_update``."""

    def __init__(self, flat):
        self.flat = flat
        self.xp = flat.xp
        self.grad = flat.grad
        self.buf = flat.buf
        self.scalar = {k: v[:1] for k, v in flat.scalar.items()}
        self.size = flat.offsets[-1]
        self._gathered = False

    def blockable(self):
        return all(flat_view(p._data) is not None for p in self.flat.params)

    def param_pieces(self, start, stop):
        """(start, stop, 1-D parameter view) of the parameters overlapping [start, stop),
        with positions relative to ``start``."""
        f = self.flat
        pieces = []
        for p, lo, hi in zip(f.params, f.offsets, f.offsets[1:]):
            a, b = max(lo, start), min(hi, stop)
            if a < b:
                pieces.append((a - start, b - start, p._data.reshape(-1)[a - lo:b - lo]))
        return pieces

    def fresh_ranges(self):
        f = self.flat
        return [(f.offsets[i], f.offsets[i + 1]) for i in f.fresh]

    def param(self):
        """The parameters as one array, to read and update in place."""
        if not self._gathered:
            self.flat.gather_params()
            self._gathered = True
        return self.flat.param

    def sub_param(self, update):
        """Parameters -= update."""
        if self._gathered:
            self.flat.param -= update
            return
        for p, view in zip(self.flat.params, self.flat.views(update)):
            p._data -= view

    def add_to_param(self, update, alpha):
        """Parameters += alpha * update (``add_(update, alpha=alpha)``)."""
        if self._gathered:
            add_scaled_(self.xp, self.flat.param, alpha, update)
            return
        for p, view in zip(self.flat.params, self.flat.views(update)):
            add_scaled_(self.xp, p._data, alpha, view)

    def scratch(self, i):
        return self.flat.scratch(i)

    def fresh_views(self, key):
        """(state view, grad view) pairs of the parameters whose state was just created."""
        f = self.flat
        return [(f.buf[key][f.offsets[i]:f.offsets[i + 1]], self.grad[f.offsets[i]:f.offsets[i + 1]])
                for i in f.fresh]

    def finish(self):
        f = self.flat
        for vec in f.scalar.values():
            vec[1:] = vec[0]
        if self._gathered:
            for p, view in zip(f.params, f.views(f.param)):
                p._data[...] = view


class ParamSegment:
    """One parameter of a flat layout, used when per-parameter scalar state differs."""

    def __init__(self, flat, p, grad, buf, scalar, fresh, scratch):
        self.xp = flat.xp
        self.p = p
        self.grad = grad
        self.buf = buf
        self.scalar = scalar
        self.size = p._data.size
        self._fresh = fresh
        self._scratch = scratch

    def blockable(self):
        return all(flat_view(a) is not None
                   for a in (self.p._data, self.grad, *self.buf.values()))

    def param_pieces(self, start, stop):
        return [(0, stop - start, self.p._data.reshape(-1)[start:stop])]

    def fresh_ranges(self):
        return [(0, self.size)] if self._fresh else []

    def param(self):
        return self.p._data

    def sub_param(self, update):
        self.p._data -= update

    def add_to_param(self, update, alpha):
        add_scaled_(self.xp, self.p._data, alpha, update)

    def scratch(self, i):
        while len(self._scratch) <= i:
            self._scratch.append(self.xp.empty(self.p._data.shape, dtype=self.p._data.dtype))
        return self._scratch[i]

    def fresh_views(self, key):
        return [(self.buf[key], self.grad)] if self._fresh else []


class BlockSegment:
    """Elements [start, stop) of a segment; its scalar state is a private copy (every block
    computes the same), written back once all blocks are done."""

    def __init__(self, seg, start, stop, scalar=None):
        self.xp = seg.xp
        self.seg = seg
        self.start, self.stop = start, stop
        self.grad = flat_view(seg.grad)[start:stop]
        self.buf = {k: flat_view(v)[start:stop] for k, v in seg.buf.items()}
        self.scalar = {k: v.copy() for k, v in seg.scalar.items()} if scalar is None else scalar
        self._param = None

    def blocks(self):
        """This range in BLOCK_SIZE pieces, sharing this block's scalar state."""
        for start in range(self.start, self.stop, BLOCK_SIZE):
            block = BlockSegment(self.seg, start, min(start + BLOCK_SIZE, self.stop),
                                  {k: v.copy() for k, v in self.scalar.items()})
            yield block
        for key, value in block.scalar.items():
            self.scalar[key][...] = value

    def _pieces(self):
        return self.seg.param_pieces(self.start, self.stop)

    def param(self):
        """The block's parameters as one array, to read and update in place."""
        if self._param is None:
            pieces = self._pieces()
            if len(pieces) == 1:
                self._param = pieces[0][2]
            else:
                self._param = self.xp.concatenate([view for _, _, view in pieces])
        return self._param

    def sub_param(self, update):
        if self._param is not None:
            self._param -= update
            return
        for lo, hi, view in self._pieces():
            view -= update[lo:hi]

    def add_to_param(self, update, alpha):
        if self._param is not None:
            add_scaled_(self.xp, self._param, alpha, update)
            return
        for lo, hi, view in self._pieces():
            add_scaled_(self.xp, view, alpha, update[lo:hi])

    def scratch(self, i):
        with _scratch_lock:
            whole = self.seg.scratch(i)
        return flat_view(whole)[self.start:self.stop]

    def fresh_views(self, key):
        views = []
        for lo, hi in self.seg.fresh_ranges():
            a, b = max(lo, self.start) - self.start, min(hi, self.stop) - self.start
            if a < b:
                views.append((self.buf[key][a:b], self.grad[a:b]))
        return views

    def finish(self):
        """Write a gathered copy of the parameters back."""
        if self._param is not None and len(self._pieces()) > 1:
            for lo, hi, view in self._pieces():
                view[...] = self._param[lo:hi]
