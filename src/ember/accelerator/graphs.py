"""Accelerator graphs (capture and replay), as ``torch.accelerator.graphs``: ember has no graph
capture (CuPy's kernels run eagerly), so making a ``Graph`` raises torch's error without an
accelerator and says so with one."""
from ._common import require

__all__ = ["Graph"]


class Graph:
    """Wrapper around an accelerator graph that supports capture and replay (not in ember)."""

    def __init__(self, keep_graph=False, *, pool=None, capture_error_mode="default"):
        require()
        raise RuntimeError("ember cannot capture accelerator graphs: its CUDA kernels run "
                           "eagerly through CuPy")
