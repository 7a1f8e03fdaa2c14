"""``ember.nn.parallel``: DistributedDataParallel."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
