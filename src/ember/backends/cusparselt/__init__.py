"""NVIDIA's cuSPARSELt, as ``torch.backends.cusparselt``: ember does not use it."""
__all__ = ["version", "is_available", "get_max_alg_id"]


def version():
    """Return the version of cuSPARSELt (None: ember does not use it)."""
    return None


def is_available():
    """Return a bool indicating if cuSPARSELt is currently available (never, in ember)."""
    return False


def get_max_alg_id():
    """The largest cuSPARSELt algorithm id (None without cuSPARSELt)."""
    return None
