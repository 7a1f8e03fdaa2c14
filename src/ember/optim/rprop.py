"""Rprop: resilient backpropagation."""
from .._tensor import _make
from .optimizer import Optimizer, _check_lr, _step_tensor, _to_scalar, _zeros_like

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Implements the resilient backpropagation algorithm, as ``torch.optim.Rprop``."""

    _flat_keys = ("prev", "step_size")
    _scalar_keys = ("step",)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["prev"] = _zeros_like(p)
        state["step_size"] = _make(p._grad._data * 0 + p._data.dtype.type(_to_scalar(group["lr"])))

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        sign = seg.scratch(0)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        seg.scalar["step"][...] += 1
        prev, step_size = seg.buf["prev"], seg.buf["step_size"]
        xp.multiply(grad, prev, out=sign)
        xp.sign(sign, out=sign)
        positive, negative = sign > 0, sign < 0
        sign[positive] = etaplus
        sign[negative] = etaminus
        sign[~(positive | negative)] = 1
        step_size *= sign
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad[negative] = 0
        xp.sign(grad, out=sign)
        sign *= step_size
        seg.sub_param(sign)
        prev[...] = grad
