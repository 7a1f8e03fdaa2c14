"""``ember.optim.lr_scheduler``: learning-rate schedules, as ``torch.optim.lr_scheduler``.

A scheduler owns an optimizer and rewrites each parameter group's ``lr`` on every ``step()``.
Most schedules are *chainable*: the new rate is computed from the group's current rate (so
several schedulers can act on one optimizer), while ``step(epoch)`` (deprecated) jumps to a
closed form of the schedule where one exists.
"""
import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau",
           "SequentialLR", "ChainedScheduler"]

_DOCS_URL = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
_EPOCH_DEPRECATED = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Call `scheduler.step()` without it; while an explicit epoch is accepted, it selects "
    "the closed form of the schedule (where there is one) instead of the chainable form.")
_STEP_BEFORE_OPTIMIZER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. Call `optimizer.step()` "
    "first: in this order the first value of the learning rate schedule is skipped. See "
    + _DOCS_URL)
_STEP_OVERRIDDEN = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization, so the scheduler cannot tell whether it was called. Make sure to call "
    "`optimizer.step()` before `lr_scheduler.step()`. See " + _DOCS_URL)

# Attributes that only matter while a step runs; they are not part of a state_dict.
_TRANSIENT = frozenset({"optimizer", "_in_step", "_first_step"})


# -- helpers -------------------------------------------------------------------------------
def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(name, optimizer, value):
    """``value`` as one entry per parameter group (a list or tuple must have exactly one)."""
    count = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {count}.")
        return list(value)
    return [_copy(value) for _ in range(count)]


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _set_group_value(group, key, value):
    """Store ``value`` under ``key``, in place when the group holds a tensor there."""
    if isinstance(group.get(key), Tensor):
        group[key].fill_(value)
    else:
        group[key] = value


def _group_lrs(optimizer):
    return [_copy(group["lr"]) for group in optimizer.param_groups]


def _lambda_states(lr_lambdas):
    """What a state_dict keeps of lr lambdas: a callable object's attributes; nothing of a
    plain function."""
    return [None if isinstance(fn, types.FunctionType) else dict(vars(fn)) for fn in lr_lambdas]


def _restore_lambdas(lr_lambdas, states):
    for fn, state in zip(lr_lambdas, states):
        if state is not None:
            vars(fn).update(state)


def _track_optimizer_steps(optimizer):
    """Have ``optimizer._opt_called`` tell whether ``optimizer.step()`` ran since the first
    scheduler was attached (ember optimizers' ``step`` records it; others are wrapped)."""
    if getattr(optimizer, "_scheduler_attached", False):
        return
    if not getattr(optimizer.step, "_hooked", False):
        optimizer.step = _recording_step(optimizer)
    optimizer._opt_called = False
    optimizer._scheduler_attached = True


def _recording_step(optimizer):
    step = optimizer.step
    owner = weakref.ref(optimizer)
    if getattr(step, "__self__", None) is optimizer:
        unbound = step.__func__
        step = lambda *args, **kwargs: unbound(owner(), *args, **kwargs)  # noqa: E731

    @functools.wraps(step)
    def recording_step(*args, **kwargs):
        owner()._opt_called = True
        return step(*args, **kwargs)
    recording_step._hooked = True
    return recording_step


def _validated_schedulers(owner, schedulers, optimizer):
    """Check that ``schedulers`` (for SequentialLR / ChainedScheduler) all drive ``optimizer``."""
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                f"which is different from {type(optimizer).__name__}.")
    return list(schedulers)


