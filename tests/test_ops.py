"""Generic oracle tests over the op table: every entry's forward values, gradients,
float64 gradcheck and second-order gradients are checked against PyTorch (as recorded by another
Python where this one has no torch: tests/op_db/oracle.py)."""
import numpy as np
import pytest
import torch

import ember
import torch_absent
from op_db import Arg
from op_db.cases import Built, NoGradient, backward_inputs, cases, float_outputs, outputs, second_order
from op_db.oracle import Expected, expected, recorded, run_torch

_outputs = outputs


def _float_outputs(outs, op):
    return float_outputs(outs, op, ember if any(isinstance(o, ember.Tensor) for o in outs) else torch)


def _cases(kind):
    """pytest parameters for one generic test, with the entry's skips."""
    for op, sample, case_id, dtype in cases(kind):
        marks = [pytest.mark.skip(reason=op.skip[kind])] if kind in op.skip else []
        yield pytest.param(op, sample, dtype, id=case_id, marks=marks)


def _torch(kind, op, sample, dtype, built):
    """torch's result for the case (see ``oracle.run_torch``)."""
    if torch_absent.ABSENT:
        return recorded(kind, built.case_id, built)
    return run_torch(kind, op, sample, dtype)


def _built(op, sample, dtype, request):
    built = Built(op, sample, dtype)
    built.case_id = request.node.callspec.id
    return built


def _to_np(t):
    data = t.detach().cpu()._data
    if str(data.dtype) == "bfloat16":
        data = data.astype(np.float32)
    return np.asarray(data)


def _compare(e, t, atol, rtol, what):
    """ember's ``e`` against torch's ``t`` (a torch result or its ``expected`` form)."""
    t = expected(t)
    if isinstance(t, Expected):
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e).__name__}"
        assert tuple(e.shape) == t.shape, f"{what}: shape {tuple(e.shape)} != torch {t.shape}"
        assert str(e.dtype).split(".")[-1] == t.dtype, f"{what}: dtype {e.dtype} != torch {t.dtype}"
        np.testing.assert_allclose(_to_np(e), t.values, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        assert not isinstance(e, ember.Tensor), f"{what}: ember gave a Tensor where torch gave {type(t)}"
        np.testing.assert_allclose(e, t, atol=atol, rtol=rtol, err_msg=what)


def _skip_unsupported(op, sample, dtype, device):
    if device == "cuda" and "bfloat16" in (dtype, *(a.dtype for a in sample.args if isinstance(a, Arg))):
        pytest.skip("CuPy has no bfloat16: ember keeps bfloat16 tensors on the CPU")
    if device == "cuda" and op.cuda_undefined:
        pytest.skip(f"{op.name} on CUDA: {op.cuda_undefined}")


@pytest.mark.parametrize("op,sample,dtype", list(_cases("forward")))
def test_forward(op, sample, dtype, device, request):
    _skip_unsupported(op, sample, dtype, device)
    built = _built(op, sample, dtype, request)
    touts = _torch("forward", op, sample, dtype, built)
    _, eargs = built.make(ember, op, sample, dtype, False, device)
    eouts = outputs(op.fn(ember, *eargs, **sample.kwargs))
    atol, rtol = op.tolerances(dtype)
    assert len(touts) == len(eouts)
    for i, (e, t) in enumerate(zip(eouts, touts)):
        _compare(e, t, atol, rtol, f"{op.name} output {i}")


@pytest.mark.parametrize("op,sample,dtype", list(_cases("grad")))
def test_grad(op, sample, dtype, device, request):
    _skip_unsupported(op, sample, dtype, device)
    built = _built(op, sample, dtype, request)
    n_leaves, n_outs, tg = _torch("grad", op, sample, dtype, built)
    eleaves, eouts, egrads = backward_inputs(ember, op, sample, dtype, built, device=device)
    assert n_leaves == len(eleaves) and n_outs == len(eouts)
    if tg is NoGradient:
        pytest.skip("no differentiable output or input in this sample")
    eg = ember.autograd.grad(eouts, eleaves, egrads, allow_unused=True)
    atol, rtol = op.tolerances(dtype)
    atol = op.grad_atol or atol
    for i, (e, t) in enumerate(zip(eg, tg)):
        if t is None:
            assert e is None or not np.any(_to_np(e)), f"input {i}: torch gives no gradient"
            continue
        assert e is not None, f"{op.name}: no gradient for input {i}"
        _compare(e, t, atol, rtol, f"{op.name} grad of input {i}")


@pytest.mark.parametrize("op,sample,dtype", list(_cases("gradcheck")))
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


@pytest.mark.parametrize("op,sample,dtype", list(_cases("gradgrad")))
def test_gradgrad(op, sample, dtype, request):
    built = _built(op, sample, dtype, request)
    tres = _torch("gradgrad", op, sample, dtype, built)
    if tres is NoGradient:
        pytest.skip("no differentiable output or input in this sample")
    eres = second_order(ember, op, sample, dtype, built)
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
