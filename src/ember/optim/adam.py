"""Adam and AdamW."""
from .._tensor import Tensor
from . import _flat_ops as ops
from .optimizer import (Optimizer, _check, _check_betas, _check_lr, _step_tensor,
                        _to_scalar, _zeros_like)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Implements the Adam algorithm (with optional AMSGrad, L2 or decoupled weight decay), as
    ``torch.optim.Adam``."""
    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"
    _scalar_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("amsgrad", False), ("maximize", False), ("foreach", None),
                               ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(key, value)

    def _flat_keys_for(self, group):
        return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if group["amsgrad"] else (
            "exp_avg", "exp_avg_sq")

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros_like(p)

    def _needs_init(self, state):
        return len(state) == 0

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp = seg.scratch(0)
        beta1, beta2 = group["betas"]
        lr = _to_scalar(group["lr"])
        weight_decay = group["weight_decay"]
        step_t = seg.scalar["step"]
        step_t += 1
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                ops.decay_params(seg, 1 - lr * weight_decay)
            else:
                ops.add_weight_decay(xp, seg, weight_decay, tmp)
        exp_avg, exp_avg_sq = seg.buf["exp_avg"], seg.buf["exp_avg_sq"]
        step = float(step_t[0])
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if not group["amsgrad"]:
            update = ops.adam_moments_and_step(grad, exp_avg, exp_avg_sq, tmp, beta1, beta2,
                                               bias_correction2_sqrt, group["eps"], step_size)
            seg.sub_param(update)
            return
        ops.lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
        ops.decay_add_square_(xp, exp_avg_sq, beta2, grad, 1 - beta2, tmp)
        max_exp_avg_sq = seg.buf["max_exp_avg_sq"]
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = xp.sqrt(max_exp_avg_sq, out=tmp)
        denom /= bias_correction2_sqrt
        denom += group["eps"]
        update = xp.divide(exp_avg, denom, out=tmp)
        update *= step_size
        seg.sub_param(update)


class AdamW(Adam):
    """Implements the AdamW algorithm (Adam with decoupled weight decay), as
    ``torch.optim.AdamW``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
