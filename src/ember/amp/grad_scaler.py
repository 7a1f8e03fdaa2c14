"""``GradScaler``: loss scaling for training in float16.

Small float16 gradients underflow to zero. The scaler multiplies the loss by a large factor
before ``backward()``, divides the gradients by it before the optimizer step, skips steps
whose gradients hold inf or NaN (the factor was too large) and adapts the factor: halved after
such a step, doubled after ``growth_interval`` clean steps in a row.
"""
import warnings
from enum import Enum

from .._tensor import Tensor
from ..autograd.graph import bump_version

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_NOT_SCALED = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")


def _cuda_available():
    from .._backend import load_cuda
    return load_cuda() is not None


class GradScaler:
    """Scales losses and unscales gradients for mixed-precision training.

    Args:
        device (str): the device of the gradients; ``"cuda"`` (the default) or ``"cpu"``.
        init_scale (float): the first scale factor. Default: ``2.**16``.
        growth_factor (float): multiplies the scale after ``growth_interval`` steps in a row
            without inf/NaN gradients. Default: 2.0.
        backoff_factor (float): multiplies the scale after a step with inf/NaN gradients.
            Default: 0.5.
        growth_interval (int): the number of clean steps before the scale grows. Default: 2000.
        enabled (bool): when False every method is a no-op (``scale`` returns its input,
            ``step`` just steps). Default: True.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    # -- the scale and growth tracker (made lazily, on the device of the first output) ----
    def _lazy_init_scale_growth_tracker(self, device):
        from ..ops.creation import full
        from .. import _dtype
        self._scale = full((), self._init_scale, dtype=_dtype.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtype.int32, device=device)

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _NOT_SCALED)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _NOT_SCALED)
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """Multiplies ``outputs`` (a tensor or an iterable of tensors) by the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        return self._scale_all(outputs)

    def _scale_all(self, value):
        if isinstance(value, Tensor):
            return self.scale(value)
        if isinstance(value, (list, tuple)):
            scaled = [self._scale_all(v) for v in value]
            return type(value)(scaled)
        if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
            return map(self._scale_all, value)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    # -- unscaling ----------------------------------------------------------------------
    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Multiply every gradient by ``inv_scale`` in place; ``found_inf`` becomes 1 when any
        of them holds inf or NaN. Returns {device: found_inf}."""
        from .. import _dtype
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if not allow_fp16 and grad.dtype == _dtype.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                _unscale_and_check_(grad, inv_scale, found_inf)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer):
        """Divides ("unscales") the optimizer's gradients by the scale factor, in place. Call
        it between ``backward()`` and ``step()`` to clip or inspect true gradients."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_optimizer_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        from ..ops.creation import zeros
        found_inf = zeros((), dtype=self._scale.dtype, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    # -- stepping -----------------------------------------------------------------------
    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` did already) and calls
        ``optimizer.step(*args, **kwargs)`` unless they hold inf or NaN. Returns what
        ``optimizer.step`` returned, or None for a skipped step."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_optimizer_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Updates the scale factor: times ``backoff_factor`` if any optimizer stepped over
        inf/NaN gradients this iteration, times ``growth_factor`` after ``growth_interval``
        clean iterations in a row. ``new_scale`` (a float or a one-element float32 tensor)
        sets it directly instead."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = any(f.item() for f in found_infs)
            self._update_scale(found_inf)
        self._per_optimizer_states = {}

    def _set_scale(self, new_scale):
        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if not isinstance(new_scale, Tensor):
            raise AttributeError(f"'{type(new_scale).__name__}' object has no attribute 'device'")
        if new_scale.numel() != 1 or new_scale.requires_grad:
            raise AssertionError(reason)
        self._scale.copy_(new_scale)

    def _update_scale(self, found_inf):
        """torch's ``_amp_update_scale_``: back off on inf, grow after enough clean steps."""
        scale = self._scale.item()
        if found_inf:
            self._scale.fill_(scale * self._backoff_factor)
            self._growth_tracker.fill_(0)
            return
        successful = self._growth_tracker.item() + 1
        if successful == self._growth_interval:
            grown = scale * self._growth_factor
            if grown != float("inf"):
                self._scale.fill_(grown)
            successful = 0
        self._growth_tracker.fill_(successful)

    # -- accessors ------------------------------------------------------------------------
    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale factor as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self):
        """Whether this instance is enabled."""
        return self._enabled

    # -- checkpointing --------------------------------------------------------------------
    def state_dict(self):
        """The scaler's state: ``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval`` and ``_growth_tracker`` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Loads the scaler state saved by ``state_dict()``."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _unscale_and_check_(grad, inv_scale, found_inf):
    """``grad *= inv_scale`` in place; set ``found_inf`` to 1 when ``grad`` is not all finite
    (torch's ``_amp_foreach_non_finite_check_and_unscale_``)."""
    from .._backend import namespace_of
    data = grad._data
    xp = namespace_of(data)
    if not bool(xp.isfinite(data).all()):
        found_inf.fill_(1.0)
    data *= inv_scale._data.astype(data.dtype)
    bump_version(grad)
