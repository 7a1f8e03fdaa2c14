"""``out_dtype=`` of mm, bmm, addmm and baddbmm. torch's CPU build has no kernel for these
overloads (its CUDA build has), so the oracle is torch in two parts: its dtype rules and error
messages from its meta kernels (``device="meta"``), and its values from the same product computed
in float32 on float32 copies of the operands (what the float32-output kernels compute)."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
SHAPES = {"mm": ((3, 4), (4, 5)), "bmm": ((2, 3, 4), (2, 4, 5)),
          "addmm": ((5,), (3, 4), (4, 5)), "baddbmm": ((2, 3, 5), (2, 3, 4), (2, 4, 5))}
HALF = ["float16", "bfloat16"]


def _operands(lib, op, dtype, bias_dtype=None):
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES[op]]
    out = [lib.tensor(a).to(getattr(lib, dtype)) for a in arrays]
    if bias_dtype is not None:
        out[0] = out[0].to(getattr(lib, bias_dtype))
    return out


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", sorted(SHAPES))
def test_half_operands_give_the_float32_product(op, dtype):
    kwargs = {"beta": 0.5, "alpha": 2.0} if op.startswith(("addmm", "baddbmm")) else {}
    ember_ops = _operands(ember, op, dtype)
    torch_ops = [torch.tensor(t.float().numpy()).to(getattr(torch, dtype)) for t in ember_ops]
    got = getattr(ember, op)(*ember_ops, out_dtype=ember.float32, **kwargs)
    expected = getattr(torch, op)(*[t.float() for t in torch_ops], **kwargs)
    meta = getattr(torch, op)(*[t.to("meta") for t in torch_ops], out_dtype=torch.float32,
                              **kwargs) if op != "baddbmm" else expected
    assert got.dtype == ember.float32 and meta.dtype == torch.float32
    assert tuple(got.shape) == tuple(meta.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    rounded = getattr(ember, op)(*ember_ops, **kwargs)
    assert rounded.dtype == getattr(ember, dtype)   # without out_dtype: rounded to the inputs'


@pytest.mark.parametrize("op", ["mm", "bmm", "addmm"])
def test_out_dtype_positional_and_same_dtype(op):
    ops = _operands(ember, op, "float32")
    plain = getattr(ember, op)(*ops)
    np.testing.assert_array_equal(getattr(ember, op)(*ops, ember.float32).numpy(), plain.numpy())


@pytest.mark.parametrize("op", ["mm", "bmm", "addmm"])
@pytest.mark.parametrize("dtype,out_dtype", [("float32", "float16"), ("float64", "float32"),
                                             ("float16", "float64"), ("float32", "bfloat16")])
def test_other_out_dtypes_raise_as_torch(op, dtype, out_dtype):
    ops = _operands(torch, op, dtype)
    with pytest.raises(RuntimeError) as expected:
        getattr(torch, op)(*[t.to("meta") for t in ops], out_dtype=getattr(torch, out_dtype))
    eops = _operands(ember, op, dtype)
    with pytest.raises(RuntimeError) as got:
        getattr(ember, op)(*eops, out_dtype=getattr(ember, out_dtype))
    assert str(got.value) == str(expected.value)


def test_float32_bias_and_a_half_bias_with_float32_out():
    for bias_dtype in ("float32", "bfloat16"):
        mats = _operands(ember, "addmm", "bfloat16", bias_dtype)
        got = ember.addmm(*mats, out_dtype=ember.float32, beta=0.5)
        expected = torch.addmm(*[torch.tensor(t.float().numpy()) for t in mats], beta=0.5)
        assert got.dtype == ember.float32
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_no_derivative_as_torch():
    a = ember.randn(3, 4).half().requires_grad_()
    b = ember.randn(4, 5).half()
    out = ember.mm(a, b, out_dtype=ember.float32)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::mm is not implemented"):
        out.sum().backward()
    ta = torch.randn(3, 4, dtype=torch.half, device="meta", requires_grad=True)
    tout = torch.mm(ta, torch.randn(4, 5, dtype=torch.half, device="meta"), out_dtype=torch.float32)
    with pytest.raises(RuntimeError, match="derivative for aten::mm is not implemented"):
        tout.sum().backward()
