"""``ember.amp``: automatic mixed precision — ``autocast`` regions in which matrix products and
convolutions run in a lower-precision dtype, and ``GradScaler`` for float16 training."""
from .autocast_mode import (  # noqa: F401
    autocast, clear_autocast_cache, custom_bwd, custom_fwd, get_autocast_dtype,
    is_autocast_available, is_autocast_cache_enabled, is_autocast_enabled, set_autocast_cache_enabled,
    set_autocast_dtype, set_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
