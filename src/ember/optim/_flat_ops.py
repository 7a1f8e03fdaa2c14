"""Whole-array update kernels shared by the optimizers, written with ``out=`` so that an update
allocates nothing; each mirrors the rounding order of the torch op it stands for."""


def lerp_(xp, state, end, weight, tmp):
    """``state.lerp_(end, weight)`` with torch's two-sided formula."""
    xp.subtract(end, state, out=tmp)
    if weight < 0.5:
        tmp *= weight
        state += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(end, tmp, out=state)


def decay_add_square_(xp, state, decay, grad, value, tmp):
    """``state.mul_(decay).addcmul_(grad, grad, value=value)``."""
    state *= decay
    xp.multiply(grad, value, out=tmp)
    tmp *= grad
    state += tmp


def add_weight_decay(xp, seg, weight_decay, tmp):
    """``grad = grad.add(param, alpha=weight_decay)`` (on the gathered gradient copy)."""
    xp.multiply(seg.param(), weight_decay, out=tmp)
    seg.grad += tmp


def decay_params(seg, factor):
    """``param.mul_(factor)`` (decoupled weight decay)."""
    p = seg.param()
    p *= factor


def cast_scalar(value, like):
    """A per-step coefficient in the parameters' dtype (as torch casts a Python scalar)."""
    return like.dtype.type(value)
