"""ASGD: averaged stochastic gradient descent."""
from .optimizer import (Optimizer, _check, _check_lr, _step_tensor, _to_scalar,
                        _zeros_like)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Implements averaged stochastic gradient descent, as ``torch.optim.ASGD``."""

    _flat_keys = ("ax",)
    _scalar_keys = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["eta"] = _step_tensor(_to_scalar(group["lr"]))
        state["mu"] = _step_tensor(1.0)
        state["ax"] = _zeros_like(p)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp = seg.scratch(0)
        lr, lambd, alpha = _to_scalar(group["lr"]), group["lambd"], group["alpha"]
        step_t, eta, mu = seg.scalar["step"], seg.scalar["eta"], seg.scalar["mu"]
        step_t += 1
        param = seg.param()
        if group["weight_decay"] != 0:
            xp.multiply(param, group["weight_decay"], out=tmp)
            grad += tmp
        eta_value = float(eta[0])
        param *= 1 - lambd * eta_value
        xp.multiply(grad, eta_value, out=tmp)
        param -= tmp
        ax = seg.buf["ax"]
        if float(mu[0]) != 1:
            xp.subtract(param, ax, out=tmp)
            tmp *= mu[0]
            ax += tmp
        else:
            ax[...] = param
        step = float(step_t[0])
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - group["t0"])


