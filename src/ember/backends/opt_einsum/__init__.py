"""The opt_einsum package, as ``torch.backends.opt_einsum``. ember's ``einsum`` orders its
contractions with NumPy's own path optimizer and never uses opt_einsum, so it is not
available here: ``enabled`` is False and ``strategy`` None, as in torch without the package."""
import contextlib
import sys

from .. import ContextProp, PropModule, _allow_nonbracketed_mutation

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags", "OptEinsumModule",
           "enabled", "strategy"]

_state = {"enabled": False}


def is_available():
    """Return a bool indicating if opt_einsum is currently available (never, in ember)."""
    return False


def get_opt_einsum():
    """Return the opt_einsum package if opt_einsum is currently available, else None."""
    return None


def _get_enabled():
    return _state["enabled"]


def _set_enabled(value):
    if value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. ember.einsum will fall back to "
            "contracting from left to right. To enable this optimal path calculation, please "
            "install opt-einsum.")
    _state["enabled"] = value


def _set_strategy(strategy):
    raise ValueError(
        f"opt_einsum is not available, so setting `strategy` to {strategy} will not be "
        "meaningful. ember.einsum will bypass path calculation and simply contract from "
        "left to right. Please install opt_einsum or unset `strategy`.")


def set_flags(_enabled=None, _strategy=None):
    """Set ``enabled`` and ``strategy`` (None leaves one); returns the previous settings."""
    orig_flags = (_get_enabled(), None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Within the block, set ``enabled`` and ``strategy`` (``None`` leaves one as it is)."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, strategy)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


class OptEinsumModule(PropModule):
    enabled = ContextProp(_get_enabled, _set_enabled)
    strategy = None  # a switch only where opt_einsum is available


sys.modules[__name__] = OptEinsumModule(sys.modules[__name__], __name__)
