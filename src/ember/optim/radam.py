"""RAdam: Adam with a rectified adaptive learning rate."""
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_betas, _check_lr, _step_tensor,
                        _to_scalar, _zeros_like)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Implements the RAdam algorithm (optionally with decoupled weight decay), as
    ``torch.optim.RAdam``."""

    _flat_keys = ("exp_avg", "exp_avg_sq")
    _scalar_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp, tmp2 = seg.scratch(0), seg.scratch(1)
        beta1, beta2 = group["betas"]
        lr = _to_scalar(group["lr"])
        weight_decay = group["weight_decay"]
        step_t = seg.scalar["step"]
        step_t += 1
        step = float(step_t[0])
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                ops.decay_params(seg, 1 - lr * weight_decay)
            else:
                ops.add_weight_decay(xp, seg, weight_decay, tmp)
        exp_avg, exp_avg_sq = seg.buf["exp_avg"], seg.buf["exp_avg_sq"]
        ops.lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
        ops.decay_add_square_(xp, exp_avg_sq, beta2, grad, 1 - beta2, tmp)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = xp.divide(exp_avg, bias_correction1, out=tmp)
        update *= lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            adaptive = xp.sqrt(exp_avg_sq, out=tmp2)
            adaptive += group["eps"]
            xp.divide(bias_correction2 ** 0.5, adaptive, out=adaptive)
            update *= adaptive
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf
                       / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        seg.sub_param(update)
