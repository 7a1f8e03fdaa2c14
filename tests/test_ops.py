"""Generic oracle tests over the op table: every entry's forward values, gradients,
float64 gradcheck and second-order gradients are checked against PyTorch."""
import numpy as np
import pytest
import torch

import ember
from op_db import OPS, Arg
from op_db.common import make_array

TORCH_DTYPES = {name: getattr(torch, name) for name in
                ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
                 "int64", "bool", "complex64", "complex128")}
EMBER_DTYPES = {name: getattr(ember, name) for name in TORCH_DTYPES}


def _differentiable(sample):
    return any(isinstance(a, Arg) and a.requires_grad and a.dtype is None for a in sample.args)


def _wanted(op, kind):
    return {"forward": True, "grad": op.grad, "gradcheck": op.grad and op.gradcheck,
            "gradgrad": op.grad and op.gradgrad}[kind]


def _cases(kind):
    """Parameters for one generic test: (op, sample, dtype), leaving out what an entry opts out
    of (non-differentiable ops and samples have no gradient cases)."""
    for op in OPS:
        if not _wanted(op, kind):
            continue
        for si, sample in enumerate(op.samples):
            if kind != "forward" and not _differentiable(sample):
                continue
            for dtype in op.dtypes:
                if kind != "forward" and dtype not in ("float32", "float64"):
                    continue
                if kind == "gradcheck" and dtype != "float64":
                    continue
                sid = sample.name or str(si)
                marks = []
                if kind in op.skip:
                    marks.append(pytest.mark.skip(reason=op.skip[kind]))
                yield pytest.param(op, sample, dtype, id=f"{op.name}-{sid}-{dtype}", marks=marks)


class Built:
    """The same inputs built for both libraries."""

    def __init__(self, op, sample, dtype, seed=0):
        rng = np.random.default_rng(seed)
        self.arrays = [make_array(a, dtype, rng) if isinstance(a, Arg) else None for a in sample.args]
        self.rng = rng

    def make(self, lib, op, sample, dtype, want_grad, device="cpu"):
        dtypes = TORCH_DTYPES if lib is torch else EMBER_DTYPES
        place = {} if lib is torch else {"device": device}
        leaves, args = [], []
        for arg, arr in zip(sample.args, self.arrays):
            if not isinstance(arg, Arg):
                args.append(arg)
                continue
            dt = dtypes[arg.dtype or dtype]
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


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def _to_np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy(force=True)  # also reads torch's ZeroTensor gradients
    data = t.detach().cpu()._data
    if str(data.dtype) == "bfloat16":
        data = data.astype(np.float32)
    return np.asarray(data)


def _compare(e, t, atol, rtol, what):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e).__name__}"
        assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != torch {tuple(t.shape)}"
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {e.dtype} != torch {t.dtype}"
        np.testing.assert_allclose(_to_np(e), _to_np(t), atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        assert not isinstance(e, ember.Tensor), f"{what}: ember gave a Tensor where torch gave {type(t)}"
        np.testing.assert_allclose(e, t, atol=atol, rtol=rtol, err_msg=what)


def _float_outputs(outs, op):
    if op.output_index is not None:
        return [outs[op.output_index]]
    return [o for o in outs if (isinstance(o, (torch.Tensor, ember.Tensor)) and o.is_floating_point()
                                and o.requires_grad)]


def _skip_unsupported(sample, dtype, device):
    if device == "cuda" and "bfloat16" in (dtype, *(a.dtype for a in sample.args if isinstance(a, Arg))):
        pytest.skip("CuPy has no bfloat16: ember keeps bfloat16 tensors on the CPU")


@pytest.mark.parametrize("op,sample,dtype", list(_cases("forward")))
def test_forward(op, sample, dtype, device):
    _skip_unsupported(sample, dtype, device)
    built = Built(op, sample, dtype)
    _, targs = built.make(torch, op, sample, dtype, False)
    _, eargs = built.make(ember, op, sample, dtype, False, device)
    expected = op.fn(torch, *targs, **sample.kwargs)
    got = op.fn(ember, *eargs, **sample.kwargs)
    atol, rtol = op.tolerances(dtype)
    touts, eouts = _outputs(expected), _outputs(got)
    assert len(touts) == len(eouts)
    for i, (e, t) in enumerate(zip(eouts, touts)):
        _compare(e, t, atol, rtol, f"{op.name} output {i}")


def _backward(lib, op, sample, dtype, built, seed=1, device="cpu"):
    leaves, args = built.make(lib, op, sample, dtype, True, device)
    outs = _float_outputs(_outputs(op.fn(lib, *args, **sample.kwargs)), op)
    rng = np.random.default_rng(seed)
    place = {} if lib is torch else {"device": device}
    grads = [lib.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype, **place) for o in outs]
    return leaves, outs, grads


