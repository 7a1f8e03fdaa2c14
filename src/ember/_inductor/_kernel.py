"""``FusedKernel``: one group of a captured graph's pointwise calls (and the sums or means that
end it), run as one generated C loop.

The kernel is specialized on the first call with each signature of its inputs (shapes,
strides, dtypes): that call runs the group's ops eagerly, which gives every intermediate's
dtype and shape by ember's own promotion rules, and the source is written, compiled (or found
in the cache) and kept with the sizes and strides to pass. Calls that a kernel cannot compute
(a dtype other than float32, float64 and bool, a tensor off the CPU, inputs that require grad
while grad mode is on, autocast on, a reduction of a value smaller than the loop) run the ops eagerly, as the graph did
before fusion."""
import ctypes

import numpy as np

from .. import Tensor
from ..amp import policy as amp_policy
from ..autograd.grad_mode import state
from ..nn.parameter import Parameter
from ..ops._common import make
from . import _compiler, config
from ._codegen import NAME, KernelSpec, source
from ._pointwise import C_TYPES, COMPARISONS
from .._backend.pointers import address

__all__ = ["FusedKernel", "Ref"]

_FALLBACK = object()
# the inputs a kernel computes on: plain tensors (a subclass, a vmap level's batched tensor, a
# tensor carrying a forward-mode tangent or a Python number runs the ops eagerly)
_PLAIN = frozenset({Tensor, Parameter})


class Ref:
    """An operand of a step: input ``index`` (``kind="in"``) or step ``index`` (``"v"``)."""

    __slots__ = ("kind", "index")

    def __init__(self, kind, index):
        self.kind = kind
        self.index = index

    def __repr__(self):
        return f"{self.kind}{self.index}"


class FusedKernel:
    """``calls``: the group's calls in order, as (fx op, target, args, kwargs) with ``Ref``s
    for the values; ``steps``: the pointwise ones described as (op, operands, params) and the
    reductions as ("reduce", kind, operand, dims, keepdim), one per call; ``outputs``: the
    steps whose values leave the group."""

    def __init__(self, calls, steps, outputs):
        self.calls = calls
        self.steps = steps
        self.outputs = outputs
        self._plans = {}

    def __repr__(self):
        ops = ", ".join(s[1] if s[0] == "reduce" else s[0] for s in self.steps)
        return f"FusedKernel({ops})"

    def run(self, *inputs):
        grad = state.grad_enabled
        for t in inputs:
            if t.__class__ not in _PLAIN or (grad and t._requires_grad) or \
                    t._fw_grad is not None:
                return self.eager(inputs)
        if amp_policy._threads_enabled:     # autocast chooses the ops' dtypes
            return self.eager(inputs)
        key = tuple((t.shape, t._data.strides, t.dtype) for t in inputs)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _plan(self, inputs)
            if plan is None:
                self._plans[key] = _FALLBACK
            return self.eager(inputs)
        if plan is _FALLBACK:
            return self.eager(inputs)
        return plan.run(inputs)

    def eager(self, inputs, everything=False):
        """The group's calls, op by op: its outputs (or every step's value)."""
        values = []

        def value(a):
            if isinstance(a, Ref):
                return inputs[a.index] if a.kind == "in" else values[a.index]
            if isinstance(a, (tuple, list)):
                return type(a)(value(x) for x in a)
            return a
        for op, target, args, kwargs in self.calls:
            args = [value(a) for a in args]
            kwargs = {k: value(v) for k, v in kwargs.items()}
            values.append(target(*args, **kwargs) if op == "call_function" else
                          getattr(args[0], target)(*args[1:], **kwargs))
        if everything:
            return values
        return tuple(values[i] for i in self.outputs)


class _Plan:
    __slots__ = ("fn", "sizes", "strides", "outputs", "numel", "finals")

    def __init__(self, fn, sizes, strides, outputs, numel, finals):
        self.fn = fn
        self.sizes = sizes
        self.strides = strides
        self.outputs = outputs          # (shape, dtype) of each array the kernel writes
        self.numel = numel
        # None (the arrays are the results), or per result (array, None or (kind, axes,
        # keepdim)): a sum or mean over leading dimensions, taken by NumPy after the loop
        self.finals = finals

    def run(self, inputs):
        outs = [np.empty(shape, dtype) for shape, dtype in self.outputs]
        addresses = [address(t._data) for t in inputs] + [address(o) for o in outs]
        ptrs = (ctypes.c_void_p * len(addresses))(*addresses)
        threads = 1
        if self.numel >= config.parallel_min_elements:
            from .._backend.parallel import get_num_threads
            threads = get_num_threads()
        self.fn(self.sizes, ptrs, self.strides, threads)
        if self.finals is None:
            return tuple(make(o) for o in outs)
        results = []
        for k, red in self.finals:
            out = outs[k]
            if red is not None:
                kind, axes, keepdim = red
                out = (out.sum if kind == "sum" else out.mean)(axis=axes, keepdims=keepdim)
            results.append(make(out))
        return tuple(results)


def _ctype(dtype):
    return C_TYPES.get(str(dtype).replace("ember.", ""))


