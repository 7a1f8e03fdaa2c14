"""``DistributedSampler``: restricts data loading to one replica's share of the dataset."""
import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _world():
    try:
        from ... import distributed as dist
    except ImportError:
        dist = None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("Requires distributed package to be available")
    return dist


class DistributedSampler(Sampler):
    """Sampler that restricts data loading to a subset (``rank``) of ``num_replicas`` equal
    shares of the dataset. Without ``drop_last`` the indices are padded by repeating the
    first ones so that every replica gets the same number; with it, the tail is dropped.
    With ``shuffle`` the order is a permutation seeded by ``seed + epoch``: call
    ``set_epoch`` at the start of every epoch to get a new one."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _world().get_world_size()
        if rank is None:
            rank = _world().get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _all_indices(self):
        if not self.shuffle:
            return list(range(len(self.dataset)))
        from ...ops.random import Generator, randperm
        g = Generator().manual_seed(self.seed + self.epoch)
        return randperm(len(self.dataset), generator=g).tolist()

    def __iter__(self):
        indices = self._all_indices()
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank: self.total_size: self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch for this sampler: with ``shuffle``, each epoch gets its own order
        (the same on every replica)."""
        self.epoch = epoch
