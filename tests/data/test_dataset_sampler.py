"""Datasets and samplers against torch.utils.data: exact where torch's output is a function
of its inputs, properties (permutation, determinism under a seeded Generator) where it
depends on torch's random stream."""
import warnings

import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def _raises_like_torch(ember_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        ember_call()
    assert str(got.value) == str(expected.value)


# -- datasets ---------------------------------------------------------------------------------
def test_tensor_dataset_items_and_length():
    x, y = ember.arange(12.).reshape(4, 3), ember.tensor([0, 1, 0, 1])
    ds = edata.TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    assert xi.tolist() == [6., 7., 8.] and yi.item() == 0
    _raises_like_torch(lambda: edata.TensorDataset(x, ember.zeros(3)),
                       lambda: tdata.TensorDataset(torch.zeros(4, 3), torch.zeros(3)))


@pytest.mark.parametrize("idx", [0, 3, 4, 9, -1, -10])
def test_concat_dataset_matches_torch(idx):
    parts = [list(range(4)), list(range(10, 11)), list(range(20, 25))]
    e, t = edata.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(e) == len(t) and e.cumulative_sizes == t.cumulative_sizes
    assert e[idx] == t[idx]
    _raises_like_torch(lambda: e[-11], lambda: t[-11])
    assert (edata.TensorDataset(ember.zeros(2)) + edata.TensorDataset(ember.ones(3))).cumulative_sizes == [2, 5]


class _ERange(edata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_chain_dataset_and_errors():
    chain = edata.ChainDataset([_ERange(2), _ERange(3)])
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    assert list(_ERange(1) + _ERange(2)) == [0, 0, 1]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(edata.ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        edata.ConcatDataset([_ERange(2)])


def test_subset_and_stack_dataset():
    sub = edata.Subset(list(range(10, 20)), [3, 1, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [13, 11, 14]
    assert sub.__getitems__([0, 2]) == [13, 14]
    st = edata.StackDataset([1, 2], ["a", "b"])
    assert st[1] == (2, "b") and len(st) == 2
    sd = edata.StackDataset(x=[1, 2], y=[3, 4])
    assert sd[0] == {"x": 1, "y": 3}
    for args, kwargs in [(([1], [1, 2]), {}), ((), {}), (([1],), {"y": [2]})]:
        _raises_like_torch(lambda: edata.StackDataset(*args, **kwargs),
                           lambda: tdata.StackDataset(*args, **kwargs))


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (10, [0.3, 0.7]), (11, [0.5, 0.5]),
                                       (30, [0.3, 0.3, 0.4]), (7, [0.25, 0.25, 0.25, 0.25])])
def test_random_split_lengths_match_torch_and_partition(n, lengths):
    expected = [len(s) for s in tdata.random_split(range(n), lengths, torch.Generator().manual_seed(0))]
    parts = edata.random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
    assert [len(p) for p in parts] == expected
    items = sorted(x for p in parts for x in (p[i] for i in range(len(p))))
    assert items == list(range(n))
    again = edata.random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
    assert [p.indices for p in again] == [p.indices for p in parts]


def test_random_split_errors_and_warning():
    _raises_like_torch(lambda: edata.random_split(range(5), [2, 2]),
                       lambda: tdata.random_split(range(5), [2, 2]))
    _raises_like_torch(lambda: edata.random_split(range(5), [1.5, -0.5]),
                       lambda: tdata.random_split(range(5), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        edata.random_split(range(2), [1.0, 0.0])


# -- samplers ---------------------------------------------------------------------------------
def test_sequential_sampler_matches_torch():
    assert list(edata.SequentialSampler(range(7))) == list(tdata.SequentialSampler(range(7)))
    assert len(edata.SequentialSampler(range(7))) == 7


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                       (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, bs, drop):
    e = edata.BatchSampler(edata.SequentialSampler(range(n)), bs, drop)
    t = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
    assert list(e) == list(t) and len(e) == len(t)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0, "drop_last": False},
                                    {"batch_size": True, "drop_last": False},
                                    {"batch_size": 2, "drop_last": 1}])
def test_batch_sampler_errors_match_torch(kwargs):
    _raises_like_torch(lambda: edata.BatchSampler(range(3), **kwargs),
                       lambda: tdata.BatchSampler(range(3), **kwargs))


def test_random_sampler_is_a_seeded_permutation():
    def draw(seed, **kw):
        return list(edata.RandomSampler(range(20), generator=ember.Generator().manual_seed(seed), **kw))
    assert sorted(draw(0)) == list(range(20))
    assert draw(0) == draw(0) and draw(0) != draw(1)
    ember.manual_seed(3)
    a = list(edata.RandomSampler(range(20)))
    ember.manual_seed(3)
    assert list(edata.RandomSampler(range(20))) == a
    longer = draw(0, num_samples=45)
    assert len(longer) == 45 and sorted(longer[:20]) == list(range(20)) and sorted(longer[20:40]) == list(range(20))
    assert len(edata.RandomSampler(range(20), num_samples=45)) == 45


def test_random_sampler_with_replacement():
    drawn = list(edata.RandomSampler(range(5), replacement=True, num_samples=70,
                                     generator=ember.Generator().manual_seed(0)))
    assert len(drawn) == 70 and set(drawn) == set(range(5))


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}])
def test_random_sampler_errors_match_torch(kwargs):
    _raises_like_torch(lambda: edata.RandomSampler(range(3), **kwargs),
                       lambda: tdata.RandomSampler(range(3), **kwargs))


