"""``autocast``, ``custom_fwd`` and ``custom_bwd`` for CUDA under their deprecated names."""
import warnings

from ... import _dtype
from ...amp import autocast_mode as _amp

__all__ = ["autocast", "custom_fwd", "custom_bwd"]


def _deprecated(old, new):
    warnings.warn(f"`ember.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_amp.autocast):
    """``ember.amp.autocast("cuda", ...)``; deprecated."""

    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        _deprecated("autocast", "ember.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``ember.amp.custom_fwd(..., device_type="cuda")``; deprecated."""
    _deprecated("custom_fwd", "ember.amp.custom_fwd(args..., device_type='cuda')")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``ember.amp.custom_bwd(..., device_type="cuda")``; deprecated."""
    _deprecated("custom_bwd", "ember.amp.custom_bwd(args..., device_type='cuda')")
    return _amp.custom_bwd(bwd, device_type="cuda")
