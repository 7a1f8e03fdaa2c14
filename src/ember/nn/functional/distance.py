"""Distances between batches of vectors."""
from ...ops.matrix_decompositions import pdist  # (torch.nn.functional.pdist is torch.pdist)

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of ``x1 - x2 + eps`` over the last dimension."""
    dim = max(x1.ndim, x2.ndim) - 1
    diff = x1 - x2 + eps
    if dim < 0:
        return diff.abs()
    return diff.norm(p, dim, keepdim=keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / max(||x1|| ||x2||, eps)`` along ``dim`` (each norm clamped at ``eps``)."""
    n1 = (x1 * x1).sum(dim, keepdim=True).clamp(min=eps * eps).sqrt()
    n2 = (x2 * x2).sum(dim, keepdim=True).clamp(min=eps * eps).sqrt()
    return ((x1 / n1) * (x2 / n2)).sum(dim)
