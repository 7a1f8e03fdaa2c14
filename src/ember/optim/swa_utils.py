"""``ember.optim.swa_utils``: Stochastic Weight Averaging (SWA) and exponential moving averages
(EMA) of a model's weights, as ``torch.optim.swa_utils``.

``AveragedModel`` keeps a copy of a model whose parameters are a running average of the
model's; ``SWALR`` anneals the learning rate to a constant for the averaging phase; and
``update_bn`` recomputes BatchNorm statistics for the averaged weights.
"""
import copy
import math

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


# -- averaging functions -------------------------------------------------------------------
def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place exponential moving average over lists of tensors:
    ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_params, current_params, num_averaged):
        for ema, current in zip(ema_params, current_params):
            if ema.is_floating_point() or ema.is_complex():
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors:
    ``avg += (current - avg) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        for averaged, current in zip(averaged_params, current_params):
            averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one tensor:
    ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor: ``avg + (current - avg) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


# -- the averaged model --------------------------------------------------------------------
class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold an
    average of ``model``'s over the calls to ``update_parameters``: an equal-weight mean by
    default (SWA), or what ``avg_fn`` / ``multi_avg_fn`` compute (e.g. an EMA)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model):
        tensors = list(model.parameters())
        if self.use_buffers:
            tensors += list(model.buffers())
        return tensors

    @no_grad()
    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average."""
        averaged = self._averaged_tensors(self.module)
        current = [t.detach().to(a.device) for a, t in zip(averaged,
                                                             self._averaged_tensors(model))]
        if self.n_averaged == 0:
            for a, c in zip(averaged, current):
                a.copy_(c)
        elif self.multi_avg_fn is not None:
            for indices in _by_device_and_dtype(averaged):
                self.multi_avg_fn([averaged[i] for i in indices], [current[i] for i in indices],
                                  self.n_averaged.to(averaged[indices[0]].device))
        else:
            avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
            for a, c in zip(averaged, current):
                a.copy_(avg_fn(a, c, self.n_averaged.to(a.device)))
        if not self.use_buffers:
            # Buffers are not averaged: keep the model's (e.g. BatchNorm running stats).
            for a, c in zip(self.module.buffers(), model.buffers()):
                a.copy_(c.detach().to(a.device))
        self.n_averaged += 1


def _by_device_and_dtype(tensors):
    """Indices of ``tensors`` grouped by (device, dtype), in order of first appearance."""
    groups = {}
    for i, t in enumerate(tensors):
        groups.setdefault((str(t.device), t.dtype), []).append(i)
    return list(groups.values())


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm layer of ``model`` in one pass
    over ``loader`` (a batch that is a list or tuple contributes its first element)."""
    momenta = {m: m.momentum for m in model.modules() if isinstance(m, _BatchNorm)}
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.reset_running_stats()
        module.momentum = None  # a cumulative average over all batches
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None and isinstance(batch, Tensor):
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


# -- the learning rate during averaging ----------------------------------------------------
class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs (along a
    half cosine or a line), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for group, lr in zip(optimizer.param_groups, _per_group("swa_lr", optimizer, swa_lr)):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _progress(self, step):
        """How far annealing has gone after ``step`` steps, from 0 (not started) to 1 (done)."""
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        if self.anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    def _next_lrs(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        before, now = self._progress(step - 1), self._progress(step)
        lrs = []
        for group in self.optimizer.param_groups:
            swa_lr = group["swa_lr"]
            # The rate annealing started from, recovered from the current (partly annealed) one.
            start = swa_lr if before == 1 else (group["lr"] - before * swa_lr) / (1 - before)
            lrs.append(swa_lr * now + start * (1 - now))
        return lrs
