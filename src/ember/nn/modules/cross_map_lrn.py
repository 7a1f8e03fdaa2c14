"""``CrossMapLRN2d``: the legacy (Lua Torch) local response normalization across channels of
4-D input, with torch's own windows and hand-written backward."""
from ..functional.cross_map_lrn import cross_map_lrn2d
from .module import Module

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(Module):
    """Local response normalization across the channels of a 4-D input, as torch's legacy
    ``CrossMapLRN2d`` computes it (its windows and gradient differ from
    :class:`LocalResponseNorm`'s)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
