"""SparseAdam: Adam's update applied only where a sparse gradient has entries."""
import math

from .._backend.sparse_coo import SparseCOOArray
from .._tensor import Tensor, _make
from ..autograd.grad_mode import no_grad
from ..autograd.graph import bump_version
from .optimizer import Optimizer, _call_closure, _to_scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements a masked version of Adam for parameters whose gradients are sparse (such as
    ``nn.Embedding(sparse=True)``'s weight), as ``torch.optim.SparseAdam``: the moments and
    the parameter change only at the indices the gradient holds."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, param in enumerate(group["params"]):
                if param.is_sparse:
                    sparse_params.append([index, d_index])
                if param.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense "
                             "parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """Perform a single optimization step (re-evaluating the loss with ``closure`` first,
        if given, and returning it)."""
        loss = _call_closure(closure)
        with no_grad():
            for group in self.param_groups:
                with_grad = [p for p in group["params"] if p._grad is not None]
                for p in with_grad:
                    if p._grad._data.__class__ is not SparseCOOArray:
                        raise RuntimeError("SparseAdam does not support dense gradients, please "
                                           "consider Adam instead")
                for p in with_grad:
                    self._step_one(group, p)
                    bump_version(p)
        return loss

    def _step_one(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = 0
            state["exp_avg"] = _make(p._data * 0)
            state["exp_avg_sq"] = _make(p._data * 0)
        state["step"] += 1
        step = state["step"]
        beta1, beta2 = group["betas"]
        grad = p._grad._data.coalesce()
        values = -grad.values if group["maximize"] else grad.values
        where = tuple(grad.indices)
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        old_avg, old_avg_sq = exp_avg[where], exp_avg_sq[where]
        avg_update = (values - old_avg) * (1 - beta1)
        exp_avg[where] += avg_update
        avg_sq_update = (values * values - old_avg_sq) * (1 - beta2)
        exp_avg_sq[where] += avg_sq_update
        numer = avg_update + old_avg
        denom = (avg_sq_update + old_avg_sq) ** 0.5 + group["eps"]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = _to_scalar(group["lr"]) * math.sqrt(bias_correction2) / bias_correction1
        p._data[where] += -step_size * (numer / denom)
