"""``ember.nn.parallel``: DataParallel (and its parts) and DistributedDataParallel."""
from .data_parallel import DataParallel, data_parallel, gather, parallel_apply, replicate, scatter
from .distributed import DistributedDataParallel

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
