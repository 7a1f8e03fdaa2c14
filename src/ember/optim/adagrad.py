"""Adagrad."""
from .._tensor import _make
from .optimizer import Optimizer, _check, _check_lr, _step_tensor, _to_scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Implements the Adagrad algorithm, as ``torch.optim.Adagrad``. Its state is created for
    every parameter when the optimizer is constructed."""

    _flat_keys = ("sum",)
    _scalar_keys = ("step",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p])

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        init = group["initial_accumulator_value"]
        state["sum"] = _make(p._data * 0 + p._data.dtype.type(init))

    def share_memory(self):
        """Calls ``share_memory_()`` on the state tensors (no-op where unsupported)."""
        for group in self.param_groups:
            for p in group["params"]:
                tensor = self.state[p]["sum"]
                if hasattr(tensor, "share_memory_"):
                    tensor.share_memory_()

    _sparse_refusal = None

    def _refuse_sparse_grads(self, group):
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")

    def _sparse_update(self, group, p, grad):
        """torch's step for a sparse gradient: the sums and the parameter change only at the
        gradient's (coalesced) indices."""
        state = self.state[p]
        step_t = state["step"]._data
        step_t += 1
        step = float(step_t)
        grad = grad.coalesce()
        values = -grad.values if group["maximize"] else grad.values
        where = tuple(grad.indices)
        state_sum = state["sum"]._data
        state_sum[where] += values * values
        std = (state_sum[where] ** 0.5) + group["eps"]
        clr = _to_scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        p._data[where] -= clr * (values / std)

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        tmp = seg.scratch(0)
        lr = _to_scalar(group["lr"])
        step_t = seg.scalar["step"]
        step_t += 1
        step = float(step_t[0])
        if group["weight_decay"] != 0:
            xp.multiply(seg.param(), group["weight_decay"], out=tmp)
            grad += tmp
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        state_sum = seg.buf["sum"]
        xp.multiply(grad, grad, out=tmp)
        state_sum += tmp
        std = xp.sqrt(state_sum, out=tmp)
        std += group["eps"]
        update = xp.divide(grad, std, out=tmp)
        update *= clr
        seg.sub_param(update)
