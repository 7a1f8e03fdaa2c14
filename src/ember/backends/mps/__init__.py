"""Apple's Metal (MPS), as ``torch.backends.mps``: ember has no MPS backend."""
__all__ = ["is_available", "is_built"]


def is_available():
    """Return a bool indicating if MPS is currently available (never, in ember)."""
    return False


def is_built():
    """Return whether ember is built with MPS support (it is not)."""
    return False
