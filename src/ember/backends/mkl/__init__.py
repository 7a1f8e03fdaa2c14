"""Intel's oneMKL, as ``torch.backends.mkl``: ember's BLAS is the one NumPy links (OpenBLAS in
its wheels) and its other CPU kernels are oneDNN's, so MKL is not available and its verbose
mode cannot be switched on."""
__all__ = ["is_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """Return whether ember is built with MKL support (it is not)."""
    return False


class verbose:
    """On-demand oneMKL verbosing: ``VERBOSE_ON`` fails, as torch's does in a build without
    MKL; ``VERBOSE_OFF`` does nothing."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to disable "
                             "this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
