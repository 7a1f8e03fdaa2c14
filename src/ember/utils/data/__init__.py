"""``ember.utils.data``: datasets, samplers and the DataLoader, as ``torch.utils.data``."""
from ._collate import collate, default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
from .dataset import (  # noqa: F401
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    random_split,
)
from .distributed import DistributedSampler  # noqa: F401
from .sampler import (  # noqa: F401
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
    WeightedRandomSampler,
)
from ._worker import WorkerInfo  # noqa: F401

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "WorkerInfo", "collate", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
