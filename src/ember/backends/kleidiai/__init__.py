"""Arm's KleidiAI kernels, as ``torch.backends.kleidiai``: ember does not use them."""
__all__ = ["is_available"]


def is_available():
    """Return whether ember is built with KleidiAI support (it is not)."""
    return False
