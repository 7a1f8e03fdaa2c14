"""The computation behind ``nn.CrossMapLRN2d``: torch's legacy cross-channel local response
normalization, with its own windows and hand-written gradient."""
from ...ops._common import Node, make, namespace_of, record
from ...ops.reduce import cumsum
from .padding import pad

__all__ = []


class CrossMapLRN2dBackward(Node):
    """Torch's hand-written gradient of the legacy normalization (not the exact derivative of
    its forward, whose windows keep channel 0 throughout)."""
    __slots__ = ()

    def backward(self, grad_output):
        input, scale = self.saved_tensors
        size, alpha, beta = self.size, self.alpha, self.beta
        channels = input.shape[1]
        output = scale.pow(-beta) * input
        before = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        totals = cumsum(pad(ratio, (0, 0, 0, 0, before, size - 1 - before)), 1)
        totals = pad(totals, (0, 0, 0, 0, 1, 0))
        accum = totals[:, size:size + channels] - totals[:, :channels]
        return (scale.pow(-beta) * grad_output - (2 * alpha * beta / size) * input * accum,)


def cross_map_lrn2d(input, size, alpha, beta, k):
    """``input * (k + alpha / size * window sums of input**2) ** -beta`` over channels, with
    torch's legacy windows; ``input`` is 4-D."""
    xp = namespace_of(input._data)
    data = input._data
    channels = data.shape[1]
    # channel c's window: up to channel c + pre_pad - 1; torch's running window drops channel
    # c - pre_pad only once c is past pre_pad, so channel 0 stays in every window
    pre_pad = int((size - 1) / 2 + 1)
    c = xp.arange(channels)[:, None]
    j = xp.arange(channels)[None, :]
    window = ((j <= xp.minimum(c + pre_pad - 1, channels - 1))
              & ((j == 0) | (j > c - pre_pad))).astype(data.dtype)
    sums = xp.moveaxis(xp.moveaxis(data * data, 1, -1) @ window.T, -1, 1)
    scale = sums * (alpha / size) + k
    out = make(scale ** -beta * data)
    node = record(CrossMapLRN2dBackward, (input,), out)
    if node is not None:
        node.size, node.alpha, node.beta = size, alpha, beta
        node.save(input, make(scale))
    return out
