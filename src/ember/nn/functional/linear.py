"""Affine maps: ``linear`` and ``bilinear``."""
from ...ops.linalg import addmm, affine_rows_untracked, einsum, matmul
from ...amp.policy import autocast_policy
from ..._torch_function import override_or_raise

__all__ = ["linear", "bilinear"]


@autocast_policy("lower")
def linear(input, weight, bias=None):
    """Applies the affine map ``y = x A^T + b``."""
    try:
        in_shape, w_shape = input._data.shape, weight._data.shape
        if in_shape and len(w_shape) == 2 and in_shape[-1] != w_shape[1]:
            rows = input.numel() // in_shape[-1] if in_shape[-1] else 0
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{in_shape[-1]} "
                               f"and {w_shape[1]}x{w_shape[0]})")
        if bias is not None and len(w_shape) == 2 and bias._data.ndim == 1 and in_shape:
            return _addmm_rows(input, weight, bias)
        out = matmul(input, weight.t() if weight.ndim == 2 else weight)
        if bias is not None:
            out = out + bias
        return out
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(linear, error, input, weight, bias)


def _addmm_rows(input, weight, bias):
    """``bias + x A^T`` as one addmm over the rows of ``input`` (the bias added in place to
    the fresh product), torch's ``AddmmBackward0`` (under a view for other than 2-D input)."""
    if input.ndim == 2:
        untracked = affine_rows_untracked(input, weight, bias)
        return untracked if untracked is not None else addmm(bias, input, weight.t())
    rows = addmm(bias, input.reshape(-1, input.shape[-1]), weight.t())
    return rows.view(*input.shape[:-1], weight.shape[0])


@autocast_policy("native")
def bilinear(input1, input2, weight, bias=None):
    """Applies ``y = x1^T A x2 + b`` with ``A`` of shape (out, in1, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    if bias is not None:
        out = out + bias
    return out
