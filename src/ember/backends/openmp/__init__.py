"""OpenMP, as ``torch.backends.openmp``."""
__all__ = ["is_available"]


def is_available():
    """Return whether ember runs OpenMP threads here: its OpenMP code is oneDNN's (the GNU
    OpenMP build of ``libdnnl``), so this is whether oneDNN loads."""
    from ..._backend import onednn
    return bool(onednn.available())
