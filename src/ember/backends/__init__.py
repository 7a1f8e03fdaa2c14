"""Switches and queries for the kernel libraries behind ember's devices, as ``torch.backends``."""
from . import mkldnn  # noqa: F401
