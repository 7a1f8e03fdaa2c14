"""``amp_definitely_not_available``."""
__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available():
    """True when no device ember's CUDA autocast could use is there."""
    from ... import cuda
    return not cuda.is_available()
