"""The op table's generic test cases, and what is run for them on either library (``torch`` or
``ember``): the same inputs built for both, the outputs that are differentiated and the seeded
gradients of those outputs."""
import numpy as np

from . import OPS
from .common import Arg, make_array

KINDS = ("forward", "grad", "gradcheck", "gradgrad")


def differentiable(sample):
    return any(isinstance(a, Arg) and a.requires_grad and a.dtype is None for a in sample.args)


def _wanted(op, kind):
    return {"forward": True, "grad": op.grad, "gradcheck": op.grad and op.gradcheck,
            "gradgrad": op.grad and op.gradgrad}[kind]


def cases(kind):
    """``(op, sample, case_id, dtype)`` for one generic test, leaving out what an entry opts
    out of (non-differentiable ops and samples have no gradient cases)."""
    for op in OPS:
        if not _wanted(op, kind):
            continue
        for si, sample in enumerate(op.samples):
            if kind != "forward" and not differentiable(sample):
                continue
            for dtype in op.dtypes:
                if kind != "forward" and dtype not in ("float32", "float64"):
                    continue
                if kind in ("gradcheck", "gradgrad") and dtype != "float64":
                    continue
                yield op, sample, f"{op.name}-{sample.name or si}-{dtype}", dtype


class Built:
    """The same inputs built for both libraries."""

    def __init__(self, op, sample, dtype, seed=0):
        rng = np.random.default_rng(seed)
        self.arrays = [make_array(a, dtype, rng) if isinstance(a, Arg) else None for a in sample.args]
        self.rng = rng

    def make(self, lib, op, sample, dtype, want_grad, device=None):
        place = {} if device is None else {"device": device}
        leaves, args = [], []
        for arg, arr in zip(sample.args, self.arrays):
            if not isinstance(arg, Arg):
                args.append(arg)
                continue
            dt = getattr(lib, arg.dtype or dtype)
            rg = want_grad and arg.requires_grad and (arg.dtype is None)
            if arg.noncontig:
                big = np.stack([arr, arr + 0.5], axis=-1) if arr.ndim else np.stack([arr, arr])
                big = big.reshape(arr.shape[:-1] + (2 * arr.shape[-1],)) if arr.ndim else big
                leaf = lib.tensor(big, dtype=dt, requires_grad=rg, **place)
                x = leaf[..., ::2]
            elif arg.transposed:
                leaf = lib.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dt, requires_grad=rg, **place)
                x = leaf.transpose(-1, -2)
            else:
                leaf = lib.tensor(arr, dtype=dt, requires_grad=rg, **place)
                x = leaf
            if rg:
                leaves.append(leaf)
            args.append(x)
        return leaves, args

    def digest(self):
        """The inputs' values, to tell that a recording was made from the same ones."""
        return [None if a is None else (a.dtype.str, a.shape, a.tobytes()) for a in self.arrays]


def outputs(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def float_outputs(outs, op, lib):
    if op.output_index is not None:
        return [outs[op.output_index]]
    return [o for o in outs if (isinstance(o, lib.Tensor) and o.is_floating_point() and o.requires_grad)]


def backward_inputs(lib, op, sample, dtype, built, seed=1, device=None):
    """The leaves, the differentiable outputs and their seeded gradients."""
    leaves, args = built.make(lib, op, sample, dtype, True, device)
    outs = float_outputs(outputs(op.fn(lib, *args, **sample.kwargs)), op, lib)
    rng = np.random.default_rng(seed)
    place = {} if device is None else {"device": device}
    grads = [lib.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype, **place) for o in outs]
    return leaves, outs, grads


def second_order(lib, op, sample, dtype, built):
    """The gradient of a seeded weighting of the first-order gradients (taken with
    ``create_graph``) with respect to the leaves; None when the first-order gradients do not
    depend on them. Raises ``NoGradient`` for a sample without differentiable output or input."""
    leaves, outs, grads = backward_inputs(lib, op, sample, dtype, built)
    if not outs or not leaves:
        raise NoGradient
    first = lib.autograd.grad(outs, leaves, grads, create_graph=True, allow_unused=True)
    rng = np.random.default_rng(2)
    total = None
    for g in first:
        if g is None or not g.requires_grad:
            continue
        w = lib.tensor(rng.uniform(-1, 1, size=tuple(g.shape)), dtype=g.dtype)
        term = (g * w).sum()
        total = term if total is None else total + term
    if total is None:
        return None
    return lib.autograd.grad(total, leaves, allow_unused=True)


class NoGradient(Exception):
    """The sample has no differentiable output or input."""
