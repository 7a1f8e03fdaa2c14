"""Autograd Functions behind legacy layers (``CrossMapLRN2d``)."""
from ..autograd.function import Function
from ..ops.creation import arange
from ..ops.reduce import cumsum
from . import functional as F

__all__ = ["CrossMapLRN2d"]


def _window_matrix(channels, size, like):
    """(C, C) 0/1: which channels' squares enter channel c's scale. Torch's running window
    adds channel ``c + pre_pad - 1`` and drops channel ``c - pre_pad`` only once ``c`` is past
    ``pre_pad``, so channel 0 stays in every window; this keeps that."""
    pre_pad = int((size - 1) / 2 + 1)
    c = arange(channels, device=like.device).unsqueeze(1)
    j = arange(channels, device=like.device).unsqueeze(0)
    included = (j <= (c + pre_pad - 1).clamp(max=channels - 1)) & ((j == 0) | (j > c - pre_pad))
    return included.to(like.dtype)


class CrossMapLRN2d(Function):
    """The autograd Function of ``nn.CrossMapLRN2d``."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        window = _window_matrix(input.shape[1], size, input)
        sums = (input.pow(2).movedim(1, -1) @ window.t()).movedim(-1, 1)
        scale = sums * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size, alpha, beta = ctx.size, ctx.alpha, ctx.beta
        n, channels, h, w = input.shape
        before = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        padded = F.pad(ratio, (0, 0, 0, 0, before, size - 1 - before))
        totals = cumsum(padded, 1)
        totals = F.pad(totals, (0, 0, 0, 0, 1, 0))
        accum = totals[:, size:size + channels] - totals[:, :channels]
        grad_input = scale.pow(-beta) * grad_output - (2 * alpha * beta / size) * input * accum
        return grad_input, None, None, None, None