# -- the base class ------------------------------------------------------------------------
class LRScheduler:
    """Base class of learning-rate schedulers: subclasses say in ``get_lr()`` what each
    group's rate is at ``self.last_epoch``."""

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.base_lrs = self._initial_lrs(last_epoch)
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._in_step = False
        self._take_first_step()

    def _initial_lrs(self, last_epoch):
        """Each group's ``initial_lr``, recorded now for a fresh run, required when resuming."""
        groups = self.optimizer.param_groups
        if last_epoch == -1:
            for group in groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0. Load the optimizer's state_dict before "
                        "creating a scheduler with last_epoch >= 0.")
        return [group["initial_lr"] for group in groups]

    def _take_first_step(self):
        """The step every scheduler takes on creation (from ``last_epoch`` to the next)."""
        self._step_count = 0
        self._first_step = True
        try:
            self.step()
        finally:
            self._first_step = False

    # -- public API --------------------------------------------------------------------
    def state_dict(self):
        """The scheduler's state as a dict: every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key not in _TRANSIENT}

    def load_state_dict(self, state_dict):
        """Load the scheduler's state (as returned by ``state_dict()``)."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self):
        """The learning rates at ``self.last_epoch`` (meant to be called by ``step()``)."""
        if not self._in_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        return self._next_lrs()

    def step(self, epoch=None):
        """Advance the schedule by one step (``epoch``, deprecated, jumps to that epoch)."""
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATED, UserWarning, stacklevel=2)
        self._step_to(epoch)

    # -- the step itself ---------------------------------------------------------------
    def _step_to(self, epoch):
        self._step_count += 1
        if self._step_count == 2:
            self._warn_if_optimizer_did_not_step()
        self._in_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = self._lrs_at_epoch()
        finally:
            self._in_step = False
        self._apply_lrs(values)

    def _apply_lrs(self, values):
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_lrs(self.optimizer)

    def _warn_if_optimizer_did_not_step(self):
        if not getattr(self.optimizer.step, "_hooked", False):
            warnings.warn(_STEP_OVERRIDDEN, UserWarning, stacklevel=4)
        elif not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_STEP_BEFORE_OPTIMIZER, UserWarning, stacklevel=4)

    def _next_lrs(self):
        """The rates for the new ``last_epoch``, usually from the groups' current rates."""
        raise NotImplementedError

    def _lrs_at_epoch(self):
        """The rates at ``last_epoch`` for an explicit ``step(epoch)``: the closed form of the
        schedule where it has one."""
        return self.get_lr()

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


# -- schedules from a function of the epoch ------------------------------------------------
class _LambdasInState:
    """state_dict support for schedulers holding ``lr_lambdas``: of the lambdas only callable
    objects' attributes are kept, never plain functions."""

    def state_dict(self):
        """The scheduler's state; of the lambdas only callable objects' attributes are kept."""
        state = super().state_dict()
        state["lr_lambdas"] = _lambda_states(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict):
        """Load the scheduler's state (as returned by ``state_dict()``)."""
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        super().load_state_dict(state)
        _restore_lambdas(self.lr_lambdas, lambdas)


class LambdaLR(_LambdasInState, LRScheduler):
    """Sets each group's rate to its initial rate times ``lr_lambda(epoch)``."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer)
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_LambdasInState, LRScheduler):
    """Multiplies each group's rate by ``lr_lambda(epoch)`` at every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer)
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        if self._first_step:
            return self._current_lrs()
        return [lr * fn(self.last_epoch) for lr, fn in zip(self._current_lrs(), self.lr_lambdas)]


