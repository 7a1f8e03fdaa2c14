"""Switches and queries for the kernel libraries behind ember's devices, as ``torch.backends``."""
from . import cpu, cuda, cudnn, mkldnn, mps, openmp, opt_einsum  # noqa: F401
