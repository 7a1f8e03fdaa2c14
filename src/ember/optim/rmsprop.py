"""RMSprop."""
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_lr, _step_tensor, _to_scalar,
                        _zeros_like)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Implements the RMSprop algorithm (optionally centered, with momentum), as
    ``torch.optim.RMSprop``."""

    _scalar_keys = ("step",)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _flat_keys_for(self, group):
        keys = ("square_avg",)
        if group["momentum"] > 0:
            keys += ("momentum_buffer",)
        if group["centered"]:
            keys += ("grad_avg",)
        return keys

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp, avg = seg.scratch(0), seg.scratch(1)
        lr, alpha = _to_scalar(group["lr"]), group["alpha"]
        seg.scalar["step"][...] += 1
        if group["weight_decay"] != 0:
            ops.add_weight_decay(xp, seg, group["weight_decay"], tmp)
        square_avg = seg.buf["square_avg"]
        ops.decay_add_square_(xp, square_avg, alpha, grad, 1 - alpha, tmp)
        if group["centered"]:
            grad_avg = seg.buf["grad_avg"]
            ops.lerp_(xp, grad_avg, grad, 1 - alpha, tmp)
            xp.multiply(grad_avg, -1, out=tmp)
            tmp *= grad_avg
            xp.add(square_avg, tmp, out=avg)
            xp.sqrt(avg, out=avg)
        else:
            xp.sqrt(square_avg, out=avg)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = seg.buf["momentum_buffer"]
            buf *= group["momentum"]
            buf += xp.divide(grad, avg, out=tmp)
            xp.multiply(buf, lr, out=tmp)
        else:
            xp.divide(grad, avg, out=tmp)
            tmp *= lr
        seg.sub_param(tmp)
