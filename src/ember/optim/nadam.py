"""NAdam: Adam with Nesterov momentum."""
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_betas, _check_lr, _step_tensor,
                        _to_scalar, _zeros_like)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Implements the NAdam algorithm (optionally with decoupled weight decay, as NAdamW), as
    ``torch.optim.NAdam``."""

    _flat_keys = ("exp_avg", "exp_avg_sq")
    _scalar_keys = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["mu_product"] = _step_tensor(1.0)
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp, tmp2 = seg.scratch(0), seg.scratch(1)
        beta1, beta2 = group["betas"]
        lr = _to_scalar(group["lr"])
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        step_t, mu_product = seg.scalar["step"], seg.scalar["mu_product"]
        step_t += 1
        step = float(step_t[0])
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                ops.decay_params(seg, 1 - lr * weight_decay)
            else:
                ops.add_weight_decay(xp, seg, weight_decay, tmp)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        exp_avg, exp_avg_sq = seg.buf["exp_avg"], seg.buf["exp_avg_sq"]
        ops.lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
        ops.decay_add_square_(xp, exp_avg_sq, beta2, grad, 1 - beta2, tmp)
        denom = xp.divide(exp_avg_sq, bias_correction2, out=tmp2)
        xp.sqrt(denom, out=denom)
        denom += group["eps"]
        product = float(mu_product[0])
        product_next = product * mu_next
        update = xp.divide(grad, denom, out=tmp)
        update *= lr * (1.0 - mu) / (1.0 - product)
        seg.sub_param(update)
        update = xp.divide(exp_avg, denom, out=tmp)
        update *= lr * mu_next / (1.0 - product_next)
        seg.sub_param(update)