@pytest.mark.parametrize("op,sample,dtype", [c for c in _cases("grad")])
def test_grad(op, sample, dtype, device):
    _skip_unsupported(sample, dtype, device)
    if not op.grad:
        pytest.skip("op is not differentiable")
    built = Built(op, sample, dtype)
    tleaves, touts, tgrads = _backward(torch, op, sample, dtype, built)
    eleaves, eouts, egrads = _backward(ember, op, sample, dtype, built, device=device)
    assert len(tleaves) == len(eleaves) and len(touts) == len(eouts)
    if not touts or not tleaves:
        pytest.skip("no differentiable output or input in this sample")
    tg = torch.autograd.grad(touts, tleaves, tgrads, allow_unused=True)
    eg = ember.autograd.grad(eouts, eleaves, egrads, allow_unused=True)
    atol, rtol = op.tolerances(dtype)
    atol = op.grad_atol or atol
    for i, (e, t) in enumerate(zip(eg, tg)):
        if t is None:
            assert e is None or not np.any(_to_np(e)), f"input {i}: torch gives no gradient"
            continue
        assert e is not None, f"{op.name}: no gradient for input {i}"
        _compare(e, t, atol, rtol, f"{op.name} grad of input {i}")


@pytest.mark.parametrize("op,sample,dtype", [c for c in _cases("gradcheck")])
def test_gradcheck(op, sample, dtype):
    if not (op.grad and op.gradcheck):
        pytest.skip("no gradcheck for this op")
    built = Built(op, sample, dtype)
    leaves, args = built.make(ember, op, sample, dtype, True)
    if not leaves:
        pytest.skip("no differentiable input")

    # gradcheck perturbs the leaves; rebuild the views from them on each call
    def fn(*ls):
        it = iter(ls)
        call_args = []
        for arg, a in zip(sample.args, args):
            if isinstance(arg, Arg) and arg.requires_grad and arg.dtype is None:
                leaf = next(it)
                a = leaf[..., ::2] if arg.noncontig else (leaf.transpose(-1, -2) if arg.transposed else leaf)
            call_args.append(a)
        outs = _float_outputs(_outputs(op.fn(ember, *call_args, **sample.kwargs)), op)
        return tuple(outs)
    assert ember.autograd.gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("op,sample,dtype", [c for c in _cases("gradgrad") if c.values[2] == "float64"])
def test_gradgrad(op, sample, dtype):
    if not (op.grad and op.gradgrad):
        pytest.skip("no second-order check for this op")
    built = Built(op, sample, dtype)
    results = []
    for lib in (torch, ember):
        leaves, outs, grads = _backward(lib, op, sample, dtype, built)
        if not outs or not leaves:
            pytest.skip("no differentiable output or input in this sample")
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
            results.append(None)
            continue
        results.append(lib.autograd.grad(total, leaves, allow_unused=True))
    tres, eres = results
    if tres is None:
        assert eres is None or all(e is None or not np.any(_to_np(e)) for e in eres)
        return
    assert eres is not None, "ember's first-order gradient does not depend on the inputs"
    for i, (e, t) in enumerate(zip(eres, tres)):
        if t is None:
            assert e is None or not np.any(_to_np(e)), f"second-order input {i}: torch gives none"
            continue
        assert e is not None, f"{op.name}: no second-order gradient for input {i}"
        _compare(e, t, 1e-8, 1e-6, f"{op.name} second-order grad of input {i}")
