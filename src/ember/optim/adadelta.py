"""Adadelta."""
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_lr, _step_tensor, _to_scalar,
                        _zeros_like)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Implements the Adadelta algorithm, as ``torch.optim.Adadelta``."""

    _flat_keys = ("square_avg", "acc_delta")
    _scalar_keys = ("step",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["square_avg"] = _zeros_like(p)
        state["acc_delta"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp, delta = seg.scratch(0), seg.scratch(1)
        lr, rho, eps = _to_scalar(group["lr"]), group["rho"], group["eps"]
        seg.scalar["step"][...] += 1
        if group["weight_decay"] != 0:
            ops.add_weight_decay(xp, seg, group["weight_decay"], tmp)
        square_avg, acc_delta = seg.buf["square_avg"], seg.buf["acc_delta"]
        ops.decay_add_square_(xp, square_avg, rho, grad, 1 - rho, tmp)
        std = xp.add(square_avg, eps, out=tmp)
        xp.sqrt(std, out=std)
        xp.add(acc_delta, eps, out=delta)
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= grad
        ops.decay_add_square_(xp, acc_delta, rho, delta, 1 - rho, tmp)
        delta *= lr
        seg.sub_param(delta)
