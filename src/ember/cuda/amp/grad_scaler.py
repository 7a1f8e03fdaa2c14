"""``GradScaler`` for CUDA under its deprecated name."""
import warnings

from ...amp import grad_scaler as _amp

__all__ = ["GradScaler"]


class GradScaler(_amp.GradScaler):
    """``ember.amp.GradScaler("cuda", ...)``; deprecated."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
