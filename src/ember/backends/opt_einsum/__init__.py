"""The opt_einsum package, as ``torch.backends.opt_einsum``. ember's ``einsum`` orders its
contractions with NumPy's own path optimizer and never uses opt_einsum, so it is not
available here: ``enabled`` is False and ``strategy`` None, as in torch without the package."""
import contextlib

__all__ = ["is_available", "get_opt_einsum", "flags", "enabled", "strategy"]

enabled = False  # plain attributes, as torch's are: assigning them checks nothing
strategy = None


def is_available():
    """Return a bool indicating if opt_einsum is currently available (never, in ember)."""
    return False


def get_opt_einsum():
    """Return the opt_einsum package if opt_einsum is currently available, else None."""
    return None


def _set_enabled(value):
    if value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. ember.einsum will fall back to "
            "contracting from left to right. To enable this optimal path calculation, please "
            "install opt-einsum.")


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Within the block, set ``enabled`` and ``strategy`` (``None`` leaves one as it is)."""
    if enabled is not None:
        _set_enabled(enabled)
    if strategy is not None:
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {strategy} will not be "
            "meaningful. ember.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`.")
    yield
