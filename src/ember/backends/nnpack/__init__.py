"""NNPACK, as ``torch.backends.nnpack``: ember does not use it; its switch is kept for
programs that set it."""
import contextlib

from .. import _allow_nonbracketed_mutation
from .._flags import check_bool

__all__ = ["is_available", "flags", "set_flags"]

_switches = {"enabled": True}


def is_available():
    """Return whether ember is built with NNPACK support (it is not)."""
    return False


def set_flags(_enabled):
    """Set if nnpack is enabled globally."""
    orig_flags = (_switches["enabled"],)
    _switches["enabled"] = check_bool(_enabled, "set_enabled_NNPACK")
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False):
    """Context manager for setting if nnpack is enabled globally."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(orig_flags[0])
