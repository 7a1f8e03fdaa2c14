"""AMD's MIOpen, as ``torch.backends.miopen``: its ``immediate`` switch, kept for programs that
set it (ember has no ROCm backend)."""
import contextlib
import sys

from .. import ContextProp, PropModule, _allow_nonbracketed_mutation
from .._flags import check_bool

__all__ = ["set_flags", "flags", "MiopenModule", "immediate"]

_switches = {"immediate": False}


def _get_immediate():
    return _switches["immediate"]


def _set_immediate(value):
    _switches["immediate"] = check_bool(value, "set_immediate_miopen")


def set_flags(_immediate=None):
    """Set ``immediate`` (None leaves it); returns the previous settings."""
    orig_flags = (_get_immediate(),)
    if _immediate is not None:
        _set_immediate(_immediate)
    return orig_flags


@contextlib.contextmanager
def flags(immediate=False):
    """Within the block, ``immediate`` is as given; it is restored afterwards."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(immediate)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


class MiopenModule(PropModule):
    immediate = ContextProp(_get_immediate, _set_immediate)


sys.modules[__name__] = MiopenModule(sys.modules[__name__], __name__)
