"""``ember.cuda.amp``: the CUDA mixed-precision names torch keeps here, deprecated in torch for
``ember.amp``'s with ``device_type="cuda"`` (they warn as torch's do)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .common import amp_definitely_not_available
from .grad_scaler import GradScaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]
