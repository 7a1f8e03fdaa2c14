"""Apple's Metal (MPS), as ``torch.backends.mps``: ember has no MPS backend, so the queries
answer as torch's build without MPS does."""
__all__ = ["get_core_count", "get_name", "is_built", "is_available", "is_macos13_or_newer",
           "is_macos_or_newer"]

_NO_MPS = "Cannot execute isOnMacOSorNewer() without MPS backend."


def is_built():
    """Return whether ember is built with MPS support (it is not)."""
    return False


def is_available():
    """Return a bool indicating if MPS is currently available (never, in ember)."""
    return False


def is_macos_or_newer(major, minor):
    """Return a bool indicating whether MPS is running on given MacOS or newer."""
    raise RuntimeError(_NO_MPS)


def is_macos13_or_newer(minor=0):
    """Return a bool indicating whether MPS is running on MacOS 13 or newer."""
    raise RuntimeError(_NO_MPS)


def get_name():
    """Return Metal device name."""
    raise RuntimeError("Cannot get the Metal device name without MPS backend.")


def get_core_count():
    """Return GPU core count."""
    raise RuntimeError("Cannot get the GPU core count without MPS backend.")
