"""Dropout layers: active in training mode, the identity in evaluation mode."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """During training, zeroes elements with probability ``p`` and scales the others by
    ``1 / (1 - p)``."""
    _fn = F.dropout


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) inputs."""
    _fn = F.dropout1d


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) inputs."""
    _fn = F.dropout2d


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) inputs."""
    _fn = F.dropout3d


class AlphaDropout(_DropoutNd):
    """Dropout that keeps zero mean and unit variance (for SELU networks)."""
    _fn = F.alpha_dropout


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout over whole channels."""
    _fn = F.feature_alpha_dropout