def test_subset_random_sampler():
    indices = [5, 8, 13, 21]
    drawn = list(edata.SubsetRandomSampler(indices, generator=ember.Generator().manual_seed(0)))
    assert sorted(drawn) == indices and len(edata.SubsetRandomSampler(indices)) == 4


def test_weighted_random_sampler():
    g = ember.Generator().manual_seed(0)
    drawn = list(edata.WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= {1, 2} and drawn.count(2) > drawn.count(1)
    distinct = list(edata.WeightedRandomSampler([1, 1, 1, 1, 1], 5, replacement=False, generator=g))
    assert sorted(distinct) == [0, 1, 2, 3, 4]
    for args in [([1.0, 2.0], 0), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2)]:
        _raises_like_torch(lambda: edata.WeightedRandomSampler(*args),
                           lambda: tdata.WeightedRandomSampler(*args))


@pytest.mark.parametrize("n", [10, 11, 3])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_without_shuffle_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        e = edata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        t = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(e) == list(t) and len(e) == len(t)


def test_distributed_sampler_shuffle_covers_and_follows_epoch():
    def shard(rank, epoch, seed=0):
        s = edata.DistributedSampler(range(12), 3, rank, shuffle=True, seed=seed)
        s.set_epoch(epoch)
        return list(s)
    epoch0 = [shard(r, 0) for r in range(3)]
    assert sorted(sum(epoch0, [])) == list(range(12))
    assert epoch0 == [shard(r, 0) for r in range(3)]
    assert epoch0 != [shard(r, 1) for r in range(3)]
    assert epoch0 != [shard(r, 0, seed=5) for r in range(3)]


def test_distributed_sampler_errors():
    _raises_like_torch(lambda: edata.DistributedSampler(range(4), 2, 2),
                       lambda: tdata.DistributedSampler(range(4), 2, 2))
    with pytest.raises(RuntimeError, match="Requires distributed package"):
        edata.DistributedSampler(range(4))


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(edata.BatchSampler(edata.RandomSampler(range(5)), 2, False))


def test_generic_subscription_for_type_hints():
    class Evens(edata.Sampler[int]):
        def __iter__(self):
            return iter([0, 2])

    class Items(edata.Dataset[int]):
        def __getitem__(self, i):
            return i

    assert list(Evens()) == [0, 2] and Items()[3] == 3
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        edata.Dataset()[0]
