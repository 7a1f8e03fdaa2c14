"""Stochastic gradient descent (optionally with momentum)."""
from .._tensor import Tensor, _make
from . import _flat_ops as ops
from .optimizer import Optimizer, _to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum, dampening, Nesterov
    momentum and weight decay), as ``torch.optim.SGD``."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _flat_keys_for(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _update_reads_grad_only(self, group):
        return not (group["weight_decay"] or group["nesterov"] or group["maximize"])

    def _blocking_pays(self, group, seg):
        # On BLAS the update is one or two passes, each threaded or cache-friendly already:
        # whole-array calls measured faster than cache-sized blocks (BENCHMARKS.md).
        return not ops.runs_on_blas(seg.grad)

    def _needs_init(self, state):
        return "momentum_buffer" not in state or state["momentum_buffer"] is None

    def _init_state(self, group, p, state):
        if group["momentum"] != 0:
            state["momentum_buffer"] = _make(p._data * 0)

    _sparse_refusal = None

    def _refuse_sparse_grads(self, group):
        if group["weight_decay"] != 0:   # torch adds the (dense) parameter to the sparse gradient
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def _sparse_update(self, group, p, grad):
        """torch's step for a sparse gradient: the momentum buffer is sparse too."""
        if group["maximize"]:
            grad = -grad
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.copy()
            else:
                buf = buf._data * momentum + grad * (1 - group["dampening"])
            state["momentum_buffer"] = _make(buf)
            grad = grad + buf * momentum if group["nesterov"] else buf
        p._data += grad * -_to_scalar(group["lr"])

    def _update(self, group, seg):
        xp, grad = seg.xp, seg.grad
        lr = _to_scalar(group["lr"])
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        if weight_decay != 0:
            ops.add_weight_decay(xp, seg, _to_scalar(weight_decay), seg.scratch(0))
        if momentum != 0:
            buf = seg.buf["momentum_buffer"]
            if group["dampening"] == 0:
                ops.decay_add_(xp, buf, momentum, grad)
            else:
                tmp = seg.scratch(0)
                buf *= momentum
                xp.multiply(grad, 1 - group["dampening"], out=tmp)
                buf += tmp
            for buf_view, grad_view in seg.fresh_views("momentum_buffer"):
                buf_view[...] = grad_view
            if group["nesterov"]:
                tmp = seg.scratch(0)
                xp.multiply(buf, momentum, out=tmp)
                grad += tmp
            else:
                grad = buf
        seg.add_to_param(grad, -lr)

