"""Adamax: Adam with the infinity norm."""
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_betas, _check_lr, _step_tensor,
                        _to_scalar, _zeros_like)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Implements the Adamax algorithm (a variant of Adam based on infinity norm), as
    ``torch.optim.Adamax``."""

    _flat_keys = ("exp_avg", "exp_inf")
    _scalar_keys = ("step",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = _zeros_like(p)
        state["exp_inf"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp = seg.scratch(0)
        beta1, beta2 = group["betas"]
        lr = _to_scalar(group["lr"])
        step_t = seg.scalar["step"]
        step_t += 1
        if group["weight_decay"] != 0:
            ops.add_weight_decay(xp, seg, group["weight_decay"], tmp)
        exp_avg, exp_inf = seg.buf["exp_avg"], seg.buf["exp_inf"]
        ops.lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
        exp_inf *= beta2
        norm = xp.abs(grad, out=tmp)
        norm += group["eps"]
        xp.maximum(exp_inf, norm, out=exp_inf)
        clr = lr / (1 - beta1 ** float(step_t[0]))
        update = xp.divide(exp_avg, exp_inf, out=tmp)
        update *= clr
        seg.sub_param(update)