def _lambdas_per_group(optimizer, lr_lambda):
    count = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != count:
            raise ValueError(f"Expected {count} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * count


# -- piecewise-constant schedules ------------------------------------------------------
class StepLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` at each milestone (once per repetition)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        times = self.milestones.get(self.last_epoch, 0)
        if times == 0:
            return self._current_lrs()
        return [lr * self.gamma ** times for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scales each group's rate by ``factor`` until epoch ``total_iters``."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        factor = 1.0 if self.last_epoch >= self.total_iters else self.factor
        return [base * factor for base in self.base_lrs]


# -- smooth decays -------------------------------------------------------------------------
class LinearLR(LRScheduler):
    """Scales each group's rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        epoch, start, end = self.last_epoch, self.start_factor, self.end_factor
        if epoch == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._first_step or epoch > self.total_iters:
            return self._current_lrs()
        ratio = 1.0 + (end - start) / (self.total_iters * start + (epoch - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        if self._first_step:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decays each group's rate as ``(1 - epoch / total_iters) ** power`` down to zero."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        epoch, total = self.last_epoch, self.total_iters
        if self._first_step or epoch > total:
            return self._current_lrs()
        ratio = ((1.0 - epoch / total) / (1.0 - (epoch - 1) / total)) ** self.power
        return [lr * ratio for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        remaining = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * remaining ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneals each group's rate along a cosine from its initial value to ``eta_min`` over
    ``T_max`` epochs (and back up over the next ``T_max``, and so on)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        epoch, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._first_step:
            return self._current_lrs()
        if (epoch - 1 - period) % (2 * period) == 0:
            # Leaving the trough, where the ratio below is 0/0: step up by the closed form.
            rise = (1 - math.cos(math.pi / period)) / 2
            return [lr + (base - low) * rise
                    for lr, base in zip(self._current_lrs(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * epoch / period)) / (
            1 + math.cos(math.pi * (epoch - 1) / period))
        return [ratio * (lr - low) + low for lr in self._current_lrs()]

    def _lrs_at_epoch(self):
        wave = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * wave for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` that restarts after ``T_0``
    epochs, each period ``T_mult`` times longer than the last (SGDR)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        wave = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * wave for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to ``epoch``, which may be fractional (e.g.
        ``epoch + batch / batches_per_epoch``)."""
        self._step_to(epoch)

    def _step_to(self, epoch):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self._advance_one_epoch()
        else:
            self._place_in_period(epoch)
        self.last_epoch = math.floor(epoch)
        self._in_step = True
        try:
            values = self.get_lr()
        finally:
            self._in_step = False
        self._apply_lrs(values)

    def _advance_one_epoch(self):
        self.T_cur += 1
        if self.T_cur >= self.T_i:
            self.T_cur -= self.T_i
            self.T_i *= self.T_mult

    def _place_in_period(self, epoch):
        """Set the current period ``T_i`` and the position ``T_cur`` in it for ``epoch``."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # Periods T_0 * T_mult**k, k < n, end at T_0 * (T_mult**n - 1) / (T_mult - 1).
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


# -- cyclical schedules --------------------------------------------------------------------
def _momentum_key(optimizer):
    """'betas' for Adam-like optimizers (cycling beta1), else 'momentum'; a ValueError when the
    optimizer has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option "
                         "enabled")
    return "betas" in optimizer.defaults


def _set_momentum(group, value, use_beta1):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """Cycles each group's rate between ``base_lr`` and ``max_lr`` (cyclical learning rates),
    and optionally the momentum inversely, updated after every batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._custom_scale_fn = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        self.use_beta1 = False
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups, self.max_momentums,
                                            self.base_momentums):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        """The amplitude scaling of the current cycle (or iteration, per ``scale_mode``)."""
        if self._custom_scale_fn is not None:
            return self._custom_scale_fn(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _next_lrs(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, in [0, 1)
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * rise * scale
               for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                _set_momentum(group, high - (high - low) * rise * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        """The scheduler's state; a custom ``scale_fn`` is kept only as a callable object's
        attributes."""
        state = super().state_dict()
        fn = state.pop("_custom_scale_fn")
        state["custom_scale_fn_state"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                          else dict(vars(fn)))
        return state

    def load_state_dict(self, state_dict):
        """Load the scheduler's state (as returned by ``state_dict()``)."""
        state = dict(state_dict)
        fn_state = state.pop("custom_scale_fn_state", None)
        super().load_state_dict(state)
        if fn_state is not None and self._custom_scale_fn is not None:
            vars(self._custom_scale_fn).update(fn_state)


def _anneal(start, end, pct, strategy):
    """The value ``pct`` of the way from ``start`` to ``end`` along a half cosine or a line."""
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from ``max_lr / div_factor`` to ``max_lr`` and then
    falls far below the start, over ``total_steps`` batches; momentum cycles inversely."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        _check_optimizer(optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        self._phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        self.use_beta1 = False
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            if last_epoch == -1:
                for group, high, low in zip(
                        optimizer.param_groups,
                        _per_group("max_momentum", optimizer, max_momentum),
                        _per_group("base_momentum", optimizer, base_momentum)):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _next_lrs(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        start, end, lr_keys, momentum_keys = self._phase_at(step)
        pct = (step - start) / (end - start)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(_anneal(group[lr_keys[0]], group[lr_keys[1]], pct, self.anneal_strategy))
            if self.cycle_momentum:
                momentum = _anneal(group[momentum_keys[0]], group[momentum_keys[1]], pct,
                                   self.anneal_strategy)
                _set_momentum(group, momentum, self.use_beta1)
        return lrs

    def _phase_at(self, step):
        """(first step, last step, lr keys, momentum keys) of the phase ``step`` falls in."""
        start = 0.0
        for i, (end, lr_keys, momentum_keys) in enumerate(self._phases):
            if step <= end or i == len(self._phases) - 1:
                return start, end, lr_keys, momentum_keys
            start = end


def _total_steps(total_steps, epochs, steps_per_epoch):
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
    return epochs * steps_per_epoch


def _one_cycle_phases(total_steps, pct_start, three_phase):
    """Each phase as (its last step, (start, end) lr keys, (start, end) momentum keys), the keys
    naming per-group values."""
    warm_end = float(pct_start * total_steps) - 1
    if three_phase:
        return [(warm_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                (float(2 * pct_start * total_steps) - 2, ("max_lr", "initial_lr"),
                 ("base_momentum", "max_momentum")),
                (total_steps - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]
    return [(warm_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
            (total_steps - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]


# -- driven by a metric --------------------------------------------------------------------
class ReduceLROnPlateau(LRScheduler):
    """Multiplies each group's rate by ``factor`` once a metric has stopped improving for
    ``patience`` epochs."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.factor = factor
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_lrs(optimizer)
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record this epoch's value of the metric and reduce the rates on a plateau."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATED, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lrs()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_lrs(self.optimizer)

    def _reduce_lrs(self):
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from "
                    f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually "
                    "due to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    @property
    def in_cooldown(self):
        """Whether the scheduler is waiting out its cooldown after a reduction."""
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        """Whether metric value ``a`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            bound = best * (1.0 - self.threshold) if self.threshold_mode == "rel" else (
                best - self.threshold)
            return a < bound
        bound = best * (self.threshold + 1.0) if self.threshold_mode == "rel" else (
            best + self.threshold)
        return a > bound


# -- combining schedulers ------------------------------------------------------------------
class _SchedulersInState:
    """state_dict support for schedulers wrapping others: their states are nested."""

    def state_dict(self):
        """The state of this scheduler and of each wrapped one."""
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Load the state of this scheduler and of each wrapped one."""
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        super().load_state_dict(state)
        for scheduler, sub_state in zip(self._schedulers, inner):
            scheduler.load_state_dict(sub_state)


class SequentialLR(_SchedulersInState, LRScheduler):
    """Runs ``schedulers`` one after another, switching at each of ``milestones``."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        _check_optimizer(optimizer)
        self._schedulers = _validated_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than "
                f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                f"and the number of milestones to be equal to {len(milestones)}")
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Every scheduler took its first step on creation: undo them all, then let only the
        # first one start the run.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        for scheduler in self._schedulers:
            _rewind_one_epoch(scheduler)
        self._schedulers[0]._take_first_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        """Advance the active scheduler, starting the next one at its milestone."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            _restart(scheduler)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _rewind_one_epoch(scheduler):
    inner = getattr(scheduler, "_schedulers", None)
    if inner is not None:
        for each in inner:
            _rewind_one_epoch(each)
    else:
        scheduler.last_epoch -= 1


def _restart(scheduler):
    """Put ``scheduler`` at epoch 0 (its closed form), without the deprecation warning."""
    if isinstance(scheduler, LRScheduler):
        scheduler._step_to(0)
    else:
        scheduler.step(0)


class ChainedScheduler(_SchedulersInState, LRScheduler):
    """Steps every scheduler in ``schedulers`` at each step, so their effects compose."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but "
                             "got no scheduler.")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        self._schedulers = _validated_schedulers("ChainedScheduler", schedulers, optimizer)
        self.optimizer = optimizer
        self._last_lr = _group_lrs(optimizer)

    def step(self):
        """Step every chained scheduler once."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_lrs(self.optimizer)
