"""``pad``: constant (any number of dims, negative amounts crop), reflect, replicate and
circular padding (the last 1 to 3 dims of a batched or unbatched input).

Constant padding is one node whose backward is constant padding by the negated amounts;
the other modes read the input at an index array per padded dim, through ember indexing.
"""
from ...ops._common import Node, Tensor, complex_autograd, make, namespace_of, record
from ...amp.op_lists import pad_runs_in_fp32
from ...amp.policy import autocast_policy

__all__ = ["pad"]


class ConstantPadNdBackward0(Node):
    __slots__ = ()
    saved_fields = {"pad": "pad"}

    def jvp(self, tangent):
        return _constant_pad(tangent, list(self.pad), 0)

    def backward(self, grad):
        return (_constant_pad(grad, [-p for p in self.pad], 0),)


def _constant_pad(input, pad, value):
    xp = namespace_of(input._data)
    data = input._data
    nd = data.ndim
    widths = [(0, 0)] * nd
    crops = [slice(None)] * nd
    for i in range(len(pad) // 2):
        dim = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        widths[dim] = (max(lo, 0), max(hi, 0))
        crops[dim] = slice(max(-lo, 0), data.shape[dim] - max(-hi, 0))
        if data.shape[dim] + lo + hi < 0:
            raise RuntimeError(f"The input size {data.shape[dim]}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size, which is invalid. Check dimension "
                               f"{dim} of your input.")
    data = data[tuple(crops)]
    if any(lo or hi for lo, hi in widths):
        data = xp.pad(data, widths, mode="constant", constant_values=value)
    else:
        data = data.copy()
    out = make(data)
    node = record(ConstantPadNdBackward0, (input,), out)
    if node is not None:
        node.pad = tuple(pad)
    return out


def _index(xp, size, lo, hi, mode):
    """Which input position each output position reads, along one padded dim."""
    j = xp.arange(-lo, size + hi)
    if mode == "replicate":
        return xp.clip(j, 0, size - 1)
    if mode == "circular":
        return j % size
    period = 2 * (size - 1)
    j = xp.abs(j) % period if period else j * 0
    return xp.where(j >= size, period - j, j)


_NOT_SUPPORTED = ("Padding size {n} is not supported for {d}D input tensor.\n"
                  "Supported combinations for non-constant padding:\n"
                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_mode_pad(input, pad, mode):
    n, d = len(pad), input.dim()
    if not (n in (2, 4, 6) and d in (n // 2 + 1, n // 2 + 2)):
        raise NotImplementedError(_NOT_SUPPORTED.format(n=n, d=d))
    for i in range(n // 2):
        size = input.shape[d - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {d - 1 - i} of "
                               f"input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")


@autocast_policy("fp32", only_if=pad_runs_in_fp32)
def pad(input, pad, mode="constant", value=None):
    """Pads tensor. Padding sizes start from the last dimension and move forward:
    ``(left, right, top, bottom, ...)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length " f"{len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    _check_mode_pad(input, pad, mode)
    xp = namespace_of(input._data)
    out = input
    nd = input.dim()
    if mode == "circular" and any(p < 0 for p in pad):
        out = _constant_pad(out, [min(p, 0) for p in pad], 0)
        pad = [max(p, 0) for p in pad]
    for i in range(len(pad) // 2):
        dim = nd - 1 - i
        index = make(_index(xp, out.shape[dim], pad[2 * i], pad[2 * i + 1], mode))
        out = out[(slice(None),) * dim + (index,)]
    return out

complex_autograd(ConstantPadNdBackward0)   # linear: the same backward for complex tensors
