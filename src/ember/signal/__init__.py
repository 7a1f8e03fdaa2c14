"""``ember.signal``: signal-processing helpers, as torch.signal (its ``windows``)."""
from . import windows

__all__ = ["windows"]