def _plan(kernel, inputs):
    """The ``_Plan`` of this signature, or None where the kernel cannot compute it."""
    if config.cc is False or not all(isinstance(t, Tensor) and type(t._data) is np.ndarray
                                     for t in inputs):
        return None
    try:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            values = kernel.eager(inputs, everything=True)
    except Exception:       # the eager call raises again, with its own message, for the caller
        return None
    if not all(isinstance(v, Tensor) and type(v._data) is np.ndarray for v in values):
        return None
    types = [_ctype(v.dtype) for v in values]
    in_types = [_ctype(t.dtype) for t in inputs]
    if None in types or None in in_types or any(v.numel() == 0 for v in values):
        return None
    pointwise = [i for i, s in enumerate(kernel.steps) if s[0] != "reduce"]
    reductions = [i for i, s in enumerate(kernel.steps) if s[0] == "reduce"]
    for i in pointwise:
        op = kernel.steps[i][0]
        if types[i] == "unsigned char" and op not in COMPARISONS and op not in (
                "logical_not", "where"):
            return None         # arithmetic on bool (logical or/and in torch's rules)
    try:
        shape = np.broadcast_shapes(*[tuple(values[i].shape) for i in pointwise],
                                    *[tuple(t.shape) for t in inputs])
    except ValueError:
        return None
    reduced = None
    for i in reductions:
        _, kind, ref, dims, keepdim = kernel.steps[i]
        if ref.kind != "v" or tuple(values[ref.index].shape) != shape:
            return None
        nd = len(shape)
        if not nd or dims == ():
            return None
        dims = tuple(range(nd)) if dims is None else tuple(sorted({d % nd for d in dims}))
        if reduced is not None and reduced != dims:
            return None
        reduced = dims
    return _build_plan(kernel, inputs, values, types, in_types, shape, reduced)


def _broadcast_strides(array, shape):
    """Element strides of ``array`` broadcast to ``shape`` (0 along broadcast dimensions)."""
    pad = len(shape) - array.ndim
    out = [0] * pad
    for size, stride in zip(array.shape, array.strides):
        out.append(0 if size == 1 else stride // array.itemsize)
    return out


def _build_plan(kernel, inputs, values, types, in_types, shape, reduced):
    nd = len(shape)
    finals = None
    written = list(kernel.outputs)
    if reduced and nd - 1 not in reduced:
        # a sum over leading dimensions: the loop writes the summed value, NumPy sums it
        written, finals = [], []
        for i in kernel.outputs:
            step = kernel.steps[i]
            summed = step[2].index if step[0] == "reduce" else i
            if summed not in written:
                written.append(summed)
            finals.append((written.index(summed), (step[1], reduced, step[4]) if
                           step[0] == "reduce" else None))
        reduced = None
    operands = [_broadcast_strides(t._data, shape) for t in inputs]
    out_meta = []
    for i in written:
        v = values[i]
        dtype = v._data.dtype
        if kernel.steps[i][0] == "reduce":
            _, kind, ref, dims, keepdim = kernel.steps[i]
            full = [1 if d in reduced else s for d, s in enumerate(shape)]
            contiguous = np.empty(full, dtype=np.int8).strides
            operands.append([0 if d in reduced else contiguous[d] for d in range(nd)])
        else:      # an output smaller than the loop is written (the same value) repeatedly
            operands.append(_broadcast_strides(np.empty(v.shape, dtype=np.int8), shape))
        out_meta.append((tuple(v.shape), dtype))
    order = list(range(nd))
    if reduced:
        order = [d for d in order if d not in reduced] + list(reduced)
        n_outer = nd - len(reduced)
    sizes = [shape[d] for d in order]
    strides = [[s[d] for d in order] for s in operands]
    if reduced:
        outer = _collapse(sizes[:n_outer], [s[:n_outer] for s in strides])
        inner = _collapse(sizes[n_outer:], [s[n_outer:] for s in strides])
        if not inner[0]:
            inner = ([1], [[0] for _ in strides])
        sizes = outer[0] + inner[0]
        strides = [a + b for a, b in zip(outer[1], inner[1])]
        do = len(outer[0])
    else:
        sizes, strides = _collapse(sizes, strides)
        if not sizes:
            sizes, strides = [1], [[0] for _ in strides]
        do = len(sizes) - 1
    d = len(sizes)
    n_in = len(inputs)
    kinds = []
    for k, s in enumerate(strides):
        kinds.append("s" if not any(s) and k < n_in else "u" if s[-1] == 1 else
                     "z" if s[-1] == 0 else "g")
    index = {}
    steps = []
    for j, step in enumerate(kernel.steps):
        if step[0] == "reduce":
            continue
        op, operands_, params = step
        refs = []
        for a in operands_:
            if isinstance(a, Ref):
                refs.append(("in", a.index) if a.kind == "in" else ("v", index[a.index]))
            else:
                refs.append(("c", float(a)))
        index[j] = len(steps)
        steps.append((op, tuple(refs), tuple(sorted(params.items())), types[j]))
    outs = []
    for k, i in enumerate(written):
        step = kernel.steps[i]
        if step[0] == "reduce":
            outs.append((index[step[2].index], types[i], kinds[n_in + k], step[1]))
        else:
            outs.append((index[i], types[i], kinds[n_in + k], None))
    spec = KernelSpec([(t, k) for t, k in zip(in_types, kinds[:n_in])], steps, outs, d, do,
                      bool(reduced))
    fn = _compiler.load(source(spec), NAME)
    if fn is None:
        return None
    numel = 1
    for s in shape:
        numel *= s
    return _Plan(fn, (ctypes.c_int64 * d)(*sizes),
                 (ctypes.c_int64 * (d * len(strides)))(*[x for s in strides for x in s]),
                 out_meta, numel, finals)


def _collapse(sizes, strides):
    """Drop dimensions of size 1 and merge neighbours that every operand walks as one."""
    keep = [i for i, s in enumerate(sizes) if s != 1]
    sizes = [sizes[i] for i in keep]
    strides = [[s[i] for i in keep] for s in strides]
    i = len(sizes) - 1
    while i > 0:
        if all(s[i - 1] == s[i] * sizes[i] for s in strides):
            sizes[i - 1:i + 1] = [sizes[i - 1] * sizes[i]]
            for s in strides:
                s[i - 1:i + 1] = [s[i]]
        i -= 1
    return sizes, strides
