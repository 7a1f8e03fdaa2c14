"""``ember.cpu.amp``: the CPU mixed-precision names torch keeps here, deprecated in torch for
``ember.amp``'s with ``device_type="cpu"`` (they warn as torch's do)."""
import warnings

from ... import _dtype
from ...amp import GradScaler as _GradScaler
from ...amp import autocast_mode as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """``ember.amp.autocast("cpu", ...)``; deprecated."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        warnings.warn("`ember.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``ember.amp.GradScaler("cpu", ...)``; deprecated."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
